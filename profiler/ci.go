package profiler

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Bootstrap settings.
const (
	// CILevel is the confidence level of every interval.
	CILevel = 0.95
	// Resamples is the number of bootstrap resamples an interval is
	// taken from.
	Resamples = 1000
	// MinCIRounds is the fewest interleaved rounds an interval is given
	// for: with fewer, resampling rounds says nothing about drift.
	MinCIRounds = 3
)

// MarshalJSON writes an interval that holds no numbers (an undefined
// figure) as null.
func (i Interval) MarshalJSON() ([]byte, error) {
	if !i.Valid() || math.IsInf(i.Lo, 0) || math.IsInf(i.Hi, 0) {
		return []byte("null"), nil
	}
	type plain Interval
	return json.Marshal(plain(i))
}

// UnmarshalJSON reads null as an interval that holds no numbers.
func (i *Interval) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*i = Interval{Lo: math.NaN(), Hi: math.NaN()}
		return nil
	}
	type plain Interval
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*i = Interval(p)
	return nil
}

// noInterval is the interval of an undefined figure.
func noInterval() Interval { return Interval{Lo: math.NaN(), Hi: math.NaN()} }

// FillUncertainty gives a result read back from a file (a recording or a
// sweep made before intervals existed) its intervals and bimodal times,
// from its repetitions: the rounds they were recorded in, or, for a
// result without them, the rounds Measure's protocol splits them into
// when that split is unambiguous. A result that has intervals, or a
// reason for having none, is left as it is.
func (r *Result) FillUncertainty() {
	if r.CI != nil || r.NoCI != "" || len(r.Reps) == 0 {
		return
	}
	g, err := r.Scenario.Graph(r.Strategy)
	if err != nil {
		r.NoCI = "the scenario's graph cannot be built: " + err.Error()
		return
	}
	r.fillUncertainty(g, nil)
}

// fillUncertainty sets Bimodal, and CI (or NoCI) by a bootstrap over the
// interleaved rounds, for the result's graph g and the serial default's
// graph dg (nil: built here when DefaultReps needs it).
func (r *Result) fillUncertainty(g, dg *scenarios.Graph) {
	r.Bimodal = findBimodal(g, *r)
	r.CI, r.NoCI = nil, ""
	if r.Deterministic {
		r.NoCI = "the " + r.Backend + " backend is deterministic: every run gives the same numbers, so there is no noise to bound"
		return
	}
	if dg == nil && len(r.DefaultReps) > 0 {
		dg, _ = r.Scenario.Graph(SerialDefaultStrategy())
	}
	r.CI, r.NoCI = bootstrap(*r, g, dg)
}

// protocolRounds gives each of n repetitions its round as Measure splits
// them: rounds = min(DefaultRounds, n), the first n % rounds rounds one
// repetition longer, in order.
func protocolRounds(n int) []int {
	rounds := min(DefaultRounds, n)
	out := make([]int, 0, n)
	for k := range rounds {
		c := n / rounds
		if k < n%rounds {
			c++
		}
		out = appendRound(out, k, c)
	}
	return out
}

// roundsFor returns the round of each repetition per mode: the recorded
// ones, or, when none were recorded, the protocol's split when every mode
// holds as many repetitions (else why not).
func roundsFor(reps map[backends.Mode][]backends.Rep, rec map[backends.Mode][]int) (map[backends.Mode][]int, string) {
	if len(reps) == 0 {
		return nil, ""
	}
	if rec != nil {
		for m, rs := range reps {
			if len(rec[m]) != len(rs) {
				return nil, fmt.Sprintf("the %s repetitions' rounds do not match them (%d rounds for %d repetitions)", m, len(rec[m]), len(rs))
			}
		}
		return rec, ""
	}
	n := -1
	for _, rs := range reps {
		if n >= 0 && len(rs) != n {
			return nil, "the repetitions' rounds were not recorded, and the modes hold different counts, so the protocol's split cannot be told"
		}
		n = len(rs)
	}
	out := map[backends.Mode][]int{}
	for m := range reps {
		out[m] = protocolRounds(n)
	}
	return out, ""
}

// group is one run's repetitions by round (its index in the round list).
type group struct {
	mode    backends.Mode
	def     bool
	byRound [][]backends.Rep
}

// shrink pulls each repetition of the group toward its round's centre
// (in log time, all of a repetition's times by one factor) so that the
// second stage does not count the within-round noise twice: the plain
// two-stage bootstrap (both stages with replacement) adds it on top of
// the spread of the round means, which holds it already (Davison and
// Hinkley 1997, section 3.8), and its intervals cover about 99 % where
// 95 % is asked. Shrunk by c, with c^2 = S_B m / (K s_w^2) (S_B the
// variance of the K round centres, s_w^2 the pooled within-round
// variance, m the mean round size; at most 1), the second stage adds
// what resampling K rounds misses, S_B / K^2, and the two stages
// together give the variance of the mean of the round means, S_B / K.
// With as few rounds as the protocol makes (5), that alone leaves the
// percentile interval of a median too narrow (it held T_c3's true median
// in 85-88 % of synthetic trials), so c is at least minShrink: then
// T_c3's and U's intervals cover 91-98 % (TestIntervalCoverage).
func (gr *group) shrink() {
	k := 0
	var centres []float64
	var within, m float64
	dof := 0
	for _, rs := range gr.byRound {
		if len(rs) == 0 {
			centres = append(centres, math.NaN())
			continue
		}
		c := logCentre(rs)
		centres = append(centres, c)
		for _, rp := range rs {
			within += (logTime(rp) - c) * (logTime(rp) - c)
		}
		dof += len(rs) - 1
		m += float64(len(rs))
		k++
	}
	if k < 2 || dof == 0 || within == 0 {
		return
	}
	m /= float64(k)
	within /= float64(dof)
	var mean, sb float64
	for _, c := range centres {
		if !math.IsNaN(c) {
			mean += c
		}
	}
	mean /= float64(k)
	for _, c := range centres {
		if !math.IsNaN(c) {
			sb += (c - mean) * (c - mean)
		}
	}
	sb /= float64(k - 1)
	shrink := math.Min(1, math.Max(minShrink, math.Sqrt(sb*m/(float64(k)*within))))
	for i, rs := range gr.byRound {
		out := make([]backends.Rep, len(rs))
		for j, rp := range rs {
			f := math.Exp((shrink - 1) * (logTime(rp) - centres[i]))
			out[j] = scaleRep(rp, f)
		}
		gr.byRound[i] = out
	}
}

// logCentre is the mean log time of repetitions (at least one).
func logCentre(rs []backends.Rep) float64 {
	var c float64
	for _, rp := range rs {
		c += logTime(rp)
	}
	return c / float64(len(rs))
}

// logTime is the log of a repetition's time (its wall time, else the
// sum of its parts); 0 for a repetition without one.
func logTime(rp backends.Rep) float64 {
	t := rp.Wall
	if t <= 0 {
		t = rp.Compute + rp.Comm
	}
	if t <= 0 {
		return 0
	}
	return math.Log(float64(t))
}

// scaleRep multiplies every time of a repetition by f.
func scaleRep(rp backends.Rep, f float64) backends.Rep {
	sc := func(v int64) int64 { return int64(math.Round(float64(v) * f)) }
	out := backends.Rep{Wall: sc(rp.Wall), Compute: sc(rp.Compute), Comm: sc(rp.Comm)}
	if rp.Ops != nil {
		out.Ops = make([]int64, len(rp.Ops))
		for i, v := range rp.Ops {
			out.Ops[i] = sc(v)
		}
	}
	return out
}

// resampler draws bootstrap resamples of one result: two-stage
// resampling, rounds with replacement (the same rounds for every mode, so
// the isolated, serial-default and concurrent parts of a round stay
// paired), then repetitions with replacement within each chosen round,
// pulled toward their round's centre (group.shrink). Each resample's
// figures come from refigure, the one definition.
type resampler struct {
	r      Result
	g, dg  *scenarios.Graph
	groups []group
	rounds int
	// hbm is the HBM bandwidth the result's bound used (0: none), so
	// that each resample has its fraction of bound.
	hbm float64
	// passes holds each pass's rounds for a result merged from passes
	// (nil otherwise): a resample then draws passes with replacement
	// first, then rounds within each drawn pass.
	passes [][]int
}

// newResampler groups the result's repetitions by round for resampling,
// for its graph g and the serial default's dg; why says why it cannot
// (the rounds do not fit the repetitions, or too few were measured).
func newResampler(r Result, g, dg *scenarios.Graph) (*resampler, string) {
	ro, why := roundsFor(r.Reps, r.RoundOf)
	if why != "" {
		return nil, why
	}
	dro, why := roundsFor(r.DefaultReps, r.DefaultRoundOf)
	if why != "" {
		return nil, "serial default: " + why
	}
	var ids []int
	for _, m := range []map[backends.Mode][]int{ro, dro} {
		for _, rs := range m {
			ids = append(ids, rs...)
		}
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	if len(ids) < MinCIRounds {
		return nil, fmt.Sprintf("%d interleaved round(s) were measured; an interval needs at least %d", len(ids), MinCIRounds)
	}
	var groups []group
	add := func(reps map[backends.Mode][]backends.Rep, rounds map[backends.Mode][]int, def bool) {
		for _, m := range sortedModes(reps) {
			gr := group{mode: m, def: def, byRound: make([][]backends.Rep, len(ids))}
			for i, rp := range reps[m] {
				k, _ := slices.BinarySearch(ids, rounds[m][i])
				gr.byRound[k] = append(gr.byRound[k], rp)
			}
			groups = append(groups, gr)
		}
	}
	add(r.Reps, ro, false)
	add(r.DefaultReps, dro, true)
	passes := passesOf(r, ids)
	for i := range groups {
		groups[i].shrink()
		if passes != nil {
			groups[i].spreadPasses(passes)
		}
	}
	var hbm float64
	if r.Bound != nil {
		hbm = r.Bound.HBMBandwidth
	}
	return &resampler{r: r, g: g, dg: dg, groups: groups, rounds: len(ids), passes: passes, hbm: hbm}, ""
}

// spreadPasses sets how far apart the passes' centres lie (in log time,
// every repetition of a pass moved by one factor) so that drawing passes
// with replacement gives the mean the variance a small sample of passes
// warrants. A pass's centre varies with its own rounds' noise (w, which
// the rounds drawn within a pass bring in again) and with the level of
// the pass (tau^2: what changes between runs of a sweep, estimated as the
// spread S_B of the P centres less w). The passes' stage should add
// k^2 tau^2 / P, k = t(0.975, P-1) / z(0.975) (2.2 for 3 passes: the
// level is known from three draws only, so its part of the interval is
// a Student t's, not a normal's); drawing P passes of spread S_B adds
// S_B (P-1) / P^2, so the centres' distances to their mean are scaled
// by c = sqrt(k^2 tau^2 P / ((P-1) S_B)): 0 when the passes differ no
// more than their rounds' noise says they should, more than 1 when they
// differ by more (TestPassesIntervalCoverage).
func (gr *group) spreadPasses(passes [][]int) {
	p := len(passes)
	centres := make([]float64, p)
	var w float64
	for q, rounds := range passes {
		var all []backends.Rep
		var roundCentres []float64
		for _, i := range rounds {
			if rs := gr.byRound[i]; len(rs) > 0 {
				all = append(all, rs...)
				roundCentres = append(roundCentres, logCentre(rs))
			}
		}
		if len(all) == 0 {
			return // a mode without repetitions in a pass: leave the passes as they are
		}
		centres[q] = logCentre(all)
		if n := len(roundCentres); n > 1 {
			// The variance of the pass's centre from its rounds: their
			// sample variance over n, which is meanVar's over n - 1.
			_, v := meanVar(roundCentres)
			w += v / float64(n-1)
		}
	}
	w /= float64(p)
	grand, sb := meanVar(centres)
	sb *= float64(p) / float64(p-1) // the sample variance
	if sb == 0 {
		return
	}
	k := tQuantile975(p-1) / 1.959964
	tau2 := math.Max(0, sb-w)
	c := math.Sqrt(k * k * tau2 * float64(p) / (float64(p-1) * sb))
	for q, rounds := range passes {
		scale := math.Exp((c - 1) * (centres[q] - grand))
		for _, i := range rounds {
			out := make([]backends.Rep, len(gr.byRound[i]))
			for j, rp := range gr.byRound[i] {
				out[j] = scaleRep(rp, scale)
			}
			gr.byRound[i] = out
		}
	}
}

// tQuantile975 is the 97.5th percentile of Student's t with df degrees
// of freedom (df >= 1).
func tQuantile975(df int) float64 {
	table := [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
		2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
		2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}
	if df < 1 {
		return math.Inf(1)
	}
	if df <= len(table) {
		return table[df-1]
	}
	return 1.959964 + 2.37/float64(df) // within 0.005 past 30
}

// draw makes one resample and refigures it; ok is false when its figures
// cannot be computed (refigure fails).
func (s *resampler) draw(rng *rand.Rand) (Result, bool) {
	r := s.r
	var pickRounds []int
	if s.passes == nil {
		pickRounds = make([]int, s.rounds)
		for j := range pickRounds {
			pickRounds[j] = rng.IntN(s.rounds)
		}
	} else {
		pickRounds = make([]int, 0, s.rounds)
		for range s.passes {
			rounds := s.passes[rng.IntN(len(s.passes))]
			for range rounds {
				pickRounds = append(pickRounds, rounds[rng.IntN(len(rounds))])
			}
		}
	}
	c := Result{Scenario: r.Scenario, Strategy: r.Strategy, SerialDefault: r.SerialDefault, Ops: r.Ops,
		Reps: make(map[backends.Mode][]backends.Rep, len(r.Reps))}
	if len(r.DefaultReps) > 0 {
		c.DefaultReps = make(map[backends.Mode][]backends.Rep, len(r.DefaultReps))
	}
	for _, gr := range s.groups {
		var size int
		for _, k := range pickRounds {
			size += len(gr.byRound[k])
		}
		reps := make([]backends.Rep, 0, size)
		for _, k := range pickRounds {
			in := gr.byRound[k]
			for range in {
				reps = append(reps, in[rng.IntN(len(in))])
			}
		}
		if gr.def {
			c.DefaultReps[gr.mode] = reps
		} else {
			c.Reps[gr.mode] = reps
		}
	}
	if c.refigure(s.g, s.dg, s.hbm) != nil {
		return Result{}, false
	}
	return c, true
}

// Resampler returns a source of bootstrap resamples of result r, the ones
// its own intervals are taken from (the same round grouping, pairing of a
// round's runs and damping of the second stage): each call draws one
// from rng and returns it as a Result whose figures refigure computed.
// A resample whose figures cannot be computed holds none (its TC3.N is
// 0, its Uplift 0). It fails when r's repetitions cannot be resampled:
// none, rounds that do not fit them, fewer than MinCIRounds rounds, or a
// graph the scenario cannot build.
func Resampler(r Result) (func(rng *rand.Rand) Result, error) {
	g, err := r.Scenario.Graph(r.Strategy)
	if err != nil {
		return nil, fmt.Errorf("the scenario's graph: %w", err)
	}
	var dg *scenarios.Graph
	if len(r.DefaultReps) > 0 {
		if dg, err = r.Scenario.Graph(SerialDefaultStrategy()); err != nil {
			return nil, fmt.Errorf("the serial default's graph: %w", err)
		}
	}
	s, why := newResampler(r, g, dg)
	if why != "" {
		return nil, errors.New(why)
	}
	return func(rng *rand.Rand) Result {
		c, ok := s.draw(rng)
		if !ok {
			return Result{Scenario: r.Scenario, Strategy: r.Strategy, Backend: r.Backend}
		}
		return c
	}, nil
}

// bootstrap returns the intervals of the result's figures from
// Resamples resamples (resampler); the interval is the 2.5th to the
// 97.5th percentile. The random source is seeded from the repetitions,
// so the same data give the same intervals.
func bootstrap(r Result, g, dg *scenarios.Graph) (*Intervals, string) {
	s, why := newResampler(r, g, dg)
	if why != "" {
		return nil, why
	}

	// The resamples in chunks, each with its own random source seeded
	// from the data and the chunk's number, so the intervals do not
	// depend on how many run at once.
	nFig := numFigures + len(r.Ops)
	chunks := (Resamples + bootChunk - 1) / bootChunk
	parts := make([][][]float64, chunks)
	seed := seedOf(r)
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(runtime.GOMAXPROCS(0), 1))
	for ch := range chunks {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			n := min(bootChunk, Resamples-ch*bootChunk)
			parts[ch] = resample(s, n, rand.New(rand.NewPCG(seed, uint64(ch))))
		}()
	}
	wg.Wait()
	samples := make([][]float64, nFig)
	for i := range samples {
		for _, p := range parts {
			samples[i] = append(samples[i], p[i]...)
		}
	}
	point := figuresOf(r, len(r.Ops))
	iv := make([]Interval, nFig)
	for i := range iv {
		iv[i] = percentileInterval(samples[i], point[i])
	}
	ci := &Intervals{Level: CILevel, Resamples: Resamples, Rounds: s.rounds, Passes: len(s.passes),
		TComp: iv[0], TComm: iv[1], TC3: iv[2], TSerial: iv[3], TIdeal: iv[4],
		SIdeal: iv[5], SReal: iv[6], F: iv[7], U: iv[8], CompSlowdown: iv[9], CommSlowdown: iv[10],
		TCompInC3: iv[11], TCommInC3: iv[12], FBound: iv[13]}
	if len(r.Ops) > 0 {
		ci.Ops = iv[numFigures:]
	}
	return ci, ""
}

// minShrink is the least share of the within-round spread the second
// stage keeps (group.shrink).
const minShrink = 0.75

// bootChunk is the number of resamples one goroutine makes.
const bootChunk = 125

// resample makes n bootstrap resamples with s and returns each figure's
// values (figuresOf order).
func resample(s *resampler, n int, rng *rand.Rand) [][]float64 {
	ops := len(s.r.Ops)
	out := make([][]float64, numFigures+ops)
	for i := range out {
		out[i] = make([]float64, 0, n)
	}
	for range n {
		c, ok := s.draw(rng)
		if !ok {
			continue
		}
		for i, v := range figuresOf(c, ops) {
			out[i] = append(out[i], v)
		}
	}
	return out
}

// numFigures is the number of figures figuresOf returns before the ops'.
const numFigures = 14

// figuresOf lists the figures the intervals are of, in Intervals' field
// order, then each op's slowdown; NaN for an undefined one.
func figuresOf(r Result, ops int) []float64 {
	nan := math.NaN()
	f, ok := r.Fraction()
	if !ok {
		f = nan
	}
	u := r.Uplift
	if u <= 0 {
		u = nan
	}
	c3 := r.TC3.N > 0
	fb := nan
	if r.Bound != nil && r.Bound.FractionOfBound != nil {
		fb = *r.Bound.FractionOfBound
	}
	or := func(v float64, defined bool) float64 {
		if !defined {
			return nan
		}
		return v
	}
	out := []float64{
		or(r.TComp.Median, r.TComp.N > 0), or(r.TComm.Median, r.TComm.N > 0), or(r.TC3.Median, c3),
		r.TSerial, r.TIdeal, r.IdealSpeedup, or(r.RealizedSpeedup, c3), f, u,
		or(r.CompSlowdown, c3), or(r.CommSlowdown, c3),
		or(r.TCompInC3.Median, c3 && r.TCompInC3.N > 0), or(r.TCommInC3.Median, c3 && r.TCommInC3.N > 0), fb,
	}
	for i := range ops {
		v := nan
		if i < len(r.Ops) && r.Ops[i].Slowdown > 0 {
			v = r.Ops[i].Slowdown
		}
		out = append(out, v)
	}
	return out
}

// percentileInterval is the 2.5th to 97.5th percentile of the resampled
// values of a figure whose point value is point; no numbers when the
// figure is undefined or undefined in more than 5 % of the resamples.
func percentileInterval(vs []float64, point float64) Interval {
	if math.IsNaN(point) || math.IsInf(point, 0) {
		return noInterval()
	}
	ok := slices.DeleteFunc(slices.Clone(vs), func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) })
	if len(ok) == 0 || float64(len(ok)) < 0.95*float64(len(vs)) {
		return noInterval()
	}
	slices.Sort(ok)
	a := (1 - CILevel) / 2
	return Interval{Lo: quantile(ok, a), Hi: quantile(ok, 1-a)}
}

// sortedModes lists a map's modes in a fixed order.
func sortedModes[V any](m map[backends.Mode]V) []backends.Mode {
	out := make([]backends.Mode, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// seedOf hashes the result's repetitions: the bootstrap's seed.
func seedOf(r Result) uint64 {
	h := fnv.New64a()
	var buf [8]byte
	put := func(v int64) {
		for i := range buf {
			buf[i] = byte(v >> (8 * i))
		}
		h.Write(buf[:])
	}
	for _, reps := range []map[backends.Mode][]backends.Rep{r.Reps, r.DefaultReps} {
		for _, m := range sortedModes(reps) {
			h.Write([]byte(m))
			for _, rp := range reps[m] {
				put(rp.Wall)
				put(rp.Compute)
				put(rp.Comm)
				for _, o := range rp.Ops {
					put(o)
				}
			}
		}
	}
	return h.Sum64()
}

// FWithinNoise reports whether the fraction of ideal is past its limit
// (above 100 %) but its interval holds 100 %: the excess is noise, not a
// result.
func (r Result) FWithinNoise() bool {
	f, ok := r.Fraction()
	return ok && f > 1 && r.CI != nil && r.CI.F.Contains(1)
}

// FBoundWithinNoise reports whether the fraction of the physical bound is
// above 100 % only within its interval (which holds 100 %).
func (r Result) FBoundWithinNoise() bool {
	b := r.Bound
	return b != nil && b.FractionOfBound != nil && *b.FractionOfBound > 1 && r.CI != nil && r.CI.FBound.Contains(1)
}
