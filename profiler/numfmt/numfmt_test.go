package numfmt

import (
	"math"
	"testing"
)

func TestFixed(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		prec int
		want string
	}{
		{math.Copysign(0, -1), 0, "0"},
		{math.Copysign(0, -1), 2, "0.00"},
		{-0.0004, 1, "0.0"},
		{-0.04, 1, "0.0"},
		{-0.4, 0, "0"},
		{-0.5, 0, "0"}, // half rounds to even
		{-0.6, 0, "-1"},
		{-0.05, 1, "-0.1"},
		{-12.34, 1, "-12.3"},
		{0.0004, 1, "0.0"},
		{1.5, 0, "2"},
		{100, 2, "100.00"},
		{math.NaN(), 1, "NaN"},
		{math.Inf(-1), 1, "-Inf"},
	} {
		if got := Fixed(tc.v, tc.prec); got != tc.want {
			t.Errorf("Fixed(%g, %d) = %q, want %q", tc.v, tc.prec, got, tc.want)
		}
	}
}
