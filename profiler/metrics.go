// Package profiler owns c3lab's measurement protocol and its metrics: it asks
// a backend for isolated and concurrent runs, takes medians, and derives the
// paper's speedups. It never launches GPU work itself.
//
// Metric names follow shared/design/ARCHITECTURE.md: T_comp and T_comm are
// medians of isolated runs, T_c3 the median wall time of the concurrent run.
package profiler

import (
	"math"

	"github.com/c3lab/c3lab/scenarios"
)

// IdealSpeedup is S_ideal = (T_comp + T_comm) / max(T_comp, T_comm): what
// perfect overlap would gain over running the two ops one after the other.
// It lies in [1, 2]; it is NaN when both times are zero.
func IdealSpeedup(tComp, tComm float64) float64 {
	m := math.Max(tComp, tComm)
	if m <= 0 {
		return math.NaN()
	}
	return (tComp + tComm) / m
}

// SpeedupOver is a reference time over a time: S_ideal = T_serial /
// T_ideal, S_real = T_serial / T_c3, U = T_serial(default) / T_c3. NaN when
// t is not positive.
func SpeedupOver(ref, t float64) float64 {
	if t <= 0 {
		return math.NaN()
	}
	return ref / t
}

// RealizedSpeedup is S_real = (T_comp + T_comm) / T_c3. Below 1 the
// concurrent run was slower than running the ops in series.
func RealizedSpeedup(tComp, tComm, tC3 float64) float64 {
	if tC3 <= 0 {
		return math.NaN()
	}
	return (tComp + tComm) / tC3
}

// idealEpsilon is how close to 1 an ideal speedup may be before the
// fraction of ideal is treated as undefined (a 0.01 % uplift is noise).
const idealEpsilon = 1e-4

// FractionOfIdeal is F = (S_real - 1) / (S_ideal - 1), the share of the
// ideal uplift actually realized. It is negative when concurrency is slower
// than serial. ok is false when it is undefined (S_ideal = 1: one op takes
// no time, so there is nothing to gain).
func FractionOfIdeal(sReal, sIdeal float64) (f float64, ok bool) {
	if math.IsNaN(sReal) || math.IsNaN(sIdeal) || sIdeal-1 < idealEpsilon {
		return math.NaN(), false
	}
	return (sReal - 1) / (sIdeal - 1), true
}

// Slowdown is an op's time under concurrency over its isolated time
// (1 = unaffected, 2 = twice as slow).
func Slowdown(tInC3, tAlone float64) float64 {
	if tAlone <= 0 {
		return math.NaN()
	}
	return tInC3 / tAlone
}

// Class is the paper's classification of a scenario by its isolated times.
type Class string

// Scenario classes.
const (
	// GEMMLong: T_comp > 1.15 T_comm.
	GEMMLong Class = "gemm-long"
	// CommLong: T_comm > 1.15 T_comp.
	CommLong Class = "comm-long"
	// Balanced: within 15 % of each other, the most to gain.
	Balanced Class = "balanced"
)

// classMargin is the paper's 15 % band for a balanced scenario.
const classMargin = 1.15

// Classify places a scenario by its isolated times.
func Classify(tComp, tComm float64) Class {
	switch {
	case tComp > classMargin*tComm:
		return GEMMLong
	case tComm > classMargin*tComp:
		return CommLong
	}
	return Balanced
}

// AlgBW is algorithm bandwidth as nccl-tests reports it: the collective's
// size (scenarios.CommOp.SizeBytes) over its time, in bytes per second.
func AlgBW(sizeBytes int64, seconds float64) float64 {
	if seconds <= 0 {
		return math.NaN()
	}
	return float64(sizeBytes) / seconds
}

// BusBWFactor is the nccl-tests factor from algbw to busbw for n ranks:
// (n-1)/n for all-gather, reduce-scatter and all-to-all, 2(n-1)/n for
// all-reduce. A host copy's bytes all cross one GPU's PCIe link: 1.
func BusBWFactor(c scenarios.Collective, n int) float64 {
	if n < 1 {
		return math.NaN()
	}
	if c.IsHostCopy() {
		return 1
	}
	f := float64(n-1) / float64(n)
	if c == scenarios.AllReduce {
		return 2 * f
	}
	return f
}

// BusBW is bus bandwidth: algbw times BusBWFactor, comparable across n.
func BusBW(c scenarios.Collective, n int, algBW float64) float64 {
	return algBW * BusBWFactor(c, n)
}
