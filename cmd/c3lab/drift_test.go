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
