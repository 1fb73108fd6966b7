package tui

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
)

// Timeline column widths: the track label and the busy time after the bars.
const (
	tlLabelW = 9
	tlBusyW  = 10
)

// timelineTracks lists device dev's tracks: for a one-pair result the
// compute and comm streams and one row per copy engine (ces of them); for
// a scenario written as streams its streams, in the file's order; then
// any other track its spans use (copy engines a graph's ops ran on).
func timelineTracks(r *profiler.Result, ces, dev int) []string {
	tracks := []string{"compute", "comm"}
	for i := range ces {
		tracks = append(tracks, "ce"+strconv.Itoa(i))
	}
	if r == nil {
		return tracks
	}
	if r.Scenario.IsGraph() {
		tracks = tracks[:0:0]
		for _, ss := range r.Scenario.Streams {
			tracks = append(tracks, ss.Name)
		}
	}
	var extra []string
	for _, s := range r.Timeline {
		if s.Device == dev && !slices.Contains(tracks, s.Track) && !slices.Contains(extra, s.Track) {
			extra = append(extra, s.Track)
		}
	}
	slices.Sort(extra)
	return append(tracks, extra...)
}

// timelineTitle names the panel, the device shown (dev, of n present),
// the zoom when there is one, its legend and the repetition's length.
func timelineTitle(r *profiler.Result, dev, n int, z tlZoom) string {
	t := "Timeline · " + gpuLabel(dev, n)
	if z.factor() > 1 {
		t += " · zoom " + strconv.Itoa(z.factor()) + "x"
	}
	t += " · █ compute ▓ comm"
	if r == nil {
		return t
	}
	if hasInstances(r) {
		t += " ▐ next kernel · op[i]: its instance i"
	}
	return t + " · one concurrent repetition, " + report.Duration(float64(runEnd(r)))
}

// timelineLines draws a Gantt chart of r's concurrent repetition on device
// dev: one row per track, the bars of zoom z's window scaled to width w
// (spans cut at its edges drawn in part), each track's busy time over the
// whole repetition, then a time axis of the window. Spans of a graph's op
// instances (Span.GraphOp) show their kernel boundaries: an instance that
// starts where the one before it on the track ends begins with ▐, and an
// instance wide enough for it carries its label ("ag[3]"; the op's name
// alone when it runs once).
func timelineLines(st Styles, r *profiler.Result, tracks []string, w, dev int, z tlZoom) []string {
	if r == nil || len(r.Timeline) == 0 {
		return []string{st.Dim.Render("no timeline yet (the backend reports spans of the concurrent run)")}
	}
	end := max(runEnd(r), 1)
	wa, wb := z.window(end)
	bw := max(w-tlLabelW-tlBusyW, 4)
	scale := float64(bw) / float64(wb-wa)
	counts := instanceCounts(r)
	out := make([]string, 0, len(tracks)+2)
	for _, tr := range tracks {
		cells := make([]tlCell, bw)
		for i := range cells {
			cells[i].span = -1
		}
		var spans [][2]int64
		var labels []tlLabel
		for i, s := range r.Timeline {
			if s.Device != dev || s.Track != tr || s.End <= s.Start {
				continue
			}
			spans = append(spans, [2]int64{s.Start, s.End})
			if s.End <= wa || s.Start >= wb {
				continue
			}
			a := int(float64(s.Start-wa) * scale)
			b := int(math.Ceil(float64(s.End-wa) * scale))
			a, b = max(a, 0), min(b, bw)
			for c := a; c < b; c++ {
				if cells[c].span < 0 || owns(s, r.Timeline[cells[c].span]) {
					cells[c] = tlCell{span: i, op: s.Op}
				}
			}
			if s.GraphOp != "" {
				labels = append(labels, tlLabel{span: i, a: a, b: b, text: instanceLabel(s, counts)})
			}
		}
		markBoundaries(cells, r.Timeline)
		for _, l := range labels {
			placeLabel(cells, l)
		}
		busy := "—"
		if len(spans) > 0 {
			busy = report.Duration(float64(unionLen(spans)))
		}
		out = append(out, st.Label.Render(fit(tr, tlLabelW))+drawCells(st, cells)+st.Dim.Render(alignRight(busy, tlBusyW)))
	}
	pad := strings.Repeat(" ", tlLabelW)
	if z.factor() == 1 {
		axis, labels := timeAxis(end, bw)
		return append(out, pad+st.Dim.Render(axis), fit(st.Label.Render("time"), tlLabelW)+st.Dim.Render(labels))
	}
	axis, labels := windowAxis(wa, wb, bw)
	return append(out, pad+st.Dim.Render(axis), st.Label.Render(fit("time "+strconv.Itoa(z.factor())+"x", tlLabelW))+st.Dim.Render(labels))
}

// tlCell is one cell of a timeline track: the span drawn there (-1: idle),
// its op, and what the cell shows instead of the span's bar: a kernel
// boundary or a character of the span's label.
type tlCell struct {
	span     int
	op       backends.Op
	boundary bool
	label    rune
}

// tlLabel is a span's label and the cells [a, b) the span covers.
type tlLabel struct {
	span, a, b int
	text       string
}

// owns reports whether span s takes a cell that span cur holds: the
// collective's spans win over the compute op's (a copy that overlaps a
// kernel stays visible), and of two spans of one role the later starting
// takes the shared cell, so that each instance begins in a cell of its own.
func owns(s, cur backends.Span) bool {
	if s.Op != cur.Op {
		return s.Op == backends.OpComm
	}
	return s.Start > cur.Start
}

// markBoundaries marks the first cell of each graph instance that starts
// right where another span on the track left off (the cell before it is
// drawn for that span): a kernel boundary, where queued kernels of other
// streams can take the SMs.
func markBoundaries(cells []tlCell, spans []backends.Span) {
	for c := 1; c < len(cells); c++ {
		cur, prev := cells[c].span, cells[c-1].span
		if cur >= 0 && prev >= 0 && cur != prev && spans[cur].GraphOp != "" {
			cells[c].boundary = true
		}
	}
}

// placeLabel writes a label into the cells of its span, after the span's
// first cell, when the span holds the label and one cell on each side of
// it; a label that does not fit is left out (zoom in to read it).
func placeLabel(cells []tlCell, l tlLabel) {
	text := []rune(l.text)
	if l.b-l.a < len(text)+2 {
		return
	}
	for i, ch := range text {
		c := l.a + 1 + i
		if cells[c].span != l.span {
			return // another span took part of the room: no half label
		}
		cells[c].label = ch
	}
}

// instanceCounts is, per graph op of r's spans, how many instances it ran
// (its highest instance number plus one).
func instanceCounts(r *profiler.Result) map[string]int {
	out := map[string]int{}
	for _, s := range r.Timeline {
		if s.GraphOp != "" {
			out[s.GraphOp] = max(out[s.GraphOp], s.Instance+1)
		}
	}
	return out
}

// hasInstances reports whether r's spans name graph ops and instances.
func hasInstances(r *profiler.Result) bool {
	return slices.ContainsFunc(r.Timeline, func(s backends.Span) bool { return s.GraphOp != "" })
}

// instanceLabel is a span's label: "ag[3]" for instance 3 of op ag, the
// op's name alone when it runs once.
func instanceLabel(s backends.Span, counts map[string]int) string {
	if counts[s.GraphOp] <= 1 {
		return s.GraphOp
	}
	return s.GraphOp + "[" + strconv.Itoa(s.Instance) + "]"
}

// drawCells renders one track's cells: "█" compute, "▓" comm, "▐" the
// first cell of an instance that follows another, a label's characters,
// blank idle; runs of one look share one styled segment.
func drawCells(st Styles, cells []tlCell) string {
	type look struct {
		op    backends.Op
		label bool
	}
	lookOf := func(c tlCell) look {
		if c.span < 0 {
			return look{}
		}
		return look{op: c.op, label: c.label != 0}
	}
	glyph := func(c tlCell) rune {
		switch {
		case c.span < 0:
			return ' '
		case c.label != 0:
			return c.label
		case c.boundary:
			return '▐'
		case c.op == backends.OpComm:
			return '▓'
		}
		return '█'
	}
	var b strings.Builder
	for i := 0; i < len(cells); {
		lk := lookOf(cells[i])
		var run strings.Builder
		j := i
		for j < len(cells) && lookOf(cells[j]) == lk {
			run.WriteRune(glyph(cells[j]))
			j++
		}
		switch {
		case lk.label:
			b.WriteString(st.Value.Render(run.String()))
		case lk.op == backends.OpCompute:
			b.WriteString(st.Compute.Render(run.String()))
		case lk.op == backends.OpComm:
			b.WriteString(st.Comm.Render(run.String()))
		default:
			b.WriteString(run.String())
		}
		i = j
	}
	return b.String()
}

// unionLen is the total length covered by possibly overlapping intervals.
func unionLen(iv [][2]int64) int64 {
	slices.SortFunc(iv, func(a, b [2]int64) int {
		switch {
		case a[0] < b[0]:
			return -1
		case a[0] > b[0]:
			return 1
		}
		return 0
	})
	var total, curS, curE int64
	started := false
	for _, x := range iv {
		if !started || x[0] > curE {
			if started {
				total += curE - curS
			}
			curS, curE, started = x[0], x[1], true
			continue
		}
		curE = max(curE, x[1])
	}
	if started {
		total += curE - curS
	}
	return total
}

// timeAxis draws an axis of w cells for [0, end] ns with ticks at a round
// step, and the tick labels under it.
func timeAxis(end int64, w int) (axis, labels string) {
	step := niceStep(float64(end) * 12 / float64(w))
	ax := []rune(strings.Repeat("─", w))
	lab := []rune(strings.Repeat(" ", w))
	next := 0 // first free label column
	for t := 0.0; t <= float64(end)+step/1e6; t += step {
		c := int(math.Round(t * float64(w) / float64(end)))
		if c >= w {
			c = w - 1
		}
		ax[c] = '┬'
		text := []rune(report.Duration(t))
		if t == 0 {
			text = []rune("0")
		}
		if c < next || c+len(text) > w {
			continue
		}
		copy(lab[c:], text)
		next = c + len(text) + 2
	}
	return string(ax), string(lab)
}

// niceStep rounds x up to 1, 2 or 5 times a power of ten.
func niceStep(x float64) float64 {
	if x <= 0 || math.IsNaN(x) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(x)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= x {
			return m * p
		}
	}
	return 10 * p
}

// windowAxis draws an axis of w cells for the window [a, b) ns of a zoomed
// timeline: ticks at a round step, labelled in one unit with as many
// decimals as the step needs, and the window's start and end at the two
// edges of the labels.
func windowAxis(a, b int64, w int) (axis, labels string) {
	span := float64(b - a)
	step := max(niceStep(span*12/float64(w)), 1)
	unit, div := tickUnit(b)
	dec := max(0, int(math.Ceil(-math.Log10(step/div)-1e-9)))
	text := func(t float64) []rune {
		return []rune(strconv.FormatFloat(t/div, 'f', dec, 64) + " " + unit)
	}
	ax := []rune(strings.Repeat("─", w))
	lab := []rune(strings.Repeat(" ", w))
	first, last := text(float64(a)), text(float64(b))
	copy(lab, first)
	next := len(first) + 2
	stop := w - len(last) - 2 // labels end before the window's end label
	if len(first)+len(last)+1 <= w {
		copy(lab[w-len(last):], last)
	} else {
		stop = w
	}
	for i := math.Ceil(float64(a) / step); i*step <= float64(b); i++ {
		t := i * step
		c := int(math.Round((t - float64(a)) * float64(w) / span))
		if c >= w {
			c = w - 1
		}
		ax[c] = '┬'
		tx := text(t)
		if c < next || c+len(tx) > stop {
			continue
		}
		copy(lab[c:], tx)
		next = c + len(tx) + 2
	}
	return string(ax), string(lab)
}

// tickUnit picks the unit of a zoomed axis ending at b ns: ns below a µs,
// µs below 10 ms, ms below 10 s, then s; div is the unit in ns.
func tickUnit(b int64) (unit string, div float64) {
	switch {
	case b < 1e3:
		return "ns", 1
	case b < 1e7:
		return "µs", 1e3
	case b < 1e10:
		return "ms", 1e6
	}
	return "s", 1e9
}

// timelinePanel is the Gantt chart of the GPU shown, with its own zoom and
// window: the zoom and pan keys are its own.
type timelinePanel struct {
	detailFrame
	// tracks is the number of rows: compute, comm and the copy engines,
	// or a graph's streams (fitTimeline); ces is the copy engines' count.
	tracks, ces int
	// zoom is the zoom and window; a result of another scenario resets it.
	zoom tlZoom
}

// Update zooms and pans on the zoom and pan keys, saying in the status
// line where the window is, or why it cannot move.
func (t *timelinePanel) Update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	km, ok := msg.(tea.KeyPressMsg)
	k := m.keys
	if !ok || !key.Matches(km, k.ZoomIn, k.ZoomOut, k.ZoomReset, k.PanLeft, k.PanRight) {
		return nil, false
	}
	end := runEnd(m.result)
	if end <= 0 {
		m.status = status{statusInfo, "no timeline yet to zoom"}
		return nil, true
	}
	before := t.zoom
	var limit string
	switch {
	case key.Matches(km, k.ZoomIn):
		t.zoom = t.zoom.zoomBy(1, end)
		limit = fmt.Sprintf("%dx is the closest zoom", t.zoom.factor())
	case key.Matches(km, k.ZoomOut):
		t.zoom = t.zoom.zoomBy(-1, end)
		limit = "the timeline shows the whole repetition"
	case key.Matches(km, k.ZoomReset):
		t.zoom = tlZoom{}
		limit = "the timeline shows the whole repetition"
	case key.Matches(km, k.PanLeft):
		t.zoom = t.zoom.panBy(-1, end)
		limit = "the window is at the repetition's start"
	default:
		t.zoom = t.zoom.panBy(1, end)
		limit = "the window is at the repetition's end"
	}
	a, b := t.zoom.window(end)
	ba, _ := before.window(end)
	switch {
	case t.zoom.level == 0 && before.level == 0 && !key.Matches(km, k.ZoomOut, k.ZoomReset):
		m.status = status{statusInfo, fmt.Sprintf("the timeline is not zoomed: %s zooms in, then %s/%s pan",
			k.ZoomIn.Help().Key, k.PanLeft.Help().Key, k.PanRight.Help().Key)}
	case t.zoom.level == before.level && a == ba:
		m.status = status{statusInfo, limit}
	default:
		m.status = status{statusInfo, fmt.Sprintf("timeline at %dx: %s to %s", t.zoom.factor(), report.Duration(float64(a)), report.Duration(float64(b)))}
	}
	return nil, true
}

// View is the timeline box.
func (t *timelinePanel) View(m *Model) []string {
	if t.w <= 0 || t.h <= 0 {
		return nil
	}
	r := m.result
	return t.frame(m.styles, timelineTitle(r, m.gpu, len(m.gpus()), t.zoom),
		timelineLines(m.styles, r, timelineTracks(r, t.ces, m.gpu), t.w-2, m.gpu, t.zoom))
}
