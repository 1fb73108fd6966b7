package recordings

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// crashEnv names the file TestHelperRecorderCrash records to; the helper
// runs only when it is set.
const crashEnv = "C3LAB_RECORDINGS_CRASH_FILE"

// TestHelperRecorderCrash is not a test: TestRecorderSurvivesKill runs the
// test binary with it as a child that records until it is killed.
func TestHelperRecorderCrash(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("helper process for TestRecorderSurvivesKill")
	}
	rec, err := Create(path, testHeader(), Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	res, spans, samples := testResult(), testSpans(6), testSamples()
	rec.Scenario(testScenario())
	fmt.Println("recording") // the parent starts its clock here
	// Record like a live session, a little faster, until killed (or, if
	// the parent is gone, for at most a minute).
	for seq := 0; seq < 60_000; seq++ {
		rec.Marker("seq " + strconv.Itoa(seq))
		rec.Spans(spans)
		if seq%20 == 0 {
			rec.Result(res)
			rec.Samples(samples)
		}
		time.Sleep(time.Millisecond)
	}
	os.Exit(3)
}

// TestRecorderSurvivesKill kills a recording process and checks that the
// file holds every complete frame, up to about one flush interval before
// the kill.
func TestRecorderSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process for 1.5 s")
	}
	path := filepath.Join(t.TempDir(), "crash.c3rec")
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperRecorderCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make([]byte, len("recording\n"))
	if _, err := out.Read(ready); err != nil || string(ready) != "recording\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper did not start: %q %v\n%s", ready, err, stderr.String())
	}
	// Record for 1.5 s, and on a loaded machine until a flush has written
	// the first 100 events (at most 20 s): a starved child says nothing
	// about what a kill loses.
	time.Sleep(1500 * time.Millisecond)
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if r, err := ReadAll(path); err == nil && len(r.Events) >= 100 {
			break
		}
	}
	killed := time.Now()
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	rec, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if rec.Complete {
		t.Fatal("a killed recorder left a complete recording")
	}
	if rec.Damage != nil {
		// Only a frame cut by the kill may be damaged: it must be the last.
		st, _ := os.Stat(path)
		t.Logf("damaged tail (a write cut by the kill): %v, file %d bytes", rec.Damage, st.Size())
		if !strings.HasPrefix(rec.Damage.Reason, "truncated") {
			t.Errorf("damage is not a cut tail: %v", rec.Damage)
		}
	}
	if len(rec.Events) < 100 {
		t.Fatalf("only %d events recovered", len(rec.Events))
	}
	// The markers count up without a gap.
	next := 0
	for _, ev := range rec.Events {
		if ev.Kind != KindMarker {
			continue
		}
		if ev.Text != "seq "+strconv.Itoa(next) {
			t.Fatalf("marker %q, want seq %d", ev.Text, next)
		}
		next++
	}
	last := rec.Events[len(rec.Events)-1].Time
	killAt := killed.Sub(rec.Header.Created)
	lag := killAt - last
	t.Logf("%d events (%d markers); last at %v, killed at %v: %v lost", len(rec.Events), next, last, killAt, lag)
	if slack := DefaultFlushEvery + 500*time.Millisecond; lag > slack {
		t.Errorf("the last event recorded came %v before the kill, more than %v", lag, slack)
	}
}
