package main

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

func TestWarnDrift(t *testing.T) {
	st := func(sm float64) []telemetry.GPUState { return []telemetry.GPUState{{SMClockMHz: sm, TempC: 40}} }
	d := &profiler.Drift{Runs: []profiler.DriftRun{
		{Mode: backends.ModeCompute, Start: st(1980), End: st(1980)},
		{Mode: backends.ModeConcurrent, Start: st(1700), End: st(1700)},
	}}
	d.Check(profiler.DefaultDriftThresholds())
	var b strings.Builder
	warnDrift(&b, profiler.Result{Drift: d})
	if out := b.String(); strings.Count(out, "\n") != 1 || !strings.Contains(out, "SM clock 1980 MHz isolated vs 1700 MHz concurrent") {
		t.Errorf("warning %q", out)
	}
	b.Reset()
	warnDrift(&b, profiler.Result{})
	if b.Len() != 0 {
		t.Errorf("no drift, warning %q", b.String())
	}

	// The clocks during the runs: the same 1980 MHz around every run (no
	// drift), the compute alone at the power cap during its runs.
	during := func(sm float64, thr uint64) []profiler.DuringState {
		return []profiler.DuringState{{Readings: 20, SMClockMHz: sm, MinSMClockMHz: sm, Throttle: thr}}
	}
	d = &profiler.Drift{Runs: []profiler.DriftRun{
		{Mode: backends.ModeCompute, Start: st(1980), End: st(1980), During: during(1560, 4)},
		{Mode: backends.ModeComm, Start: st(1980), End: st(1980), During: during(1975, 0)},
		{Mode: backends.ModeConcurrent, Start: st(1980), End: st(1980), During: during(1605, 4)},
	}}
	d.Check(profiler.DefaultDriftThresholds())
	b.Reset()
	warnDrift(&b, profiler.Result{Drift: d})
	want := "c3lab: GPU 0 clock during the runs: compute alone 1560 MHz (sw-power-cap), comm alone 1975 MHz, concurrent 1605 MHz (sw-power-cap); part of the C3 difference is the clock\n"
	if b.String() != want {
		t.Errorf("clock note %q, want %q", b.String(), want)
	}
	// Both: the drift warning first, then the note. With the clocks under
	// load read, the drift is a change of the machine: here 7 C more in
	// the concurrent runs.
	hot := []telemetry.GPUState{{SMClockMHz: 1980, TempC: 47}}
	d.Runs[2].Start, d.Runs[2].End = hot, hot
	d.Check(profiler.DefaultDriftThresholds())
	b.Reset()
	warnDrift(&b, profiler.Result{Drift: d})
	if lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); len(lines) != 2 || !strings.HasPrefix(lines[0], "c3lab: warning: the machine drifted") || lines[1] != strings.TrimSuffix(want, "\n") {
		t.Errorf("drift and note %q", b.String())
	}
}

func TestNoMachineOnTheSimulator(t *testing.T) {
	b := sim.New(sim.H200())
	if m, stop := openNodeTelemetry(b, nil); m != nil {
		stop()
		t.Error("the simulator got a machine record")
	}
	if m, live, stop, err := openLabMachine(b, 4); m != nil || live != nil || err != nil {
		stop()
		t.Errorf("the simulator got a lab machine record (%v, %v)", live, err)
	}
}
