package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// viewCache holds every panel rendered at its layout size. It is refilled
// only when its data or the window size changes; View just stitches it.
type viewCache struct {
	header, status, help string
	list, metrics        []string
	util, timeline, why  []string
	detail               []string
	overlay              []string
	grid                 []string // the sweep heatmap overlay
	comp                 []string // the composer overlay
	small                string
}

// renderAll re-renders every panel (a resize, new data, new styles).
func (m *Model) renderAll() {
	if m.width == 0 {
		return
	}
	if m.lay.tooSmall {
		// Whole words, on as many lines as the terminal has.
		lines := wrapWords(fmt.Sprintf("terminal %dx%d is too small: c3lab needs %dx%d (%s quits)",
			m.width, m.height, minWidth, minHeight, m.keys.Quit.Help().Key), m.width)
		m.view.small = strings.Join(lines[:min(len(lines), max(m.height, 1))], "\n")
		return
	}
	m.renderHeader()
	m.renderFooter()
	m.renderList()
	m.renderResultPanels()
	if m.showHelp {
		m.renderOverlay()
	}
	m.renderGrid()
	m.renderComposer()
}

// renderHeader re-renders the top bar (spinner ticks, strategy changes).
func (m *Model) renderHeader() {
	if m.width == 0 || m.lay.tooSmall {
		return
	}
	name, gpus := "", 0
	if len(m.suite) > 0 {
		name, gpus = m.suite[m.active].Name, m.suite[m.active].GPUs
	}
	m.view.header = headerLine(m.styles, headerState{
		backend: m.name, devices: deviceSummary(m.devs, gpus), short: deviceShort(m.devs, gpus), scenario: name, strategy: m.strategy,
		running: m.running, spinner: m.spin.View(), took: m.took, failed: m.failed, rec: m.recIndicator(),
	}, m.width)
}

// renderFooter re-renders the status and help lines.
func (m *Model) renderFooter() {
	if m.width == 0 || m.lay.tooSmall {
		return
	}
	m.renderHeader()
	m.view.status = statusLine(m.styles, m.status, m.width, m.keys.Help.Help().Key)
	m.help.SetWidth(m.width)
	m.help.Styles.ShortKey = m.styles.Key
	m.help.Styles.ShortDesc = m.styles.Dim
	m.view.help = fit(m.help.ShortHelpView(m.keys.ShortHelp()), m.width)
}

// renderList re-renders the scenario list (cursor moves, new summaries).
func (m *Model) renderList() {
	r := m.lay.list
	if !r.visible() {
		return
	}
	m.offset = listOffset(m.cursor, m.offset, r.H-2, len(m.suite))
	m.view.list = box(m.styles, listTitle(m.cursor, len(m.suite), m.listNote),
		listLines(m.styles, m.suite, m.sums, m.cursor, m.active, m.offset, r.W-2, r.H-2), r.W, r.H)
}

// renderResultPanels re-renders the panels that show the result.
func (m *Model) renderResultPanels() {
	st, r, l := m.styles, m.result, m.lay
	if l.metrics.visible() {
		name := m.suite[m.active].Name
		lines := metricsPanelLines(st, r, m.trail[name], m.hist[name], l.metrics.W-2, l.metrics.H-2, l.history)
		m.view.metrics = box(st, metricsTitle(r), lines, l.metrics.W, l.metrics.H)
	}
	if l.tabbed {
		m.view.detail = m.renderDetail(m.detail, l.detail, true)
		return
	}
	m.view.util = m.renderDetail(detailUtil, l.util, false)
	m.view.timeline = m.renderDetail(detailTimeline, l.timeline, false)
	m.view.why = m.renderDetail(detailWhy, l.why, false)
}

// renderDetail renders one of the lower panels into rect rc; tabbed adds
// the tab hint to its title.
func (m *Model) renderDetail(d detail, rc rect, tabbed bool) []string {
	if !rc.visible() {
		return nil
	}
	st, r, w := m.styles, m.result, rc.W-2
	var title string
	var lines []string
	switch d {
	case detailUtil:
		title, lines = utilTitle(r, m.tel, m.gpu, len(m.gpus)), utilLinesFor(st, r, m.tel, w, utilChartRows(rc.H-2))
	case detailTimeline:
		title = timelineTitle(r, m.gpu, len(m.gpus), m.zoom)
		lines = timelineLines(st, r, timelineTracks(r, m.tracks-2, m.gpu), w, m.gpu, m.zoom)
	default:
		title, lines = whyTitle(), whyLines(st, r, w, m.name, m.caps)
	}
	if tabbed {
		title = "[tab " + [...]string{"1/3 utilization", "2/3 timeline", "3/3 why"}[d] + "] " + title
	}
	return box(st, title, lines, rc.W, rc.H)
}

// renderOverlay renders the help overlay at its centred size.
func (m *Model) renderOverlay() {
	if m.width == 0 || m.lay.tooSmall {
		return
	}
	// The overlay leaves the header, status and help lines visible.
	w, maxH := min(m.width-4, 84), m.height-3
	v := helpView{gpu: m.gpu, n: len(m.gpus), zoom: m.zoom}
	var body []string
	if statusCut(m.status, m.width) {
		// The status line cut the message; here it is whole.
		body = messageLines(m.styles, m.status, w-4)
	}
	body = append(body, helpOverlayLines(m.styles, helpGroups(m.keys, m.strategy, m.caps, m.name, v), w-4, maxH-2-len(body))...)
	body, m.helpTop = scrollLines(m.styles, body, m.helpTop, maxH-2)
	m.view.overlay = m.overlayBox("Help · keys and knobs (? or esc closes)", body, w)
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

// compose stitches the cached panels row by row, then lays the help
// overlay on top when it is open.
func (m Model) compose() string {
	if m.width == 0 {
		return "starting c3lab…"
	}
	if m.lay.tooSmall {
		return m.view.small
	}
	l, v := m.lay, m.view
	pieces := []piece{
		{l.header, []string{v.header}}, {l.status, []string{v.status}}, {l.help, []string{v.help}},
		{l.list, v.list}, {l.metrics, v.metrics},
	}
	if l.tabbed {
		pieces = append(pieces, piece{l.detail, v.detail})
	} else {
		pieces = append(pieces, piece{l.util, v.util}, piece{l.timeline, v.timeline}, piece{l.why, v.why})
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
	if m.comp != nil {
		m.placeOverlay(lines, v.comp)
	}
	if m.grid != nil {
		m.placeOverlay(lines, v.grid)
	}
	if m.showHelp {
		m.placeOverlay(lines, v.overlay)
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
