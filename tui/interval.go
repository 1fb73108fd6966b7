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

// pickCI is one of ci's intervals, chosen by iv, or nil without ci: what
// profiler/report's formatters take.
func pickCI(ci *profiler.Intervals, iv func(*profiler.Intervals) profiler.Interval) *profiler.Interval {
	if ci == nil {
		return nil
	}
	x := iv(ci)
	return &x
}

// durationPM is a time with its interval: "1.41 ms ± 4 µs"; without
// intervals (ci nil) the time alone. iv picks the figure's interval. The
// half-width keeps one or two significant digits (halfDuration), so the
// panels' columns stay narrow.
func durationPM(v float64, ci *profiler.Intervals, iv func(*profiler.Intervals) profiler.Interval) string {
	s := report.Duration(v)
	if s == report.NA {
		return s
	}
	return s + report.PlusMinus(pickCI(ci, iv), halfDuration)
}

// ratioPM is a ratio (a speedup, a slowdown, U) with its interval, as
// profiler/report prints it: "1.23x ± 0.01".
func ratioPM(v float64, ci *profiler.Intervals, iv func(*profiler.Intervals) profiler.Interval) string {
	if report.Ratio(v) == report.NA {
		return report.NA
	}
	return report.RatioCI(v, pickCI(ci, iv))
}

// percentPM is a fraction as a percentage with its interval in points,
// as profiler/report prints it: "89.0% ± 1.2".
func percentPM(f float64, iv profiler.Interval, has bool) string {
	if !has || report.Percent(f) == report.NA {
		return report.Percent(f)
	}
	return report.PercentCI(f, &iv)
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
// strategies of one scenario are shown by; res is what they are told
// apart by (profiler.Compare: U, else T_c3, and only beyond their
// intervals).
type upliftEst struct {
	// u is U (S_real when the result has no U); ok says whether it is known.
	u  float64
	ok bool
	// ci is u's confidence interval; hasCI says whether there is one.
	ci    profiler.Interval
	hasCI bool
	// res holds the figures profiler.Compare reads (U, T_c3 and their
	// intervals), not the whole result.
	res profiler.Result
}

// upliftOf is r's uplift with its interval: the interval of U, or of
// S_real where uplift falls back to it.
func upliftOf(r profiler.Result) upliftEst {
	e := upliftEst{res: profiler.Result{Uplift: r.Uplift, TC3: r.TC3, CI: r.CI}}
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

// upliftAt is an uplift u known only as a number, with its interval iv
// when iv is not nil: a result whose U is u and whose T_c3 is what U
// implies (the serial default's time taken as 1 ms), so that it compares
// by U. An unknown uplift (ok false) compares below every known one.
func upliftAt(u float64, ok bool, iv *profiler.Interval) upliftEst {
	if !ok || !(u > 0) || math.IsInf(u, 0) {
		return upliftEst{u: u}
	}
	r := profiler.Result{Uplift: u, TC3: profiler.Stat{N: 1, Median: 1e6 / u}}
	e := upliftEst{u: u, ok: true}
	if iv != nil && iv.Valid() {
		r.CI = &profiler.Intervals{U: *iv, TC3: profiler.Interval{Lo: 1e6 / iv.Hi, Hi: 1e6 / iv.Lo}}
		e.ci, e.hasCI = *iv, true
	}
	e.res = r
	return e
}

// compareU tells two uplifts apart with profiler.Compare: 1 when a is
// better beyond the noise, -1 when worse, 0 when they are not told apart.
// An unknown uplift ranks below a known one; two unknown are not told
// apart.
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
	}
	switch profiler.Compare(a.res, b.res) {
	case profiler.Better:
		return 1
	case profiler.Worse:
		return -1
	}
	return 0
}
