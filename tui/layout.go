package tui

// rect is a screen rectangle in cells; a zero W means hidden.
type rect struct{ X, Y, W, H int }

// visible reports whether the rectangle is on screen.
func (r rect) visible() bool { return r.W > 0 && r.H > 0 }

// detail names the panels that share the lower area on small screens.
type detail int

// The detail panels, in tab order.
const (
	detailUtil detail = iota
	detailTimeline
	detailWhy
	detailCount
)

// Smallest usable terminal.
const (
	minWidth  = 60
	minHeight = 16
)

// Breakpoint for the wide layout (list as a full-height column).
const (
	wideWidth  = 110
	wideHeight = 30
)

// layout is where every panel goes for one terminal size. It is computed
// once per tea.WindowSizeMsg; View never measures anything.
type layout struct {
	W, H     int
	tooSmall bool
	wide     bool
	header   rect
	list     rect
	metrics  rect
	util     rect
	timeline rect
	why      rect
	// tabbed is true when util, timeline and why share the detail rectangle.
	tabbed bool
	// history is true when the metrics panel is tall enough for the
	// fraction-of-ideal history chart (fracChartLines more lines).
	history bool
	detail  rect
	status  rect
	help    rect
}

// metricsTwoColumns reports whether the metrics panel of inner width w
// lays its figures out in two columns.
func metricsTwoColumns(inner int) bool { return inner >= 40 }

// metricsHeight is the metrics panel's height at outer width w.
func metricsHeight(w int) int {
	if metricsTwoColumns(w - 2) {
		return 2 + metricsTwoColLines
	}
	return 2 + metricsOneColLines
}

// Heights of panels with fixed content.
const (
	utilHeight = 2 + utilLines
	whyMin     = 6
)

// timelineHeight is the timeline panel's height with tracks rows.
func timelineHeight(tracks int) int { return 2 + tracks + 2 }

// computeLayout places the panels on a w x h terminal; tracks is the number
// of timeline rows (compute, comm and the copy engines).
func computeLayout(w, h, tracks int) layout {
	l := layout{W: w, H: h}
	if w < minWidth || h < minHeight {
		l.tooSmall = true
		return l
	}
	l.header = rect{0, 0, w, 1}
	l.status = rect{0, h - 2, w, 1}
	l.help = rect{0, h - 1, w, 1}
	y, bodyH := 1, h-3
	tlH := timelineHeight(tracks)

	if w >= wideWidth && h >= wideHeight {
		l.wide = true
		lw := min(max(w/4, 28), 48)
		l.list = rect{0, y, lw, bodyH}
		x, rw := lw, w-lw
		mw := min(max(rw*2/5, 44), 56)
		// The history chart only where it costs no panel.
		mh := metricsHeight(mw)
		if bodyH-max(mh+fracChartLines, utilHeight)-tlH >= whyMin {
			mh += fracChartLines
			l.history = true
		}
		topH := max(mh, utilHeight)
		l.metrics = rect{x, y, mw, topH}
		l.util = rect{x + mw, y, rw - mw, topH}
		if bodyH-topH-tlH >= whyMin {
			l.timeline = rect{x, y + topH, rw, tlH}
			l.why = rect{x, y + topH + tlH, rw, bodyH - topH - tlH}
			return l
		}
		l.tabbed = true
		l.detail = rect{x, y + topH, rw, bodyH - topH}
		return l
	}

	lw := min(max(w*3/10, 20), 32)
	mw := w - lw
	topH := metricsHeight(mw)
	// The history chart only where it costs no panel: the three stacked
	// panels, or, when they are tabbed anyway, the taller of utilization
	// and timeline still fit below it.
	need := utilHeight + tlH + whyMin
	if bodyH-topH < need {
		need = max(utilHeight, tlH)
	}
	if bodyH-topH-fracChartLines >= need {
		topH += fracChartLines
		l.history = true
	}
	// On the smallest terminals the metrics are cut (the box says how
	// many lines) rather than drawn over the status and help lines.
	topH = min(topH, bodyH)
	l.list = rect{0, y, lw, topH}
	l.metrics = rect{lw, y, mw, topH}
	y += topH
	rest := bodyH - topH
	if rest >= utilHeight+tlH+whyMin {
		l.util = rect{0, y, w, utilHeight}
		l.timeline = rect{0, y + utilHeight, w, tlH}
		l.why = rect{0, y + utilHeight + tlH, w, rest - utilHeight - tlH}
		return l
	}
	l.tabbed = true
	l.detail = rect{0, y, w, rest}
	return l
}

// detailFrame is what the three detail panels (utilization, timeline, why)
// share: a size, and the tab label their title starts with when they take
// turns in one rectangle on small screens.
type detailFrame struct {
	size
	tab string
}

// frame boxes a detail panel's body under its title at its size.
func (f *detailFrame) frame(st Styles, title string, lines []string) []string {
	if f.w <= 0 || f.h <= 0 {
		return nil
	}
	return box(st, f.tab+title, lines, f.w, f.h)
}
