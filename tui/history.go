package tui

import (
	"math"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/profiler/report"
)

// maxFracHistory is how many results of a scenario the history chart keeps.
const maxFracHistory = 240

// Size of the uplift history block in the metrics panel: the
// chart's rows, then a marker row and a legend.
const (
	fracChartRows  = 3
	fracChartLines = fracChartRows + 2
	// fracAxisW is the width of the y axis: its labels ("100%", "-35%")
	// right-aligned in 5 cells, then the tick.
	fracAxisW = 6
)

// fracPoint is one result in a scenario's history: its strategy and its
// uplift U (uplift) with its interval, the figure strategies are compared
// by. Its u is NaN when the result has none.
type fracPoint struct {
	strategy string
	upliftEst
}

// addFrac appends a result's uplift u (known when ok) to a history,
// keeping the newest maxFracHistory.
func addFrac(h []fracPoint, strategy string, u float64, ok bool) []fracPoint {
	return addUplift(h, strategy, upliftAt(u, ok, nil))
}

// addUplift appends a result's uplift with its interval to a history,
// keeping the newest maxFracHistory.
func addUplift(h []fracPoint, strategy string, e upliftEst) []fracPoint {
	if !e.ok {
		e.u = math.NaN()
	}
	h = append(h, fracPoint{strategy: strategy, upliftEst: e})
	if len(h) > maxFracHistory {
		h = h[len(h)-maxFracHistory:]
	}
	return h
}

// fracChange is a strategy change in a history: the chart cell where the
// first result under the new strategy is drawn. noise is set when its U
// is not told apart from the result before it (compareU): the change is
// inside the noise.
type fracChange struct {
	cell     int
	strategy string
	noise    bool
}

// fracWindow returns the points a chart cw cells wide shows (one per cell,
// the newest at the right edge), the empty cells before them, and the
// strategy changes among them.
func fracWindow(h []fracPoint, cw int) (vis []fracPoint, pad int, changes []fracChange) {
	start := max(len(h)-cw, 0)
	vis = h[start:]
	pad = cw - len(vis)
	for i := max(start, 1); i < len(h); i++ {
		if h[i].strategy != h[i-1].strategy {
			noise := h[i].ok && h[i-1].ok && compareU(h[i].upliftEst, h[i-1].upliftEst) == 0
			changes = append(changes, fracChange{cell: pad + i - start, strategy: h[i].strategy, noise: noise})
		}
	}
	return vis, pad, changes
}

// fracChartBlock renders a scenario's history of uplift U at inner width
// w: fracChartRows rows of braille chart (from the lower of 1.00x and the
// lowest U up to the higher of the highest U and one more than the
// bottom, so a flat history stays readable; the axis labels show both
// ends), a row with ┴ under each strategy change (≈ under one whose U is
// not told apart from the result before it), and a legend naming the
// latest changes. Each result takes one cell. U, not the fraction of
// ideal, is what a chart across strategies may show: each strategy has
// its own ideal. It returns fracChartLines lines, or nil when w leaves no
// room for a chart.
func fracChartBlock(st Styles, h []fracPoint, labelW, w int) []string {
	cw := w - labelW - fracAxisW
	if cw < 4 {
		return nil
	}
	vis, _, changes := fracWindow(h, cw)
	// One result per cell (both dot columns), so that every change of
	// strategy, even on consecutive results, gets a marker of its own.
	vals := make([]float64, 2*len(vis))
	lo, hi := 1.0, 0.0
	for i, p := range vis {
		vals[2*i], vals[2*i+1] = p.u, p.u
		if !math.IsNaN(p.u) {
			lo, hi = min(lo, p.u), max(hi, p.u)
		}
	}
	hi = max(hi, lo+1)
	chart := brailleLines(vals, lo, hi, cw, fracChartRows)
	out := make([]string, 0, fracChartLines)
	for r, line := range chart {
		label, axis, tick := "", "", "│"
		switch r {
		case 0:
			label, axis, tick = "uplift U", report.Ratio(hi), "┤"
		case 1:
			label = strconv.Itoa(len(h)) + " run"
			if len(h) != 1 {
				label += "s"
			}
		}
		if r == fracChartRows-1 {
			axis, tick = report.Ratio(lo), "┤"
		}
		out = append(out, st.Label.Render(fit(label, labelW))+st.Dim.Render(alignRight(axis, fracAxisW-1)+tick)+st.Chart.Render(line))
	}
	out = append(out, strings.Repeat(" ", labelW+fracAxisW-1)+st.Dim.Render("└")+markerRow(st, changes, cw))
	return append(out, strings.Repeat(" ", labelW+fracAxisW)+fracLegend(st, changes, cw))
}

// markerRow is the chart's x axis, cw cells wide, with ┴ in every cell
// where the strategy changed, ≈ where it changed inside the noise.
func markerRow(st Styles, changes []fracChange, cw int) string {
	cells := make([]string, cw)
	for _, c := range changes {
		if c.cell >= 0 && c.cell < cw {
			cells[c.cell] = changeGlyph(c)
		}
	}
	var b strings.Builder
	run := 0
	flush := func() {
		if run > 0 {
			b.WriteString(st.Dim.Render(strings.Repeat("─", run)))
			run = 0
		}
	}
	for _, mark := range cells {
		if mark == "" {
			run++
			continue
		}
		flush()
		b.WriteString(st.Marker.Render(mark))
	}
	flush()
	return b.String()
}

// changeGlyph marks a strategy change on a history chart: ┴, or ≈ when
// the change is inside the noise.
func changeGlyph(c fracChange) string {
	if c.noise {
		return "≈"
	}
	return "┴"
}

// fracLegend names the latest strategy changes, oldest first, as many as
// fit in w cells.
func fracLegend(st Styles, changes []fracChange, w int) string {
	if len(changes) == 0 {
		return st.Dim.Render(fit("┴ marks a strategy change", w))
	}
	parts := make([]string, len(changes))
	for i, c := range changes {
		parts[i] = changeGlyph(c) + " " + abbrevStrategy(c.strategy)
	}
	const sep = "  "
	for len(parts) > 1 && ansiWidth(strings.Join(parts, sep)) > w {
		parts = parts[1:]
	}
	return st.Dim.Render(fit(strings.Join(parts, sep), w))
}

// strategyAbbrevs shortens the words of a strategy's name for legends.
var strategyAbbrevs = strings.NewReplacer(
	"comm-first", "cf", "compute_sms=", "csms=", "comm_sms=", "sms=",
	"gemm_sm_target=", "tgt=", "prio=", "p", "ctas=", "cta=", "chunk=", "ch=",
)

// abbrevStrategy is a strategy's name (Strategy.String) shortened for a
// legend: "comm-first prio=-5 dma" becomes "cf p-5 dma".
func abbrevStrategy(s string) string { return strategyAbbrevs.Replace(s) }
