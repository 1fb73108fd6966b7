package tui

import (
	"math"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/numfmt"
	"github.com/c3lab/c3lab/profiler/report"
)

// How the lab says how sure it is (ARCHITECTURE "Uncertainty"): a figure
// with a confidence interval (profiler.Result.CI) prints "± half-width"
// after its value ("1.41 ms ± 4 µs", "1.23x ± 0.01", "89.0% ± 1.2"); a
// deterministic result (the simulator) has no interval and says so once
// per panel; a figure past its limit whose interval holds the limit (F
// above 100 %) reads "within noise"; two uplifts whose intervals overlap
// are not ranked.

// noIntervalNote is what a deterministic result shows, once, where the ±
// of a figure would be.
const noIntervalNote = "deterministic: no interval"

// withinNoise is what a figure past its limit inside its interval reads.
const withinNoise = "within noise"

// ciOf is r's intervals, or nil when it has none.
func ciOf(r *profiler.Result) *profiler.Intervals {
	if r == nil {
		return nil
	}
	return r.CI
}

// plusMinus is " ± x" for a half-width already formatted, or "" when the
// interval iv does not hold numbers.
func plusMinus(iv profiler.Interval, format func(hw float64) string) string {
	if !iv.Valid() {
		return ""
	}
	return " ± " + format(iv.HalfWidth())
}

// durationPM is a time with its interval: "1.41 ms ± 4 µs"; without
// intervals (ci nil) the time alone. iv picks the figure's interval.
func durationPM(v float64, ci *profiler.Intervals, iv func(*profiler.Intervals) profiler.Interval) string {
	s := report.Duration(v)
	if ci == nil || s == report.NA {
		return s
	}
	return s + plusMinus(iv(ci), halfDuration)
}

// ratioPM is a ratio (a speedup, a slowdown, U) with its interval:
// "1.23x ± 0.01".
func ratioPM(v float64, ci *profiler.Intervals, iv func(*profiler.Intervals) profiler.Interval) string {
	s := report.Ratio(v)
	if ci == nil || s == report.NA {
		return s
	}
	return s + plusMinus(iv(ci), halfFixed(2))
}

// percentPM is a fraction as a percentage with its interval in points:
// "89.0% ± 1.2".
func percentPM(f float64, iv profiler.Interval, has bool) string {
	s := report.Percent(f)
	if !has || s == report.NA {
		return s
	}
	return s + plusMinus(iv, func(hw float64) string { return halfFixed(1)(100 * hw) })
}

// halfFixed formats a half-width with prec decimals; one that rounds to
// zero but is not zero reads "<0.01" (prec 2), so a tight interval is not
// mistaken for none.
func halfFixed(prec int) func(hw float64) string {
	return func(hw float64) string {
		s := numfmt.Fixed(hw, prec)
		if hw > 0 && s == numfmt.Fixed(0, prec) {
			return "<" + numfmt.Fixed(math.Pow(10, -float64(prec)), prec)
		}
		return s
	}
}

// halfDuration formats a time's half-width in nanoseconds with one
// significant digit, two when the first is a 1 ("4 µs", "15 µs",
// "1.2 ms"), in the unit report.Duration would pick for it.
func halfDuration(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) || ns < 0 {
		return report.NA
	}
	if ns == 0 {
		return "0 ns"
	}
	unit, scale := "ns", 1.0
	switch {
	case ns >= 999.5e6:
		unit, scale = "s", 1e9
	case ns >= 999.5e3:
		unit, scale = "ms", 1e6
	case ns >= 999.5:
		unit, scale = "µs", 1e3
	}
	v := ns / scale
	digits := 1
	if lead := v / math.Pow(10, math.Floor(math.Log10(v))); lead < 1.95 {
		digits = 2
	}
	exp := int(math.Floor(math.Log10(v))) - digits + 1
	v = math.Round(v/math.Pow(10, float64(exp))) * math.Pow(10, float64(exp))
	if v >= 1000 && unit != "s" {
		// Rounding carried into the next unit (999.7 ns -> 1000 ns).
		return halfDuration(v * scale * 1.0001)
	}
	return numfmt.Fixed(v, max(-exp, 0)) + " " + unit
}

// fractionState is how the lab shows a result's fraction of ideal F.
type fractionState int

const (
	// fracNone: F is undefined (the ideal speedup is 1).
	fracNone fractionState = iota
	// fracPlain: F is shown as a number (with its interval when it has one).
	fracPlain
	// fracNoise: F is past 100 % but its interval holds 100 %: within noise.
	fracNoise
	// fracPast: F is past 100 % beyond its interval: a number to distrust
	// (the isolated baseline is suspect), never one to celebrate.
	fracPast
)

// fraction is r's F, its interval when it has one, and how to show it.
func fraction(r *profiler.Result) (f float64, iv profiler.Interval, hasCI bool, state fractionState) {
	f, ok := r.Fraction()
	if !ok {
		return f, iv, false, fracNone
	}
	if ci := ciOf(r); ci != nil && ci.F.Valid() {
		iv, hasCI = ci.F, true
	}
	switch {
	case f > 1 && hasCI && iv.Contains(1):
		return f, iv, hasCI, fracNoise
	case f > 1 && hasCI:
		return f, iv, hasCI, fracPast
	}
	return f, iv, hasCI, fracPlain
}

// fractionText is r's fraction of ideal as the panels print it: "89.0% ±
// 1.2", "within noise (102.3% ± 4.0)" past 100 % inside its interval,
// "102.3% ± 0.4 past ideal" beyond it, "n/a" when undefined.
func fractionText(r *profiler.Result) string {
	f, iv, has, state := fraction(r)
	switch state {
	case fracNone:
		return report.NA
	case fracNoise:
		return withinNoise + " (" + percentPM(f, iv, has) + ")"
	case fracPast:
		return percentPM(f, iv, has) + " past ideal"
	}
	return percentPM(f, iv, has)
}

// upliftEst is a result's uplift U (uplift) with its interval: what
// strategies of one scenario are compared by, and told apart by.
type upliftEst struct {
	// u is U (S_real when the result has no U); ok says whether it is known.
	u  float64
	ok bool
	// ci is U's confidence interval; hasCI says whether there is one.
	ci    profiler.Interval
	hasCI bool
}

// upliftOf is r's uplift with its interval: the interval of U, or of
// S_real where uplift falls back to it.
func upliftOf(r profiler.Result) upliftEst {
	e := upliftEst{}
	e.u, e.ok = uplift(r)
	if !e.ok || r.CI == nil {
		return e
	}
	iv := r.CI.U
	if !(r.Uplift > 0) {
		iv = r.CI.SReal
	}
	if iv.Valid() {
		e.ci, e.hasCI = iv, true
	}
	return e
}

// compareU tells two uplifts apart: 1 when a is higher beyond the noise,
// -1 when lower, 0 when they are not told apart. Two intervals that
// overlap are not told apart; with one interval, it must not hold the
// other's value; with none (deterministic results) the values decide. An
// unknown uplift ranks below a known one; two unknown are not told apart.
func compareU(a, b upliftEst) int {
	switch {
	case !a.ok || !b.ok:
		switch {
		case a.ok:
			return 1
		case b.ok:
			return -1
		}
		return 0
	case a.hasCI && b.hasCI && a.ci.Overlaps(b.ci):
		return 0
	case a.hasCI && !b.hasCI && a.ci.Contains(b.u):
		return 0
	case b.hasCI && !a.hasCI && b.ci.Contains(a.u):
		return 0
	case a.u > b.u:
		return 1
	case a.u < b.u:
		return -1
	}
	return 0
}
