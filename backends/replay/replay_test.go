package replay

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// record measures two strategies on the simulator into a recording file.
func record(t *testing.T) (string, []profiler.Result) {
	t.Helper()
	b := sim.New(sim.H200())
	path := filepath.Join(t.TempDir(), "session.c3rec")
	rec, err := recordings.Create(path, recordings.Header{Version: "test", Backend: b.Name(), Devices: recordings.DevicesFromInfo(b.Devices()[:2]), Profile: "h200"}, recordings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Find(scenarios.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	rec.Scenario(sc)
	var results []profiler.Result
	for _, st := range []scenarios.Strategy{{}, {CommPriority: -5}, {CommEngine: scenarios.EngineDMA}} {
		rec.Strategy(st)
		r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 7})
		if err != nil {
			t.Fatal(err)
		}
		rec.Result(r)
		results = append(results, r)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	return path, results
}

// A replay gives the numbers, explanations and timeline of the recorded run.
func TestReplayReproducesTheRecordedNumbers(t *testing.T) {
	path, want := record(t)
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Results()) != len(want) || len(b.Scenarios()) != 1 {
		t.Fatalf("%d results, %d scenarios", len(b.Results()), len(b.Scenarios()))
	}
	for _, w := range want {
		got, err := profiler.Measure(context.Background(), b, w.Scenario, w.Strategy, profiler.Options{Reps: RecordedReps(w)})
		if err != nil {
			t.Fatalf("%s: %v", w.Strategy, err)
		}
		if got.TComp != w.TComp || got.TComm != w.TComm || got.TC3 != w.TC3 || got.TCommInC3 != w.TCommInC3 {
			t.Errorf("%s: replayed stats differ:\n got %+v %+v %+v\nwant %+v %+v %+v", w.Strategy, got.TComp, got.TComm, got.TC3, w.TComp, w.TComm, w.TC3)
		}
		gf, _ := got.Fraction()
		wf, _ := w.Fraction()
		if gf != wf {
			t.Errorf("%s: fraction %v, recorded %v", w.Strategy, gf, wf)
		}
		if len(got.Timeline) != len(w.Timeline) || len(got.Samples) != len(w.Samples) {
			t.Errorf("%s: %d spans / %d samples, recorded %d / %d", w.Strategy, len(got.Timeline), len(got.Samples), len(w.Timeline), len(w.Samples))
		}
		if len(got.Explain[backends.ModeConcurrent]) != len(w.Explain[backends.ModeConcurrent]) {
			t.Errorf("%s: explanation lost", w.Strategy)
		}
	}
	if b.Devices()[0].Name != "NVIDIA H200" || b.Name() != "replay" {
		t.Errorf("devices %+v", b.Devices())
	}
}

func TestReplaySaysWhatIsNotRecorded(t *testing.T) {
	path, want := record(t)
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = profiler.Measure(context.Background(), b, want[0].Scenario, scenarios.Strategy{CommSMs: 32}, profiler.Options{Reps: 7})
	if err == nil || !strings.Contains(err.Error(), "recorded strategies") || !strings.Contains(err.Error(), "prio=-5") {
		t.Errorf("error %v", err)
	}
	other, _ := scenarios.Find(scenarios.Names()[1])
	_, err = profiler.Measure(context.Background(), b, other, scenarios.Strategy{}, profiler.Options{Reps: 7})
	if err == nil || !strings.Contains(err.Error(), "no run of "+other.Name) {
		t.Errorf("error %v", err)
	}
}
