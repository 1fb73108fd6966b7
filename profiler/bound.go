package profiler

import (
	"math"

	"github.com/c3lab/c3lab/scenarios"
)

// HBMBytes is a lower bound on the HBM traffic of the scenario's ops on one
// GPU, counted from their shapes: a GEMM reads A and B and writes C once; a
// stream op reads and writes its buffer; a collective reads what it sends
// and writes what it receives (in place, no staging).
func HBMBytes(sc scenarios.Scenario) (compute, comm float64) {
	c := sc.Compute
	switch c.Kind {
	case scenarios.GEMM:
		b := float64(c.DType.Size())
		out := math.Max(b, 2) // fp8 GEMMs write bf16
		m, n, k := float64(c.M), float64(c.N), float64(c.K)
		compute = (m*k+k*n)*b + m*n*out
	case scenarios.Stream:
		compute = 2 * float64(c.Bytes)
	}
	return compute, 2 * sc.Comm.LinkBytes(sc.GPUs)
}

// Bound is c3lab's physical bound on the concurrent run (beyond the paper):
// it cannot be shorter than the longer op alone, nor than the HBM bytes both
// ops move divided by the HBM bandwidth. When two memory-bound ops share
// HBM, the paper's ideal is out of reach and this is the honest target.
type Bound struct {
	// TBound is the bound in nanoseconds; By says which term set it
	// ("longer op" or "hbm"; "ideal", T_ideal, for a graph).
	TBound float64 `json:"t_bound_ns"`
	By     string  `json:"bound_by"`
	// SBound = T_serial / T_bound, the best speedup physically possible.
	SBound float64 `json:"s_bound"`
	// FractionOfBound = (S_real - 1) / (S_bound - 1); nil when undefined
	// (S_bound at or below 1, or no realized speedup), and Note says why.
	FractionOfBound *float64 `json:"fraction_of_bound"`
	Note            string   `json:"note,omitempty"`
	// HBMBandwidth is the bandwidth used (bytes/s).
	HBMBandwidth float64 `json:"hbm_bandwidth"`
}

// BoundGap says why a result has no fraction of bound.
type BoundGap int

// The reasons a fraction of bound can be missing.
const (
	// BoundDefined: nothing is missing.
	BoundDefined BoundGap = iota
	// GapNoConcurrentRun: only the isolated runs were made.
	GapNoConcurrentRun
	// GapNoIsolatedTime: an op took no time alone, so there is no bound.
	GapNoIsolatedTime
	// GapNoHBMBandwidth: the backend does not know the device's HBM
	// bandwidth, so the HBM term of the bound cannot be computed.
	GapNoHBMBandwidth
	// GapNoSpeedup: S_bound is 1, no overlap can gain anything (moving
	// both ops' HBM bytes takes as long as running them in series, or one
	// op takes next to no time).
	GapNoSpeedup
	// GapBelowOne: S_bound is below 1: the ops, run in series, moved their
	// HBM bytes faster than the bandwidth known for the device allows
	// (caches served part of them), so the HBM bound does not hold.
	GapBelowOne
	// GapNoRealized: the concurrent run has no realized speedup (it took
	// no time).
	GapNoRealized
)

// String is the reason in a few words.
func (g BoundGap) String() string {
	switch g {
	case GapNoConcurrentRun:
		return "no concurrent run"
	case GapNoIsolatedTime:
		return "an op took no time alone"
	case GapNoHBMBandwidth:
		return "no HBM bandwidth known"
	case GapNoSpeedup:
		return "the bound allows no speedup"
	case GapBelowOne:
		return "the ops beat the HBM bound"
	case GapNoRealized:
		return "no realized speedup"
	}
	return ""
}

// boundNote explains a bound whose fraction is undefined, for readers of
// the JSON and the command's report.
func boundNote(g BoundGap, b Bound) string {
	switch g {
	case GapNoSpeedup:
		if b.By == "hbm" {
			return "the bound is 1x: moving both ops' HBM bytes takes as long as running them one after the other, so no overlap can gain anything"
		}
		return "the bound is 1x: one op takes next to no time, so there is nothing to overlap"
	case GapBelowOne:
		return "the bound is below 1x: run one after the other, the ops moved their HBM bytes faster than the device's known bandwidth allows (caches served part of them), so the HBM bound does not hold"
	case GapNoRealized:
		return "the concurrent run has no realized speedup"
	}
	return ""
}

// BoundGap says why r has no fraction of bound; BoundDefined when it has one.
func (r Result) BoundGap() BoundGap {
	switch b := r.Bound; {
	case b != nil && b.FractionOfBound != nil:
		return BoundDefined
	case b != nil:
		return boundGapOf(b.SBound, r.RealizedSpeedup)
	case r.TC3.N == 0:
		return GapNoConcurrentRun
	case r.TComp.Median <= 0 || r.TComm.Median <= 0:
		return GapNoIsolatedTime
	}
	return GapNoHBMBandwidth
}

// BoundNote is BoundGap in a sentence; empty when the fraction of bound
// is defined.
func (r Result) BoundNote() string {
	g := r.BoundGap()
	if r.Bound != nil {
		if n := boundNote(g, *r.Bound); n != "" {
			return n
		}
	}
	return g.String()
}

// boundGapOf says why (S_real - 1) / (S_bound - 1) is undefined.
func boundGapOf(sBound, sReal float64) BoundGap {
	switch {
	case sBound < 1-idealEpsilon:
		return GapBelowOne
	case sBound-1 < idealEpsilon:
		return GapNoSpeedup
	case math.IsNaN(sReal):
		return GapNoRealized
	}
	return BoundDefined
}

// GraphHBMBytes is HBMBytes for a graph: the sum over its ops of their
// instances' traffic (a decomposed GEMM reads its B operand once per
// chunk), split by role.
func GraphHBMBytes(g *scenarios.Graph) (compute, comm float64) {
	for _, o := range g.Ops {
		one := scenarios.Scenario{GPUs: g.GPUs, Compute: o.Compute, Comm: o.Comm}
		hc, hm := HBMBytes(one)
		if o.Role == scenarios.RoleComm {
			comm += float64(o.Count) * hm
		} else {
			compute += float64(o.Count) * hc
		}
	}
	return compute, comm
}

// ComputeBound derives the bound from the isolated times (ns), the realized
// speedup and the device's HBM bandwidth (bytes/s). ok is false when the
// bandwidth is unknown.
func ComputeBound(sc scenarios.Scenario, tComp, tComm, sReal, hbmBandwidth float64) (Bound, bool) {
	if tComp <= 0 || tComm <= 0 {
		return Bound{}, false
	}
	hc, hm := HBMBytes(sc)
	return computeBound(hc+hm, tComp+tComm, math.Max(tComp, tComm), "longer op", sReal, hbmBandwidth)
}

// ComputeGraphBound is ComputeBound for a graph: the concurrent run can be
// no shorter than T_ideal (By "ideal") nor than the HBM bytes of all its
// ops over the bandwidth; S_bound = T_serial / T_bound.
func ComputeGraphBound(g *scenarios.Graph, tSerial, tIdeal, sReal, hbmBandwidth float64) (Bound, bool) {
	if tIdeal <= 0 {
		return Bound{}, false
	}
	hc, hm := GraphHBMBytes(g)
	return computeBound(hc+hm, tSerial, tIdeal, "ideal", sReal, hbmBandwidth)
}

func computeBound(hbmBytes, tSerial, tIdeal float64, idealBy string, sReal, hbmBandwidth float64) (Bound, bool) {
	if hbmBandwidth <= 0 {
		return Bound{}, false
	}
	tHBM := hbmBytes / hbmBandwidth * 1e9
	b := Bound{TBound: tIdeal, By: idealBy, HBMBandwidth: hbmBandwidth}
	if tHBM > b.TBound {
		b.TBound, b.By = tHBM, "hbm"
	}
	b.SBound = tSerial / b.TBound
	if f, ok := FractionOfIdeal(sReal, b.SBound); ok {
		b.FractionOfBound = &f
	} else {
		b.Note = boundNote(boundGapOf(b.SBound, sReal), b)
	}
	return b, true
}
