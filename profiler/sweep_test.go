package profiler

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func TestSweepAndSummary(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority, scenarios.CapSMPartition, scenarios.CapCommCTACap)}
	grid, err := ParseGrid([]string{"baseline", "comm-sms-32"}, limits())
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
	if _, err := ParseGrid([]string{"nope"}, limits()); err == nil {
		t.Error("an unknown strategy name was accepted")
	}
}

func TestSweepKeepsGoingPastFailures(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}, fail: backends.ModeConcurrent}
	var seen []SweepEntry
	entries, err := Sweep(context.Background(), fb, []scenarios.Scenario{scenario()}, DefaultGrid(limits())[:1], Options{}, nil, func(e SweepEntry) { seen = append(seen, e) })
	if len(seen) != 1 || seen[0].Err == "" {
		t.Errorf("onEntry saw %+v", seen)
	}
	if err != nil || len(entries) != 1 || entries[0].Err == "" {
		t.Fatalf("entries %+v, err %v", entries, err)
	}
	if s := SummarizeSweep(entries, DefaultGrid(limits())[:1]); s[0].Failed != 1 || s[0].MeanFraction != nil {
		t.Errorf("summary %+v", s[0])
	}
}

// Every named strategy is valid on an H200 (a sweep must not fail a whole
// column on a typo such as a partition off the 8-SM grid).
func TestNamedStrategiesValidOnH200(t *testing.T) {
	lim := scenarios.Limits{Device: "NVIDIA H200", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3, HighestPriority: -5,
		DTypes: []scenarios.DType{scenarios.BF16, scenarios.FP16, scenarios.FP8, scenarios.FP32}}
	for _, grid := range [][]NamedStrategy{DefaultGrid(lim), CopyEngineGrid(lim)} {
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
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority)}
	grid, err := ParseGrid([]string{"baseline"}, limits())
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

// On an H200 the named strategies have the values the committed sweeps
// recorded under their names: the grid's values come from the device's
// limits, and on the device they were swept on they are the same.
func TestGridOnH200MatchesCommittedSweeps(t *testing.T) {
	lim := scenarios.Limits{Device: "NVIDIA H200", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3, HighestPriority: -5}
	files, err := filepath.Glob("../backends/cuda/results/*/sweep*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no committed sweeps: %v", err)
	}
	known := GridNames()
	checked := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var sw struct {
			Grid []NamedStrategy `json:"strategies"`
		}
		if err := json.Unmarshal(data, &sw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, ns := range sw.Grid {
			if !slices.Contains(known, ns.Name) {
				continue // a strategy the grid no longer has
			}
			got, err := ParseGrid([]string{ns.Name}, lim)
			if err != nil {
				t.Fatal(err)
			}
			if got[0].Strategy.Normalize() != ns.Strategy.Normalize() {
				t.Errorf("%s: %s is %s on an H200, the sweep recorded %s", f, ns.Name, got[0].Strategy, ns.Strategy)
			}
			checked[ns.Name] = true
		}
	}
	for _, n := range []string{"comm-first+prio", "dma-prio", "dma-gemm-120", "dma-gemm-112", "dma-gemm-112-pipe"} {
		if !checked[n] {
			t.Errorf("no committed sweep holds %s", n)
		}
	}
}

// The device-dependent strategies follow the device: its highest priority
// and its SM count and partition step, under the same names.
func TestGridFollowsTheDevice(t *testing.T) {
	for _, tc := range []struct {
		lim                       scenarios.Limits
		prio, wide, split, commTo int
	}{
		{scenarios.Limits{SMs: 132, SMStep: 8, HighestPriority: -5}, -5, 120, 112, 20},
		{scenarios.Limits{SMs: 108, SMStep: 4, HighestPriority: -3}, -3, 104, 88, 20},
		{scenarios.Limits{SMs: 304, SMStep: 8, HighestPriority: -2}, -2, 296, 256, 48},
	} {
		grid, err := ParseGrid([]string{"comm-first+prio", "dma-gemm-120", "dma-gemm-112", "dma-gemm-112-pipe"}, tc.lim)
		if err != nil {
			t.Fatal(err)
		}
		if grid[0].Strategy.CommPriority != tc.prio || grid[1].Strategy.ComputeSMs != tc.wide || grid[2].Strategy.ComputeSMs != tc.split ||
			grid[3].Strategy.ComputeSMs != tc.split || grid[3].Strategy.CommSMs != tc.commTo {
			t.Errorf("%d SMs in steps of %d: %v", tc.lim.SMs, tc.lim.SMStep, grid)
		}
	}
}
