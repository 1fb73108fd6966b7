package tui

import (
	"fmt"
	"math"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler/report"
)

// This file holds the plots the command line ends with (c3lab sweep's
// heatmap, c3lab compare's change chart), drawn with the lab's own
// drawing code (fit, bar, the styles). Each returns plain text when
// color is false: no escape sequences, for a pipe, a file or NO_COLOR.

// HeatCell is one cell of a heatmap: a value and whether there is one.
type HeatCell struct {
	Value float64
	OK    bool
}

// heatShades are a heatmap cell's levels, lowest first; below 1x (slower
// than serial) a cell reads heatSlower.
var heatShades = []string{"░░", "▒▒", "▓▓", "██"}

const heatSlower = "--"

// heatColours colour the levels, from pale to deep teal (the report's
// U scale), and heatSlowerColour the cells below 1x.
var (
	heatColours      = []string{"#a7d7d2", "#5ab4ac", "#1f8a80", "#01665e"}
	heatSlowerColour = "#d8842b"
)

// UpliftHeatmap draws U by scenario (rows) and strategy (columns) in at
// most w cells: a letter per column, two shade cells per value (the
// deeper the larger U, on a log scale up to the largest), "--" below 1x
// (slower than serial), then each row's best strategy and its U. A key
// under it names the columns and the levels.
func UpliftHeatmap(rows, cols []string, cells [][]HeatCell, w int, color bool) []string {
	st := Styles{}
	if color {
		st = DefaultStyles(true)
	}
	top := 1.0
	for _, r := range cells {
		for _, c := range r {
			if c.OK && c.Value > top && !math.IsInf(c.Value, 0) {
				top = c.Value
			}
		}
	}
	level := func(u float64) int {
		if top <= 1 {
			return 0
		}
		return min(int(math.Log(u)/math.Log(top)*float64(len(heatShades))), len(heatShades)-1)
	}
	paint := func(s, hex string) string {
		if !color {
			return s
		}
		return lipgloss.NewStyle().Foreground(lipgloss.Color(hex)).Render(s)
	}
	const bestW = 24
	gridW := 3 * len(cols)
	labelW := max(w-gridW-1-bestW, 12)
	head := fit("", labelW) + " "
	for j := range cols {
		head += st.Label.Render(fit(colLetter(j), 3))
	}
	out := []string{st.Header.Render(fit("U by scenario and strategy (best at the right)", w)), head + st.Label.Render("best")}
	for i, name := range rows {
		line := st.Label.Render(fit(name, labelW)) + " "
		best, bestU := -1, 0.0
		for j := range cols {
			c := HeatCell{}
			if i < len(cells) && j < len(cells[i]) {
				c = cells[i][j]
			}
			switch {
			case !c.OK || math.IsNaN(c.Value) || c.Value <= 0:
				line += st.Dim.Render("·· ")
				continue
			case c.Value < 1:
				line += paint(heatSlower, heatSlowerColour) + " "
			default:
				l := level(c.Value)
				line += paint(heatShades[l], heatColours[l]) + " "
			}
			if c.Value > bestU {
				best, bestU = j, c.Value
			}
		}
		if best >= 0 {
			line += st.Value.Render(report.Ratio(bestU)) + " " + st.Dim.Render(cols[best])
		}
		out = append(out, fit(line, w))
	}
	key := []string{}
	for j, c := range cols {
		key = append(key, colLetter(j)+" "+c)
	}
	out = append(out, wrapPlain(st, strings.Join(key, " · "), w)...)
	lv := []string{paint(heatSlower, heatSlowerColour) + " <1x"}
	for l := range heatShades {
		lo := math.Pow(top, float64(l)/float64(len(heatShades)))
		lv = append(lv, paint(heatShades[l], heatColours[l])+" ≥"+report.Ratio(lo))
	}
	lv = append(lv, st.Dim.Render("·· none"))
	out = append(out, fit(strings.Join(lv, "  "), w))
	return trimRight(out)
}

// colLetter names column j: A..Z, then a..z, then its number.
func colLetter(j int) string {
	switch {
	case j < 26:
		return string(rune('A' + j))
	case j < 52:
		return string(rune('a' + j - 26))
	}
	return fmt.Sprint(j + 1)
}

// wrapPlain wraps s to w cells, dim.
func wrapPlain(st Styles, s string, w int) []string {
	var out []string
	for _, l := range wrapWords(s, w) {
		out = append(out, st.Dim.Render(l))
	}
	return out
}

// trimRight drops trailing spaces, styled or not, from each line.
func trimRight(lines []string) []string {
	for i, l := range lines {
		if !strings.Contains(l, "\x1b") {
			lines[i] = strings.TrimRight(l, " ")
		}
	}
	return lines
}

// Change is one bar of a change chart: a ratio new/old (1 is no change),
// and whether the change is significant.
type Change struct {
	// Group and Label name the bar ("scenario · strategy"): when they do
	// not fit, Group is cut, Label kept.
	Group, Label string
	Ratio        float64
	Significant  bool
}

// ChangeChartRows is the most bars a change chart draws; past it, the
// largest changes are drawn and a line says how many were left out.
const ChangeChartRows = 20

// ChangeChart draws a bar per change in at most w cells: the change in
// percent, "▼" faster (green when significant) or "▲" slower (red), and a
// bar of its size (the lab's eighth-cell bar), scaled to the largest
// change; one not told apart from no change is dim. With more than
// ChangeChartRows changes, the largest are drawn, in their order.
func ChangeChart(title string, changes []Change, w int, color bool) []string {
	st := Styles{}
	if color {
		st = DefaultStyles(true)
	}
	shown := changes
	if len(changes) > ChangeChartRows {
		idx := make([]int, len(changes))
		for i := range idx {
			idx[i] = i
		}
		mag := func(i int) float64 {
			if math.IsNaN(changes[i].Ratio) {
				return -1
			}
			return math.Abs(changes[i].Ratio - 1)
		}
		// The ChangeChartRows largest, kept in input order.
		keep := map[int]bool{}
		for range ChangeChartRows {
			best := -1
			for _, i := range idx {
				if !keep[i] && (best < 0 || mag(i) > mag(best)) {
					best = i
				}
			}
			keep[best] = true
		}
		shown = nil
		for i, c := range changes {
			if keep[i] {
				shown = append(shown, c)
			}
		}
	}
	scale := 0.0
	for _, c := range shown {
		if !math.IsNaN(c.Ratio) {
			scale = math.Max(scale, math.Abs(c.Ratio-1))
		}
	}
	const valW = 10
	labelW := min(max(w/2, 12), 40)
	barW := max(w-labelW-1-valW-1, 4)
	out := []string{st.Header.Render(fit(title, w))}
	for _, c := range shown {
		line := st.Label.Render(changeLabel(c, labelW)) + " "
		if math.IsNaN(c.Ratio) {
			out = append(out, line+st.Dim.Render(report.NA))
			continue
		}
		d := c.Ratio - 1
		mark, style := "▲", st.Bad
		if d < 0 {
			mark, style = "▼", st.Good
		}
		if !c.Significant {
			mark, style = "~", st.Dim
		}
		frac := 0.0
		if scale > 0 {
			frac = math.Abs(d) / scale
		}
		val := fmt.Sprintf("%s %+.1f%%", mark, 100*d)
		line += style.Render(alignRight(val, valW)) + " " + styledBar(st, style, frac, barW)
		out = append(out, line)
	}
	if n := len(changes) - len(shown); n > 0 {
		out = append(out, st.Dim.Render(fit(fmt.Sprintf("the %d largest of %d changes; %d smaller left out", len(shown), len(changes), n), w)))
	}
	out = append(out, st.Dim.Render(fit(fmt.Sprintf("▼ faster, ▲ slower (significant), ~ not told apart; bars scaled to %s", maxChange(scale)), w)))
	for i, l := range out {
		if ansi.StringWidth(l) > w {
			out[i] = fit(l, w)
		}
	}
	return trimRight(out)
}

// changeLabel is "group · label" in exactly w cells, the group cut first.
func changeLabel(c Change, w int) string {
	if c.Group == "" {
		return fit(c.Label, w)
	}
	tail := " · " + c.Label
	room := w - ansi.StringWidth(tail)
	if room < 6 {
		return fit(c.Label, w)
	}
	g := c.Group
	if ansi.StringWidth(g) > room {
		g = ansi.Truncate(g, room, "…")
	}
	return fit(g+tail, w)
}

func maxChange(scale float64) string { return fmt.Sprintf("±%.1f%%", 100*scale) }
