package sim

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// HeldOutError is a calibrated profile's error on the runs of the
// scenarios it was not fitted to (FitRecord.HeldOut), as c3lab validate
// scores them. The lab shows it beside every simulated figure, so that a
// user knows how far to trust one. c3lab calibrate writes it; c3lab
// validate --record writes it again after a model change.
type HeldOutError struct {
	// Runs and Scenarios count the held-out runs scored.
	Runs      int `yaml:"runs" json:"runs"`
	Scenarios int `yaml:"scenarios" json:"scenarios"`
	// GPUs are the GPU counts of the held-out runs, lowest first: the
	// figures speak for runs of those sizes.
	GPUs []int `yaml:"gpus" json:"gpus"`
	// All is every held-out run's figures.
	All ErrorFigures `yaml:"all" json:"all"`
	// ByCollective is the figures of each collective's runs (a host copy
	// counts as its direction: h2d, d2h, swap), by its name.
	ByCollective map[string]ErrorFigures `yaml:"by_collective,omitempty" json:"by_collective,omitempty"`
	// ByIdealSpeedup is the figures of the runs in each band of measured
	// ideal speedup, lowest band first: F's error grows as S_ideal nears
	// 1, where F divides by S_ideal - 1.
	ByIdealSpeedup []SpeedupBandErrors `yaml:"by_ideal_speedup,omitempty" json:"by_ideal_speedup,omitempty"`
	// Ranking is how often the simulator's best strategy for a held-out
	// scenario was within Tolerance of the measured best T_c3; nil when
	// no held-out scenario had two strategies.
	Ranking *RankingScore `yaml:"ranking,omitempty" json:"ranking,omitempty"`
}

// RankingScore is the ranking check's count: of Cases scenarios (one
// sweep's runs of a scenario under two strategies or more), Within had
// the simulator's best within Tolerance (0.03: 3 %) of the measured best.
type RankingScore struct {
	Cases     int     `yaml:"cases" json:"cases"`
	Within    int     `yaml:"within" json:"within"`
	Tolerance float64 `yaml:"tolerance" json:"tolerance"`
}

// ErrorFigures are the absolute errors of a set of runs: T_c3's relative
// (0.05 is 5 %) over Runs, F's in points over FRuns (the runs where both
// the measured and the simulated F are defined); median and p90.
type ErrorFigures struct {
	Runs      int     `yaml:"runs" json:"runs"`
	TC3Median float64 `yaml:"t_c3_median" json:"t_c3_median"`
	TC3P90    float64 `yaml:"t_c3_p90" json:"t_c3_p90"`
	FRuns     int     `yaml:"f_runs" json:"f_runs"`
	FMedian   float64 `yaml:"f_median" json:"f_median"`
	FP90      float64 `yaml:"f_p90" json:"f_p90"`
}

// SpeedupBandErrors is ErrorFigures for the runs whose measured ideal
// speedup is in [From, To); To 0 is a band with no upper edge.
type SpeedupBandErrors struct {
	From    float64      `yaml:"from" json:"from"`
	To      float64      `yaml:"to" json:"to"`
	Figures ErrorFigures `yaml:"figures" json:"figures"`
}

// Name is the band as validate's table names it: "S_ideal 1.0 to 1.2",
// "S_ideal 1.5 and up".
func (b SpeedupBandErrors) Name() string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 1, 64) }
	if b.To == 0 {
		return "S_ideal " + f(b.From) + " and up"
	}
	return "S_ideal " + f(b.From) + " to " + f(b.To)
}

// Holds reports whether s, a defined ideal speedup (above 1, finite),
// is in the band.
func (b SpeedupBandErrors) Holds(s float64) bool {
	return s > 1 && !math.IsInf(s, 0) && s >= b.From && (b.To == 0 || s < b.To)
}

// MinScopeRuns is the fewest held-out runs a collective or a band needs
// for its own figures to stand for a run; with fewer, all held-out runs'
// figures do.
const MinScopeRuns = 10

// check is the figures' sanity: counts of zero or more, errors finite
// and not negative, p90 not below the median, bands in order.
func (h HeldOutError) check() error {
	figs := func(what string, f ErrorFigures) error {
		for _, x := range []float64{f.TC3Median, f.TC3P90, f.FMedian, f.FP90} {
			if math.IsNaN(x) || math.IsInf(x, 0) || x < 0 {
				return fmt.Errorf("%s: an error of %v; errors are finite and 0 or more", what, x)
			}
		}
		switch {
		case f.Runs < 0 || f.FRuns < 0 || f.FRuns > f.Runs:
			return fmt.Errorf("%s: %d runs, %d with F; want 0 <= f_runs <= runs", what, f.Runs, f.FRuns)
		case f.TC3P90 < f.TC3Median || f.FP90 < f.FMedian:
			return fmt.Errorf("%s: a p90 below its median", what)
		case f.Runs > h.Runs:
			return fmt.Errorf("%s: %d runs, more than the %d held out", what, f.Runs, h.Runs)
		}
		return nil
	}
	if h.Runs < 0 || h.Scenarios < 0 {
		return fmt.Errorf("runs and scenarios count 0 or more")
	}
	if err := figs("all", h.All); err != nil {
		return err
	}
	for k, f := range h.ByCollective {
		if err := figs("by_collective."+k, f); err != nil {
			return err
		}
	}
	for i, b := range h.ByIdealSpeedup {
		if !(b.From >= 1) || b.To < 0 || (b.To != 0 && b.To <= b.From) || math.IsInf(b.From, 0) || math.IsInf(b.To, 0) {
			return fmt.Errorf("by_ideal_speedup.%d: band %v to %v; want 1 <= from < to (to 0: no upper edge)", i, b.From, b.To)
		}
		if i > 0 && (h.ByIdealSpeedup[i-1].To == 0 || b.From < h.ByIdealSpeedup[i-1].To) {
			return fmt.Errorf("by_ideal_speedup.%d: bands overlap or are out of order", i)
		}
		if err := figs("by_ideal_speedup."+strconv.Itoa(i), b.Figures); err != nil {
			return err
		}
	}
	if r := h.Ranking; r != nil && (r.Cases < 1 || r.Within < 0 || r.Within > r.Cases || !(r.Tolerance > 0 && r.Tolerance < 1)) {
		return fmt.Errorf("ranking: %d within of %d cases at %v; want 0 <= within <= cases, cases >= 1, 0 < tolerance < 1", r.Within, r.Cases, r.Tolerance)
	}
	for _, g := range h.GPUs {
		if g < 1 {
			return fmt.Errorf("gpus: %d; a run uses 1 GPU or more", g)
		}
	}
	return nil
}

// modelError picks, for a run of sc whose ideal speedup is sIdeal, the
// held-out figures that speak for it: T_c3's of its collective's runs and
// F's of its band's, each all runs' where fewer than MinScopeRuns are
// alike. A graph of several collectives takes all runs' T_c3 figures.
func (h HeldOutError) modelError(sc scenarios.Scenario, sIdeal float64) backends.ModelError {
	out := backends.ModelError{Scope: backends.ScopeAll, Runs: h.All.Runs, TC3Median: h.All.TC3Median, TC3P90: h.All.TC3P90,
		FScope: backends.ScopeAll, FRuns: h.All.FRuns, FMedian: h.All.FMedian, FP90: h.All.FP90}
	if c := runCollective(sc); c != "" {
		if f, ok := h.ByCollective[c]; ok && f.Runs >= MinScopeRuns {
			out.Scope, out.Runs, out.TC3Median, out.TC3P90 = c, f.Runs, f.TC3Median, f.TC3P90
		}
	}
	for _, b := range h.ByIdealSpeedup {
		if b.Holds(sIdeal) && b.Figures.FRuns >= MinScopeRuns {
			out.FScope, out.FRuns, out.FMedian, out.FP90 = b.Name(), b.Figures.FRuns, b.Figures.FMedian, b.Figures.FP90
		}
	}
	if r := h.Ranking; r != nil {
		out.RankCases, out.RankWithin, out.RankTolerance = r.Cases, r.Within, r.Tolerance
	}
	if g := max(sc.GPUs, 1); len(h.GPUs) > 0 && !slices.Contains(h.GPUs, g) {
		out.Unvalidated = fmt.Sprintf("no held-out run used %d GPUs (they used %s)", g, joinInts(h.GPUs))
	}
	return out
}

// runCollective is the one collective sc runs ("" for a graph of several
// different ones): what validate groups a run by.
func runCollective(sc scenarios.Scenario) string {
	if !sc.IsGraph() {
		return string(sc.Comm.Collective)
	}
	c := ""
	for _, st := range sc.Streams {
		for _, o := range st.Ops {
			if !o.Kind.IsComm() {
				continue
			}
			if c != "" && string(o.Kind) != c {
				return ""
			}
			c = string(o.Kind)
		}
	}
	return c
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
