package report

import (
	"fmt"
	"strconv"

	"github.com/c3lab/c3lab/profiler"
)

// Figure is one metric of a result, formatted for people: its name, its
// value and how it is computed (ARCHITECTURE "Metrics").
type Figure struct {
	// Key is the metric's short name ("S_ideal"), Name its words ("ideal
	// speedup"), Value the formatted value, Formula its definition.
	Key, Name, Value, Formula string
}

// Figures returns a result's metrics in the order the command line and the
// lab show them: T_serial, T_ideal, S_ideal, S_real, F and U, each with
// the half-width of its 95 % interval when the result has one ("89.0% ±
// 1.2"), F above 100 % only within its interval marked "(within noise)". F says how
// much of this strategy's own ideal was realized; U, the speedup over the
// serial default, is the one figure to compare strategies by.
func Figures(r profiler.Result) []Figure {
	frac := "undefined (nothing to overlap)"
	if f, ok := FractionValue(r); ok {
		frac = f
	}
	up := UpliftCI(r.Uplift, ci(r, func(c *profiler.Intervals) profiler.Interval { return c.U }))
	pick := func(f func(*profiler.Intervals) profiler.Interval) *profiler.Interval { return ci(r, f) }
	serialDef := NA
	if r.SerialDefault > 0 {
		serialDef = Duration(r.SerialDefault)
	}
	ideal := "max(T_comp, T_comm)"
	if len(r.Ops) > 2 || r.Scenario.IsGraph() {
		ideal = "the graph's list schedule at isolated times"
	}
	return []Figure{
		{"T_serial", "serial time", DurationCI(r.TSerial, pick(func(c *profiler.Intervals) profiler.Interval { return c.TSerial })), "every op alone, one after another (T_comp + T_comm)"},
		{"T_ideal", "ideal time", DurationCI(r.TIdeal, pick(func(c *profiler.Intervals) profiler.Interval { return c.TIdeal })), ideal},
		{"S_ideal", "ideal speedup", RatioCI(r.IdealSpeedup, pick(func(c *profiler.Intervals) profiler.Interval { return c.SIdeal })), "T_serial / T_ideal"},
		{"S_real", "realized speedup", RatioCI(r.RealizedSpeedup, pick(func(c *profiler.Intervals) profiler.Interval { return c.SReal })), "T_serial / T_c3"},
		{"F", "fraction of ideal", frac, "(S_real - 1) / (S_ideal - 1), against this strategy's own isolated times"},
		{"U", "uplift", up, "T_serial of the serial default (" + serialDef + ") / T_c3; strategies compare by it"},
	}
}

// OpRow is one line of a result's per-op table, formatted.
type OpRow struct {
	// Op is the op's label with its name ("qkv: gemm 8192x..."), Count its
	// instances; Alone and InC3 its time summed over its instances alone
	// and in C3; Slowdown their ratio.
	Op, Count, Alone, InC3, Slowdown string
}

// OpRows returns a result's per-op table (profiler.Result.Ops), in graph
// order; none when the result holds no per-op figures.
func OpRows(r profiler.Result) []OpRow {
	var out []OpRow
	for i, o := range r.Ops {
		inC3, slow := NA, NA
		if o.TInC3.N > 0 {
			inC3 = Duration(o.TInC3.Median)
		}
		if o.Slowdown > 0 {
			var iv *profiler.Interval
			if r.CI != nil && i < len(r.CI.Ops) {
				iv = &r.CI.Ops[i]
			}
			slow = RatioCI(o.Slowdown, iv)
		}
		label := o.Label
		if label == "" {
			label = o.Name
		}
		out = append(out, OpRow{Op: label, Count: strconv.Itoa(max(o.Count, 1)), Alone: Duration(o.TAlone.Median), InC3: inC3, Slowdown: slow})
	}
	return out
}

// OpHeader is the per-op table's heading, in OpRow's field order.
func OpHeader() [5]string { return [5]string{"op", "count", "alone", "in c3", "slowdown"} }

// Uplift formats U for a table cell ("1.42x"), or n/a when unknown.
func Uplift(u float64) string {
	if u <= 0 {
		return NA
	}
	return Ratio(u)
}

// String is "S_ideal 1.42x".
func (f Figure) String() string { return fmt.Sprintf("%s %s", f.Key, f.Value) }
