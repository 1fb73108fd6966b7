package sim

import (
	"context"
	"math"
	"slices"
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// The sweeps the H200 profile is calibrated against: the suite swept on a
// 2 x H200 node with the gated protocol and random GEMM operands (see
// backends/cuda/NOTES.md and FINDINGS.md). The first session's ungated
// sweep, backends/cuda/results/2026-11-30-h200x2/sweep.json, is superseded
// and kept only for comparison.
const (
	// realSweep holds the SM strategies: baseline, comm-first+prio, comm
	// partitions of 16, 32 and 64 SMs, and NCCL CTA caps of 8 and 16.
	realSweep = "../cuda/results/2026-11-30-h200x2-gated/sweep.json"
	// realSweepDMA holds the suite's all-gathers and all-to-alls under the
	// copy-engine strategies (dma, dma-comm-first, dma-prio, nccl-ce)
	// beside baseline and comm-first+prio, with transfers under 64 MiB sent
	// whole (the third session's sweep-copies.json).
	realSweepDMA = "../cuda/results/2026-11-30-h200x2-session3/sweep-copies.json"
	// realSweepReductions holds the 12 reduction scenarios under baseline,
	// comm-first+prio, dma, dma-prio, dma-comm-sms-8 and -16 (the add
	// pipelined with the copies), dma-gemm-112 and dma-gemm-112-pipe, with
	// the vectorized reduction kernels and the final copy rule (the third run).
	realSweepReductions = "../cuda/results/2026-11-30-h200x2-session3/sweep-reductions-run3.json"
)

// The committed sweeps name scenarios as the suite did then
// (llama3-70b-tp8-qkv-ag-224m) and record each scenario whole; the replays
// run the recorded scenarios, whose shapes the suite has since re-sized.

// recorded is the scenario a sweep entry ran, as the file records it: the
// suite has been re-sized since these sweeps, and a former name finds the
// scenario's current shapes (scenarios.Renamed).
func recorded(t testing.TB, e profiler.SweepEntry) scenarios.Scenario {
	t.Helper()
	if e.Result != nil {
		return e.Result.Scenario
	}
	sc, err := scenarios.Find(e.Scenario)
	if err != nil {
		t.Fatalf("the real sweep names %s: %v", e.Scenario, err)
	}
	return sc
}

// copyOnly keeps a sweep's all-gather and all-to-all runs.
func copyOnly(t testing.TB, f sweepfile.File) sweepfile.File {
	out := sweepfile.File{Grid: f.Grid}
	for _, e := range f.Results {
		sc := recorded(t, e)
		if sc.Comm.Collective.IsPureCopy() {
			out.Results = append(out.Results, e)
		}
	}
	return out
}

// loadSweep reads a sweep file.
func loadSweep(t testing.TB, path string) sweepfile.File {
	t.Helper()
	f, err := sweepfile.Load(path)
	if err != nil {
		t.Fatalf("reading the real sweep: %v", err)
	}
	return f
}

// calRun is one real run and its replay on the simulator.
type calRun struct {
	Scenario, Strategy string
	Real, Sim          profiler.Result
}

// replay runs every (scenario, strategy) of the sweep whose strategy keep
// accepts on a simulator of profile p. Runs that failed on the GPUs (an
// error, no result) are skipped.
func replay(t testing.TB, p Profile, f sweepfile.File, keep func(strategy string) bool) []calRun {
	t.Helper()
	b := New(p)
	grid := map[string]scenarios.Strategy{}
	for _, g := range f.Grid {
		grid[g.Name] = g.Strategy
	}
	var runs []calRun
	for _, e := range f.Results {
		if e.Result == nil || e.Err != "" || !keep(e.Strategy) {
			continue
		}
		sc := recorded(t, e)
		r, err := profiler.Measure(context.Background(), b, sc, grid[e.Strategy], profiler.Options{Reps: 1})
		if err != nil {
			t.Fatalf("%s under %s: %v", e.Scenario, e.Strategy, err)
		}
		runs = append(runs, calRun{Scenario: e.Scenario, Strategy: e.Strategy, Real: *e.Result, Sim: r})
	}
	return runs
}

// calReport sums up how far the simulator is from the GPUs.
type calReport struct {
	Runs int
	// Comp, Comm and C3 are the median |relative error| of the isolated
	// compute time, the isolated collective time and the concurrent wall
	// time.
	Comp, Comm, C3 float64
	// C3P90 and C3Max are the 90th percentile and the largest |relative
	// error| of T_c3; FMed and FP90 the median and 90th percentile of the
	// absolute error of the fraction of ideal (points / 100) over the runs
	// where both define it.
	C3P90, C3Max, FMed, FP90 float64
	// Fraction maps a strategy to its mean fraction of ideal on the GPUs
	// ([0]) and on the simulator ([1]), over the runs where both define it.
	Fraction map[string][2]float64
}

// summarize computes the report of a replay.
func summarize(runs []calRun) calReport {
	var errComp, errComm, errC3 []float64
	realF, simF := map[string][]float64{}, map[string][]float64{}
	var errF []float64
	for _, r := range runs {
		errComp = append(errComp, math.Abs(r.Sim.TComp.Median/r.Real.TComp.Median-1))
		errComm = append(errComm, math.Abs(r.Sim.TComm.Median/r.Real.TComm.Median-1))
		errC3 = append(errC3, math.Abs(r.Sim.TC3.Median/r.Real.TC3.Median-1))
		a, okA := r.Real.Fraction()
		s, okS := r.Sim.Fraction()
		if okA && okS {
			errF = append(errF, math.Abs(s-a))
			realF[r.Strategy] = append(realF[r.Strategy], a)
			simF[r.Strategy] = append(simF[r.Strategy], s)
		}
	}
	rep := calReport{Runs: len(runs), Comp: median(errComp), Comm: median(errComm), C3: median(errC3), Fraction: map[string][2]float64{},
		C3P90: quantile(errC3, 0.9), C3Max: quantile(errC3, 1), FMed: quantile(errF, 0.5), FP90: quantile(errF, 0.9)}
	for st := range realF {
		rep.Fraction[st] = [2]float64{mean(realF[st]), mean(simF[st])}
	}
	return rep
}

// calCase is one calibration check: a real sweep, the strategies replayed,
// and the errors allowed. The bounds are the errors the fitted H200 profile
// reaches plus a small margin, so that a regression fails.
type calCase struct {
	name, path string
	// copyOnly replays only the all-gathers and all-to-alls.
	copyOnly   bool
	strategies []string // in report order
	// maxComp, maxComm and maxC3 bound the median |error|s.
	maxComp, maxComm, maxC3 float64
	// maxFrac bounds |mean fraction of ideal, simulator - GPUs| per
	// strategy; strategies not listed are reported only.
	maxFrac map[string]float64
}

// check replays the case's sweep and holds the errors to its bounds.
func (c calCase) check(t *testing.T) calReport {
	t.Helper()
	f := loadSweep(t, c.path)
	if c.copyOnly {
		f = copyOnly(t, f)
	}
	runs := replay(t, H200(), f, func(s string) bool { return slices.Contains(c.strategies, s) })
	if len(runs) == 0 {
		t.Fatalf("%s: no run of %v", c.path, c.strategies)
	}
	rep := summarize(runs)
	t.Logf("median |error| against %s: T_comp %.1f%%, T_comm %.1f%%, T_c3 %.1f%% (%d runs)", c.name, rep.Comp*100, rep.Comm*100, rep.C3*100, rep.Runs)
	t.Logf("T_c3 |error| p90 %.1f%%, max %.1f%%; |F error| median %.1f, p90 %.1f points", rep.C3P90*100, rep.C3Max*100, rep.FMed*100, rep.FP90*100)
	for _, st := range c.strategies {
		fr, ok := rep.Fraction[st]
		if !ok {
			continue
		}
		t.Logf("%-18s mean fraction of ideal: H200 %6.1f%%, simulator %6.1f%% (difference %+5.1f points)", st, fr[0]*100, fr[1]*100, (fr[1]-fr[0])*100)
		if tol, ok := c.maxFrac[st]; ok && math.Abs(fr[1]-fr[0]) > tol {
			t.Errorf("%s: mean fraction of ideal %.1f%% on the simulator against %.1f%% on the H200; want within %.0f points", st, fr[1]*100, fr[0]*100, tol*100)
		}
	}
	for _, b := range []struct {
		what     string
		got, max float64
	}{{"T_comp", rep.Comp, c.maxComp}, {"T_comm", rep.Comm, c.maxComm}, {"T_c3", rep.C3, c.maxC3}} {
		if b.got > b.max {
			t.Errorf("median |error| of %s against the H200 runs is %.1f%%; want at most %.1f%%", b.what, b.got*100, b.max*100)
		}
	}
	return rep
}

// TestCalibrationAgainstH200 replays every (scenario, strategy) of the
// gated SM-strategy sweep on the simulator and holds the error in place:
// isolated and concurrent times, each strategy's mean fraction of ideal,
// and the same best and worst strategy on average.
func TestCalibrationAgainstH200(t *testing.T) {
	c := calCase{
		name: "the H200 sweep", path: realSweep,
		strategies: []string{"baseline", "comm-first+prio", "comm-sms-16", "comm-sms-32", "comm-sms-64", "ctas-8", "ctas-16"},
		// Reached by model v2 with GEMM times from their tiles
		// (GEMMTiles, the built-in's stage-1 GEMM constants refitted, its
		// interference constants not): 1.5 %, 1.2 %, 4.3 % (T_c3 p90
		// 14.7 %, max 53.5 %); fraction gaps of 2.5, 5.1, 11.6, 6.9, 0.4,
		// 11.2 and 12.5 points. Model v2 with the roofline GEMM, before
		// its refit: 1.9 %, 1.2 %, 4.5 % (p90 14.8 %, max 51.6 %); 1.9,
		// 3.7, 6.7, 8.8, 2.1, 25.9 and 8.4. Model v1 reached 2.4 %, 1.2 %,
		// 4.4 % and 0.3, 1.0, 7.4, 8.4, 1.8, 29.6 and 7.1. With
		// LateCTASetup (tenth session; the built-in's interference
		// constants not refitted): 1.5 %, 1.2 %, 3.8 % (p90 14.5 %, max
		// 77.9 %); gaps of 2.5, 4.8, 5.8, 13.2, 1.0, 11.3 and 10.4 points
		// (before: 2.4, 5.0, 11.9, 7.2, 1.0, 10.5 and 12.8). The built-in
		// has no PartitionSMLinkBandwidth, so an all-to-all of 64 CTAs in
		// 32 SMs runs two batches, the second paying the handshake again.
		// With the measured GEMM placements (GEMMPlacements, twelfth
		// session; the built-in's interference constants still not
		// refitted): 1.5 %, 1.2 %, 3.3 % (p90 12.7 % against 14.5, F
		// median 7.5 against 10.8 points); gaps of 2.5, 4.8, 8.7, 14.1,
		// 4.9, 11.3 and 10.4 points. The three partitions' gaps grew
		// (5.8, 13.2 and 1.0 before) while every run's error fell at the
		// median and p90: the built-in's hand-set constants had been
		// tuned beside GEMMs that the rule made too fast or too slow on
		// a partition, and the signed means no longer cancel. With each
		// timed shape's measured deviation (GEMMWholeTimes, thirteenth
		// session): 0.9 %, 1.2 %, 3.1 % (p90 12.2 %, F median 7.1);
		// gaps of 2.5, 6.1, 8.4, 14.5, 5.0, 11.1 and 10.6 points. T_comp
		// went from 1.5 to 0.9 %; comm-first+prio's gap grew by 1.3
		// points, its GEMMs' corrections not matched by the built-in's
		// hand-set interference constants.
		maxComp: 0.04, maxComm: 0.03, maxC3: 0.04,
		maxFrac: map[string]float64{
			"baseline": 0.03, "comm-first+prio": 0.07,
			"comm-sms-16": 0.10, "comm-sms-32": 0.15, "comm-sms-64": 0.06,
			"ctas-8": 0.13, "ctas-16": 0.11,
		},
	}
	rep := c.check(t)
	var best, worst [2]string
	bestF, worstF := [2]float64{-1e9, -1e9}, [2]float64{1e9, 1e9}
	for _, st := range c.strategies {
		for i, v := range rep.Fraction[st] {
			if v > bestF[i] {
				bestF[i], best[i] = v, st
			}
			if v < worstF[i] {
				worstF[i], worst[i] = v, st
			}
		}
	}
	if best[0] != best[1] || worst[0] != worst[1] {
		t.Errorf("best/worst strategy on the H200: %s/%s, on the simulator: %s/%s", best[0], worst[0], best[1], worst[1])
	}
}

// TestCalibrationCopyEnginesAgainstH200 does the same for the copy-engine
// strategies on the all-gathers and all-to-alls, c3lab's (dma,
// dma-comm-first, dma-prio) and NCCL's own (nccl-ce), then the copy-engine
// reductions of the reduction sweep.
func TestCalibrationCopyEnginesAgainstH200(t *testing.T) {
	for _, c := range []calCase{
		{
			name: "the H200 copy-engine sweep", path: realSweepDMA, copyOnly: true,
			strategies: []string{"dma", "dma-comm-first", "dma-prio", "nccl-ce"},
			// Reached by model v2 with the measured GEMM launches, before
			// its refit: 3.0 %, 1.4 %, 3.4 % (T_c3 p90 9.1 %, max 38.6 %);
			// fraction gaps of 4.6, 7.7, 7.6 and 7.0 points. Model v1, whose copy engines were served
			// first on HBM, reached 2.9 %, 1.4 %, 2.4 % and 1.7, 0.8, 0.7
			// and 13.5: one HBM pool (CopyHBMWeight 1, not fitted) slows
			// the copies next to the memory-bound ops more than the GPUs.
			// With the copy phases' fixed costs: 1.7 %, 0.5 %, 2.5 %; gaps
			// of 2.6, 5.8, 5.7 and 7.7 points.
			maxComp: 0.04, maxComm: 0.02, maxC3: 0.04,
			maxFrac: map[string]float64{"dma": 0.06, "dma-comm-first": 0.09, "dma-prio": 0.09, "nccl-ce": 0.09},
		},
		{
			name: "the H200 reduction sweep", path: realSweepReductions,
			strategies: []string{"dma", "dma-prio", "dma-comm-sms-8", "dma-comm-sms-16", "dma-gemm-112", "dma-gemm-112-pipe"},
			// Reached with GEMMTiles (the built-in's interference
			// constants not refitted): 3.3 %, 1.8 %, 3.0 % (T_c3 p90
			// 10.7 %, max 15.1 %); fraction gaps of 3.5, 8.1, 10.2, 15.2,
			// 15.2 and 11.5 points: a faster GEMM on few SMs gives these
			// partitions more overlap than the GPUs showed. Reached by
			// model v2 with the measured GEMM launches, before
			// its refit: 6.4 %, 1.8 %, 4.2 % (T_c3 p90 11.4 %, max 15.8 %);
			// fraction gaps of 4.5, 8.2, 10.8, 5.6, 14.1 and 5.3 points (model v1: 6.9 %, 1.7 %,
			// 4.4 %; 2.7, 5.2, 21.9, 0.2, 10.6 and 1.1). The GEMMs of this run ran 3-4 %
			// slower than in the SM sweep the GEMM model is fitted to (the
			// node's clocks after a quarter of an hour of runs), hence T_comp;
			// the simulator is too pessimistic about GEMMs confined to 112
			// SMs and about the add on 8 SMs (model.md). With the copy
			// phases' fixed costs (CopyStreamSyncOverhead,
			// CopyChainSyncOverhead; the built-in's interference constants
			// still not refitted): 3.0 %, 0.4 %, 3.6 %; gaps of 2.1, 6.6,
			// 11.5, 16.2, 14.3 and 14.3 points. T_comm fits, and the
			// pipelined strategies, whose copies use every engine's stream,
			// now pay the streams' cost in C3 too; dma-gemm-112-pipe's gap
			// went from 11.6 to 14.3 points. With the measured GEMM
			// placements (GEMMPlacements): 3.0 %, 0.4 %, 3.8 %; gaps of
			// 2.1, 6.6, 10.6, 14.3, 3.8 and 23.5 points. The GEMM on 112
			// SMs, measured 1.03-1.19x its whole-GPU time (the suite's
			// GEMMs of over 2e11 multiply-adds) where the model gave more
			// (1.25x for 2048x16384x6144), closes dma-gemm-112's gap (14.3 -> 3.8)
			// and opens the pipelined one's (14.3 -> 23.5): with the GEMM
			// no longer too slow, what the pipelined reduction costs on
			// its 20 SMs beside it shows (model.md).
			maxComp: 0.08, maxComm: 0.02, maxC3: 0.05,
			maxFrac: map[string]float64{"dma": 0.06, "dma-prio": 0.10, "dma-comm-sms-8": 0.12, "dma-comm-sms-16": 0.17,
				"dma-gemm-112": 0.06, "dma-gemm-112-pipe": 0.25},
		},
	} {
		t.Run(c.name, func(t *testing.T) { c.check(t) })
	}
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// quantile is the q-quantile of v (nearest rank; 0 for no values).
func quantile(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1+boolInt(q == 0))]
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func mean(v []float64) float64 {
	var sum float64
	for _, x := range v {
		sum += x
	}
	return sum / float64(max(len(v), 1))
}
