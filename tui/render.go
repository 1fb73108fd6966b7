package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// tooSmallScreen is the screen of a terminal too small for the lab: whole
// words, on as many lines as the terminal has.
func (m *Model) tooSmallScreen() string {
	lines := wrapWords(fmt.Sprintf("terminal %dx%d is too small: c3lab needs %dx%d (%s quits)",
		m.width, m.height, minWidth, minHeight, m.keys.Quit.Help().Key), m.width)
	return strings.Join(lines[:min(len(lines), max(m.height, 1))], "\n")
}

// scrollLines shows lines from top in h lines, the last of them saying
// how many more there are, when they do not all fit; top comes back
// clamped.
func scrollLines(st Styles, lines []string, top, h int) ([]string, int) {
	if len(lines) <= h || h < 2 {
		return lines, 0
	}
	top = min(max(top, 0), len(lines)-(h-1))
	out := append(lines[top:top+h-1:top+h-1], "")
	switch rest := len(lines) - top - (h - 1); {
	case rest > 0:
		out[h-1] = st.Dim.Render(fmt.Sprintf("… %d more lines · ↑/↓ scroll", rest))
	default:
		out[h-1] = st.Dim.Render(fmt.Sprintf("↑ %d lines above · ↑/↓ scroll", top))
	}
	return out, top
}

// piece is a rendered panel placed on screen.
type piece struct {
	r     rect
	lines []string
}

// screen draws every panel in its rectangle from the state, row by row,
// then each mode's overlay over them, bottom of the stack first.
func (m *Model) screen() string {
	if m.width == 0 {
		return "starting c3lab…"
	}
	l := m.lay
	if l.tooSmall {
		return m.tooSmallScreen()
	}
	footer := m.footer.View(m)
	pieces := []piece{
		{l.header, m.header.View(m)}, {l.status, footer[:1]}, {l.help, footer[1:]},
		{l.list, m.list.View(m)}, {l.metrics, m.metrics.View(m)},
	}
	if l.tabbed {
		d := []panel{&m.util, &m.timeline, &m.why}[m.tab]
		pieces = append(pieces, piece{l.detail, d.View(m)})
	} else {
		pieces = append(pieces, piece{l.util, m.util.View(m)}, piece{l.timeline, m.timeline.View(m)}, piece{l.why, m.why.View(m)})
	}
	slices.SortStableFunc(pieces, func(a, b piece) int { return a.r.X - b.r.X })
	rows := make([]strings.Builder, m.height)
	for _, p := range pieces {
		if !p.r.visible() {
			continue
		}
		for i := range p.r.H {
			y := p.r.Y + i
			if y < 0 || y >= len(rows) {
				continue
			}
			if i < len(p.lines) {
				rows[y].WriteString(p.lines[i])
			} else {
				rows[y].WriteString(strings.Repeat(" ", p.r.W))
			}
		}
	}
	lines := make([]string, len(rows))
	for i := range rows {
		lines[i] = rows[i].String()
	}
	for _, md := range m.modes {
		m.placeOverlay(lines, md.View(m))
	}
	return strings.Join(lines, "\n")
}

// placeOverlay centres a rendered box over the panels, below the header.
func (m *Model) placeOverlay(lines, box []string) {
	if len(box) == 0 {
		return
	}
	ow := ansi.StringWidth(box[0])
	x, y := max((m.width-ow)/2, 0), max(1+(m.height-3-len(box))/2, 1)
	overlay(lines, box, x, y, ow)
}

// overlayBox frames an overlay's body (indented one cell) at width w, no
// taller than the screen leaves room for.
func (m *Model) overlayBox(title string, body []string, w int) []string {
	padded := make([]string, 0, len(body))
	for _, l := range body {
		padded = append(padded, " "+l)
	}
	return box(m.styles, title, padded, w, min(len(body)+2, m.height-3))
}

// overlay splices the lines of a box ow cells wide over rows from column
// x, row y. Styles open at the cut are reset before the box, and restored
// after it (TruncateLeft keeps the escape sequences it skips).
func overlay(rows, box []string, x, y, ow int) {
	for i, l := range box {
		r := y + i
		if r < 0 || r >= len(rows) {
			continue
		}
		base := rows[r]
		rows[r] = ansi.Truncate(base, x, "") + ansi.ResetStyle + l + ansi.ResetStyle + ansi.TruncateLeft(base, x+ow, "")
	}
}
