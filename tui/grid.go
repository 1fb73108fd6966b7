package tui

import (
	"context"
	"fmt"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// gridCol is one column of the sweep grid: a way to run the collective.
type gridCol struct {
	name string
	st   scenarios.Strategy
}

// gridCell is one measured (or pending) cell.
type gridCell struct {
	done bool
	// upliftEst is the cell's uplift U (uplift) with its interval, what
	// cells are compared by.
	upliftEst
	err error
}

// sweepGrid is the lab's sweep: the current scenario under every
// combination of a comm SM partition (rows) and a collective setup
// (columns), measured cell by cell off the UI loop, shown as a heatmap of
// the uplift U over the serial default: one reference for every cell, so
// cells compare (each cell's fraction of ideal has its own ideal).
type sweepGrid struct {
	scenario   scenarios.Scenario
	rows       []int // comm SMs, 0 = no partition
	cols       []gridCol
	cells      [][]gridCell
	next       int // the cell being measured, row-major
	curR, curC int
	ctx        context.Context
	cancel     context.CancelFunc

	// As a mode: the screen's size, and the grid's keys.
	size
	keys gridKeys
}

// gridKeys are the sweep grid's keys. They are fixed: the arrows and
// vi's j/k/h, which no lab key uses.
type gridKeys struct {
	up, down, left, right, move, apply, close key.Binding
}

func defaultGridKeys() gridKeys {
	return gridKeys{
		up:    key.NewBinding(key.WithKeys("up", "k")),
		down:  key.NewBinding(key.WithKeys("down", "j")),
		left:  key.NewBinding(key.WithKeys("left", "h")),
		right: key.NewBinding(key.WithKeys("right")),
		move:  key.NewBinding(key.WithKeys("up", "down", "left", "right"), key.WithHelp("arrows", "move")),
		apply: key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "applies")),
		close: key.NewBinding(key.WithKeys("esc", "s", "q"), key.WithHelp("esc", "closes")),
	}
}

// ShortHelp lists the grid's keys, as its hint line shows them.
func (g *sweepGrid) ShortHelp() []key.Binding {
	return []key.Binding{g.keys.move, g.keys.apply, g.keys.close}
}

// FullHelp lists the grid's keys.
func (g *sweepGrid) FullHelp() [][]key.Binding { return fullHelp(g) }

// gridMsg carries one cell's measurement.
type gridMsg struct {
	grid  *sweepGrid
	index int
	r     profiler.Result
	err   error
}

// newGrid lays out the grid for a scenario on a backend: partitions only
// where the backend has them, copy engines only where it can run this
// collective on them.
func newGrid(ctx context.Context, sc scenarios.Scenario, c backends.Capabilities) *sweepGrid {
	g := &sweepGrid{scenario: sc, rows: []int{0}, keys: defaultGridKeys()}
	if c.Has(scenarios.CapSMPartition) {
		for _, n := range []int{16, 32, 64} {
			if n <= c.Limits.SMs-c.Limits.SMStep {
				g.rows = append(g.rows, n)
			}
		}
	}
	first := scenarios.Strategy{Launch: scenarios.CommFirst}
	if c.Has(scenarios.CapPriority) {
		first.CommPriority = c.Limits.HighestPriority
	}
	g.cols = []gridCol{{"plain", scenarios.Strategy{}}, {"comm first", first}}
	if c.Has(scenarios.CapDMA) && (sc.Comm.Collective.IsPureCopy() || c.DMAReductions) {
		dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
		dmaFirst := first
		dmaFirst.CommEngine = scenarios.EngineDMA
		g.cols = append(g.cols, gridCol{"dma", dma}, gridCol{"dma first", dmaFirst})
	}
	g.cells = make([][]gridCell, len(g.rows))
	for i := range g.cells {
		g.cells[i] = make([]gridCell, len(g.cols))
	}
	g.ctx, g.cancel = context.WithCancel(ctx)
	return g
}

// strategy is the strategy of cell (r, c).
func (g *sweepGrid) strategy(r, c int) scenarios.Strategy {
	st := g.cols[c].st
	st.CommSMs = g.rows[r]
	return st
}

// total is the number of cells.
func (g *sweepGrid) total() int { return len(g.rows) * len(g.cols) }

// measureNext is the command measuring the next cell, or nil when all are
// done: at the lab's precision under gridTimeCap, with the machine record.
func (g *sweepGrid) measureNext(gate *runGate, b backends.Backend, machine profiler.Machine) tea.Cmd {
	if g.next >= g.total() {
		return nil
	}
	idx := g.next
	st := g.strategy(idx/len(g.cols), idx%len(g.cols))
	return func() tea.Msg {
		if !gate.enter() {
			return gridMsg{grid: g, index: idx, err: context.Canceled}
		}
		defer gate.leave()
		r, err := profiler.Measure(g.ctx, b, g.scenario, st, labOptions(machine, nil, gridTimeCap))
		return gridMsg{grid: g, index: idx, r: r, err: err}
	}
}

// Update stores the grid's cells as they are measured, and handles its
// keys; quit passes to the lab, every other key stays with the grid.
func (g *sweepGrid) Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse) {
	switch msg := msg.(type) {
	case gridMsg:
		if msg.grid != g {
			return nil, passed // another grid's late result
		}
		return g.store(m, msg), took
	case tea.KeyPressMsg:
		if key.Matches(msg, m.keys.Quit) {
			return nil, passed
		}
		return g.onKey(m, msg)
	}
	return nil, passed
}

// store stores a cell and starts the next one.
func (g *sweepGrid) store(m *Model, msg gridMsg) tea.Cmd {
	r, c := msg.index/len(g.cols), msg.index%len(g.cols)
	cell := gridCell{done: true, err: msg.err}
	if msg.err == nil {
		cell.upliftEst = upliftOf(msg.r)
		m.rec.cur.Result(msg.r)
	} else {
		m.rec.cur.Error("sweep cell " + g.strategy(r, c).String() + ": " + errLine(msg.err))
	}
	g.cells[r][c] = cell
	g.next = msg.index + 1
	m.status = status{statusInfo, g.progress()}
	return g.measureNext(m.gate, m.backend, m.machine)
}

// progress says how far the sweep is and, once every cell is measured,
// that it is done, how many cells failed and which did best: the cell of
// highest U and how many more are not told apart from it (bestCells).
func (g *sweepGrid) progress() string {
	done := min(g.next, g.total())
	if done < g.total() {
		return fmt.Sprintf("sweeping %s: %d/%d measured", g.scenario.Name, done, g.total())
	}
	failed := 0
	for r := range g.cells {
		for _, cell := range g.cells[r] {
			if cell.err != nil {
				failed++
			}
		}
	}
	out := fmt.Sprintf("sweep done: %d/%d measured", done, g.total())
	if failed > 0 {
		out += fmt.Sprintf(", %d failed", failed)
	}
	if bestR, bestC, tied := g.bestCells(); bestR >= 0 {
		out += fmt.Sprintf(" · best U %s under %s", report.Ratio(g.cells[bestR][bestC].u), g.strategy(bestR, bestC))
		if n := tiedCount(tied) - 1; n > 0 {
			out += fmt.Sprintf(", not told apart from %d more (≈ best)", n)
		}
		out += " · enter applies a cell"
	}
	return out
}

// bestCells finds the measured cell of highest U (bestR < 0 when none)
// and marks every cell not told apart from it (compareU): its U interval
// overlaps the best's. The best cell is marked too; when it is the only
// one marked, it is the best beyond the noise.
func (g *sweepGrid) bestCells() (bestR, bestC int, tied [][]bool) {
	bestR, bestC = -1, -1
	for r := range g.cells {
		for c, cell := range g.cells[r] {
			if cell.done && cell.err == nil && cell.ok && (bestR < 0 || cell.u > g.cells[bestR][bestC].u) {
				bestR, bestC = r, c
			}
		}
	}
	tied = make([][]bool, len(g.cells))
	for r := range g.cells {
		tied[r] = make([]bool, len(g.cells[r]))
		if bestR < 0 {
			continue
		}
		for c, cell := range g.cells[r] {
			tied[r][c] = cell.done && cell.err == nil && cell.ok && compareU(cell.upliftEst, g.cells[bestR][bestC].upliftEst) == 0
		}
	}
	return bestR, bestC, tied
}

// tiedCount is the number of cells marked in tied.
func tiedCount(tied [][]bool) int {
	n := 0
	for _, row := range tied {
		for _, t := range row {
			if t {
				n++
			}
		}
	}
	return n
}

// onKey moves the cursor, applies a cell, or closes the grid.
func (g *sweepGrid) onKey(m *Model, msg tea.KeyPressMsg) (tea.Cmd, keyUse) {
	k := g.keys
	switch {
	case key.Matches(msg, k.up):
		g.curR = max(g.curR-1, 0)
	case key.Matches(msg, k.down):
		g.curR = min(g.curR+1, len(g.rows)-1)
	case key.Matches(msg, k.left):
		g.curC = max(g.curC-1, 0)
	case key.Matches(msg, k.right):
		g.curC = min(g.curC+1, len(g.cols)-1)
	case key.Matches(msg, k.apply):
		st := g.strategy(g.curR, g.curC)
		g.close()
		m.strategy = st
		m.status = status{statusInfo, "applied from the sweep: " + st.String()}
		m.rec.cur.Marker("key enter: " + m.status.text)
		return m.request(), closed
	case key.Matches(msg, k.close):
		return nil, closed
	}
	return nil, took
}

// close stops the grid's measurements (it is leaving the stack).
func (g *sweepGrid) close() { g.cancel() }

// gridLines renders the heatmap in at most maxW cells: a header of
// columns, a row per partition, each cell the uplift U (· pending, …
// measuring, ! failed) with its interval when it has one and the cells
// are wide enough for it in maxW, the best cell marked good and a cell
// slower than serial bad, the cursor cell in brackets. Cells whose U is
// not told apart from the best's (compareU: their intervals overlap) are
// not ranked: each of them, the best included, reads "≈" and is marked
// good, and a line under the grid says what ≈ means.
func gridLines(st Styles, g *sweepGrid, maxW int) []string {
	const labelW = 13
	_, _, tied := g.bestCells()
	ties := tiedCount(tied) > 1
	// cellText is a cell's text and style, with or without its interval.
	cellText := func(r, c int, withCI bool) (string, lipgloss.Style) {
		idx := r*len(g.cols) + c
		cell := g.cells[r][c]
		text, style := "·", st.Dim
		switch {
		case cell.done && cell.err != nil:
			text, style = "! failed", st.Error
		case cell.done && !cell.ok:
			text = "n/a"
		case cell.done:
			text, style = report.Ratio(cell.u), st.Value
			if withCI && cell.hasCI {
				text = report.RatioCI(cell.u, &cell.ci)
			}
			switch {
			case tied[r][c] && ties:
				text, style = "≈"+text, st.Good
			case tied[r][c]:
				style = st.Good
			case cell.u < 1:
				style = st.Bad
			}
		case idx == g.next:
			text = "…"
		}
		if r == g.curR && c == g.curC {
			return "[" + text + "]", style
		}
		return " " + text + " ", style
	}
	// cellWidth is the width the cells need, 14 at least.
	cellWidth := func(withCI bool) int {
		cw := 14
		for r := range g.rows {
			for c := range g.cols {
				t, _ := cellText(r, c, withCI)
				cw = max(cw, ansiWidth(t)+1)
			}
		}
		return cw
	}
	withCI := true
	cellW := cellWidth(true)
	if labelW+cellW*len(g.cols) > maxW {
		withCI, cellW = false, cellWidth(false)
	}
	head := fit("", labelW)
	for _, c := range g.cols {
		head += st.Label.Render(fit(c.name, cellW))
	}
	out := []string{head}
	for r, sms := range g.rows {
		label := "no partition"
		if sms > 0 {
			label = fmt.Sprintf("comm %d SMs", sms)
		}
		line := st.Label.Render(fit(label, labelW))
		for c := range g.cols {
			text, style := cellText(r, c, withCI)
			line += style.Render(fit(text, cellW))
		}
		out = append(out, line)
	}
	state := fmt.Sprintf("%d/%d measured", min(g.next, g.total()), g.total())
	if g.next >= g.total() {
		state = "sweep done: " + state
	}
	if ties {
		out = append(out, "", st.Dim.Render("≈ best: U not told apart from the best (within the noise)"))
	}
	out = append(out, "", st.Dim.Render(state+" · "+hint(g.ShortHelp(), " · ")))
	return out
}

// View is the sweep overlay: as wide as its widest line needs, at most the
// screen's width less a margin.
func (g *sweepGrid) View(m *Model) []string {
	lines := gridLines(m.styles, g, g.w-8)
	w := 0
	for _, l := range lines[:len(g.rows)+1] {
		w = max(w, ansiWidth(l))
	}
	return m.overlayBox("Sweep · "+g.scenario.Name+" · U, uplift over serial", lines, min(g.w-4, w+4))
}
