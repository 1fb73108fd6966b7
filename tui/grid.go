package tui

import (
	"context"
	"fmt"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// gridCol is one column of the sweep grid: a way to run the collective.
type gridCol struct {
	name string
	st   scenarios.Strategy
}

// gridCell is one measured (or pending) cell.
type gridCell struct {
	done     bool
	fraction float64
	ok       bool
	err      error
}

// sweepGrid is the lab's sweep: the current scenario under every
// combination of a comm SM partition (rows) and a collective setup
// (columns), measured cell by cell off the UI loop, shown as a heatmap of
// the fraction of ideal.
type sweepGrid struct {
	scenario   scenarios.Scenario
	rows       []int // comm SMs, 0 = no partition
	cols       []gridCol
	cells      [][]gridCell
	next       int // the cell being measured, row-major
	curR, curC int
	ctx        context.Context
	cancel     context.CancelFunc
}

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
	g := &sweepGrid{scenario: sc, rows: []int{0}}
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

// measureNext is the command measuring the next cell, or nil when all are done.
func (g *sweepGrid) measureNext(gate *runGate, b backends.Backend) tea.Cmd {
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
		r, err := profiler.Measure(g.ctx, b, g.scenario, st, profiler.Options{})
		return gridMsg{grid: g, index: idx, r: r, err: err}
	}
}

// onGridMsg stores a cell and starts the next one.
func (m Model) onGridMsg(msg gridMsg) (tea.Model, tea.Cmd) {
	g := m.grid
	if g == nil || msg.grid != g {
		return m, nil // a closed grid's late result
	}
	r, c := msg.index/len(g.cols), msg.index%len(g.cols)
	cell := gridCell{done: true, err: msg.err}
	if msg.err == nil {
		cell.fraction, cell.ok = msg.r.Fraction()
		m.rec.cur.Result(msg.r)
	} else {
		m.rec.cur.Error("sweep cell " + g.strategy(r, c).String() + ": " + errLine(msg.err))
	}
	g.cells[r][c] = cell
	g.next = msg.index + 1
	m.status = status{statusInfo, g.progress()}
	m.renderGrid()
	m.renderFooter()
	return m, g.measureNext(m.gate, m.backend)
}

// progress says how far the sweep is and, once every cell is measured,
// that it is done, how many cells failed and which did best.
func (g *sweepGrid) progress() string {
	done := min(g.next, g.total())
	if done < g.total() {
		return fmt.Sprintf("sweeping %s: %d/%d measured", g.scenario.Name, done, g.total())
	}
	failed, bestR, bestC := 0, -1, -1
	for r := range g.cells {
		for c, cell := range g.cells[r] {
			switch {
			case cell.err != nil:
				failed++
			case cell.ok && (bestR < 0 || cell.fraction > g.cells[bestR][bestC].fraction):
				bestR, bestC = r, c
			}
		}
	}
	out := fmt.Sprintf("sweep done: %d/%d measured", done, g.total())
	if failed > 0 {
		out += fmt.Sprintf(", %d failed", failed)
	}
	if bestR >= 0 {
		out += fmt.Sprintf(" · best %s of ideal under %s · enter applies a cell", fmtPct0(g.cells[bestR][bestC].fraction), g.strategy(bestR, bestC))
	}
	return out
}

// onGridKey moves the cursor, applies a cell, or closes the grid.
func (m Model) onGridKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	g := m.grid
	switch msg.String() {
	case "up", "k":
		g.curR = max(g.curR-1, 0)
	case "down", "j":
		g.curR = min(g.curR+1, len(g.rows)-1)
	case "left", "h":
		g.curC = max(g.curC-1, 0)
	case "right":
		g.curC = min(g.curC+1, len(g.cols)-1)
	case "enter":
		st := g.strategy(g.curR, g.curC)
		m.closeGrid()
		m.strategy = st
		m.status = status{statusInfo, "applied from the sweep: " + st.String()}
		m.rec.cur.Marker("key enter: " + m.status.text)
		cmd := m.request()
		m.renderAll()
		return m, cmd
	case "esc", "s", "q":
		m.closeGrid()
		m.renderAll()
		return m, nil
	}
	m.renderGrid()
	return m, nil
}

// closeGrid stops the grid's measurements and hides it.
func (m *Model) closeGrid() {
	if m.grid != nil {
		m.grid.cancel()
		m.grid = nil
	}
}

// gridLines renders the heatmap: a header of columns, a row per partition,
// each cell the fraction of ideal (· pending, … measuring, ! failed), the
// cursor cell in brackets.
func gridLines(st Styles, g *sweepGrid) []string {
	const labelW, cellW = 13, 14
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
			idx := r*len(g.cols) + c
			cell := g.cells[r][c]
			text, style := "·", st.Dim
			switch {
			case cell.done && cell.err != nil:
				text, style = "! failed", st.Error
			case cell.done && !cell.ok:
				text = "n/a"
			case cell.done:
				text, style = fmtPct0(cell.fraction), st.Value
				if cell.fraction >= 0.6 {
					style = st.Good
				} else if cell.fraction < 0 {
					style = st.Bad
				}
			case idx == g.next:
				text = "…"
			}
			if r == g.curR && c == g.curC {
				text = "[" + text + "]"
			} else {
				text = " " + text + " "
			}
			line += style.Render(fit(text, cellW))
		}
		out = append(out, line)
	}
	state := fmt.Sprintf("%d/%d measured", min(g.next, g.total()), g.total())
	if g.next >= g.total() {
		state = "sweep done: " + state
	}
	out = append(out, "", st.Dim.Render(state+" · arrows move · enter applies · esc closes"))
	return out
}

// renderGrid renders the sweep overlay.
func (m *Model) renderGrid() {
	if m.grid == nil || m.width == 0 || m.lay.tooSmall {
		return
	}
	w := min(m.width-4, 13+14*len(m.grid.cols)+4)
	m.view.grid = m.overlayBox("Sweep · "+m.grid.scenario.Name+" · % of ideal", gridLines(m.styles, m.grid), w)
}
