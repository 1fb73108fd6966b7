package calib

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// The sides of a split a run is scored on.
const (
	SetInSample = "in-sample"
	SetHeldOut  = "held-out"
	// SetAll is every run, when the profile records no split.
	SetAll = "all"
)

// RankingTolerance is how close to the measured best T_c3 the
// simulator's best strategy must come for its ranking to count as right.
const RankingTolerance = 0.03

// RunError is one run's errors: relative for the times (simulated /
// measured - 1), in points of the fraction of ideal for F (simulated -
// measured; NaN when either is undefined).
type RunError struct {
	Sweep      int     `json:"sweep"`
	Scenario   string  `json:"scenario"`
	Strategy   string  `json:"strategy"`
	Collective string  `json:"collective"`
	Class      string  `json:"class"`
	StreamKind string  `json:"stream_kind,omitempty"`
	Set        string  `json:"set"`
	Comp       float64 `json:"t_comp"`
	Comm       float64 `json:"t_comm"`
	C3         float64 `json:"t_c3"`
	F          float64 `json:"f_points"`
	// RealC3 and SimC3 are the two T_c3, seconds.
	RealC3 float64 `json:"real_t_c3"`
	SimC3  float64 `json:"sim_t_c3"`
	// RealF is the measured fraction of ideal, % (NaN when undefined):
	// the scale an F error is read against.
	RealF float64 `json:"real_f"`
	// IdealBand is the band of the measured ideal speedup the run falls
	// in (IdealBand): F's error grows as 1 / (S_ideal - 1) for the same
	// error in T_c3, so F errors are read per band.
	IdealBand string `json:"ideal_band,omitempty"`
	// GPUs is how many GPUs the run used.
	GPUs int `json:"gpus"`
	// workload is what ran (the ops, GPUs and strategy), so that a run is
	// compared with another sweep's only when both ran the same thing: a
	// renamed scenario may have changed.
	workload string
}

// workloadOf fingerprints what a run ran: its scenario's GPUs and ops and
// the strategy, leaving the names and descriptions out.
func workloadOf(r Run) string {
	b, err := json.Marshal(struct {
		GPUs    int
		Compute scenarios.ComputeOp
		Comm    scenarios.CommOp
		Streams []scenarios.StreamSpec
		Strat   scenarios.Strategy
	}{r.Scen.GPUs, r.Scen.Compute, r.Scen.Comm, r.Scen.Streams, r.Strat})
	if err != nil {
		// Plain data always encodes; a failure makes the run its own.
		return fmt.Sprintf("%s/%d", r.Scenario, r.Sweep)
	}
	return string(b)
}

// IdealBand names the band of a measured ideal speedup: below 1.2 (one op
// at least five times the other, where 1 % of T_c3 is 5 points of F or
// more), 1.2 to 1.5, and 1.5 or more; empty when it is undefined.
func IdealBand(sIdeal float64) string {
	for _, b := range idealBands() {
		if b.Holds(sIdeal) {
			return b.Name()
		}
	}
	return ""
}

// idealBands are IdealBand's bands, lowest first (To 0: no upper edge).
func idealBands() []sim.SpeedupBandErrors {
	return []sim.SpeedupBandErrors{{From: 1, To: 1.2}, {From: 1.2, To: 1.5}, {From: 1.5}}
}

// MarshalJSON writes an undefined error (NaN) as null: JSON has no NaN.
func (e RunError) MarshalJSON() ([]byte, error) {
	type plain RunError // the same fields, without this method
	num := func(x float64) *float64 {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil
		}
		return &x
	}
	return json.Marshal(struct {
		plain
		Comp  *float64 `json:"t_comp"`
		Comm  *float64 `json:"t_comm"`
		C3    *float64 `json:"t_c3"`
		F     *float64 `json:"f_points"`
		RealF *float64 `json:"real_f"`
	}{plain(e), num(e.Comp), num(e.Comm), num(e.C3), num(e.F), num(e.RealF)})
}

// Stat sums up |errors|: how many, the median, the 90th percentile
// (nearest rank) and the largest.
type Stat struct {
	N      int     `json:"n"`
	Median float64 `json:"median"`
	P90    float64 `json:"p90"`
	Max    float64 `json:"max"`
}

// stat computes the Stat of |v|, leaving NaNs out.
func stat(v []float64) Stat {
	var a []float64
	for _, x := range v {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			a = append(a, math.Abs(x))
		}
	}
	if len(a) == 0 {
		return Stat{}
	}
	slices.Sort(a)
	n := len(a)
	med := a[n/2]
	if n%2 == 0 {
		med = (a[n/2-1] + a[n/2]) / 2
	}
	return Stat{N: n, Median: med, P90: a[int(math.Ceil(0.9*float64(n)))-1], Max: a[n-1]}
}

// Group is the error table's row: the runs of one set whose By is Key.
type Group struct {
	// By is what groups the runs: "all", "collective", "class",
	// "strategy" or "stream kind".
	By  string `json:"by"`
	Key string `json:"key"`
	Set string `json:"set"`
	// Comp, Comm and C3 are relative errors (0.05: 5 %); F in points.
	Comp Stat `json:"t_comp"`
	Comm Stat `json:"t_comm"`
	C3   Stat `json:"t_c3"`
	F    Stat `json:"f_points"`
}

// RankMiss is a scenario whose simulated best strategy is not within
// RankingTolerance of the measured best.
type RankMiss struct {
	Scenario string `json:"scenario"`
	Sweep    int    `json:"sweep"`
	SimBest  string `json:"sim_best"`
	RealBest string `json:"real_best"`
	// Loss is how much slower, measured, the simulator's pick is than the
	// best (0.05: 5 %).
	Loss float64 `json:"loss"`
}

// Ranking is the ranking check of one set: of Cases scenarios (a scenario
// of one sweep with two strategies or more), Within had the simulator's
// best within RankingTolerance of the measured best T_c3.
type Ranking struct {
	Set    string     `json:"set"`
	Cases  int        `json:"cases"`
	Within int        `json:"within"`
	Share  float64    `json:"share"`
	Misses []RankMiss `json:"misses,omitempty"`
}

// Report is validate's result.
type Report struct {
	Tool    string   `json:"tool"`
	Profile string   `json:"profile"`
	Sweeps  []string `json:"sweeps"`
	// Split says whether the profile recorded its fit set.
	Split bool `json:"split"`
	Runs  int  `json:"runs"`
	// Skipped counts the runs the simulator could not replay, and
	// SkippedWhy says why for the first few.
	Skipped    int       `json:"skipped,omitempty"`
	SkippedWhy []string  `json:"skipped_why,omitempty"`
	Groups     []Group   `json:"groups"`
	Ranking    []Ranking `json:"ranking"`
	// Repeat is the measurement's own repeatability, where sweeps measured
	// the same runs (nil where none did).
	Repeat *Repeatability `json:"repeatability,omitempty"`
	// Errors are the runs one by one.
	Errors []RunError `json:"runs_detail,omitempty"`
	// Worst are, when asked for (SetWorst), the runs of each set with the
	// largest T_c3 error, largest first: where the model is most wrong.
	Worst []WorstRun `json:"worst,omitempty"`
}

// WorstRun is one of the runs the simulator gets most wrong: its errors
// (F nil where either F is undefined) and the two T_c3.
type WorstRun struct {
	Set      string   `json:"set"`
	Sweep    int      `json:"sweep"`
	Scenario string   `json:"scenario"`
	Strategy string   `json:"strategy"`
	Class    string   `json:"class"`
	Comp     float64  `json:"t_comp"`
	Comm     float64  `json:"t_comm"`
	C3       float64  `json:"t_c3"`
	F        *float64 `json:"f_points,omitempty"`
	RealC3   float64  `json:"real_t_c3"`
	SimC3    float64  `json:"sim_t_c3"`
}

// SetWorst fills r.Worst with the n runs of each set with the largest
// |T_c3| error (ties broken by scenario and strategy, so the list does not
// depend on the order the runs were replayed in).
func (r *Report) SetWorst(n int) {
	r.Worst = nil
	if n <= 0 {
		return
	}
	for _, set := range sets(r.Errors) {
		var in []RunError
		for _, e := range r.Errors {
			if e.Set == set && !math.IsNaN(e.C3) {
				in = append(in, e)
			}
		}
		slices.SortStableFunc(in, func(a, b RunError) int {
			if c := cmp.Compare(math.Abs(b.C3), math.Abs(a.C3)); c != 0 {
				return c
			}
			if c := strings.Compare(a.Scenario, b.Scenario); c != 0 {
				return c
			}
			return strings.Compare(a.Strategy, b.Strategy)
		})
		for _, e := range in[:min(n, len(in))] {
			w := WorstRun{Set: set, Sweep: e.Sweep, Scenario: e.Scenario, Strategy: e.Strategy, Class: e.Class,
				Comp: e.Comp, Comm: e.Comm, C3: e.C3, RealC3: e.RealC3, SimC3: e.SimC3}
			if !math.IsNaN(e.F) {
				f := e.F
				w.F = &f
			}
			r.Worst = append(r.Worst, w)
		}
	}
}

// ReportTool is what a Report's tool says.
const ReportTool = "c3lab validate"

// Validate replays the runs on p and scores them. fit records the split
// (nil: every run in one set, SetAll); a scenario in neither of its lists
// counts as held out, since the fit never saw it.
func Validate(ctx context.Context, p sim.Profile, fit *sim.FitRecord, runs []Run) (Report, error) {
	res, runErrs, err := replayEach(ctx, p, runs)
	if err != nil {
		return Report{}, err
	}
	var inFit map[string]bool
	if fit != nil {
		inFit = map[string]bool{}
		for _, s := range fit.FitSet {
			inFit[s] = true
		}
	}
	rep := Report{Tool: ReportTool, Split: fit != nil}
	for i, r := range runs {
		if runErrs[i] != nil {
			// A run the simulator cannot model (a knob it lacks) is
			// left out and said.
			rep.Skipped++
			if len(rep.SkippedWhy) < 5 {
				rep.SkippedWhy = append(rep.SkippedWhy, runErrs[i].Error())
			}
			continue
		}
		rep.Runs++
		e := RunError{Sweep: r.Sweep, Scenario: r.Scenario, Strategy: r.Strategy, Collective: string(r.Scen.Comm.Collective),
			Class: string(r.Real.Class), StreamKind: StreamKind(r.Scen), Set: SetAll,
			Comp: rel(res[i].TComp.Median, r.Real.TComp.Median), Comm: rel(res[i].TComm.Median, r.Real.TComm.Median),
			C3: rel(res[i].TC3.Median, r.Real.TC3.Median), F: math.NaN(), RealF: math.NaN(),
			IdealBand: IdealBand(r.Real.IdealSpeedup), GPUs: max(r.Scen.GPUs, 1), workload: workloadOf(r),
			RealC3: r.Real.TC3.Median / 1e9, SimC3: res[i].TC3.Median / 1e9}
		if e.Class == "" {
			e.Class = string(profiler.Classify(r.Real.TComp.Median, r.Real.TComm.Median))
		}
		if fit != nil {
			e.Set = SetHeldOut
			if inFit[r.Scenario] {
				e.Set = SetInSample
			}
		}
		a, okA := r.Real.Fraction()
		s, okS := res[i].Fraction()
		if okA {
			e.RealF = 100 * a
		}
		if okA && okS {
			e.F = 100 * (s - a)
		}
		rep.Errors = append(rep.Errors, e)
	}
	rep.Groups = groups(rep.Errors)
	rep.Ranking = rankings(rep.Errors)
	rep.Repeat = repeatability(rep.Errors)
	return rep, nil
}

// Repeatability is how far the measurement itself moves: for the runs
// (a scenario under a strategy, the same ops) that more than one sweep
// measured, the |difference| between every two sweeps' T_c3 (relative)
// and F (points). Sweeps taken on other GPUs or days differ by more than
// the intervals of one sweep say; no model is scored closer than this on
// such runs.
type Repeatability struct {
	// Cells counts the runs measured in two sweeps or more, Pairs the
	// pairs of measurements compared.
	Cells int  `json:"cells"`
	Pairs int  `json:"pairs"`
	C3    Stat `json:"t_c3"`
	F     Stat `json:"f_points"`
	// ByBand is the same by the measured ideal speedup (RunError.IdealBand
	// of the earlier sweep's run), in the bands' order by name: F is
	// (S_real - 1) / (S_ideal - 1), so where S_ideal is close to 1 a small
	// change of T_c3 is a large one of F, for the measurement as for the
	// model.
	ByBand []BandRepeatability `json:"by_ideal_band,omitempty"`
}

// BandRepeatability is Repeatability's figures for the runs of one ideal
// speedup band.
type BandRepeatability struct {
	Band  string `json:"band"`
	Pairs int    `json:"pairs"`
	C3    Stat   `json:"t_c3"`
	F     Stat   `json:"f_points"`
}

// groupInOrder groups the errors by key, the keys in the order they first
// appear (so that what is built from the groups does not depend on map
// order).
func groupInOrder[K comparable](errs []RunError, key func(RunError) K) ([]K, map[K][]RunError) {
	by := map[K][]RunError{}
	var order []K
	for _, e := range errs {
		k := key(e)
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], e)
	}
	return order, by
}

// repeatability compares the measured T_c3 and F of every run that two
// sweeps or more measured (nil when none did).
func repeatability(errs []RunError) *Repeatability {
	type cell struct{ scenario, strategy, workload string }
	order, by := groupInOrder(errs, func(e RunError) cell { return cell{e.Scenario, e.Strategy, e.workload} })
	var r Repeatability
	var c3, f []float64
	type diffs struct {
		pairs int
		c3, f []float64
	}
	var bands []string
	band := map[string]*diffs{}
	for _, c := range order {
		es := by[c]
		n := 0
		for i := range es {
			for j := i + 1; j < len(es); j++ {
				if es[i].Sweep == es[j].Sweep {
					continue
				}
				n++
				dc, df := rel(es[j].RealC3, es[i].RealC3), es[j].RealF-es[i].RealF
				c3, f = append(c3, dc), append(f, df)
				if k := es[i].IdealBand; k != "" {
					d, ok := band[k]
					if !ok {
						d = &diffs{}
						band[k] = d
						bands = append(bands, k)
					}
					d.pairs++
					d.c3, d.f = append(d.c3, dc), append(d.f, df)
				}
			}
		}
		if n > 0 {
			r.Cells++
			r.Pairs += n
		}
	}
	if r.Cells == 0 {
		return nil
	}
	r.C3, r.F = stat(c3), stat(f)
	slices.Sort(bands)
	for _, k := range bands {
		d := band[k]
		r.ByBand = append(r.ByBand, BandRepeatability{Band: k, Pairs: d.pairs, C3: stat(d.c3), F: stat(d.f)})
	}
	return &r
}

// rel is sim / real - 1, NaN when real is not positive.
func rel(sim, real float64) float64 {
	if real <= 0 {
		return math.NaN()
	}
	return sim/real - 1
}

// sets lists the sets the errors fall in, in report order.
func sets(errs []RunError) []string {
	var out []string
	for _, s := range []string{SetInSample, SetHeldOut, SetAll} {
		if slices.ContainsFunc(errs, func(e RunError) bool { return e.Set == s }) {
			out = append(out, s)
		}
	}
	return out
}

// groupings are the table's sections: what groups the runs, and each
// run's key (empty: not in this section).
var groupings = []struct {
	by  string
	key func(RunError) string
}{
	{"all", func(RunError) string { return "all" }},
	{"collective", func(e RunError) string { return e.Collective }},
	{"class", func(e RunError) string { return e.Class }},
	{"strategy", func(e RunError) string { return e.Strategy }},
	{"stream kind", func(e RunError) string { return e.StreamKind }},
	{"ideal speedup (measured)", func(e RunError) string { return e.IdealBand }},
}

func groups(errs []RunError) []Group {
	var out []Group
	for _, g := range groupings {
		var keys []string
		for _, e := range errs {
			if k := g.key(e); k != "" {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for _, k := range keys {
			for _, set := range sets(errs) {
				var comp, comm, c3, f []float64
				for _, e := range errs {
					if e.Set == set && g.key(e) == k {
						comp, comm, c3, f = append(comp, e.Comp), append(comm, e.Comm), append(c3, e.C3), append(f, e.F)
					}
				}
				if len(c3) == 0 {
					continue
				}
				out = append(out, Group{By: g.by, Key: k, Set: set, Comp: stat(comp), Comm: stat(comm), C3: stat(c3), F: stat(f)})
			}
		}
	}
	return out
}

// rankings checks, per set, each scenario of each sweep with two
// strategies or more: the strategy the simulator ranks first (lowest
// T_c3) against the measured best T_c3.
func rankings(errs []RunError) []Ranking {
	type key struct {
		sweep int
		name  string
	}
	order, by := groupInOrder(errs, func(e RunError) key { return key{e.Sweep, e.Scenario} })
	var out []Ranking
	for _, set := range sets(errs) {
		r := Ranking{Set: set}
		for _, k := range order {
			es := by[k]
			if len(es) < 2 || es[0].Set != set {
				continue
			}
			simBest, realBest := es[0], es[0]
			for _, e := range es[1:] {
				if e.SimC3 < simBest.SimC3 {
					simBest = e
				}
				if e.RealC3 < realBest.RealC3 {
					realBest = e
				}
			}
			r.Cases++
			loss := simBest.RealC3/realBest.RealC3 - 1
			if loss <= RankingTolerance {
				r.Within++
			} else {
				r.Misses = append(r.Misses, RankMiss{Scenario: k.name, Sweep: k.sweep, SimBest: simBest.Strategy, RealBest: realBest.Strategy, Loss: loss})
			}
		}
		if r.Cases > 0 {
			r.Share = float64(r.Within) / float64(r.Cases)
		}
		out = append(out, r)
	}
	return out
}

// Find returns the group of a set by what and key, and whether it is there.
func (r Report) Find(by, key, set string) (Group, bool) {
	for _, g := range r.Groups {
		if g.By == by && g.Key == key && g.Set == set {
			return g, true
		}
	}
	return Group{}, false
}

// WriteJSON writes the report as indented JSON, without the per-run
// detail unless detail.
func WriteJSON(w io.Writer, r Report, detail bool) error {
	if !detail {
		r.Errors = nil
	}
	// JSON has no NaN: a Stat of no runs is all zeros already.
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// ReadReport reads a report WriteJSON wrote (the committed figures).
func ReadReport(path string) (Report, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Report{}, err
	}
	var r Report
	if err := json.Unmarshal(data, &r); err != nil {
		return Report{}, fmt.Errorf("%s: not a c3lab validate report: %w", path, err)
	}
	if r.Tool != ReportTool {
		return Report{}, fmt.Errorf("%s: not a c3lab validate report (tool %q)", path, r.Tool)
	}
	return r, nil
}

// WriteTable writes the error table for people: per section and set,
// T_comp, T_comm and T_c3 |relative error| in % and F |error| in points,
// each as median / p90 / max, then the ranking check.
func WriteTable(w io.Writer, r Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "%d runs replayed on the simulator (profile %s)", r.Runs, r.Profile)
	if !r.Split {
		b.WriteString("; the profile records no fit set, so every run is in one set")
	}
	if r.Skipped > 0 {
		fmt.Fprintf(&b, "; %d left out, the simulator could not replay them (%s)", r.Skipped, strings.Join(r.SkippedWhy, "; "))
	}
	b.WriteString("\n|error|: median / p90 / max; T_* relative in %, F (% of ideal) in points\n")
	by := ""
	for _, g := range r.Groups {
		if g.By != by {
			by = g.By
			fmt.Fprintf(&b, "\n%-38s %-9s %4s  %-18s  %-18s  %-18s  %-18s\n", "by "+by, "set", "runs", "T_comp %", "T_comm %", "T_c3 %", "F points")
		}
		pct := func(s Stat) string {
			if s.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%5.1f /%5.1f /%6.1f", 100*s.Median, 100*s.P90, 100*s.Max)
		}
		pts := func(s Stat) string {
			if s.N == 0 {
				return "-"
			}
			return fmt.Sprintf("%5.1f /%5.1f /%6.1f", s.Median, s.P90, s.Max)
		}
		key := g.Key
		if len(key) > 38 {
			key = key[:37] + "…"
		}
		fmt.Fprintf(&b, "%-38s %-9s %4d  %-18s  %-18s  %-18s  %-18s\n", key, g.Set, g.C3.N, pct(g.Comp), pct(g.Comm), pct(g.C3), pts(g.F))
	}
	b.WriteString("\nranking: the simulator's best strategy within 3 % of the measured best T_c3\n")
	for _, k := range r.Ranking {
		fmt.Fprintf(&b, "  %-9s %d of %d scenarios (%.0f %%)", k.Set, k.Within, k.Cases, 100*k.Share)
		if len(k.Misses) > 0 {
			var m []string
			for _, x := range k.Misses {
				m = append(m, fmt.Sprintf("%s: %s for %s, +%.1f %%", x.Scenario, x.SimBest, x.RealBest, 100*x.Loss))
			}
			fmt.Fprintf(&b, "; missed %s", strings.Join(m, "; "))
		}
		b.WriteString("\n")
	}
	if x := r.Repeat; x != nil {
		fmt.Fprintf(&b, "\nthe measurement itself: %d runs measured by two sweeps or more (%d pairs) differ by |T_c3| %.1f / %.1f / %.1f %%, |F| %.1f / %.1f / %.1f points\n",
			x.Cells, x.Pairs, 100*x.C3.Median, 100*x.C3.P90, 100*x.C3.Max, x.F.Median, x.F.P90, x.F.Max)
		if len(x.ByBand) > 0 {
			b.WriteString("  by measured ideal speedup, against the simulator's |F| error there (held out, else every run):\n")
		}
		for _, k := range x.ByBand {
			model := "-"
			g, ok := r.Find("ideal speedup (measured)", k.Band, SetHeldOut)
			if !ok {
				g, ok = r.Find("ideal speedup (measured)", k.Band, SetAll)
			}
			if ok && g.F.N > 0 {
				model = fmt.Sprintf("%.1f / %.1f (%s)", g.F.Median, g.F.P90, g.Set)
			}
			fmt.Fprintf(&b, "  %-20s %3d pairs: |T_c3| %4.1f / %4.1f %%, |F| %5.1f / %5.1f points; the simulator |F| %s\n",
				k.Band, k.Pairs, 100*k.C3.Median, 100*k.C3.P90, k.F.Median, k.F.P90, model)
		}
	}
	set := ""
	for _, x := range r.Worst {
		if x.Set != set {
			set = x.Set
			fmt.Fprintf(&b, "\nworst %s runs by T_c3 error (simulated / measured - 1)\n", set)
			fmt.Fprintf(&b, "  %-52s %-18s %9s %9s %8s %8s %8s %7s\n", "scenario", "strategy", "measured", "simulated", "T_c3", "T_comp", "T_comm", "F pt")
		}
		f := "-"
		if x.F != nil {
			f = fmt.Sprintf("%+.1f", *x.F)
		}
		name := x.Scenario
		if len(name) > 52 {
			name = name[:51] + "…"
		}
		fmt.Fprintf(&b, "  %-52s %-18s %9s %9s %+7.1f%% %+7.1f%% %+7.1f%% %7s\n", name, x.Strategy,
			report.Duration(1e9*x.RealC3), report.Duration(1e9*x.SimC3), 100*x.C3, 100*x.Comp, 100*x.Comm, f)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Ratchet tolerances: how much worse than the committed figures a metric
// may get before the ratchet fails (the simulator is deterministic, so
// only a change of the model or the profile moves them).
const (
	RatchetTolTime    = 0.001 // 0.1 % of relative error
	RatchetTolF       = 0.1   // points
	RatchetTolRanking = 1e-9
)

// Ratchet compares a report with the committed one: for each set the
// committed figures have, the overall median and p90 of T_comp, T_comm,
// T_c3 and F, and the ranking share. It returns one line per metric that
// got worse beyond its tolerance (none: fidelity held).
func Ratchet(now, committed Report) []string {
	var bad []string
	for _, old := range committed.Groups {
		if old.By != "all" {
			continue
		}
		cur, ok := now.Find("all", "all", old.Set)
		if !ok {
			bad = append(bad, fmt.Sprintf("%s: no run in this set now; the committed figures have %d", old.Set, old.C3.N))
			continue
		}
		for _, m := range []struct {
			name     string
			old, cur Stat
			tol      float64
			unit     float64
			suffix   string
		}{
			{"T_comp", old.Comp, cur.Comp, RatchetTolTime, 100, " %"},
			{"T_comm", old.Comm, cur.Comm, RatchetTolTime, 100, " %"},
			{"T_c3", old.C3, cur.C3, RatchetTolTime, 100, " %"},
			{"F", old.F, cur.F, RatchetTolF, 1, " points"},
		} {
			for _, q := range []struct {
				name     string
				old, cur float64
			}{{"median", m.old.Median, m.cur.Median}, {"p90", m.old.P90, m.cur.P90}} {
				if q.cur > q.old+m.tol {
					bad = append(bad, fmt.Sprintf("%s %s %s error got worse: %.2f%s, committed %.2f%s", old.Set, m.name, q.name,
						q.cur*m.unit, m.suffix, q.old*m.unit, m.suffix))
				}
			}
		}
	}
	for _, old := range committed.Ranking {
		var cur *Ranking
		for i := range now.Ranking {
			if now.Ranking[i].Set == old.Set {
				cur = &now.Ranking[i]
			}
		}
		if cur == nil || cur.Share < old.Share-RatchetTolRanking {
			got := 0.0
			if cur != nil {
				got = cur.Share
			}
			bad = append(bad, fmt.Sprintf("%s ranking got worse: %.1f %% of scenarios within 3 %%, committed %.1f %%", old.Set, 100*got, 100*old.Share))
		}
	}
	return bad
}
