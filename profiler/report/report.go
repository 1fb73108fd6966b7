// Package report formats measurements for people, the one place that does
// so for the command line and the lab: times, data rates, throughputs,
// ratios (speedups, slowdowns), percentages and file sizes. (The exports,
// profiler/export, write numbers for other tools, unformatted.)
//
// One rounding everywhere: times, rates and sizes carry three significant
// digits ("1.46 ms", "12.3 GB/s"), ratios two decimals ("1.42x"),
// percentages one decimal or none ("54.9%", "55%"). A value that is not a
// number (NaN, an infinity) prints "n/a", and a value that rounds to zero
// never prints as "-0" (numfmt). What prints with these is for reading;
// JSON output keeps full precision.
package report

import (
	"fmt"
	"math"

	"github.com/c3lab/c3lab/profiler/numfmt"
)

// NA is what a value that cannot be given prints as.
const NA = "n/a"

// Duration formats nanoseconds with three significant digits and a unit
// (ns, µs, ms, s): "850 ns", "12.3 µs", "1.46 ms", "2.41 s". NaN, an
// infinity and a negative time read "n/a".
func Duration(ns float64) string {
	switch {
	case math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0:
		return NA
	case ns < 999.5:
		return numfmt.Fixed(ns, 0) + " ns"
	case ns < 999.5e3:
		return sig3(ns/1e3) + " µs"
	case ns < 999.5e6:
		return sig3(ns/1e6) + " ms"
	}
	return sig3(ns/1e9) + " s"
}

// Bandwidth formats bytes per second in decimal GB/s, as nccl-tests does,
// with three significant digits ("371 GB/s", "55.1 GB/s"). A rate of zero
// or less is one that was not measured (JSON writes it as null): "n/a".
func Bandwidth(bps float64) string {
	if math.IsNaN(bps) || math.IsInf(bps, 0) || bps <= 0 {
		return NA
	}
	return sig3(bps/1e9) + " GB/s"
}

// TFLOPs formats a throughput given in TFLOP/s with three significant
// digits ("785 TFLOP/s"); zero or less (no tensor work) reads "n/a".
func TFLOPs(t float64) string {
	if math.IsNaN(t) || math.IsInf(t, 0) || t <= 0 {
		return NA
	}
	return sig3(t) + " TFLOP/s"
}

// Ratio formats a speedup or a slowdown with two decimals ("1.42x").
func Ratio(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return NA
	}
	return numfmt.Fixed(x, 2) + "x"
}

// Percent formats a fraction as a percentage with one decimal ("54.9%").
func Percent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NA
	}
	return PercentValue(f) + "%"
}

// WholePercent formats a fraction as a whole percentage ("55%").
func WholePercent(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NA
	}
	return numfmt.Fixed(100*f, 0) + "%"
}

// PercentValue is Percent without its sign ("54.9"), for a table column
// whose heading says %.
func PercentValue(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return NA
	}
	return numfmt.Fixed(100*f, 1)
}

// Size formats a byte count in decimal units with three significant digits
// ("812 B", "1.23 MB", "4.50 GB").
func Size(b int64) string {
	switch {
	case b < 1000:
		return fmt.Sprintf("%d B", b)
	case b < 999_500:
		return sig3(float64(b)/1e3) + " kB"
	case b < 999_500_000:
		return sig3(float64(b)/1e6) + " MB"
	}
	return sig3(float64(b)/1e9) + " GB"
}

// sig3 prints v (0 or more, below 999.5) with three significant digits:
// "0.85", "12.3", "215".
func sig3(v float64) string {
	switch {
	case v >= 99.95:
		return numfmt.Fixed(v, 0)
	case v >= 9.995:
		return numfmt.Fixed(v, 1)
	}
	return numfmt.Fixed(v, 2)
}
