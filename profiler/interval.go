package profiler

import "math"

// Interval is a two-sided confidence interval of one figure, in the
// figure's own unit (nanoseconds for times, a ratio for speedups and
// slowdowns, a fraction for F).
type Interval struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// Valid reports whether the interval holds numbers (Lo <= Hi, not NaN).
func (i Interval) Valid() bool { return !math.IsNaN(i.Lo) && !math.IsNaN(i.Hi) && i.Lo <= i.Hi }

// Contains reports whether v lies inside the interval (bounds included).
func (i Interval) Contains(v float64) bool { return i.Valid() && v >= i.Lo && v <= i.Hi }

// Overlaps reports whether two intervals share a value: figures whose
// intervals overlap are not told apart (ranked) by c3lab.
func (i Interval) Overlaps(o Interval) bool {
	return i.Valid() && o.Valid() && i.Lo <= o.Hi && o.Lo <= i.Hi
}

// HalfWidth is half the interval's width: the "± x" c3lab prints.
func (i Interval) HalfWidth() float64 {
	if !i.Valid() {
		return math.NaN()
	}
	return (i.Hi - i.Lo) / 2
}

// Intervals are the confidence intervals of a result's figures, from a
// bootstrap over the measurement's interleaved rounds in which the
// isolated and concurrent runs of one round stay paired. A deterministic
// backend (the simulator) has none: Result.CI is nil and c3lab says so.
type Intervals struct {
	// Level is the confidence level (0.95).
	Level float64 `json:"level"`
	// Resamples is the number of bootstrap resamples; Rounds the number
	// of interleaved rounds they resample.
	Resamples int `json:"resamples"`
	Rounds    int `json:"rounds"`
	// Passes is the number of sweep passes the rounds were measured in,
	// when more than one: the resamples then draw passes first, so the
	// interval holds the differences between passes (MergePasses).
	Passes int `json:"passes,omitempty"`
	// Times of the medians (nanoseconds).
	TComp   Interval `json:"t_comp"`
	TComm   Interval `json:"t_comm"`
	TC3     Interval `json:"t_c3"`
	TSerial Interval `json:"t_serial"`
	TIdeal  Interval `json:"t_ideal"`
	// Speedups, the fraction of ideal and the uplift over the serial
	// default (U is the interval of the ratio of two measured times, the
	// serial default's and T_c3).
	SIdeal Interval `json:"ideal_speedup"`
	SReal  Interval `json:"realized_speedup"`
	F      Interval `json:"fraction_of_ideal"`
	U      Interval `json:"uplift"`
	// Slowdowns of the compute and communication ops in C3, and of each
	// graph op (Result.Ops order).
	CompSlowdown Interval   `json:"compute_slowdown"`
	CommSlowdown Interval   `json:"comm_slowdown"`
	Ops          []Interval `json:"ops,omitempty"`
	// TCompInC3 and TCommInC3 are the ops' own times inside the
	// concurrent run; FBound the fraction of the physical bound (Bound),
	// from resamples refigured with the bound's HBM bandwidth. Results
	// made before these were kept hold none (null in JSON).
	TCompInC3 Interval `json:"t_comp_in_c3"`
	TCommInC3 Interval `json:"t_comm_in_c3"`
	FBound    Interval `json:"fraction_of_bound"`
}
