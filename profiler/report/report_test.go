package report

import (
	"math"
	"regexp"
	"testing"
)

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		got, want string
	}{
		{Duration(850), "850 ns"},
		{Duration(999.4), "999 ns"},
		{Duration(999.6), "1.00 µs"},
		{Duration(12_345), "12.3 µs"},
		{Duration(123_456), "123 µs"},
		{Duration(1_234_567), "1.23 ms"},
		{Duration(999_960), "1.00 ms"},
		{Duration(215_000_000), "215 ms"},
		{Duration(2.5e9), "2.50 s"},
		{Duration(math.NaN()), "n/a"},
		{Duration(math.Inf(1)), "n/a"},
		{Duration(-5), "n/a"},
		{Ratio(1.4234), "1.42x"},
		{Ratio(1.995), "2.00x"},
		{Ratio(math.Inf(1)), "n/a"},
		{Percent(0.4021), "40.2%"},
		{Percent(-0.12), "-12.0%"},
		{Percent(math.NaN()), "n/a"},
		{WholePercent(0.549), "55%"},
		{PercentValue(0.4021), "40.2"},
		{Bandwidth(371.2e9), "371 GB/s"},
		{Bandwidth(55.13e9), "55.1 GB/s"},
		{Bandwidth(2147e9), "2147 GB/s"},
		{Bandwidth(0), "n/a"},
		{Bandwidth(math.NaN()), "n/a"},
		{TFLOPs(712.4), "712 TFLOP/s"},
		{TFLOPs(0), "n/a"},
		{Size(812), "812 B"},
		{Size(1_234_567), "1.23 MB"},
		{Size(4_500_000_000), "4.50 GB"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}

// negZero matches a minus sign in front of a number that reads as zero
// ("-0", "-0.0%", "-0.00x"), which no formatter may print.
var negZero = regexp.MustCompile(`-0(\.0+)?($|[^0-9.])`)

// TestNoNegativeZero feeds every formatter values that round to zero from
// below, and the negative zero itself.
func TestNoNegativeZero(t *testing.T) {
	formatters := map[string]func(float64) string{
		"Duration":     Duration,
		"Ratio":        Ratio,
		"Percent":      Percent,
		"WholePercent": WholePercent,
		"PercentValue": PercentValue,
		"Bandwidth":    Bandwidth,
		"TFLOPs":       TFLOPs,
	}
	for name, f := range formatters {
		for _, v := range []float64{math.Copysign(0, -1), -1e-12, -0.00004, -0.0004, -0.004, -1e-4} {
			if got := f(v); negZero.MatchString(got) {
				t.Errorf("%s(%g) = %q: a negative zero", name, v, got)
			}
		}
	}
}
