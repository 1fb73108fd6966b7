package profiler

import (
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Bimodality test settings (DetectBimodal).
const (
	// MinModeShare is the least share of the repetitions each mode holds.
	MinModeShare = 0.2
	// MinAshmanD is the least separation of the two modes, Ashman's D =
	// sqrt(2) |mu1 - mu2| / sqrt(s1^2 + s2^2) of the fitted components.
	MinAshmanD = 2
	// MinModeGap is the least gap between the modes' medians, relative
	// to the lower: closer modes change no figure that is printed.
	MinModeGap = 0.01
	// MinBICGain is how much lower the two-component fit's Bayesian
	// information criterion must be than the one-component fit's: 6 is
	// "strong" evidence on Kass and Raftery's scale (1995).
	MinBICGain = 6
	// minBimodalN is the fewest repetitions tested.
	minBimodalN = 10
)

// Mode is one mode of a bimodal time: the median of its repetitions
// (nanoseconds) and their share of all.
type Mode struct {
	Median float64 `json:"median_ns"`
	Share  float64 `json:"share"`
}

// Bimodal is a time whose repetitions fall in two modes: its median lies
// between them and describes neither.
type Bimodal struct {
	// Time names it: T_comp, T_comm, T_c3, or "<op> alone" / "<op> in
	// c3" for an op of a graph.
	Time string `json:"time"`
	// Modes are the lower and the upper mode; D is Ashman's D.
	Modes [2]Mode `json:"modes"`
	D     float64 `json:"ashman_d"`
}

// DetectBimodal tests repetition times (nanoseconds) for two modes. It
// fits a mixture of two normal distributions by expectation
// maximization, started from the exact one-dimensional two-means split,
// and calls the times bimodal when the two-component fit is the better
// model by the Bayesian information criterion, by MinBICGain, each component holds at
// least MinModeShare of the repetitions, the components' Ashman's D is at
// least MinAshmanD and their medians are MinModeGap apart. D is taken
// from the fitted components, not from the two-means split: a hard split
// of a single normal sample has D of about 2.7, so D of a split tells
// nothing. Fewer than 10 times, or times that do not vary, are not
// tested.
func DetectBimodal(ns []int64) (modes [2]Mode, d float64, ok bool) {
	n := len(ns)
	if n < minBimodalN {
		return modes, 0, false
	}
	x := make([]float64, n)
	for i, v := range ns {
		x[i] = float64(v)
	}
	slices.Sort(x)
	mean, vr := meanVar(x)
	if vr <= 0 {
		return modes, 0, false
	}
	// A floor on each component's variance: the timer's resolution, and
	// a thousandth of the mean, so that a mode of identical times does
	// not make the likelihood unbounded.
	floor := math.Max(1, (1e-3*mean)*(1e-3*mean))

	// Two-means split: the cut that minimizes the within-group sum of
	// squares (exact in one dimension, over sorted data).
	pre, pre2 := make([]float64, n+1), make([]float64, n+1)
	for i, v := range x {
		pre[i+1], pre2[i+1] = pre[i]+v, pre2[i]+v*v
	}
	sse := func(a, b int) float64 { // [a, b)
		s, s2, k := pre[b]-pre[a], pre2[b]-pre2[a], float64(b-a)
		return s2 - s*s/k
	}
	cut, best := 1, math.Inf(1)
	for c := 1; c < n; c++ {
		if v := sse(0, c) + sse(c, n); v < best {
			cut, best = c, v
		}
	}
	m1, v1 := meanVar(x[:cut])
	m2, v2 := meanVar(x[cut:])
	w := float64(cut) / float64(n)
	v1, v2 = math.Max(v1, floor), math.Max(v2, floor)

	// EM for the mixture w N(m1, v1) + (1-w) N(m2, v2).
	resp := make([]float64, n)
	ll2 := math.Inf(-1)
	for iter := range 200 {
		ll := 0.0
		for i, v := range x {
			p1 := w * normPDF(v, m1, v1)
			p2 := (1 - w) * normPDF(v, m2, v2)
			t := p1 + p2
			if t <= 0 || math.IsNaN(t) {
				resp[i] = 0.5
				ll += -745 // below the smallest positive float's log
				continue
			}
			resp[i] = p1 / t
			ll += math.Log(t)
		}
		var s1, sx1, sx2 float64
		for i, v := range x {
			s1 += resp[i]
			sx1 += resp[i] * v
			sx2 += (1 - resp[i]) * v
		}
		s2 := float64(n) - s1
		if s1 < 1e-9 || s2 < 1e-9 {
			return modes, 0, false // one component took everything
		}
		m1, m2 = sx1/s1, sx2/s2
		var q1, q2 float64
		for i, v := range x {
			q1 += resp[i] * (v - m1) * (v - m1)
			q2 += (1 - resp[i]) * (v - m2) * (v - m2)
		}
		v1, v2, w = math.Max(q1/s1, floor), math.Max(q2/s2, floor), s1/float64(n)
		if iter > 0 && math.Abs(ll-ll2) <= 1e-10*math.Abs(ll) {
			ll2 = ll
			break
		}
		ll2 = ll
	}
	// The log-likelihood at the final parameters.
	ll2 = 0
	ll1 := 0.0
	v0 := math.Max(vr, floor)
	for _, v := range x {
		ll2 += math.Log(math.Max(w*normPDF(v, m1, v1)+(1-w)*normPDF(v, m2, v2), math.SmallestNonzeroFloat64))
		ll1 += math.Log(math.Max(normPDF(v, mean, v0), math.SmallestNonzeroFloat64))
	}
	ln := math.Log(float64(n))
	bic1, bic2 := -2*ll1+2*ln, -2*ll2+5*ln
	d = math.Sqrt2 * math.Abs(m1-m2) / math.Sqrt(v1+v2)

	// The modes: each time to the component more likely to hold it.
	var lo, hi []float64
	for _, v := range x {
		if w*normPDF(v, m1, v1) >= (1-w)*normPDF(v, m2, v2) {
			lo = append(lo, v)
		} else {
			hi = append(hi, v)
		}
	}
	if m1 > m2 {
		lo, hi = hi, lo
	}
	if len(lo) == 0 || len(hi) == 0 {
		return modes, d, false
	}
	modes = [2]Mode{
		{Median: quantile(lo, 0.5), Share: float64(len(lo)) / float64(n)},
		{Median: quantile(hi, 0.5), Share: float64(len(hi)) / float64(n)},
	}
	ok = bic1-bic2 >= MinBICGain && d >= MinAshmanD &&
		modes[0].Share >= MinModeShare && modes[1].Share >= MinModeShare &&
		modes[1].Median-modes[0].Median >= MinModeGap*math.Abs(modes[0].Median)
	return modes, d, ok
}

func meanVar(x []float64) (mean, vr float64) {
	for _, v := range x {
		mean += v
	}
	mean /= float64(len(x))
	for _, v := range x {
		vr += (v - mean) * (v - mean)
	}
	return mean, vr / float64(len(x))
}

func normPDF(x, m, v float64) float64 {
	return math.Exp(-(x-m)*(x-m)/(2*v)) / math.Sqrt(2*math.Pi*v)
}

// findBimodal tests the result's times for two modes: T_comp and T_comm
// (each repetition's compute or communication ops, in its isolated run),
// T_c3, and, in a graph of more than two ops, each op alone and in C3.
func findBimodal(g *scenarios.Graph, r Result) []Bimodal {
	var out []Bimodal
	test := func(name string, ns []int64) {
		if m, d, ok := DetectBimodal(ns); ok {
			out = append(out, Bimodal{Time: name, Modes: m, D: d})
		}
	}
	if g == nil {
		return nil
	}
	alone := map[backends.Mode][][]int64{}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
		per, err := opSeries(g, r.Reps[m])
		if err != nil {
			return nil
		}
		alone[m] = per
	}
	role := func(m backends.Mode, rl scenarios.Role) []int64 {
		var tot []int64
		for i, o := range g.Ops {
			if (o.Role == scenarios.RoleComm) != (rl == scenarios.RoleComm) {
				continue
			}
			if tot == nil {
				tot = make([]int64, len(alone[m][i]))
			}
			for k, t := range alone[m][i] {
				tot[k] += t
			}
		}
		return tot
	}
	test("T_comp", role(backends.ModeCompute, scenarios.RoleCompute))
	test("T_comm", role(backends.ModeComm, scenarios.RoleComm))
	test("T_c3", pick(r.Reps[backends.ModeConcurrent], func(r backends.Rep) int64 { return r.Wall }))
	if len(g.Ops) > 2 {
		for i, o := range g.Ops {
			m := backends.ModeCompute
			if o.Role == scenarios.RoleComm {
				m = backends.ModeComm
			}
			test(o.Label()+" alone", alone[m][i])
			test(o.Label()+" in c3", alone[backends.ModeConcurrent][i])
		}
	}
	return out
}
