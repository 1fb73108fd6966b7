package profiler

import (
	"context"
	"encoding/json"
	"math"
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

// The sweep's summary and its best per scenario rank strategies by U, not
// by F: copy engines that halve the collective's time alone shrink their
// own ideal, so on "p" dma has the lower F (0.30 against 0.48) and the
// higher U (1.44 against 1.38): dma wins there. On "q" dma is slower and
// the baseline wins.
func TestSweepRanksByUpliftNotFraction(t *testing.T) {
	pair := func(name string) scenarios.Scenario {
		return scenarios.Scenario{
			Name: name, GPUs: 2,
			Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 1000, N: 64, K: 512, DType: scenarios.BF16},
			Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 800 << 10},
		}
	}
	grid := []NamedStrategy{{Name: "baseline"}, {Name: "dma", Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA}}}
	// The compute op takes 1000 ns, the collective 800 on NCCL and 400 on
	// copy engines; T_c3 is scripted per scenario and strategy.
	c3 := map[string]float64{"p baseline": 1300, "p dma": 1250, "q baseline": 1300, "q dma": 1500}
	var entries []SweepEntry
	for _, sc := range []scenarios.Scenario{pair("p"), pair("q")} {
		for _, ns := range grid {
			fb := &graphFake{caps: graphCaps()}
			fb.wallExtra = c3[sc.Name+" "+ns.Name] - 1000
			r, err := Measure(context.Background(), fb, sc, ns.Strategy, Options{Reps: 1})
			if err != nil {
				t.Fatal(err)
			}
			entries = append(entries, SweepEntry{Scenario: sc.Name, Strategy: ns.Name, Result: &r})
		}
	}
	if f0, _ := entries[0].Result.Fraction(); f0 <= func() float64 { f, _ := entries[1].Result.Fraction(); return f }() {
		t.Fatalf("the case needs F to favour the baseline on p")
	}
	best := BestPerScenario(entries)
	if len(best) != 2 || best[0].Strategy != "dma" || best[1].Strategy != "baseline" {
		t.Errorf("best per scenario %+v, want dma on p, baseline on q", best)
	}
	if best[0].Uplift != 1800.0/1250 {
		t.Errorf("p's best U %v, want 1800/1250", best[0].Uplift)
	}
	sum := SummarizeSweep(entries, grid)
	if sum[0].Wins != 1 || sum[1].Wins != 1 {
		t.Errorf("wins %d and %d, want 1 each", sum[0].Wins, sum[1].Wins)
	}
	wantU := math.Sqrt(1800.0 / 1250 * 1800.0 / 1500)
	if sum[1].MeanUplift == nil || !near(*sum[1].MeanUplift, wantU) {
		t.Errorf("dma's mean U %v, want the geometric mean %v", sum[1].MeanUplift, wantU)
	}
}
