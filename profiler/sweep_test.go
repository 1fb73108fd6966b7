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

// A sweep of several passes goes over the whole grid each time, the
// scenarios in reverse order on the second pass, gives the callback each
// entry once (merged from its passes, with the last pass's timeline),
// and returns the entries in suite order with the repetitions split
// between the passes.
func TestSweepPasses(t *testing.T) {
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority)}
	grid, err := ParseGrid([]string{"baseline", "comm-first+prio"}, limits())
	if err != nil {
		t.Fatal(err)
	}
	a, b := scenario(), scenario()
	b.Name = "second"
	var totals []int
	var seen []SweepEntry
	entries, err := Sweep(context.Background(), fb, []scenarios.Scenario{a, b}, grid, Options{Reps: 10, Passes: 2}, func(done, total int, _ string, _ time.Duration) {
		totals = append(totals, total)
	}, func(e SweepEntry) { seen = append(seen, e) })
	if err != nil {
		t.Fatal(err)
	}
	if totals[0] != 8 {
		t.Errorf("progress total %d, want 8 (4 entries x 2 passes)", totals[0])
	}
	if len(seen) != 4 || len(entries) != 4 {
		t.Fatalf("callback saw %d entries, sweep returned %d; want 4 each", len(seen), len(entries))
	}
	var order []string
	for _, c := range fb.calls {
		if c.Mode == backends.ModeConcurrent && (len(order) == 0 || order[len(order)-1] != c.Scenario.Name) {
			order = append(order, c.Scenario.Name)
		}
	}
	if want := []string{a.Name, "second", a.Name}; !slices.Equal(order, want) { // runs of one name collapse: s, second | second, s
		t.Errorf("scenario order %v, want %v (the second pass in reverse)", order, want)
	}
	for i, e := range entries {
		if want := []string{a.Name, a.Name, "second", "second"}[i]; e.Scenario != want || e.Strategy != grid[i%2].Name {
			t.Errorf("entry %d is %s/%s, want %s/%s", i, e.Scenario, e.Strategy, want, grid[i%2].Name)
		}
		r := e.Result
		if r == nil {
			t.Fatalf("entry %d failed: %s", i, e.Err)
		}
		if n := len(r.Reps[backends.ModeConcurrent]); n != 10 {
			t.Errorf("entry %d holds %d concurrent repetitions, want 5 per pass", i, n)
		}
		if r.PassOfRound == nil || r.PassOfRound[len(r.PassOfRound)-1] != 1 {
			t.Errorf("entry %d: PassOfRound %v, want two passes", i, r.PassOfRound)
		}
		if len(r.Timeline) != 0 {
			t.Errorf("entry %d: the returned entries keep no timeline", i)
		}
	}
	for _, e := range seen {
		if e.Result == nil || len(e.Result.Timeline) == 0 {
			t.Errorf("the callback's %s/%s has no timeline", e.Scenario, e.Strategy)
		}
	}

	// Without --reps each pass measures its share of the scenario's own.
	own := scenario()
	own.Reps = 12
	entries, err = Sweep(context.Background(), fb, []scenarios.Scenario{own}, grid[:1], Options{Passes: 3}, nil, nil)
	if err != nil || len(entries) != 1 || entries[0].Result == nil {
		t.Fatalf("sweep of the scenario's own repetitions: %+v, %v", entries, err)
	}
	if n := len(entries[0].Result.Reps[backends.ModeConcurrent]); n != 12 {
		t.Errorf("%d concurrent repetitions over 3 passes of a scenario of 12, want 4 per pass", n)
	}

	// A deterministic backend makes one pass whatever is asked.
	det := &fakeBackend{caps: backends.Capabilities{Limits: limits(), Deterministic: true}, flat: true}
	entries, err = Sweep(context.Background(), det, []scenarios.Scenario{a}, grid[:1], Options{Reps: 4, Passes: 3}, nil, nil)
	if err != nil || len(entries) != 1 || entries[0].Result == nil || entries[0].Result.PassOfRound != nil {
		t.Fatalf("deterministic sweep: %+v, %v: want one entry made in one pass", entries, err)
	}
}

// cancelAfter is a backend that cancels the sweep's context once it has
// made n concurrent runs (a user's Ctrl-C in the middle of a sweep).
type cancelAfter struct {
	*fakeBackend
	n      int
	cancel context.CancelFunc
}

func (c *cancelAfter) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if err := ctx.Err(); err != nil {
		return backends.RunResult{}, err // as a real backend stops
	}
	r, err := c.fakeBackend.Run(ctx, ex, sink)
	if ex.Mode == backends.ModeConcurrent {
		if c.n--; c.n == 0 {
			c.cancel()
		}
	}
	return r, err
}

// A sweep in passes cut short in its second pass keeps every entry
// measured so far, merged from the passes it had, and hands each to the
// callback once.
func TestSweepPassesCutShortKeepsWhatWasMeasured(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	fb := &cancelAfter{fakeBackend: &fakeBackend{caps: backends.Capabilities{Limits: limits()}.With(scenarios.CapPriority)}, cancel: cancel}
	grid, err := ParseGrid([]string{"baseline", "comm-first+prio"}, limits())
	if err != nil {
		t.Fatal(err)
	}
	// Pass 1 measures both entries in 5 rounds each; cancel during the
	// second pass's first entry.
	fb.n = 2*5 + 1
	var seen []SweepEntry
	entries, err := Sweep(ctx, fb, []scenarios.Scenario{scenario()}, grid, Options{Reps: 10, Passes: 2}, nil, func(e SweepEntry) { seen = append(seen, e) })
	if err == nil {
		t.Fatal("a cancelled sweep returned no error")
	}
	if len(entries) != 2 || len(seen) != 2 {
		t.Fatalf("%d entries returned, %d seen by the callback; want both entries once each", len(entries), len(seen))
	}
	for _, e := range entries {
		if e.Result == nil || len(e.Result.Reps[backends.ModeConcurrent]) != 5 {
			t.Errorf("%s: %+v, want pass 1's 5 repetitions kept", e.Strategy, e.Result)
		}
	}
}

// The p2p-load strategies are named, parse to what they say, and follow
// the other grids (whose names and order stay).
func TestPeerLoadGrid(t *testing.T) {
	names := GridNames()
	n := len(DefaultGrid(scenarios.Limits{})) + len(CopyEngineGrid(scenarios.Limits{})) + len(DecomposeGrid(scenarios.Limits{}))
	if got := names[n:]; !slices.Equal(got, []string{"p2p-load", "p2p-comm-first", "p2p-comm-sms-16", "p2p-comm-sms-32"}) {
		t.Errorf("names after the other grids: %v", got)
	}
	grid, err := ParseGrid([]string{"p2p-comm-sms-16", "p2p-load"}, scenarios.Limits{SMs: 132, SMStep: 8})
	if err != nil {
		t.Fatal(err)
	}
	want := scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad, Launch: scenarios.CommFirst, CommSMs: 16}
	if grid[0].Strategy != want || grid[1].Strategy != (scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad}) {
		t.Errorf("parsed %+v", grid)
	}
}
