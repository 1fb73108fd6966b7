package profiler

import (
	"math"
	"slices"
)

// Stat summarises repeated measurements of one time, in nanoseconds.
type Stat struct {
	N      int     `json:"n"`
	Median float64 `json:"median_ns"`
	Min    float64 `json:"min_ns"`
	Max    float64 `json:"max_ns"`
	// P10 and P90 bound the middle 80 % of runs: the spread reported with medians.
	P10 float64 `json:"p10_ns"`
	P90 float64 `json:"p90_ns"`
}

// Summarize computes a Stat from samples (nanoseconds). An empty input gives
// a zero Stat.
func Summarize(ns []int64) Stat {
	if len(ns) == 0 {
		return Stat{}
	}
	v := make([]float64, len(ns))
	for i, x := range ns {
		v[i] = float64(x)
	}
	slices.Sort(v)
	return Stat{
		N:      len(v),
		Median: quantile(v, 0.5),
		Min:    v[0],
		Max:    v[len(v)-1],
		P10:    quantile(v, 0.1),
		P90:    quantile(v, 0.9),
	}
}

// quantile interpolates linearly between closest ranks of sorted data.
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 1 {
		return sorted[0]
	}
	pos := q * float64(len(sorted)-1)
	lo := int(math.Floor(pos))
	hi := int(math.Ceil(pos))
	frac := pos - float64(lo)
	return sorted[lo]*(1-frac) + sorted[hi]*frac
}

// Spread is (P90 - P10) / Median, the relative width of the middle 80 %.
func (s Stat) Spread() float64 {
	if s.Median == 0 {
		return 0
	}
	return (s.P90 - s.P10) / s.Median
}
