package cuda

import (
	"fmt"
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// The copy-engine baseline probe's CPU-side logic (TestGPUCopyEngineBaselineBias
// runs it on GPUs): which runs a round makes, in which order, and what the
// timings say about each hypothesis for why a copy-engine collective alone
// measures slower than next to a GEMM.

// ceCond is one condition of the probe.
type ceCond string

const (
	// ceAlone is the collective alone exactly as profiler.Measure's
	// isolated comm run makes it; ceC3 is it next to the GEMM (the
	// concurrent run of the same rounds).
	ceAlone ceCond = "alone"
	ceC3    ceCond = "c3"
	// ceBusy is alone while a busy kernel keeps a few SMs active (the
	// idle-clock hypothesis).
	ceBusy ceCond = "alone-busy"
	// cePrimed is alone with one untimed copy per copy stream before the
	// gate of each repetition; ceFirstOut is ceAlone's repetitions without
	// the first of each run (the first-copy hypothesis, derived).
	cePrimed   ceCond = "alone-primed"
	ceFirstOut ceCond = "alone-first-rep-out"
	// ceUngated and ceC3Ungated are alone and next to the GEMM with the
	// start gate off (the gate hypothesis, compared with each other).
	ceUngated   ceCond = "alone-ungated"
	ceC3Ungated ceCond = "c3-ungated"
	// The serial default's runs Measure makes in the same rounds; timed
	// but not part of a verdict.
	ceComputeAlone ceCond = "compute-alone"
	ceDefCompute   ceCond = "default-compute-alone"
	ceDefComm      ceCond = "default-comm-alone"
)

// ceStep is one run of a round.
type ceStep struct {
	Cond ceCond
	Mode backends.Mode
	St   scenarios.Strategy
}

// ceC3labBlock is one round of profiler.Measure for strategy st (not the
// serial default): compute and comm alone under st.Isolated(), the serial
// default's compute and comm alone, the concurrent run, in that order.
func ceC3labBlock(st scenarios.Strategy) []ceStep {
	st = st.Normalize()
	def := profiler.SerialDefaultStrategy()
	return []ceStep{
		{ceComputeAlone, backends.ModeCompute, st.Isolated()},
		{ceAlone, backends.ModeComm, st.Isolated()},
		{ceDefCompute, backends.ModeCompute, def},
		{ceDefComm, backends.ModeComm, def},
		{ceC3, backends.ModeConcurrent, st},
	}
}

// ceRound is round r's runs: the c3lab block (kept whole, as Measure runs
// it) and the variants (busy, primed, and the ungated pair), the four
// blocks rotated by one place each round so no condition always follows
// the same one.
func ceRound(st scenarios.Strategy, r int) [][]ceStep {
	st = st.Normalize()
	blocks := [][]ceStep{
		ceC3labBlock(st),
		{{ceBusy, backends.ModeComm, st.Isolated()}},
		{{cePrimed, backends.ModeComm, st.Isolated()}},
		{{ceUngated, backends.ModeComm, st.Isolated()}, {ceC3Ungated, backends.ModeConcurrent, st}},
	}
	k := ((r % len(blocks)) + len(blocks)) % len(blocks)
	return append(blocks[k:], blocks[:k]...)
}

// ceRuns holds one condition's op times: runs[round] is one run's
// repetitions, in order.
type ceRuns map[ceCond][][]int64

// roundMeans is each round's mean of cond (without the first repetition
// of each run when dropFirst and the run has more than one). The mean, not
// the median: profiler.Measure pools every round's repetitions before its
// median, so one slow repetition per run moves its figure, as it moves a
// round's mean (a median of a round's few repetitions would hide it).
func (c ceRuns) roundMeans(cond ceCond, dropFirst bool) []float64 {
	var out []float64
	for _, reps := range c[cond] {
		if dropFirst && len(reps) > 1 {
			reps = reps[1:]
		}
		if len(reps) == 0 {
			out = append(out, math.NaN())
			continue
		}
		sum := 0.0
		for _, x := range reps {
			sum += float64(x)
		}
		out = append(out, sum/float64(len(reps)))
	}
	return out
}

// ceRatio is the per-round ratio num/den of two conditions' round means
// (paired by round), summarized by its median and a distribution-free 95 %
// interval of that median.
type ceRatio struct {
	Num    ceCond    `json:"num"`
	Den    ceCond    `json:"den"`
	Rounds []float64 `json:"per_round"`
	Median float64   `json:"median"`
	Lo     float64   `json:"ci_lo"`
	Hi     float64   `json:"ci_hi"`
}

// medianCI is the median of xs (NaNs dropped) and a distribution-free
// interval for it of at least 95 % coverage: the order statistics k and
// n+1-k with k the largest for which P(Binomial(n, 1/2) < k) <= 2.5 %
// (the whole range when n is below 6). NaN for no values.
func medianCI(xs []float64) (med, lo, hi float64) {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	n := len(v)
	if n == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	slices.Sort(v)
	if n%2 == 1 {
		med = v[n/2]
	} else {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	// k is the largest with P(B < k) <= 2.5 %, B ~ Binomial(n, 1/2):
	// cdf is P(B <= j) = P(B < j+1), pj is P(B = j).
	k, cdf, pj := 0, 0.0, math.Pow(0.5, float64(n))
	for j := range n {
		if cdf += pj; cdf > 0.025 {
			break
		}
		k = j + 1
		pj *= float64(n-j) / float64(j+1)
	}
	k = max(1, min(k, (n+1)/2)) // below 6 values: the whole range
	return med, v[k-1], v[n-k]
}

// ratio pairs num and den by round.
func (c ceRuns) ratio(num, den ceCond, dropFirst bool) ceRatio {
	a, b := c.roundMeans(num, dropFirst), c.roundMeans(den, dropFirst)
	r := ceRatio{Num: num, Den: den}
	for i := range min(len(a), len(b)) {
		r.Rounds = append(r.Rounds, a[i]/b[i])
	}
	r.Median, r.Lo, r.Hi = medianCI(r.Rounds)
	return r
}

// ceVerdict is what one hypothesis's condition did to the alone-vs-C3 gap.
type ceVerdict struct {
	Hypothesis string `json:"hypothesis"`
	// Outcome: "removes the gap", "narrows the gap", "no effect",
	// "widens the gap", or "no gap to explain".
	Outcome string  `json:"outcome"`
	Base    ceRatio `json:"base"`    // alone / C3
	Variant ceRatio `json:"variant"` // the condition's alone / its C3
	// Diff is the per-round difference variant - base ratio, its median
	// and interval.
	Diff ceRatio `json:"diff"`
	Line string  `json:"line"`
}

// Outcomes of a verdict.
const (
	ceRemoves  = "removes the gap"
	ceNarrows  = "narrows the gap"
	ceNoEffect = "no effect"
	ceWidens   = "widens the gap"
	ceNoGap    = "no gap to explain"
)

// ceMinEffect is the smallest change of a ratio the probe calls an
// effect (0.1 %, a fifteenth of the bias it looks for), however tight the
// interval.
const ceMinEffect = 0.001

// judge compares a hypothesis's ratio with the baseline one, paired by
// round. The gap is there when the baseline's interval lies above 1 (the
// collective alone slower than next to the GEMM) by more than ceMinEffect.
// The condition removes it when it lowers the ratio beyond the spread (the
// interval of the paired difference lies below 0, its median below
// -ceMinEffect) and its own interval reaches 1; it narrows it when it
// lowers the ratio so but stays above 1; it widens it when it raises it so.
func judge(hypothesis string, base, variant ceRatio) ceVerdict {
	v := ceVerdict{Hypothesis: hypothesis, Base: base, Variant: variant}
	d := ceRatio{Num: variant.Num, Den: base.Num}
	for i := range min(len(base.Rounds), len(variant.Rounds)) {
		d.Rounds = append(d.Rounds, variant.Rounds[i]-base.Rounds[i])
	}
	d.Median, d.Lo, d.Hi = medianCI(d.Rounds)
	v.Diff = d
	lowered := d.Hi < 0 && d.Median < -ceMinEffect
	raised := d.Lo > 0 && d.Median > ceMinEffect
	switch {
	case !(base.Lo > 1 && base.Median > 1+ceMinEffect):
		v.Outcome = ceNoGap
	case lowered && variant.Lo <= 1:
		v.Outcome = ceRemoves
	case lowered:
		v.Outcome = ceNarrows
	case raised:
		v.Outcome = ceWidens
	default:
		v.Outcome = ceNoEffect
	}
	v.Line = fmt.Sprintf("%s: %s (alone/C3 %.4f [%.4f, %.4f]; %s/%s %.4f [%.4f, %.4f]; change %+.4f [%+.4f, %+.4f], %d rounds)",
		hypothesis, v.Outcome, base.Median, base.Lo, base.Hi, variant.Num, variant.Den, variant.Median, variant.Lo, variant.Hi,
		d.Median, d.Lo, d.Hi, len(d.Rounds))
	return v
}

// ceHypotheses are the probe's hypotheses, each with the ratio that tests it.
var ceHypotheses = []struct {
	Name     string
	Num, Den ceCond
	// DropFirst drops each run's first repetition from both sides.
	DropFirst bool
}{
	{"idle clocks (a busy kernel on a few SMs)", ceBusy, ceC3, false},
	{"first copy (one untimed copy per copy stream before the gate)", cePrimed, ceC3, false},
	{"first repetition of a run (dropped from alone and C3)", ceAlone, ceC3, true},
	{"start gate (alone and C3 both ungated)", ceUngated, ceC3Ungated, false},
}

// verdicts judges every hypothesis on one scenario's runs.
func (c ceRuns) verdicts() []ceVerdict {
	base := c.ratio(ceAlone, ceC3, false)
	var out []ceVerdict
	for _, h := range ceHypotheses {
		v := c.ratio(h.Num, h.Den, h.DropFirst)
		if h.DropFirst {
			v.Num = ceFirstOut
		}
		out = append(out, judge(h.Name, base, v))
	}
	return out
}
