package profiler

import (
	"context"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func TestSweepAndSummary(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits(), Priority: true, SMPartition: true, CommCTACap: true}}
	grid, err := ParseGrid([]string{"baseline", "comm-sms-32"})
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	entries, err := Sweep(context.Background(), fb, append(make([]scenarios.Scenario, 0), scenario(), scenario()), grid, Options{Reps: 2}, func(done, total int, _ string, _ time.Duration) {
		if total != 4 {
			t.Errorf("total %d, want 4", total)
		}
		calls = append(calls, done)
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4 || len(calls) != 5 || calls[4] != 4 {
		t.Fatalf("%d entries, progress %v", len(entries), calls)
	}
	sum := SummarizeSweep(entries, grid)
	if len(sum) != 2 || sum[0].N != 2 || sum[0].MeanFraction == nil {
		t.Fatalf("summary %+v", sum)
	}
	want, _ := entries[0].Result.Fraction()
	if *sum[0].MeanFraction != want || sum[0].ByClass[entries[0].Result.Class] != want {
		t.Errorf("mean %v, want %v", *sum[0].MeanFraction, want)
	}
	if _, err := ParseGrid([]string{"nope"}); err == nil {
		t.Error("an unknown strategy name was accepted")
	}
}

func TestSweepKeepsGoingPastFailures(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}, fail: backends.ModeConcurrent}
	var seen []SweepEntry
	entries, err := Sweep(context.Background(), fb, []scenarios.Scenario{scenario()}, DefaultGrid()[:1], Options{}, nil, func(e SweepEntry) { seen = append(seen, e) })
	if len(seen) != 1 || seen[0].Err == "" {
		t.Errorf("onEntry saw %+v", seen)
	}
	if err != nil || len(entries) != 1 || entries[0].Err == "" {
		t.Fatalf("entries %+v, err %v", entries, err)
	}
	if s := SummarizeSweep(entries, DefaultGrid()[:1]); s[0].Failed != 1 || s[0].MeanFraction != nil {
		t.Errorf("summary %+v", s[0])
	}
}

// Every named strategy is valid on an H200 (a sweep must not fail a whole
// column on a typo such as a partition off the 8-SM grid).
func TestNamedStrategiesValidOnH200(t *testing.T) {
	lim := scenarios.Limits{Device: "NVIDIA H200", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3, HighestPriority: -5,
		DTypes: []scenarios.DType{scenarios.BF16, scenarios.FP16, scenarios.FP8, scenarios.FP32}}
	for _, grid := range [][]NamedStrategy{DefaultGrid(), CopyEngineGrid()} {
		for _, ns := range grid {
			if errs := scenarios.ValidateStrategy(ns.Strategy, lim); len(errs) > 0 {
				t.Errorf("%s: %v", ns.Name, errs)
			}
		}
	}
}

// The sweep's callback (a recorder) gets each result's timeline; the
// entries the sweep returns keep the numbers only.
func TestSweepCallbackGetsTimelines(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits(), Priority: true}}
	grid, err := ParseGrid([]string{"baseline"})
	if err != nil {
		t.Fatal(err)
	}
	var seen []SweepEntry
	entries, err := Sweep(context.Background(), fb, []scenarios.Scenario{scenario()}, grid, Options{Reps: 2}, nil, func(e SweepEntry) { seen = append(seen, e) })
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) != 1 || seen[0].Result == nil || len(seen[0].Result.Timeline) == 0 {
		t.Fatalf("the callback got %+v, want a result with its timeline", seen)
	}
	if len(entries) != 1 || entries[0].Result == nil || len(entries[0].Result.Timeline) != 0 || len(entries[0].Result.Samples) != 0 {
		t.Errorf("returned entry %+v, want numbers only", entries)
	}
}
