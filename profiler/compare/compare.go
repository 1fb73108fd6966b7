package compare

import (
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// Defaults of Options.
const (
	DefaultLevel     = 0.95
	DefaultResamples = 2000
	DefaultAlpha     = 0.05
)

// Options tune a comparison.
type Options struct {
	// Level is the confidence level of the intervals; 0 is DefaultLevel.
	Level float64
	// Resamples is the number of bootstrap resamples; 0 is
	// DefaultResamples.
	Resamples int
	// Alpha is the level the Mann-Whitney p-value of T_c3 must be under
	// for a change to be significant; 0 is DefaultAlpha.
	Alpha float64
	// Seed seeds the bootstrap (each pair's draws also depend on its
	// scenario and strategy, not on its place): one seed, one report.
	Seed uint64
	// Machine are the limits beyond which the two sides' machine states
	// differ (Pair.Machine); the zero value is
	// profiler.DefaultDriftThresholds.
	Machine profiler.DriftThresholds
}

func (o Options) withDefaults() Options {
	if o.Level <= 0 || o.Level >= 1 {
		o.Level = DefaultLevel
	}
	if o.Resamples <= 0 {
		o.Resamples = DefaultResamples
	}
	if o.Alpha <= 0 || o.Alpha >= 1 {
		o.Alpha = DefaultAlpha
	}
	if o.Machine == (profiler.DriftThresholds{}) {
		o.Machine = profiler.DefaultDriftThresholds()
	}
	return o
}

// Figure names a figure compare reports.
type Figure string

// The figures compare reports. T_c3 and U change by a ratio (new / old),
// F by a difference (new - old, a fraction: 0.01 is one point).
const (
	TC3      Figure = "t_c3"
	Uplift   Figure = "uplift"
	Fraction Figure = "fraction_of_ideal"
)

// Ratio reports whether the figure's change is a ratio (else a difference).
func (f Figure) Ratio() bool { return f != Fraction }

// Change is how one figure moved from the old result to the new. Unknown
// values are NaN.
type Change struct {
	Old, New float64
	// Delta is New / Old for a ratio figure, New - Old for F.
	Delta float64
	// CI is the interval of Delta at the report's level, from the
	// bootstrap; not Valid when it could not be computed (a side without
	// repetitions). For an exact change it is [Delta, Delta].
	CI profiler.Interval
	// Exact is set when neither side has noise (the simulator): Delta is
	// the change itself, without uncertainty.
	Exact bool
	// Significant is set when the interval excludes no change (and, for
	// T_c3, the Mann-Whitney p-value is under alpha); for an exact change,
	// when Delta is not no change.
	Significant bool
}

// Known reports whether both sides have the figure.
func (c Change) Known() bool { return !math.IsNaN(c.Delta) }

// Verdict is what a pair's T_c3 did.
type Verdict string

// Verdicts.
const (
	// Faster and Slower are significant changes of T_c3.
	Faster Verdict = "faster"
	Slower Verdict = "slower"
	// Same is no significant change.
	Same Verdict = "same"
	// Unknown: a side has no T_c3.
	Unknown Verdict = "unknown"
)

// Pair is one scenario under one strategy, measured in both inputs.
type Pair struct {
	Scenario string
	// Strategy is the strategy's canonical string (scenarios.Strategy's
	// String), by which results are paired; Name is the short name both
	// sweeps gave it, or Strategy.
	Strategy, Name string
	TC3, U, F      Change
	// P is the Mann-Whitney p-value of the T_c3 repetitions (NaN when not
	// computed: an exact change, a side without repetitions); NOld and
	// NNew the repetitions on each side.
	P          float64
	NOld, NNew int
	Verdict    Verdict
	// Notes say what else differs (the scenario's definition, the
	// backend) or why there is no interval.
	Notes []string
	// Machine compares the GPUs' state in both sides' concurrent runs,
	// read during the runs when both sides have such readings, else at
	// the runs' start and end (Machine.During says which); nil when a side
	// has no machine record (the simulator, older files).
	Machine *Machine

	// draws are the bootstrap's draws of the log T_c3 ratio and log U
	// ratio, for the summary's interval.
	drawsT, drawsU []float64
}

// Change returns the pair's change of figure f.
func (p Pair) Change(f Figure) Change {
	switch f {
	case Uplift:
		return p.U
	case Fraction:
		return p.F
	}
	return p.TC3
}

// Key is a result's scenario and strategy, for those without a pair.
type Key struct {
	Scenario string `json:"scenario"`
	Strategy string `json:"strategy"`
}

// Summary sums up the pairs.
type Summary struct {
	// Pairs is the number of pairs; Faster, Slower, Same and Unknown
	// count them by verdict.
	Pairs, Faster, Slower, Same, Unknown int
	// GeomeanTC3 and GeomeanU are the geometric means over the pairs of
	// the T_c3 and U ratios (Old and New the geometric means of each
	// side), with their bootstrap intervals.
	GeomeanTC3, GeomeanU Change
	// NTC3 and NU are the pairs each mean is over.
	NTC3, NU int
	// Machine sums up the machine states; nil when no pair has a machine
	// record on either side.
	Machine *MachineSummary
}

// Report is a comparison.
type Report struct {
	Old, New  Source
	Level     float64
	Resamples int
	Alpha     float64
	Pairs     []Pair
	// OnlyOld and OnlyNew are the results without a pair.
	OnlyOld, OnlyNew []Key
	Summary          Summary
	// Notes say what was left out and why.
	Notes []string
}

// key is a result's pairing key.
func key(r profiler.Result) Key {
	return Key{Scenario: r.Scenario.Name, Strategy: r.Strategy.Normalize().String()}
}

// index keeps the last entry of each key, in order of first appearance,
// and notes how many were dropped as repeats.
func index(in Input, side string) (order []Key, by map[Key]Entry, notes []string) {
	by = map[Key]Entry{}
	dup := 0
	for _, e := range in.Entries {
		k := key(e.Result)
		if _, ok := by[k]; ok {
			dup++
		} else {
			order = append(order, k)
		}
		by[k] = e
	}
	for _, n := range in.Notes {
		notes = append(notes, side+": "+n)
	}
	if dup > 0 {
		notes = append(notes, fmt.Sprintf("%s: %d result(s) repeat a scenario and strategy; the last of each is compared", side, dup))
	}
	return order, by, notes
}

// Compare pairs the results of old and new by scenario and strategy and
// reports each pair's change, the unpaired results, and the summary.
func Compare(old, new Input, opt Options) Report {
	opt = opt.withDefaults()
	rep := Report{Old: old.Source, New: new.Source, Level: opt.Level, Resamples: opt.Resamples, Alpha: opt.Alpha}
	oOrder, oBy, oNotes := index(old, "old")
	nOrder, nBy, nNotes := index(new, "new")
	rep.Notes = append(oNotes, nNotes...)
	var olds, news []sideSums
	var paired []Key
	for _, k := range oOrder {
		if _, ok := nBy[k]; ok {
			paired = append(paired, k)
		} else {
			rep.OnlyOld = append(rep.OnlyOld, k)
		}
	}
	pairs := compareAll(paired, oBy, nBy, opt)
	oneSided := 0
	for i, k := range paired {
		n, p := nBy[k], pairs[i]
		oSum, nSum := sidesOf(oBy[k].Result), sidesOf(n.Result)
		m, one := compareSides(oSum, nSum, opt.Machine)
		p.Machine = m
		if one {
			oneSided++
		}
		rep.Pairs = append(rep.Pairs, p)
		olds, news = append(olds, oSum), append(news, nSum)
	}
	for _, k := range nOrder {
		if _, ok := oBy[k]; !ok {
			rep.OnlyNew = append(rep.OnlyNew, k)
		}
	}
	rep.Summary = summarize(rep.Pairs, opt)
	rep.Summary.Machine = summarizeMachine(rep.Pairs, olds, news, oneSided, opt.Machine)
	return rep
}

// compareAll compares each key's pair, spread over the CPUs: the
// bootstrap is most of compare's time, and each pair's draws come from its
// own seed (seedOf), so the report is the same whatever the order.
func compareAll(keys []Key, oBy, nBy map[Key]Entry, opt Options) []Pair {
	out := make([]Pair, len(keys))
	work := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(keys)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				out[i] = comparePair(keys[i], oBy[keys[i]], nBy[keys[i]], opt)
			}
		}()
	}
	for i := range keys {
		work <- i
	}
	close(work)
	wg.Wait()
	return out
}

// seedOf derives a pair's bootstrap seed from the options' and its key.
func seedOf(seed uint64, k Key) uint64 {
	h := fnv.New64a()
	h.Write([]byte(k.Scenario))
	h.Write([]byte{0})
	h.Write([]byte(k.Strategy))
	return seed ^ h.Sum64()
}

func comparePair(k Key, o, n Entry, opt Options) Pair {
	p := Pair{Scenario: k.Scenario, Strategy: k.Strategy, Name: k.Strategy, P: math.NaN()}
	if o.Name != "" && o.Name == n.Name {
		p.Name = o.Name
	}
	or, nr := o.Result, n.Result
	if !sameDefinition(or, nr) {
		p.Notes = append(p.Notes, "the scenario's definition differs between the two")
	}
	if or.Backend != nr.Backend {
		p.Notes = append(p.Notes, fmt.Sprintf("measured on %s, then on %s", or.Backend, nr.Backend))
	}
	op, np := pointFigures(or), pointFigures(nr)
	p.TC3 = change(TC3, op.TC3, np.TC3)
	p.U = change(Uplift, op.U, np.U)
	p.F = change(Fraction, op.F, np.F)
	ot, nt := walls(or), walls(nr)
	p.NOld, p.NNew = len(ot), len(nt)

	var so, sn sampler
	var err error
	switch {
	case len(ot) > 0 && len(nt) > 0 && !hasNoise(or) && !hasNoise(nr):
		p.TC3.exact(TC3)
		p.U.exact(Uplift)
		p.F.exact(Fraction)
	default:
		if so, err = newSampler(or); err != nil {
			p.Notes = append(p.Notes, "no interval: old: "+err.Error())
			break
		}
		if sn, err = newSampler(nr); err != nil {
			p.Notes = append(p.Notes, "no interval: new: "+err.Error())
			break
		}
		p.bootstrap(so, sn, opt, seedOf(opt.Seed, k))
		if p.TC3.Known() {
			p.P = MannWhitney(ot, nt)
			// Both tests must agree: the interval and the rank test.
			if !math.IsNaN(p.P) && p.P >= opt.Alpha {
				p.TC3.Significant = false
			}
		}
	}
	if p.drawsT == nil && p.TC3.Known() {
		p.drawsT = []float64{math.Log(p.TC3.Delta)}
	}
	if p.drawsU == nil && p.U.Known() {
		p.drawsU = []float64{math.Log(p.U.Delta)}
	}
	switch {
	case !p.TC3.Known():
		p.Verdict = Unknown
	case !p.TC3.Significant:
		p.Verdict = Same
	case p.TC3.Delta > 1:
		p.Verdict = Slower
	default:
		p.Verdict = Faster
	}
	return p
}

// sameDefinition reports whether two results measured the same work:
// their scenarios but for names of things and repetition counts.
func sameDefinition(a, b profiler.Result) bool {
	sa, sb := a.Scenario, b.Scenario
	sa.Reps, sb.Reps = 0, 0
	sa.Description, sb.Description, sa.Source, sb.Source = "", "", "", ""
	return sa.Equal(sb)
}

// walls are a result's T_c3 repetitions.
func walls(r profiler.Result) []float64 {
	var out []float64
	for _, rp := range r.Reps[backends.ModeConcurrent] {
		out = append(out, float64(rp.Wall))
	}
	return out
}

// change is the point change of figure f from old to new.
func change(f Figure, old, new float64) Change {
	c := Change{Old: old, New: new, Delta: math.NaN(), CI: profiler.Interval{Lo: math.NaN(), Hi: math.NaN()}}
	switch {
	case math.IsNaN(old) || math.IsNaN(new):
	case f.Ratio() && old > 0:
		c.Delta = new / old
	case !f.Ratio():
		c.Delta = new - old
	}
	return c
}

// noChange is a figure's Delta when nothing changed.
func (f Figure) noChange() float64 {
	if f.Ratio() {
		return 1
	}
	return 0
}

// exactTol is how far from no change an exact ratio or difference may be
// and still be no change: float rounding, not a measurement.
const exactTol = 1e-9

// exact marks a change without noise: its interval is its value.
func (c *Change) exact(f Figure) {
	if !c.Known() {
		return
	}
	c.Exact = true
	c.CI = profiler.Interval{Lo: c.Delta, Hi: c.Delta}
	c.Significant = math.Abs(c.Delta-f.noChange()) > exactTol
}

// bootstrap resamples both sides opt.Resamples times and sets each
// figure's interval and significance from the draws of its change.
func (p *Pair) bootstrap(so, sn sampler, opt Options, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	dT := make([]float64, 0, opt.Resamples)
	dU := make([]float64, 0, opt.Resamples)
	dF := make([]float64, 0, opt.Resamples)
	for range opt.Resamples {
		o, n := so(rng), sn(rng)
		dT = append(dT, n.TC3/o.TC3)
		dU = append(dU, n.U/o.U)
		dF = append(dF, n.F-o.F)
	}
	p.TC3.interval(TC3, dT, opt.Level)
	p.U.interval(Uplift, dU, opt.Level)
	p.F.interval(Fraction, dF, opt.Level)
	p.drawsT, p.drawsU = logs(dT, p.TC3), logs(dU, p.U)
}

// minFinite is the share of a figure's draws that must be numbers for its
// interval to be given (F is undefined in a draw whose ideal speedup is 1).
const minFinite = 0.95

// interval sets the change's interval from the draws of its Delta.
func (c *Change) interval(f Figure, draws []float64, level float64) {
	if !c.Known() {
		return
	}
	v := finiteSorted(draws)
	if float64(len(v)) < minFinite*float64(len(draws)) || len(v) == 0 {
		return
	}
	c.CI = percentile(v, level)
	c.Significant = !c.CI.Contains(f.noChange())
}

// logs are the logs of a ratio figure's draws, for the geomean; nil when
// its interval could not be given.
func logs(draws []float64, c Change) []float64 {
	if !c.CI.Valid() {
		return nil
	}
	out := make([]float64, len(draws))
	for i, d := range draws {
		out[i] = math.Log(d)
	}
	return out
}

func finiteSorted(d []float64) []float64 {
	v := make([]float64, 0, len(d))
	for _, x := range d {
		if !math.IsNaN(x) && !math.IsInf(x, 0) {
			v = append(v, x)
		}
	}
	slices.Sort(v)
	return v
}

// percentile is the percentile interval of sorted draws at a level.
func percentile(sorted []float64, level float64) profiler.Interval {
	a := (1 - level) / 2
	return profiler.Interval{Lo: quantile(sorted, a), Hi: quantile(sorted, 1-a)}
}

// quantile interpolates between the closest ranks of sorted data.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, len(sorted)-1)
	frac := pos - float64(lo)
	return sorted[lo]*(1-frac) + sorted[hi]*frac
}

// summarize counts the verdicts and takes the geometric means of the T_c3
// and U ratios, their intervals from the pairs' draws: draw b of the mean
// is the mean of the pairs' draws b (a pair without noise, or without
// repetitions, adds its one value to every draw).
func summarize(ps []Pair, opt Options) Summary {
	s := Summary{Pairs: len(ps)}
	for _, p := range ps {
		switch p.Verdict {
		case Faster:
			s.Faster++
		case Slower:
			s.Slower++
		case Same:
			s.Same++
		default:
			s.Unknown++
		}
	}
	s.GeomeanTC3, s.NTC3 = geomean(ps, TC3, opt)
	s.GeomeanU, s.NU = geomean(ps, Uplift, opt)
	return s
}

func geomean(ps []Pair, f Figure, opt Options) (Change, int) {
	var lo, ln, ld float64
	var draws [][]float64
	exact, noCI := true, false
	n := 0
	for _, p := range ps {
		c := p.Change(f)
		if !c.Known() || c.Old <= 0 || c.New <= 0 {
			continue
		}
		n++
		lo += math.Log(c.Old)
		ln += math.Log(c.New)
		ld += math.Log(c.Delta)
		d := p.drawsT
		if f == Uplift {
			d = p.drawsU
		}
		draws = append(draws, d)
		exact = exact && c.Exact
		noCI = noCI || !c.CI.Valid()
	}
	if n == 0 {
		return change(f, math.NaN(), math.NaN()), 0
	}
	c := change(f, math.Exp(lo/float64(n)), math.Exp(ln/float64(n)))
	c.Delta = math.Exp(ld / float64(n))
	switch {
	case exact:
		c.exact(f)
	case noCI:
		// A pair without an interval leaves the mean without one.
	default:
		mean := make([]float64, opt.Resamples)
		for b := range mean {
			var sum float64
			for _, d := range draws {
				sum += d[b%len(d)]
			}
			mean[b] = math.Exp(sum / float64(n))
		}
		c.interval(f, mean, opt.Level)
	}
	return c, n
}
