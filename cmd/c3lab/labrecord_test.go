package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/recordings"
)

// c3lab lab --record refuses an existing file before anything runs, as
// run and sweep do, unless --record-overwrite.
func TestLabRecordFlag(t *testing.T) {
	path := filepath.Join(t.TempDir(), "s.c3rec")
	if err := os.WriteFile(path, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := call(t, "lab", "--backend", "sim", "--record", path)
	if code != 2 || !strings.Contains(errOut, "exists; pick another --record file or add --record-overwrite") {
		t.Errorf("exit %d, %q", code, errOut)
	}
	// Past the check, the test has no terminal for the lab.
	code, _, errOut = call(t, "lab", "--backend", "sim", "--record", path, "--record-overwrite")
	if code != 2 || !strings.Contains(errOut, "needs a terminal") {
		t.Errorf("with --record-overwrite: exit %d, %q", code, errOut)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep" {
		t.Errorf("the file changed before the lab ran: %q", b)
	}
}

// The lab's opener overwrites the --record file only when allowed, never
// another; it builds the header for the backend, and the report after the
// lab is one line naming the files.
func TestLabRecordings(t *testing.T) {
	dir := t.TempDir()
	given, other := filepath.Join(dir, "given.c3rec"), filepath.Join(dir, "other.c3rec")
	for _, p := range []string{given, other} {
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := &labRecordings{flags: recordFlags{path: given, overwrite: true}, b: sim.New(sim.H200())}
	rec, err := l.open(given, 2)
	if err != nil {
		t.Fatalf("opening the --record file with --record-overwrite: %v", err)
	}
	rec.Marker("key p: comm priority: -5 (highest)")
	if _, err := l.open(other, 2); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("opening another existing file: %v", err)
	}
	if b, _ := os.ReadFile(other); string(b) != "old" {
		t.Errorf("%s was overwritten: %q", other, b)
	}
	fresh := filepath.Join(dir, "c3lab-20250102-030405.c3rec")
	if _, err := l.open(fresh, 2); err != nil {
		t.Fatal(err)
	}

	var w bytes.Buffer
	if err := l.report(&w); err != nil {
		t.Fatal(err)
	}
	if got, want := w.String(), "c3lab: recorded the session to "+given+", "+fresh+"\n"; got != want {
		t.Errorf("report %q, want %q", got, want)
	}
	r, err := recordings.ReadAll(given)
	if err != nil {
		t.Fatal(err)
	}
	if h := r.Header; !r.Complete || h.Backend != "sim" || h.Profile != "h200" || h.Version != version || len(h.Devices) == 0 || len(h.Telemetry) == 0 {
		t.Errorf("complete %v, header %+v", r.Complete, h)
	}
	if len(r.Events) != 1 || r.Events[0].Kind != recordings.KindMarker {
		t.Errorf("events %+v", r.Events)
	}

	var none labRecordings
	w.Reset()
	if err := none.report(&w); err != nil || w.Len() != 0 {
		t.Errorf("no recording: %v, %q", err, w.String())
	}
}

// A lab recording's header lists the devices of the scenario on screen
// when it started (indices 0..n-1 of the backend's), not every device the
// backend drives, and replay says so.
func TestLabRecordingDevices(t *testing.T) {
	for _, gpus := range []int{2, 4, 8} {
		t.Run(fmt.Sprintf("%d GPUs", gpus), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "lab.c3rec")
			l := &labRecordings{flags: recordFlags{path: path}, b: sim.New(sim.H200())}
			rec, err := l.open(path, gpus)
			if err != nil {
				t.Fatal(err)
			}
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			r, err := recordings.ReadAll(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Header.Devices) != gpus {
				t.Fatalf("header lists %d devices, the scenario runs on %d", len(r.Header.Devices), gpus)
			}
			for i, d := range r.Header.Devices {
				if d.Index != i {
					t.Errorf("device %d has index %d", i, d.Index)
				}
			}
			_, out, _ := call(t, "replay", "--json", path)
			if !strings.Contains(out, `"index": `+fmt.Sprint(gpus-1)) || strings.Contains(out, `"index": `+fmt.Sprint(gpus)) {
				t.Errorf("replay --json does not list exactly devices 0..%d:\n%s", gpus-1, out)
			}
		})
	}
}
