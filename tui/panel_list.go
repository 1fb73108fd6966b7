package tui

import (
	"strconv"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// summary is what the list remembers of a scenario's last measurement.
type summary struct {
	class    profiler.Class
	fraction float64
	ok       bool // fraction defined
	// noise is set when the fraction is past 100 % inside its interval:
	// the list shows ≈100%, not the number.
	noise bool
}

// shortClass abbreviates a class for narrow lists.
func shortClass(c profiler.Class) string {
	switch c {
	case profiler.GEMMLong:
		return "gemm"
	case profiler.CommLong:
		return "comm"
	case profiler.Balanced:
		return "bal"
	}
	return string(c)
}

// listTitle says where the cursor is in the suite, and note what the list
// leaves out ("36 need more GPUs"; "" when nothing).
func listTitle(cursor, n int, note string) string {
	t := "Scenarios"
	if n > 0 {
		t += " " + strconv.Itoa(cursor+1) + "/" + strconv.Itoa(n)
	}
	if note != "" {
		t += " · " + note
	}
	return t
}

// listOffset keeps the cursor inside a window of h rows starting at off.
func listOffset(cursor, off, h, n int) int {
	if h <= 0 {
		return 0
	}
	if cursor < off {
		off = cursor
	}
	if cursor >= off+h {
		off = cursor - h + 1
	}
	return max(min(off, n-h), 0)
}

// listLines renders h rows of the suite from row off at inner width w:
// "▸" marks the cursor, "●" the scenario on screen, and measured scenarios
// show their class and fraction of ideal.
func listLines(st Styles, suite []scenarios.Scenario, sums map[string]summary, cursor, active, off, w, h int) []string {
	if len(suite) == 0 {
		return []string{st.Dim.Render("no scenarios")}
	}
	out := make([]string, 0, h)
	for i := off; i < len(suite) && len(out) < h; i++ {
		sc := suite[i]
		mark := "  "
		switch {
		case i == cursor && i == active:
			mark = "▸●"
		case i == cursor:
			mark = "▸ "
		case i == active:
			mark = " ●"
		}
		tag := ""
		if s, ok := sums[sc.Name]; ok {
			cls := shortClass(s.class)
			if w >= 40 {
				cls = string(s.class)
			}
			tag = cls
			switch {
			case s.noise:
				tag += " ≈100%"
			case s.ok:
				tag += " " + report.WholePercent(s.fraction)
			}
		}
		if tag != "" {
			tag = " " + tag
		}
		name := midTrunc(sc.Name, w-3-ansiWidth(tag))
		line := fit(mark+" "+name, w-ansiWidth(tag)) + tag
		switch {
		case i == cursor:
			line = st.Cursor.Render(line)
		case i == active:
			line = st.Active.Render(line)
		}
		out = append(out, line)
	}
	return out
}

// midTrunc shortens an ASCII name to w cells by cutting its middle, which
// keeps both the model prefix and the op/size suffix of suite names
// ("llama3-70b-t…qkv-ag-224m").
func midTrunc(s string, w int) string {
	if len(s) <= w {
		return s
	}
	if w < 3 {
		return fit(s, max(w, 0))
	}
	head := (w - 1) / 2
	return s[:head] + "…" + s[len(s)-(w-1-head):]
}

// listPanel is the scenario list as a component: its cursor and the
// window of rows it shows; ↑/↓ move the cursor.
type listPanel struct {
	size
	cursor, offset int
	// note is Config.ListNote: what the list leaves out.
	note string
}

// Update moves the cursor on the up and down keys.
func (l *listPanel) Update(m *Model, msg tea.Msg) (tea.Cmd, bool) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, false
	}
	switch {
	case key.Matches(km, m.keys.Up):
		l.move(-1, len(m.suite))
	case key.Matches(km, m.keys.Down):
		l.move(1, len(m.suite))
	default:
		return nil, false
	}
	return nil, true
}

// move moves the cursor by d rows in a list of n.
func (l *listPanel) move(d, n int) {
	if n == 0 {
		return
	}
	l.cursor = min(max(l.cursor+d, 0), n-1)
	l.follow(n)
}

// follow keeps the cursor inside the rows shown of a list of n (a hidden
// list keeps its window).
func (l *listPanel) follow(n int) {
	if l.w <= 0 || l.h <= 0 {
		return
	}
	l.offset = listOffset(l.cursor, l.offset, l.h-2, n)
}

// View is the list's box: the suite from its window, the cursor and the
// scenario on screen marked.
func (l *listPanel) View(m *Model) []string {
	if l.w <= 0 || l.h <= 0 {
		return nil
	}
	off := listOffset(l.cursor, l.offset, l.h-2, len(m.suite))
	return box(m.styles, listTitle(l.cursor, len(m.suite), l.note),
		listLines(m.styles, m.suite, m.sums, l.cursor, m.active, off, l.w-2, l.h-2), l.w, l.h)
}
