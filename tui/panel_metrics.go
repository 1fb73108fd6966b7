package tui

import (
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/numfmt"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Line counts of the metrics panel in its two forms.
const (
	metricsTwoColLines = 8
	metricsOneColLines = 13
)

// metricsTitle names the result the panel shows, so a stale result is not
// mistaken for the one being measured.
func metricsTitle(r *profiler.Result) string {
	if r == nil {
		return "Metrics"
	}
	return "Metrics · " + r.Scenario.Name + " · " + r.Strategy.String()
}

// trailPoint is one past measurement of a scenario: its strategy and the
// uplift U it reached (uplift) with its interval, the one figure
// strategies are compared by.
type trailPoint struct {
	strategy string
	upliftEst
}

// maxTrail is how many past measurements of a scenario the lab keeps.
const maxTrail = 8

// trailLine shows how the uplift U moved as the strategy changed,
// newest last, in the w cells it has: every point with the strategies'
// full names when they fit, else with their short names (as the history's
// legend writes them), dropping the oldest points that still do not fit
// behind a "…". Two points joined by ≈ instead of → are not told apart:
// the change between them is inside the noise (compareU).
func trailLine(st Styles, trail []trailPoint, labelW, w int) string {
	label := st.Label.Render(fit("trail U", labelW))
	if len(trail) < 2 {
		return label + st.Dim.Render("flip a knob to compare strategies")
	}
	type point struct{ text, join string }
	points := func(short bool) []point {
		parts := make([]point, len(trail))
		for i, p := range trail {
			f := "n/a"
			if p.ok {
				f = report.Ratio(p.u)
			}
			name := p.strategy
			if short {
				name = abbrevStrategy(name)
			}
			parts[i] = point{text: name + " " + f, join: " → "}
			if i > 0 && p.ok && trail[i-1].ok && compareU(p.upliftEst, trail[i-1].upliftEst) == 0 {
				parts[i].join = " ≈ "
			}
		}
		return parts
	}
	join := func(parts []point) string {
		var b strings.Builder
		for i, p := range parts {
			if i > 0 {
				b.WriteString(p.join)
			}
			b.WriteString(p.text)
		}
		return b.String()
	}
	room := w - labelW
	text := join(points(false))
	if ansiWidth(text) > room {
		parts := points(true)
		text = join(parts)
		for len(parts) > 1 && ansiWidth(text) > room {
			parts = parts[1:]
			text = "… " + join(parts)
		}
	}
	return label + st.Dim.Render(fit(text, room))
}

// metricsLabelW is the width of the metrics panel's label column at inner
// width w, which the history chart below it lines up with.
func metricsLabelW(w int) int {
	if metricsTwoColumns(w) {
		return 9
	}
	return 12
}

// metricsLines renders the paper's figures for r at inner width w, with the
// trail of the scenario's past measurements. Each figure carries its
// interval ("± x") when r has them; a deterministic result says once, by
// the fraction of ideal, that it has none; a fraction of ideal past 100 %
// inside its interval reads "within noise" and is not drawn as a success.
func metricsLines(st Styles, r *profiler.Result, trail []trailPoint, w int) []string {
	if r == nil {
		return []string{st.Dim.Render("no measurement yet: pick a scenario (enter) or rerun (r)")}
	}
	lab := func(s string, n int) string { return st.Label.Render(fit(s, n)) }
	val := func(s string) string { return st.Value.Render(s) }
	ci := ciOf(r)

	frac, _, _, fstate := fraction(r)
	fracText := "n/a (ideal speedup is 1)"
	fracStyle := st.Dim
	gaugeFrac := 0.0
	switch fstate {
	case fracNoise:
		// Not a result: the gauge stops at 100 %, the words say why.
		fracText, fracStyle, gaugeFrac = fractionText(r), st.Value, 1
	case fracPast:
		fracText, fracStyle, gaugeFrac = fractionText(r), st.Warn, 1
	case fracPlain:
		fracText = fractionText(r)
		switch {
		case frac < 0:
			fracStyle = st.Bad
		case frac >= 0.6:
			fracStyle = st.Good
		default:
			fracStyle = st.Value
		}
		gaugeFrac = math.Max(frac, 0)
	}
	// A deterministic result says, once, that it has no interval; where
	// the full words would leave the gauge less than 16 cells, one word
	// says it, and none where even that leaves less than 8 (the why panel
	// says it too).
	if r.Deterministic && ci == nil {
		gauge := func(note string) int { return w - 11 - ansiWidth(fracText+note) - 1 }
		note, short := " · "+noIntervalNote, " · deterministic"
		if me := r.ModelError; me != nil && me.FRuns > 0 {
			// A model's figure: its error on held-out GPU runs stands
			// where a measurement's interval would.
			note, short = " · "+report.ModelErrorF(*me), " · err "+numfmt.Fixed(me.FMedian, 0)+" pt"
		}
		switch {
		case !metricsTwoColumns(w) || gauge(note) >= 16:
			fracText += note
		case gauge(short) >= 8:
			fracText += short
		}
	}
	// The bound: what is physically reachable when both ops share HBM.
	boundText, boundFrac, boundStyle := boundGapText(r), 0.0, st.Dim
	if b := r.Bound; b != nil && b.FractionOfBound != nil {
		boundFrac = math.Max(*b.FractionOfBound, 0)
		boundText = report.Percent(*b.FractionOfBound) + " of " + report.Ratio(b.SBound) + " (" + b.By + ")"
		boundStyle = st.Value
		// Past the bound, S_real is past S_bound. Where the bound is the
		// ideal, the fraction of bound is F and reads as F does; else it is
		// within noise when its interval holds 100 % (in results made
		// before it had one: when S_real's interval reaches S_bound, taken
		// as exact), and a number to distrust when it does not.
		if *b.FractionOfBound > 1 && ci != nil {
			state := fracPlain
			switch {
			case math.Abs(b.SBound-r.IdealSpeedup) <= 1e-9*b.SBound:
				state = fstate
			case ci.FBound.Valid():
				// The fraction of bound's own interval (results since it
				// was kept), as the CLI reads it.
				state = fracPast
				if ci.FBound.Contains(1) {
					state = fracNoise
				}
			case ci.SReal.Valid() && ci.SReal.Lo <= b.SBound:
				state = fracNoise
			case ci.SReal.Valid():
				state = fracPast
			}
			switch state {
			case fracNoise:
				boundFrac, boundText = 1, withinNoise+": "+boundText
			case fracPast:
				boundFrac, boundText, boundStyle = 1, boundText+" past the bound", st.Warn
			}
		}
	}
	compSlow := ratioPM(r.CompSlowdown, ci, func(c *profiler.Intervals) profiler.Interval { return c.CompSlowdown })
	commSlow := ratioPM(r.CommSlowdown, ci, func(c *profiler.Intervals) profiler.Interval { return c.CommSlowdown })
	tComp := durationPM(r.TComp.Median, ci, func(c *profiler.Intervals) profiler.Interval { return c.TComp })
	tComm := durationPM(r.TComm.Median, ci, func(c *profiler.Intervals) profiler.Interval { return c.TComm })
	tC3 := durationPM(r.TC3.Median, ci, func(c *profiler.Intervals) profiler.Interval { return c.TC3 })
	// A model's T_c3 carries its held-out error where it fits.
	c3Note := ""
	if me := r.ModelError; me != nil && ci == nil {
		c3Note = " · " + report.ModelErrorC3(*me)
	}
	withNote := func(room int) string {
		if c3Note == "" || ansiWidth(tC3+c3Note) > room {
			return val(tC3)
		}
		return val(tC3) + st.Dim.Render(c3Note)
	}
	sIdeal := ratioPM(r.IdealSpeedup, ci, func(c *profiler.Intervals) profiler.Interval { return c.SIdeal })
	sReal := ratioPM(r.RealizedSpeedup, ci, func(c *profiler.Intervals) profiler.Interval { return c.SReal })
	// A host copy's bandwidth is over PCIe; a collective's is busbw.
	bwLabel := "busbw"
	if r.Scenario.Comm.Collective.IsHostCopy() {
		bwLabel = "PCIe"
	}
	bw := val(report.Bandwidth(r.BusBW)) + st.Dim.Render(" "+bwLabel+" · ") + computeRate(st, r)

	if metricsTwoColumns(w) {
		half := w / 2
		c3Two := withNote(half - 10)
		row := func(l1, v1, l2, v2 string) string {
			return fit(lab(l1, 9)+v1, half) + lab(l2, 10) + v2
		}
		gw := max(w-11-ansiWidth(fracText)-1, 4)
		return []string{
			row("T_comp", val(tComp)+modesMark(st, r, "T_comp", half-10-ansiWidth(tComp)), "ideal", val(sIdeal)),
			row("T_comm", val(tComm)+modesMark(st, r, "T_comm", half-10-ansiWidth(tComm)), "realized", val(sReal)),
			row("T_c3", c3Two+modesMark(st, r, "T_c3", half-10-ansiWidth(c3Two)), "class", val(string(r.Class))),
			lab("% of ideal", 11) + styledBar(st, fracStyle, gaugeFrac, gw) + " " + fracStyle.Render(fracText),
			lab("% of bound", 11) + styledBar(st, boundStyle, boundFrac, max(w-11-ansiWidth(boundText)-1, 4)) + " " + boundStyle.Render(boundText),
			lab("slowdown", 9) + val(compSlow) + st.Dim.Render(" compute · ") + val(commSlow) + st.Dim.Render(" comm"),
			lab("isolated", 9) + bw,
			trailLine(st, trail, 9, w),
		}
	}
	c3One := withNote(w - 12)
	return []string{
		lab("T_comp", 12) + val(tComp) + modesMark(st, r, "T_comp", w-12-ansiWidth(tComp)),
		lab("T_comm", 12) + val(tComm) + modesMark(st, r, "T_comm", w-12-ansiWidth(tComm)),
		lab("T_c3", 12) + c3One + modesMark(st, r, "T_c3", w-12-ansiWidth(c3One)),
		lab("ideal", 12) + val(sIdeal),
		lab("realized", 12) + val(sReal),
		lab("% of ideal", 12) + fracStyle.Render(fracText),
		styledBar(st, fracStyle, gaugeFrac, w),
		lab("% of bound", 12) + boundStyle.Render(boundText),
		lab("slowdown", 12) + val(compSlow) + st.Dim.Render(" comp · ") + val(commSlow) + st.Dim.Render(" comm"),
		lab("class", 12) + val(string(r.Class)),
		lab(bwLabel, 12) + val(report.Bandwidth(r.BusBW)),
		lab("compute", 12) + computeRate(st, r),
		trailLine(st, trail, 12, w),
	}
}

// computeRate is the isolated compute op's throughput: TFLOP/s for a GEMM,
// the bytes a stream op reads and writes per second for a stream op.
func computeRate(st Styles, r *profiler.Result) string {
	if r.Scenario.Compute.Kind == scenarios.Stream {
		return st.Value.Render(report.Bandwidth(r.AchievedBW)) + st.Dim.Render(" HBM")
	}
	return st.Value.Render(report.TFLOPs(r.AchievedTFLOPs))
}

// boundGapText says, in a few words, why r has no fraction of bound.
func boundGapText(r *profiler.Result) string {
	switch g := r.BoundGap(); g {
	case profiler.GapNoSpeedup:
		return "n/a (bound " + report.Ratio(r.Bound.SBound) + ": no gain)"
	case profiler.GapBelowOne:
		return "n/a (bound " + report.Ratio(r.Bound.SBound) + " < 1)"
	default:
		return "n/a (" + g.String() + ")"
	}
}

// metricsPanelLines is the metrics panel's body at inner size w x h: the
// figures, then, with history set, the history chart at the bottom.
func metricsPanelLines(st Styles, r *profiler.Result, trail []trailPoint, hist []fracPoint, w, h int, history bool) []string {
	lines := metricsLines(st, r, trail, w)
	if !history {
		return lines
	}
	return append(padLines(lines, h-fracChartLines), fracChartBlock(st, hist, metricsLabelW(w), w)...)
}

func ansiWidth(s string) int { return ansi.StringWidth(s) }

// metricsPanel is the paper's figures for the result on screen, with the
// trail and, when tall enough, the history of the scenario measured.
type metricsPanel struct {
	size
	// history is set when the panel is tall enough for the history chart.
	history bool
}

// Update handles no message: the panel shows the lab's result.
func (p *metricsPanel) Update(*Model, tea.Msg) (tea.Cmd, bool) { return nil, false }

// View is the metrics box.
func (p *metricsPanel) View(m *Model) []string {
	if p.w <= 0 || p.h <= 0 {
		return nil
	}
	var name string
	if len(m.suite) > 0 {
		name = m.suite[m.active].Name
	}
	lines := metricsPanelLines(m.styles, m.result, m.trail[name], m.hist[name], p.w-2, p.h-2, p.history)
	return box(m.styles, metricsTitle(m.result), lines, p.w, p.h)
}

// modesMark is " 2 modes" after a time whose repetitions fall in two modes
// (Result.Bimodal names it; the why panel gives both), " ≋" where room
// (the cells left after the time) is too narrow for the words, else "".
func modesMark(st Styles, r *profiler.Result, time string, room int) string {
	for _, b := range r.Bimodal {
		if b.Time != time {
			continue
		}
		if room >= len(" 2 modes") {
			return st.Warn.Render(" 2 modes")
		}
		return st.Warn.Render(" ≋")
	}
	return ""
}
