package tui

import (
	"fmt"
	"math"

	"github.com/c3lab/c3lab/profiler/numfmt"
)

// fmtDur formats nanoseconds with three significant digits and a unit
// (ns, µs, ms, s); NaN and negative values read "n/a".
func fmtDur(ns float64) string {
	switch {
	case math.IsNaN(ns) || ns < 0:
		return "n/a"
	case ns < 999.5:
		return numfmt.Fixed(ns, 0) + " ns"
	case ns < 999.5e3:
		return sig3(ns/1e3) + " µs"
	case ns < 999.5e6:
		return sig3(ns/1e6) + " ms"
	}
	return sig3(ns/1e9) + " s"
}

// sig3 prints v (>= 0) with three significant digits.
func sig3(v float64) string {
	switch {
	case v >= 99.95:
		return numfmt.Fixed(v, 0)
	case v >= 9.995:
		return numfmt.Fixed(v, 1)
	}
	return numfmt.Fixed(v, 2)
}

// fmtX formats a ratio such as a speedup or a slowdown ("1.42x").
func fmtX(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return numfmt.Fixed(x, 2) + "x"
}

// fmtPct formats a fraction as a percentage with one decimal ("54.9%").
func fmtPct(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return numfmt.Fixed(100*f, 1) + "%"
}

// fmtPct0 formats a fraction as a whole percentage ("55%").
func fmtPct0(f float64) string {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return "n/a"
	}
	return numfmt.Fixed(100*f, 0) + "%"
}

// fmtBW formats bytes per second in decimal GB/s, as nccl-tests does.
func fmtBW(bps float64) string {
	if math.IsNaN(bps) || bps <= 0 {
		return "n/a"
	}
	return sig3(bps/1e9) + " GB/s"
}

// fmtTFLOPs formats a throughput in TFLOP/s.
func fmtTFLOPs(t float64) string {
	if math.IsNaN(t) || t <= 0 {
		return "n/a"
	}
	return sig3(t) + " TFLOP/s"
}

// fmtSize formats a file size in decimal units ("812 B", "1.23 MB").
func fmtSize(b int64) string {
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
