package report

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/numfmt"
)

// WithinNoise is what a figure past its limit (F above 100 %) whose
// interval holds the limit reads after its value.
const WithinNoise = "(within noise)"

// PlusMinus is " ± x": the half-width of an interval iv, formatted by f;
// "" when iv is nil or holds no numbers.
func PlusMinus(iv *profiler.Interval, f func(float64) string) string {
	if iv == nil || !iv.Valid() {
		return ""
	}
	return " ± " + f(iv.HalfWidth())
}

// PercentCI is a fraction with its interval's half-width in points:
// "89.0% ± 1.2".
func PercentCI(f float64, iv *profiler.Interval) string {
	return Percent(f) + PlusMinus(iv, PercentValue)
}

// RatioCI is a speedup or slowdown with its interval: "1.23x ± 0.01".
func RatioCI(x float64, iv *profiler.Interval) string {
	return Ratio(x) + PlusMinus(iv, func(h float64) string { return numfmt.Fixed(h, 2) })
}

// DurationCI is a time with its interval: "1.46 ms ± 12.3 µs".
func DurationCI(ns float64, iv *profiler.Interval) string {
	return Duration(ns) + PlusMinus(iv, Duration)
}

// UpliftCI formats U for a table cell with its interval ("1.42x ± 0.02"),
// or n/a when unknown.
func UpliftCI(u float64, iv *profiler.Interval) string {
	if u <= 0 {
		return NA
	}
	return RatioCI(u, iv)
}

// ci returns a pointer to one of the result's intervals, nil when it has
// none.
func ci(r profiler.Result, pick func(*profiler.Intervals) profiler.Interval) *profiler.Interval {
	if r.CI == nil {
		return nil
	}
	iv := pick(r.CI)
	return &iv
}

// FractionValue is F as the report prints it: with its interval, and
// "(within noise)" when it is above 100 % only within it.
func FractionValue(r profiler.Result) (string, bool) {
	f, ok := r.Fraction()
	if !ok {
		return "", false
	}
	s := PercentCI(f, ci(r, func(c *profiler.Intervals) profiler.Interval { return c.F }))
	if r.FWithinNoise() {
		s += " " + WithinNoise
	}
	return s, true
}

// BoundFractionValue is the fraction of the physical bound as the report
// prints it: with its interval, and "(within noise)" when it is above
// 100 % only within it; false when the result has none.
func BoundFractionValue(r profiler.Result) (string, bool) {
	b := r.Bound
	if b == nil || b.FractionOfBound == nil {
		return "", false
	}
	s := PercentCI(*b.FractionOfBound, ci(r, func(c *profiler.Intervals) profiler.Interval { return c.FBound }))
	if r.FBoundWithinNoise() {
		s += " " + WithinNoise
	}
	return s, true
}

// UncertaintyNotes are the lines that say how sure a result is: why it
// has no interval (unless deterministic, which the time table says), how
// far a model's figures were from held-out runs, which times are bimodal,
// and what an adaptive measurement reached.
func UncertaintyNotes(r profiler.Result) []string {
	var out []string
	if r.CI == nil && r.NoCI != "" && !r.Deterministic {
		out = append(out, "no interval: "+r.NoCI)
	}
	if r.CI != nil {
		out = append(out, fmt.Sprintf("± is half the %s interval (a bootstrap over %d interleaved rounds)", WholePercent(r.CI.Level), r.CI.Rounds))
	}
	if r.ModelError != nil {
		out = append(out, ModelErrorNote(*r.ModelError))
	}
	for _, b := range r.Bimodal {
		out = append(out, BimodalNote(b))
	}
	if p := r.Precision; p != nil {
		out = append(out, PrecisionNote(*p))
	}
	return out
}

// BimodalNote says a time has two modes and that its median is neither:
// "T_c3 is bimodal: 5.85 ms (55%) and 6.97 ms (45%); its median lies
// between the two and describes neither".
func BimodalNote(b profiler.Bimodal) string {
	return fmt.Sprintf("%s is bimodal: %s (%s) and %s (%s); its median lies between the two and describes neither",
		b.Time, Duration(b.Modes[0].Median), WholePercent(b.Modes[0].Share), Duration(b.Modes[1].Median), WholePercent(b.Modes[1].Share))
}

// PrecisionNote says what an adaptive measurement reached: "precision
// 2% T_c3: reached (± 1.4%) in 7 rounds, 3.2s" or "...: not reached
// (± 3.1%; time cap) in 40 rounds, 30s".
func PrecisionNote(p profiler.PrecisionOutcome) string {
	hw := ""
	if p.HalfWidth != nil && !math.IsNaN(*p.HalfWidth) {
		v := 100 * *p.HalfWidth
		unit := "%"
		if strings.HasSuffix(p.Target, " F") {
			unit = "pt"
		}
		hw = "± " + numfmt.Fixed(v, 1) + unit
	}
	state := "reached"
	switch {
	case p.Stop == profiler.StopDeterministic:
		return "precision " + p.Target + ": met at once (the backend is deterministic)"
	case !p.Reached:
		state = "not reached"
		if hw != "" {
			hw += "; "
		}
		hw += p.Stop
	}
	if hw != "" {
		state += " (" + hw + ")"
	}
	s := fmt.Sprintf("precision %s: %s in %d rounds", p.Target, state, p.Rounds)
	if p.Elapsed > 0 {
		s += ", " + p.Elapsed.Round(100*time.Millisecond).String()
	}
	return s
}
