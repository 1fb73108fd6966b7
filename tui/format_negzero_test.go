package tui

import (
	"math"
	"regexp"
	"testing"

	"github.com/c3lab/c3lab/backends"
)

// negZero matches a minus sign in front of a number that reads as zero
// ("-0", "-0.0%", "-0.00x"), which no formatter may print.
var negZero = regexp.MustCompile(`-0(\.0+)?($|[^0-9.])`)

// TestNoNegativeZero feeds the lab's own number formatters (the shared
// ones are profiler/report's, tested there) values that round to zero from
// below, and the negative zero itself.
func TestNoNegativeZero(t *testing.T) {
	formatters := map[string]func(float64) string{
		"fmtSMs":    func(v float64) string { return fmtSMs(v, true) },
		"utilValue": func(v float64) string { return utilValue(backends.MetricSMUtil, v, 0) },
		"utilHBM":   func(v float64) string { return utilValue(backends.MetricHBMUtil, v, 4.8e12) },
	}
	for name, f := range formatters {
		for _, v := range []float64{math.Copysign(0, -1), -1e-12, -0.0004, -0.004, -1e-4} {
			if got := f(v); negZero.MatchString(got) {
				t.Errorf("%s(%g) = %q: a negative zero", name, v, got)
			}
		}
	}
}
