package profiler

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// NamedStrategy is a strategy with a short name for tables ("prio+first").
type NamedStrategy struct {
	Name     string             `json:"name"`
	Strategy scenarios.Strategy `json:"strategy"`
}

// DefaultGrid is the sweep's default strategy grid on a device of limits
// lim: plain C3, schedule prioritization (at the device's highest
// priority), three SM partitions for the collective, two CTA caps.
func DefaultGrid(lim scenarios.Limits) []NamedStrategy {
	return []NamedStrategy{
		{"baseline", scenarios.Strategy{}},
		{"comm-first+prio", scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: lim.HighestPriority}},
		{"comm-sms-16", scenarios.Strategy{CommSMs: 16}},
		{"comm-sms-32", scenarios.Strategy{CommSMs: 32}},
		{"comm-sms-64", scenarios.Strategy{CommSMs: 64}},
		{"ctas-8", scenarios.Strategy{CommCTAs: 8}},
		{"ctas-16", scenarios.Strategy{CommCTAs: 16}},
	}
}

// CopyEngineGrid holds named copy-engine strategies a sweep can ask for by
// name on a device of limits lim (not part of the default grid: backends
// without copy-engine reductions refuse them for reduce-scatter and
// all-reduce).
//
// The SM counts in the names of the dma-gemm strategies are their values
// on the device the grid was first swept on (132 SMs in steps of 8, whose
// results are committed under those names); on any device the values come
// from its limits (GEMMPartitions), and the names stay.
func CopyEngineGrid(lim scenarios.Limits) []NamedStrategy {
	top := lim.HighestPriority
	wide, split := GEMMPartitions(lim)
	return []NamedStrategy{
		{"dma", scenarios.Strategy{CommEngine: scenarios.EngineDMA}},
		{"dma-1ce", scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}},
		{"dma-chunk-8m", scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 8 << 20}},
		{"dma-comm-first", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst}},
		// For copy-engine reductions, whose reduction kernel needs SMs: at
		// the highest priority, or on a partition of its own (8 or 16 SMs;
		// there the add is pipelined with the copies).
		{"dma-prio", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: top}},
		{"dma-comm-sms-8", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 8}},
		{"dma-comm-sms-16", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommSMs: 16}},
		// The GEMM on the widest partition that leaves a step of SMs free
		// for the reduction kernel.
		{"dma-gemm-120", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: top, ComputeSMs: wide}},
		// About 15 % of the SMs for the reduction kernel, which starts on
		// them as soon as the copies land (FINDINGS.md section 4).
		{"dma-gemm-112", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, CommPriority: top, ComputeSMs: split}},
		// The same split, with the add pipelined with the copies on the
		// SMs the GEMM leaves (the GEMM keeps the aligned partition).
		{"dma-gemm-112-pipe", scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, ComputeSMs: split, CommSMs: lim.SMs - split}},
		{"nccl-ce", scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}},
	}
}

// PeerLoadGrid holds named p2p-load strategies (comm_engine p2p-load: a
// reduction kernel that loads the peers' blocks over NVLink) a sweep can
// ask for by name on a device of limits lim: alone, launched first, and
// launched first on a 16- and a 32-SM partition of its own beside the
// GEMM. Not part of the default grid: they run reduce-scatter and
// all-reduce only, on GPUs with peer access.
func PeerLoadGrid(lim scenarios.Limits) []NamedStrategy {
	p2p := scenarios.EngineP2PLoad
	return []NamedStrategy{
		{"p2p-load", scenarios.Strategy{CommEngine: p2p}},
		{"p2p-comm-first", scenarios.Strategy{CommEngine: p2p, Launch: scenarios.CommFirst}},
		{"p2p-comm-sms-16", scenarios.Strategy{CommEngine: p2p, Launch: scenarios.CommFirst, CommSMs: 16}},
		{"p2p-comm-sms-32", scenarios.Strategy{CommEngine: p2p, Launch: scenarios.CommFirst, CommSMs: 32}},
	}
}

// DecomposeGrid holds named strategies for scenarios written as streams
// with dependent pairs (a collective feeding a GEMM, a GEMM feeding a
// collective): the pairs whole, and cut into 2, 4 and 8 chunks wired chunk
// by chunk (async TP), on NCCL and with the launch order and priority of
// the paper's schedule prioritization. Not part of the default grid: a
// scenario with no dependent pair has nothing to decompose.
func DecomposeGrid(lim scenarios.Limits) []NamedStrategy {
	top := lim.HighestPriority
	return []NamedStrategy{
		{"whole", scenarios.Strategy{Decompose: 1}},
		{"decomp-2", scenarios.Strategy{Decompose: 2}},
		{"decomp-4", scenarios.Strategy{Decompose: 4}},
		{"decomp-8", scenarios.Strategy{Decompose: 8}},
		{"decomp-4-comm-first+prio", scenarios.Strategy{Decompose: 4, Launch: scenarios.CommFirst, CommPriority: top}},
		{"dma-decomp-4", scenarios.Strategy{Decompose: 4, CommEngine: scenarios.EngineDMA}},
	}
}

// namedGrids is every named strategy, the default grid first.
func namedGrids(lim scenarios.Limits) []NamedStrategy {
	return append(append(append(DefaultGrid(lim), CopyEngineGrid(lim)...), DecomposeGrid(lim)...), PeerLoadGrid(lim)...)
}

// GEMMPartitions are the two GEMM partitions a copy-engine reduction's add
// kernel is measured beside, on a device of limits lim: wide, the most
// SMs that leave one partition step free (120 of 132 in steps of 8), and
// split, the SMs that leave about 15 % of the GPU free (112 of 132),
// both rounded down to the step. Either is 0 when the GPU is too small to
// spare any.
func GEMMPartitions(lim scenarios.Limits) (wide, split int) {
	step := max(lim.SMStep, 1)
	wide = (lim.SMs - step) / step * step
	split = (lim.SMs * 85 / 100) / step * step
	if wide <= 0 || wide >= lim.SMs {
		wide = 0
	}
	if split <= 0 || split >= lim.SMs {
		split = 0
	}
	return wide, split
}

// SweepEntry is one (scenario, strategy) measurement. Err is set instead of
// Result when the measurement failed; a sweep goes on past failures.
type SweepEntry struct {
	Scenario string  `json:"scenario"`
	Strategy string  `json:"strategy"`
	Result   *Result `json:"result,omitempty"`
	Err      string  `json:"error,omitempty"`
}

// StrategySummary averages one strategy over the sweep. Strategies are
// compared by MeanUplift and Wins (U over the serial default, one
// reference for every strategy of a scenario), not by MeanFraction: F
// under two strategies has two denominators.
type StrategySummary struct {
	Strategy string `json:"strategy"`
	// MeanUplift is the geometric mean of U over the scenarios where it is
	// known (U is a ratio of times); MeanUpliftCI its 95 % interval, when
	// every U has one (the scenarios' log U taken as independent normal
	// estimates). Wins counts the scenarios where this strategy ranked
	// first, told apart from every other (Compare); Tied those where it
	// was first, or not told apart from the first, together with others.
	MeanUplift   *float64  `json:"mean_uplift,omitempty"`
	MeanUpliftCI *Interval `json:"mean_uplift_ci,omitempty"`
	Wins         int       `json:"wins"`
	Tied         int       `json:"tied,omitempty"`
	// MeanFraction is the mean fraction of ideal over the scenarios where it
	// is defined; ByClass splits it by scenario class.
	MeanFraction *float64          `json:"mean_fraction_of_ideal"`
	ByClass      map[Class]float64 `json:"by_class"`
	// MeanFractionOfBound averages the fraction of the physical bound
	// where the backend reports one.
	MeanFractionOfBound *float64 `json:"mean_fraction_of_bound,omitempty"`
	N                   int      `json:"n"`
	Failed              int      `json:"failed"`
}

// Progress reports a sweep's progress: done of total measurements, and an
// estimate of the time left.
type Progress func(done, total int, current string, eta time.Duration)

// Sweep measures every scenario under every strategy on b, each with the
// full protocol of Measure (isolated baselines interleaved with the
// concurrent runs, so drift touches them alike).
//
// With opt.Passes > 1 (and a backend that is not deterministic) it goes
// over the whole grid that many times, every scenario in reverse order on
// every second pass, measuring a share of the repetitions (and of the
// time cap) each time, and merges each entry's passes (MergePasses): what
// changes between runs of a sweep minutes apart, with the scenario's
// buffers allocated again, then shows in the entry's intervals.
//
// onEntry, when not nil, gets every entry as soon as it is complete (at
// its last pass), with the concurrent repetition's timeline and telemetry
// (a recorder keeps what was done even if the sweep is cut short); the
// entries returned carry the numbers only. A sweep cut short returns the
// entries measured in at least one pass, merged from the passes made.
func Sweep(ctx context.Context, b backends.Backend, suite []scenarios.Scenario, grid []NamedStrategy, opt Options, progress Progress, onEntry func(SweepEntry)) ([]SweepEntry, error) {
	caps := b.Capabilities()
	passes := max(opt.Passes, 1)
	if caps.Deterministic {
		passes = 1
	}
	popt := opt
	if passes > 1 {
		popt.Passes = 0
		capT := opt.TimeCap
		if capT <= 0 {
			capT = DefaultTimeCap
		}
		popt.TimeCap = capT / time.Duration(passes)
	}
	cells := len(suite) * len(grid)
	total := cells * passes
	parts := make([][]Result, cells)
	errs := make([]string, cells)
	out := make([]SweepEntry, 0, cells)
	start := time.Now()
	done := 0
	finish := func(i int) SweepEntry {
		sc, ns := suite[i/len(grid)], grid[i%len(grid)]
		e := SweepEntry{Scenario: sc.Name, Strategy: ns.Name}
		switch {
		case errs[i] != "":
			e.Err = errs[i]
		case len(parts[i]) > 0:
			r, err := MergePasses(parts[i], caps.HBMBandwidth, opt.Precision)
			if err != nil {
				e.Err = err.Error()
			} else {
				e.Result = &r
			}
		default:
			return SweepEntry{}
		}
		return e
	}
	emit := func(e SweepEntry) {
		if onEntry != nil {
			// The callback (a recorder) gets the concurrent
			// repetition's timeline and telemetry; the returned
			// entries keep the numbers only.
			onEntry(e)
		}
		if e.Result != nil {
			trimmed := *e.Result
			trimmed.Timeline, trimmed.Samples = nil, nil
			e.Result = &trimmed
		}
		out = append(out, e)
	}
	cutShort := func(err error) ([]SweepEntry, error) {
		for i := range cells {
			if e := finish(i); e.Scenario != "" && !slices.ContainsFunc(out, func(o SweepEntry) bool { return o.Scenario == e.Scenario && o.Strategy == e.Strategy }) {
				emit(e)
			}
		}
		return out, err
	}
	for pass := range passes {
		for si := range suite {
			if pass%2 == 1 {
				si = len(suite) - 1 - si
			}
			sc := suite[si]
			for gi, ns := range grid {
				i := si*len(grid) + gi
				if err := ctx.Err(); err != nil {
					return cutShort(err)
				}
				if progress != nil {
					eta := time.Duration(0)
					if done > 0 {
						eta = time.Duration(float64(time.Since(start)) / float64(done) * float64(total-done))
					}
					label := sc.Name + " · " + ns.Name
					if passes > 1 {
						label = fmt.Sprintf("pass %d/%d · %s", pass+1, passes, label)
					}
					progress(done, total, label, eta)
				}
				if errs[i] == "" {
					po := popt
					if passes > 1 {
						// Each pass measures its share of the repetitions
						// (asked for, or the scenario's own).
						reps := opt.Reps
						if reps <= 0 {
							reps = sc.RepsOrDefault()
						}
						po.Reps = (reps + passes - 1) / passes
					}
					r, err := Measure(ctx, b, sc, ns.Strategy, po)
					if err != nil {
						if ctx.Err() != nil {
							return cutShort(ctx.Err())
						}
						errs[i] = err.Error()
					} else {
						if pass < passes-1 {
							r.Timeline, r.Samples = nil, nil
						}
						parts[i] = append(parts[i], r)
					}
				}
				done++
				if pass == passes-1 {
					emit(finish(i))
				}
			}
		}
	}
	if passes > 1 {
		// The last pass ran the scenarios in reverse (or in order): give
		// the entries in suite and grid order.
		slices.SortStableFunc(out, func(a, b SweepEntry) int { return cellIndex(suite, grid, a) - cellIndex(suite, grid, b) })
	}
	if progress != nil {
		progress(total, total, "", 0)
	}
	return out, nil
}

// cellIndex is an entry's position in a sweep of suite by grid.
func cellIndex(suite []scenarios.Scenario, grid []NamedStrategy, e SweepEntry) int {
	si := slices.IndexFunc(suite, func(sc scenarios.Scenario) bool { return sc.Name == e.Scenario })
	gi := slices.IndexFunc(grid, func(ns NamedStrategy) bool { return ns.Name == e.Strategy })
	return si*len(grid) + gi
}

// ScenarioBest is the strategy that ranked first on one scenario.
type ScenarioBest struct {
	Scenario string `json:"scenario"`
	Strategy string `json:"strategy"`
	// Uplift is its U (0 when unknown), TC3 its concurrent time (ns), as
	// selected: the highest of single measurements, which selection
	// biases upward (Remeasured holds the unbiased figure).
	Uplift float64 `json:"uplift,omitempty"`
	TC3    float64 `json:"t_c3_ns"`
	// UpliftCI and TC3CI are their intervals, when measured.
	UpliftCI *Interval `json:"uplift_ci,omitempty"`
	TC3CI    *Interval `json:"t_c3_ci,omitempty"`
	// Tied lists the strategies not told apart from it (Compare): their
	// intervals overlap its own, so it is first together with them.
	Tied []string `json:"tied,omitempty"`
	// Remeasured is the strategy measured again in fresh interleaved
	// rounds (RemeasureBests); nil until then.
	Remeasured *Remeasured `json:"remeasured,omitempty"`
}

// Remeasured is a selected strategy's figures measured again.
type Remeasured struct {
	Uplift   float64   `json:"uplift,omitempty"`
	UpliftCI *Interval `json:"uplift_ci,omitempty"`
	TC3      float64   `json:"t_c3_ns"`
	TC3CI    *Interval `json:"t_c3_ci,omitempty"`
	// Err says why it could not be measured again.
	Err string `json:"error,omitempty"`
}

// RemeasuredOf is a result's figures as Remeasured holds them.
func RemeasuredOf(r Result) *Remeasured {
	u, t := intervalsOf(r)
	return &Remeasured{Uplift: r.Uplift, UpliftCI: u, TC3: r.TC3.Median, TC3CI: t}
}

// intervalsOf returns a result's intervals of U and T_c3, nil where it
// has none.
func intervalsOf(r Result) (u, tc3 *Interval) {
	if r.CI == nil {
		return nil, nil
	}
	if r.CI.U.Valid() && r.Uplift > 0 {
		iv := r.CI.U
		u = &iv
	}
	if r.CI.TC3.Valid() {
		iv := r.CI.TC3
		tc3 = &iv
	}
	return u, tc3
}

// BestPerScenario returns, per scenario in first-seen order, the strategy
// ranked first: the one whose U (else T_c3) leads (Leads), with the
// strategies not told apart from it (Compare) as Tied. Scenarios where
// every run failed are left out.
func BestPerScenario(entries []SweepEntry) []ScenarioBest {
	var order []string
	best := map[string]*SweepEntry{}
	for i := range entries {
		e := &entries[i]
		if _, seen := best[e.Scenario]; !seen {
			order = append(order, e.Scenario)
			best[e.Scenario] = nil
		}
		if e.Result == nil || e.Result.TC3.N == 0 {
			continue
		}
		if b := best[e.Scenario]; b == nil || Leads(*e.Result, *b.Result) {
			best[e.Scenario] = e
		}
	}
	var out []ScenarioBest
	for _, sc := range order {
		b := best[sc]
		if b == nil {
			continue
		}
		sb := ScenarioBest{Scenario: sc, Strategy: b.Strategy, Uplift: b.Result.Uplift, TC3: b.Result.TC3.Median}
		sb.UpliftCI, sb.TC3CI = intervalsOf(*b.Result)
		for i := range entries {
			e := &entries[i]
			if e == b || e.Scenario != sc || e.Result == nil || e.Result.TC3.N == 0 {
				continue
			}
			if Compare(*b.Result, *e.Result) == NotToldApart {
				sb.Tied = append(sb.Tied, e.Strategy)
			}
		}
		out = append(out, sb)
	}
	return out
}

// RemeasureBests measures each scenario's best strategy again, in fresh
// interleaved rounds (no baseline reused), and sets its Remeasured: the
// figure a best reports without the upward bias of having been picked as
// the highest of single measurements. suite and grid are the sweep's.
func RemeasureBests(ctx context.Context, b backends.Backend, suite []scenarios.Scenario, grid []NamedStrategy, bests []ScenarioBest, opt Options) error {
	opt.Baseline = nil
	for i := range bests {
		if err := ctx.Err(); err != nil {
			return err
		}
		si := slices.IndexFunc(suite, func(sc scenarios.Scenario) bool { return sc.Name == bests[i].Scenario })
		gi := slices.IndexFunc(grid, func(ns NamedStrategy) bool { return ns.Name == bests[i].Strategy })
		if si < 0 || gi < 0 {
			bests[i].Remeasured = &Remeasured{Err: "not in the sweep's suite and grid"}
			continue
		}
		r, err := Measure(ctx, b, suite[si], grid[gi].Strategy, opt)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			bests[i].Remeasured = &Remeasured{Err: err.Error()}
			continue
		}
		bests[i].Remeasured = RemeasuredOf(r)
	}
	return nil
}

// SummarizeSweep averages each strategy over the sweep, in grid order:
// its uplift U (geometric mean, with an interval when every U has one)
// and its wins and ties, by which strategies compare, and its fraction
// of ideal and of the bound, which say how close each came to its own
// ideal.
func SummarizeSweep(entries []SweepEntry, grid []NamedStrategy) []StrategySummary {
	wins, tied := map[string]int{}, map[string]int{}
	for _, b := range BestPerScenario(entries) {
		if len(b.Tied) == 0 {
			wins[b.Strategy]++
			continue
		}
		tied[b.Strategy]++
		for _, t := range b.Tied {
			tied[t]++
		}
	}
	var out []StrategySummary
	for _, ns := range grid {
		s := StrategySummary{Strategy: ns.Name, ByClass: map[Class]float64{}, Wins: wins[ns.Name], Tied: tied[ns.Name]}
		var sum, boundSum, logU, varLogU float64
		boundN, uN, uCI := 0, 0, 0
		classSum, classN := map[Class]float64{}, map[Class]int{}
		for _, e := range entries {
			if e.Strategy != ns.Name {
				continue
			}
			if e.Result == nil {
				s.Failed++
				continue
			}
			if b := e.Result.Bound; b != nil && b.FractionOfBound != nil {
				boundSum += *b.FractionOfBound
				boundN++
			}
			if u := e.Result.Uplift; u > 0 && !math.IsInf(u, 0) {
				logU += math.Log(u)
				uN++
				if iv, _ := intervalsOf(*e.Result); iv != nil && iv.Lo > 0 {
					// The interval of log U as a normal one's: its
					// standard error is a quarter of its width / 1.96.
					se := (math.Log(iv.Hi) - math.Log(iv.Lo)) / (2 * z975)
					varLogU += se * se
					uCI++
				}
			}
			f, ok := e.Result.Fraction()
			if !ok {
				continue
			}
			sum += f
			s.N++
			classSum[e.Result.Class] += f
			classN[e.Result.Class]++
		}
		if s.N > 0 {
			m := sum / float64(s.N)
			s.MeanFraction = &m
		}
		if boundN > 0 {
			m := boundSum / float64(boundN)
			s.MeanFractionOfBound = &m
		}
		if uN > 0 {
			m := math.Exp(logU / float64(uN))
			s.MeanUplift = &m
			if uCI == uN {
				half := z975 * math.Sqrt(varLogU) / float64(uN)
				ml := logU / float64(uN)
				s.MeanUpliftCI = &Interval{Lo: math.Exp(ml - half), Hi: math.Exp(ml + half)}
			}
		}
		for c, v := range classSum {
			s.ByClass[c] = v / float64(classN[c])
		}
		out = append(out, s)
	}
	return out
}

// z975 is the standard normal's 97.5th percentile.
const z975 = 1.959963984540054

// ParseGrid picks named strategies from DefaultGrid and CopyEngineGrid on
// a device of limits lim, in the given order; no names means DefaultGrid.
func ParseGrid(names []string, lim scenarios.Limits) ([]NamedStrategy, error) {
	if err := CheckGridNames(names); err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return DefaultGrid(lim), nil
	}
	all := namedGrids(lim)
	var out []NamedStrategy
	for _, n := range names {
		i := slices.IndexFunc(all, func(ns NamedStrategy) bool { return ns.Name == n })
		out = append(out, all[i])
	}
	return out, nil
}

// CheckGridNames refuses a name ParseGrid does not know, before any
// backend (whose limits give the values) is open.
func CheckGridNames(names []string) error {
	known := GridNames()
	for _, n := range names {
		if !slices.Contains(known, n) {
			return fmt.Errorf("unknown strategy %q; known: %v", n, known)
		}
	}
	return nil
}

// GridNames lists the names ParseGrid knows, the default grid first; they
// are the same on every device.
func GridNames() []string {
	var names []string
	for _, ns := range namedGrids(scenarios.Limits{}) {
		names = append(names, ns.Name)
	}
	return names
}
