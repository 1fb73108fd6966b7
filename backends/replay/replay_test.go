package replay

import (
	"context"
	"fmt"
	"path/filepath"
	"reflect"
	"slices"
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
	// Knobs the recording used, in a combination it did not.
	_, err = profiler.Measure(context.Background(), b, want[0].Scenario, scenarios.Strategy{CommPriority: -5, CommEngine: scenarios.EngineDMA}, profiler.Options{Reps: 7})
	if err == nil || !strings.Contains(err.Error(), "recorded strategies") || !strings.Contains(err.Error(), "prio=-5") {
		t.Errorf("error %v", err)
	}
	// A knob the recording never used is not a capability of its replay.
	_, err = profiler.Measure(context.Background(), b, want[0].Scenario, scenarios.Strategy{CommSMs: 32}, profiler.Options{Reps: 7})
	if err == nil || !strings.Contains(err.Error(), "the replay backend cannot partition SMs, which comm_sms 32 asks for") {
		t.Errorf("error %v", err)
	}
	other, _ := scenarios.Find(scenarios.Names()[1])
	_, err = profiler.Measure(context.Background(), b, other, scenarios.Strategy{}, profiler.Options{Reps: 7})
	if err == nil || !strings.Contains(err.Error(), "no run of "+other.Name) {
		t.Errorf("error %v", err)
	}
}

// samples are the sessions recorded on 2 x H200 (read only).
func samples(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("..", "..", "recordings", "samples", "*.c3rec"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no sample recordings: %v", err)
	}
	return files
}

// Every run a recording holds measures again through the replay backend,
// nccl-ce and all: the capabilities cover every knob the recording used
// (and no other), and the lab's path, the scenario's own repetition count,
// gives exactly the recorded repetitions.
func TestReplayMeasuresEveryRecordedRun(t *testing.T) {
	simPath, _ := record(t)
	for _, path := range append(samples(t), simPath) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			caps := b.Capabilities()
			used := backends.Capabilities{}
			for _, r := range b.Results() {
				got, err := profiler.Measure(context.Background(), b, r.Scenario, r.Strategy, profiler.Options{Reps: RecordedReps(r)})
				if err != nil {
					t.Fatalf("%s under %s: %v", r.Scenario.Name, r.Strategy, err)
				}
				if n := len(got.Reps[backends.ModeConcurrent]); n != RecordedReps(r) {
					t.Errorf("%s under %s: %d repetitions, recorded %d", r.Scenario.Name, r.Strategy, n, RecordedReps(r))
				}
				used = used.With(profiler.KnobsOf(r.Strategy).Knobs()...)
			}
			if !slices.Equal(caps.Knobs(), used.Knobs()) {
				t.Errorf("capabilities %q, the recording uses %q", caps.Knobs(), used.Knobs())
			}
			for _, sc := range b.Scenarios() {
				var st scenarios.Strategy
				for _, r := range b.Results() {
					if r.Scenario.Name == sc.Name {
						st = r.Strategy
					}
				}
				if _, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{}); err != nil {
					t.Errorf("%s at its own repetition count: %v", sc.Name, err)
				}
			}
		})
	}
}

// A replay gives the recorded repetitions, no more and no fewer: asking
// for another count says how many were recorded instead of repeating or
// dropping some.
func TestReplayRepsAreTheRecordedOnes(t *testing.T) {
	path, want := record(t)
	b, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	w := want[1]
	n := RecordedReps(w)
	for _, tc := range []struct {
		name string
		reps int
		ok   bool
	}{
		{"as recorded", n, true},
		{"more", n + 5, false},
		{"fewer", n - 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ex := backends.Experiment{Scenario: w.Scenario, Strategy: w.Strategy, Mode: backends.ModeConcurrent, Reps: tc.reps}
			rr, err := b.Run(context.Background(), ex, nil)
			if !tc.ok {
				if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("holds %d", n)) {
					t.Errorf("%d reps of %d recorded: %d reps back, error %v", tc.reps, n, len(rr.Reps), err)
				}
				return
			}
			if err != nil || !reflect.DeepEqual(rr.Reps, w.Reps[backends.ModeConcurrent]) {
				t.Errorf("reps %v, error %v; want the recorded %v", rr.Reps, err, w.Reps[backends.ModeConcurrent])
			}
		})
	}
}

// A recording's devices are its header's, and those its results ran on
// beyond them (a lab session that moved on to a scenario on more GPUs than
// the one it started on): a replay never shows fewer devices than a run
// used, nor more.
func TestReplayDevicesCoverEveryRun(t *testing.T) {
	simb := sim.New(sim.H200())
	all := simb.Devices()
	for _, tc := range []struct {
		name            string
		header, results []int // device counts
		want            int
	}{
		{"as the header", []int{2}, []int{2, 2}, 2},
		{"a run on more", []int{2}, []int{2, 4}, 4},
		{"no runs", []int{2}, nil, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := &recordings.Recording{Header: recordings.Header{Backend: "sim", Devices: recordings.DevicesFromInfo(all[:tc.header[0]])}}
			for _, n := range tc.results {
				r := profiler.Result{Devices: all[:n]}
				rec.Events = append(rec.Events, recordings.Event{Kind: recordings.KindResult, Result: &r})
			}
			got := New(rec).Devices()
			if len(got) != tc.want {
				t.Fatalf("%d devices, want %d", len(got), tc.want)
			}
			for i, d := range got {
				if d.Index != i || d.Name != all[i].Name {
					t.Errorf("device %d: %+v", i, d)
				}
			}
		})
	}
}
