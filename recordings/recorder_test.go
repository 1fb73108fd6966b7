package recordings

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

func TestRoundTrip(t *testing.T) {
	in, want := allKinds()
	many := func(n int) []Event {
		var out []Event
		for range n {
			out = append(out, in...)
		}
		return out
	}
	big := Event{Kind: KindSpans, Spans: testSpans(maxItemsPerFrame + 7)}
	for _, tc := range []struct {
		name      string
		in, want  []Event
		flushEach bool
	}{
		{"each kind alone", in, want, true},
		{"all kinds in one batch", in, want, false},
		{"many batched", many(50), nil, false},
		{"empty session", nil, nil, false},
		{"empty batches are skipped", []Event{{Kind: KindSpans}, {Kind: KindSamples}}, []Event{}, false},
		{"huge span batch is split", []Event{big}, []Event{
			{Kind: KindSpans, Spans: big.Spans[:maxItemsPerFrame]}, {Kind: KindSpans, Spans: big.Spans[maxItemsPerFrame:]}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.want == nil {
				tc.want = make([]Event, len(tc.in))
				for i := range tc.in {
					tc.want[i] = want[i%len(want)]
				}
			}
			b := smallRecording(t, tc.in, tc.flushEach)
			rec, err := readBytes(b)
			if err != nil {
				t.Fatal(err)
			}
			if rec.Damage != nil || !rec.Complete {
				t.Fatalf("damage %v, complete %v", rec.Damage, rec.Complete)
			}
			if len(rec.Events) != len(tc.want) {
				t.Fatalf("read %d events, want %d", len(rec.Events), len(tc.want))
			}
			last := time.Duration(-1)
			for i, ev := range rec.Events {
				if !sameEvent(ev, tc.want[i]) {
					t.Errorf("event %d (%s) differs:\n got %+v\nwant %+v", i, ev.Kind, ev, tc.want[i])
				}
				if ev.Time < last || ev.Time <= 0 {
					t.Errorf("event %d at %v after %v", i, ev.Time, last)
				}
				last = ev.Time
			}
			h := testHeader()
			h.Schema = SchemaVersion
			h.Created = rec.Header.Created
			if !reflect.DeepEqual(rec.Header, h) {
				t.Errorf("header\n got %+v\nwant %+v", rec.Header, h)
			}
		})
	}
}

func TestEventTimesFromCreate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.c3rec")
	rec, err := Create(path, Header{Backend: "sim"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(20 * time.Millisecond)
	rec.Marker("m")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Header.Host == "" || got.Header.Created.IsZero() || got.Header.Schema != SchemaVersion {
		t.Errorf("header not filled in: %+v", got.Header)
	}
	if len(got.Events) != 1 || got.Events[0].Time < 20*time.Millisecond || got.Events[0].Time > 5*time.Second {
		t.Errorf("events %+v", got.Events)
	}
}

func TestCreate(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "old.c3rec")
	if err := os.WriteFile(existing, []byte("precious"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A link to /dev/null: the recording must be refused, not lost in the
	// device (the recorder never writes to it; it refuses before opening).
	devLink := filepath.Join(dir, "null.c3rec")
	if err := os.Symlink("/dev/null", devLink); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		opt     Options
		wantErr string
	}{
		{"new file", filepath.Join(dir, "new.c3rec"), Options{}, ""},
		{"existing refused", existing, Options{}, "already exists"},
		{"existing overwritten", existing, Options{Overwrite: true}, ""},
		{"missing directory", filepath.Join(dir, "nope", "x.c3rec"), Options{}, "does not exist"},
		{"a directory", dir, Options{}, "is a folder"},
		{"a directory, overwrite", dir, Options{Overwrite: true}, "is a folder"},
		{"a link to a device, overwrite", devLink, Options{Overwrite: true}, "not a regular file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before, _ := os.ReadFile(tc.path)
			rec, err := Create(tc.path, testHeader(), tc.opt)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("err = %v, want one line containing %q", err, tc.wantErr)
				}
				if after, _ := os.ReadFile(tc.path); string(after) != string(before) {
					t.Errorf("file changed: %q", after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			rec.Marker("hello")
			if err := rec.Close(); err != nil {
				t.Fatal(err)
			}
			got, err := ReadAll(tc.path)
			if err != nil || len(got.Events) != 1 || !got.Complete {
				t.Fatalf("read back: %v %+v", err, got)
			}
		})
	}
}

// A new recording gets mode 0666 less the umask, like any other output.
func TestCreateFollowsTheUmask(t *testing.T) {
	old := syscall.Umask(0o002)
	t.Cleanup(func() { syscall.Umask(old) })
	path := filepath.Join(t.TempDir(), "s.c3rec")
	rec, err := Create(path, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Close()
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o664 {
		t.Errorf("mode %v (%v), want 0664 under umask 002", fi.Mode().Perm(), err)
	}
}

// failingWriter passes the first ok bytes through and then fails.
type failingWriter struct {
	w   io.Writer
	ok  int
	err error
}

func (f *failingWriter) Write(p []byte) (int, error) {
	if f.ok >= len(p) {
		f.ok -= len(p)
		return f.w.Write(p)
	}
	n, _ := f.w.Write(p[:f.ok]) // a partial write, as a full disk does
	f.ok = 0
	return n, f.err
}

func TestWriteFailureStopsRecorder(t *testing.T) {
	diskFull := errors.New("no space left on device (injected)")
	for _, tc := range []struct {
		name     string
		okAfter  int // bytes after the header that succeed
		flushes  int // flushes that succeed
		wantRead int // events readable afterwards
	}{
		{"first write fails", 0, 0, 0},
		{"fails mid-frame", 30, 0, 0},
		{"fails after two flushes", -1, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "fail.c3rec")
			var fw *failingWriter
			h := testHeader()
			opt := Options{FlushEvery: time.Hour, wrap: func(w io.Writer) io.Writer {
				fw = &failingWriter{w: w, ok: 1 << 30, err: diskFull}
				return fw
			}}
			rec, err := Create(path, h, opt)
			if err != nil {
				t.Fatal(err)
			}
			for i := range tc.flushes {
				rec.Marker("ok " + string(rune('a'+i)))
				if err := rec.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			fw.ok = max(tc.okAfter, 0)
			rec.Result(testResult())
			rec.Spans(testSpans(6))
			if err := rec.Flush(); !errors.Is(err, diskFull) {
				t.Fatalf("Flush = %v, want the write error", err)
			}
			if !errors.Is(rec.Err(), diskFull) || !strings.Contains(rec.Err().Error(), path) {
				t.Fatalf("Err = %v", rec.Err())
			}
			// Every later call is a no-op, and nothing is queued.
			for range 1000 {
				rec.Result(testResult())
				rec.Samples(testSamples())
				rec.Marker("after")
			}
			rec.mu.Lock()
			queued := len(rec.queue)
			rec.mu.Unlock()
			if queued != 0 {
				t.Errorf("%d events queued after the failure", queued)
			}
			if err := rec.Close(); !errors.Is(err, diskFull) {
				t.Errorf("Close = %v", err)
			}
			if err := rec.Flush(); !errors.Is(err, diskFull) {
				t.Errorf("Flush after Close = %v", err)
			}
			got, err := ReadAll(path)
			if err != nil {
				t.Fatal(err)
			}
			if got.Damage != nil || got.Complete || len(got.Events) != tc.wantRead {
				t.Errorf("read back %d events, damage %v, complete %v; want %d clean events", len(got.Events), got.Damage, got.Complete, tc.wantRead)
			}
		})
	}
}

func TestCreateWriteFailure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.c3rec")
	_, err := Create(path, testHeader(), Options{wrap: func(w io.Writer) io.Writer {
		return &failingWriter{w: w, ok: 5, err: errors.New("injected")}
	}})
	if err == nil || !strings.Contains(err.Error(), "injected") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a half-written new file was left behind: %v", err)
	}
}

func TestNilRecorder(t *testing.T) {
	var r *Recorder
	in, _ := allKinds()
	for _, ev := range in {
		record(r, ev)
	}
	if r.Flush() != nil || r.Close() != nil || r.Err() != nil || r.Stats() != (Stats{}) || r.Path() != "" {
		t.Error("a nil recorder should do nothing")
	}
}

func TestDropsWhenFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, MaxPending: 10})
	if err != nil {
		t.Fatal(err)
	}
	for range 100 {
		rec.Marker("m")
	}
	if s := rec.Stats(); s.Dropped != 90 {
		t.Errorf("dropped %d, want 90", s.Dropped)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 11 || got.Events[10].Kind != KindError || !strings.Contains(got.Events[10].Text, "dropped 90 events") {
		t.Errorf("events: %d, last %+v", len(got.Events), got.Events[len(got.Events)-1])
	}
}

func TestRecordAfterClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.c3rec")
	rec, err := Create(path, testHeader(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	rec.Marker("before")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rec.Marker("after")
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil || len(got.Events) != 1 || !got.Complete || got.Damage != nil {
		t.Fatalf("%v %+v", err, got)
	}
}

func TestConcurrentRecording(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conc.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 300
	var wg sync.WaitGroup
	var flushes atomic.Int64
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				switch i % 3 {
				case 0:
					rec.Result(testResult())
				case 1:
					rec.Spans(testSpans(6))
				default:
					rec.Marker(string(rune('a' + g)))
				}
				if i%100 == 0 {
					if err := rec.Flush(); err != nil {
						t.Error(err)
					}
					flushes.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != goroutines*each || got.Damage != nil || !got.Complete {
		t.Fatalf("read %d events (damage %v), want %d", len(got.Events), got.Damage, goroutines*each)
	}
	if s := rec.Stats(); s.Events != goroutines*each || s.Dropped != 0 {
		t.Errorf("stats %+v", s)
	}
}

// TestResultIsCopied checks that a caller may change a result after
// recording it, and that copyResult knows every reference-typed field of
// profiler.Result (a new one must be added there).
func TestResultIsCopied(t *testing.T) {
	known := map[string]bool{"Devices": true, "FractionOfIdeal": true, "Bound": true, "Explain": true,
		"Reps": true, "Timeline": true, "Samples": true, "Ops": true, "DefaultReps": true, "RoundOf": true, "CI": true,
		"Drift": true, "TimedUse": true, "DefaultRoundOf": true, "PassOfRound": true, "Bimodal": true, "Precision": true, "ModelError": true}
	rt := reflect.TypeFor[profiler.Result]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		switch f.Type.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer, reflect.Interface:
			if !known[f.Name] {
				t.Errorf("profiler.Result.%s is a %s: copyResult must copy it", f.Name, f.Type.Kind())
			}
		}
	}

	path := filepath.Join(t.TempDir(), "copy.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r := testResult()
	rec.Result(r)
	// Scribble over everything the result refers to.
	r.Devices[0].Name = "x"
	*r.FractionOfIdeal = 9
	*r.Bound.FractionOfBound = 9
	r.Bound.By = "x"
	r.Explain[backends.ModeConcurrent][0].Bounds[0].Nanos = 9
	r.Explain[backends.ModeComm] = nil
	r.Reps[backends.ModeConcurrent][0].Wall = 9
	r.RoundOf[backends.ModeConcurrent][1] = 9
	r.DefaultRoundOf[backends.ModeComm][0] = 9
	r.CI.U.Hi, r.CI.Ops[0].Lo = 9, 9
	r.Bimodal[0].Modes[0].Share = 9
	r.Precision.Rounds, *r.Precision.HalfWidth = 9, 9
	r.ModelError.TC3Median = 9
	r.Timeline[0].Name = "x"
	r.Samples[0].Value = 9
	spans := testSpans(3)
	rec.Spans(spans)
	spans[0].Name = "x"
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	_, want := allKinds()
	if len(got.Events) != 2 || !sameEvent(got.Events[0], want[2]) || !reflect.DeepEqual(got.Events[1].Spans, testSpans(3)) {
		t.Errorf("recorded values changed with the caller's:\n%+v", got.Events)
	}
}

// TestFlushEvery checks that events reach the file within FlushEvery
// without any Flush call.
func TestFlushEvery(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tick.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close()
	rec.Marker("soon")
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		got, err := ReadAll(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Events) == 1 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the event never reached the file")
}
