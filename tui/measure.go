package tui

import (
	"context"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// resultMsg carries one finished measurement back to the model. seq tells
// whether it is still wanted: a result whose seq is not the model's latest
// request is stale and dropped.
type resultMsg struct {
	seq    int
	index  int // the scenario's index in the suite
	result profiler.Result
	err    error
	// started is when the measurement began (wall clock) and took how long
	// it ran: the utilization panel shows the NVML samples of that window.
	started time.Time
	took    time.Duration
	// ranks are every rank's outcome, rank 0's first, when the lab runs
	// on rank 0 of a multi-process job (Config.Ranks).
	ranks []RankResult
}

// runGate counts measurements (and recordings being opened) in flight so
// that Run can wait for them after the program ends, and refuses new ones
// once closed.
type runGate struct {
	mu     sync.Mutex
	n      int
	closed bool
}

// enter registers a measurement; false once the gate is closed.
func (g *runGate) enter() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return false
	}
	g.n++
	return true
}

// leave ends a measurement.
func (g *runGate) leave() {
	g.mu.Lock()
	g.n--
	g.mu.Unlock()
}

// closeAndWait refuses new measurements and waits up to d for the running
// ones to return; it reports whether they all did.
func (g *runGate) closeAndWait(d time.Duration) bool {
	g.mu.Lock()
	g.closed = true
	g.mu.Unlock()
	deadline := time.Now().Add(d)
	for {
		g.mu.Lock()
		n := g.n
		g.mu.Unlock()
		if n == 0 {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// The lab's default precision: a measurement adds interleaved rounds until
// T_c3's 95 % interval is within ±labPrecisionPct % of it, or labTimeCap
// has passed (a sweep-grid cell, gridTimeCap: the grid measures many).
const (
	labPrecisionPct = 2
	labTimeCap      = 20 * time.Second
	gridTimeCap     = 5 * time.Second
)

// labPrecision is the precision the lab measures at: T_c3 within ±2 %.
func labPrecision() profiler.Precision {
	return profiler.Precision{Figure: profiler.PrecisionTC3, HalfWidth: labPrecisionPct / 100.0}
}

// labOptions are the profiler options of a lab measurement: the machine
// record (nil without NVML), and the lab's precision under timeCap. A
// live-mode measurement, which reuses the isolated runs of the one before
// (base) and repeats at once, is not adaptive: its speed is the point.
func labOptions(machine profiler.Machine, base *profiler.Baseline, timeCap time.Duration) profiler.Options {
	opt := profiler.Options{Baseline: base, Machine: machine}
	if base == nil {
		opt.Precision, opt.TimeCap = labPrecision(), timeCap
	}
	return opt
}

// measureCmd runs profiler.Measure in the command's goroutine, never in
// Update or View, with the machine record and the lab's precision
// (labOptions).
//
// A baseline from the previous result, when it still holds, stands in for
// the isolated runs (live mode re-measures only the concurrent run).
func measureCmd(ctx context.Context, g *runGate, b backends.Backend, machine profiler.Machine, idx int, sc scenarios.Scenario, st scenarios.Strategy, seq int, base *profiler.Baseline) tea.Cmd {
	return func() tea.Msg {
		if !g.enter() {
			return resultMsg{seq: seq, index: idx, err: context.Canceled}
		}
		defer g.leave()
		start := time.Now()
		r, err := profiler.Measure(ctx, b, sc, st, labOptions(machine, base, labTimeCap))
		return resultMsg{seq: seq, index: idx, result: r, err: err, started: start, took: time.Since(start)}
	}
}
