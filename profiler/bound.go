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
	// ("longer op" or "hbm").
	TBound float64 `json:"t_bound_ns"`
	By     string  `json:"bound_by"`
	// SBound = (T_comp + T_comm) / T_bound, the best speedup physically possible.
	SBound float64 `json:"s_bound"`
	// FractionOfBound = (S_real - 1) / (S_bound - 1); nil when S_bound is 1.
	FractionOfBound *float64 `json:"fraction_of_bound"`
	// HBMBandwidth is the bandwidth used (bytes/s).
	HBMBandwidth float64 `json:"hbm_bandwidth"`
}

// ComputeBound derives the bound from the isolated times (ns), the realized
// speedup and the device's HBM bandwidth (bytes/s). ok is false when the
// bandwidth is unknown.
func ComputeBound(sc scenarios.Scenario, tComp, tComm, sReal, hbmBandwidth float64) (Bound, bool) {
	if hbmBandwidth <= 0 || tComp <= 0 || tComm <= 0 {
		return Bound{}, false
	}
	hc, hm := HBMBytes(sc)
	tHBM := (hc + hm) / hbmBandwidth * 1e9
	b := Bound{TBound: math.Max(tComp, tComm), By: "longer op", HBMBandwidth: hbmBandwidth}
	if tHBM > b.TBound {
		b.TBound, b.By = tHBM, "hbm"
	}
	b.SBound = (tComp + tComm) / b.TBound
	if f, ok := FractionOfIdeal(sReal, b.SBound); ok {
		b.FractionOfBound = &f
	}
	return b, true
}
