package replay

import (
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/backendtest"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// recordKnobs records the knob scenarios on the simulator, each under the
// given strategies the simulator can run (one repetition each), and opens
// the replay; recorded says which strategies made it in.
func recordKnobs(t *testing.T, sts []scenarios.Strategy) (rb *Backend, recorded []scenarios.Strategy) {
	t.Helper()
	b := sim.New(sim.H200())
	for _, st := range sts {
		if profiler.CheckKnobs(scenarios.StrategyKnobs(), st, b.Capabilities(), b.Name()) == nil {
			recorded = append(recorded, st)
		}
	}
	path := filepath.Join(t.TempDir(), "knobs.c3rec")
	rec, err := recordings.Create(path, recordings.Header{Version: "test", Backend: b.Name(), Devices: recordings.DevicesFromInfo(b.Devices()[:2])}, recordings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range backendtest.KnobScenarios() {
		rec.Scenario(sc)
		for _, st := range recorded {
			r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 1})
			if err != nil {
				t.Fatal(err)
			}
			rec.Result(r)
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rb, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	return rb, recorded
}

func observe(b *Backend) backendtest.Observe {
	return func(sc scenarios.Scenario, st scenarios.Strategy) (string, error) {
		r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 1})
		if err != nil {
			return "", err
		}
		out, err := json.Marshal([]any{r.Timeline, r.Explain})
		return string(out), err
	}
}

// A replay applies every knob setting its recording holds (it plays the
// run back) and refuses, naming the knob, every one it does not: by its
// capabilities when the recording never used the knob, by the recorded
// strategies otherwise. A setting the simulator cannot run (decompose,
// until it can) is not in the recording, so the replay refuses it.
func TestEveryKnobAppliedOrRefused(t *testing.T) {
	ks := scenarios.StrategyKnobs()
	var all []scenarios.Strategy
	example := map[string]scenarios.Strategy{}
	for _, k := range ks {
		all = append(all, k.Base)
		for i, ex := range k.Examples {
			st, err := k.Example(i)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, st)
			example[k.Key+" "+ex] = st
		}
	}
	full, recorded := recordKnobs(t, all)
	for _, o := range backendtest.WalkKnobs(t, ks, full.Capabilities(), backendtest.KnobScenarios(), observe(full)) {
		inRec := slices.Contains(recorded, example[o.Knob.Key+" "+o.Example])
		switch {
		case inRec && !o.Applied():
			t.Errorf("%s %s is recorded, and refused: %v", o.Knob.Key, o.Example, o.Err)
		case !inRec && o.Applied():
			t.Errorf("%s %s is not recorded (the simulator cannot run it), and applied", o.Knob.Key, o.Example)
		}
	}
	// The bases only (copy_engines and chunk_bytes are set over dma).
	bare, _ := recordKnobs(t, []scenarios.Strategy{{}, {CommEngine: scenarios.EngineDMA}})
	for _, o := range backendtest.WalkKnobs(t, ks, bare.Capabilities(), backendtest.KnobScenarios(), observe(bare)) {
		recorded := o.Knob.Key == "comm_engine" && o.Example == string(scenarios.EngineDMA)
		if o.Applied() != recorded {
			t.Errorf("%s %s: applied %v, recorded %v (%v)", o.Knob.Key, o.Example, o.Applied(), recorded, o.Err)
		}
	}
}

// A replay knows the device as the run did: its partition step, highest
// priority and HBM bandwidth come from the recorded devices. A recording
// from before devices carried them gives what its runs show instead.
func TestDeviceFactsFromTheRecording(t *testing.T) {
	s := sim.New(sim.H200())
	dev := s.Devices()[0]
	rb, _ := recordKnobs(t, []scenarios.Strategy{{}})
	lim := rb.Capabilities().Limits
	if lim.SMStep != dev.SMStep || lim.HighestPriority != dev.HighestPriority || rb.Capabilities().HBMBandwidth != dev.HBMBandwidth {
		t.Errorf("limits %+v, HBM %g; the recorded device has step %d, priority %d, HBM %g",
			lim, rb.Capabilities().HBMBandwidth, dev.SMStep, dev.HighestPriority, dev.HBMBandwidth)
	}
	if rb.Devices()[0].LinkBandwidth != dev.LinkBandwidth {
		t.Errorf("link bandwidth %g, recorded %g", rb.Devices()[0].LinkBandwidth, dev.LinkBandwidth)
	}

	// An older recording: no facts in its header.
	path := filepath.Join(t.TempDir(), "old.c3rec")
	old := backends.DeviceInfo{Index: 0, Name: dev.Name, SMs: dev.SMs, MemoryBytes: dev.MemoryBytes, CopyEngines: dev.CopyEngines, Simulated: true}
	rec, err := recordings.Create(path, recordings.Header{Version: "old", Backend: s.Name(), Devices: recordings.DevicesFromInfo([]backends.DeviceInfo{old, old})}, recordings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sc := backendtest.KnobScenarios()[0]
	rec.Scenario(sc)
	for _, st := range []scenarios.Strategy{{CommPriority: -3, CommSMs: 48}, {ComputeSMs: 32}} {
		r, err := profiler.Measure(context.Background(), s, sc, st, profiler.Options{Reps: 1})
		if err != nil {
			t.Fatal(err)
		}
		rec.Result(r)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	ob, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if lim := ob.Capabilities().Limits; lim.SMStep != 16 || lim.HighestPriority != -3 {
		t.Errorf("an old recording's limits: step %d (want 16, the runs' partitions), priority %d (want -3)", lim.SMStep, lim.HighestPriority)
	}
}
