package calib

import (
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends/sim"
)

// HeldOutError sums up a report's held-out runs as a profile file keeps
// them (sim.HeldOutError): all runs' T_c3 and F errors, each collective's
// and each band of measured ideal speedup's. Nil when the report has no
// held-out run (a profile without a split scores every run as one set).
func HeldOutError(rep Report) *sim.HeldOutError {
	var held []RunError
	for _, e := range rep.Errors {
		if e.Set == SetHeldOut {
			held = append(held, e)
		}
	}
	if len(held) == 0 {
		return nil
	}
	out := &sim.HeldOutError{Runs: len(held), All: figures(held), ByCollective: map[string]sim.ErrorFigures{}}
	scen := map[string]bool{}
	by := map[string][]RunError{}
	for _, e := range held {
		scen[e.Scenario] = true
		if e.Collective != "" {
			by[e.Collective] = append(by[e.Collective], e)
		}
		if !slices.Contains(out.GPUs, e.GPUs) {
			out.GPUs = append(out.GPUs, e.GPUs)
		}
	}
	slices.Sort(out.GPUs)
	out.Scenarios = len(scen)
	for c, es := range by {
		out.ByCollective[c] = figures(es)
	}
	for _, b := range idealBands() {
		var es []RunError
		for _, e := range held {
			if e.IdealBand == b.Name() {
				es = append(es, e)
			}
		}
		if len(es) > 0 {
			b.Figures = figures(es)
			out.ByIdealSpeedup = append(out.ByIdealSpeedup, b)
		}
	}
	for _, r := range rep.Ranking {
		if r.Set == SetHeldOut && r.Cases > 0 {
			out.Ranking = &sim.RankingScore{Cases: r.Cases, Within: r.Within, Tolerance: RankingTolerance}
		}
	}
	return out
}

// figures are the |errors| of runs, median and p90, rounded to what a
// profile file needs (T_c3 to 0.01 %, F to 0.01 point).
func figures(runs []RunError) sim.ErrorFigures {
	var c3, f []float64
	for _, e := range runs {
		c3 = append(c3, e.C3)
		f = append(f, e.F)
	}
	sc, sf := stat(c3), stat(f)
	r := func(x float64, unit float64) float64 { return math.Round(x*unit) / unit }
	return sim.ErrorFigures{Runs: sc.N, TC3Median: r(sc.Median, 1e4), TC3P90: r(sc.P90, 1e4),
		FRuns: sf.N, FMedian: r(sf.Median, 100), FP90: r(sf.P90, 100)}
}
