package tui

import (
	"context"
	"fmt"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// RankRequest is one measurement the lab on rank 0 of a multi-process job
// asks of every rank: what the knobs, the list and the composer set when
// it was asked for.
type RankRequest struct {
	// Seq is the lab's request number: unique and increasing in a session
	// (a request superseded before it started is never sent).
	Seq      int                `json:"seq"`
	Scenario scenarios.Scenario `json:"scenario"`
	Strategy scenarios.Strategy `json:"strategy"`
	// Live says the lab is in live mode: each rank reuses the isolated
	// runs of its own previous result, as the lab does.
	Live bool `json:"live,omitempty"`
}

// RankResult is one rank's outcome of a request.
type RankResult struct {
	Rank int `json:"rank"`
	// Released is when the request's start gate let the rank go (Unix ns,
	// the rank's host clock).
	Released int64            `json:"released_unix_ns"`
	Result   *profiler.Result `json:"result,omitempty"`
	Err      string           `json:"error,omitempty"`
}

// Ranks connects the lab on rank 0 to the other ranks of a multi-process
// job (Config.Ranks). Its methods are called off the UI loop: Measure in
// a measurement's goroutine, Record with the recorder's own queue, Lost
// from a goroutine that sends the lab a message.
type Ranks interface {
	// Size is the number of ranks, rank 0 included.
	Size() int
	// Measure sends req to every other rank, passes one start gate with
	// them, runs own (rank 0's measurement) and gathers every rank's
	// outcome; it returns rank 0's result and the ranks' outcomes in rank
	// order, rank 0's first. ctx ends when the lab supersedes the request.
	Measure(ctx context.Context, req RankRequest, own func(context.Context) (profiler.Result, error)) (profiler.Result, []RankResult, error)
	// Record writes the other ranks' results of one request to the
	// recording rec stands for (rec is nil when the lab is not recording).
	Record(rec *recordings.Recorder, results []RankResult)
	// Lost is closed when a rank is lost (died, hung, left); Err then
	// says which, in one line.
	Lost() <-chan struct{}
	Err() error
}

// MeasureRequest measures req on b as the lab measures: at the lab's
// precision, reusing prev's isolated runs in live mode. The other ranks
// of a multi-process job run it for each request rank 0's lab sends.
func MeasureRequest(ctx context.Context, b backends.Backend, machine profiler.Machine, req RankRequest, prev *profiler.Result) (profiler.Result, error) {
	var base *profiler.Baseline
	if req.Live && prev != nil && prev.Scenario.Name == req.Scenario.Name {
		bl := prev.Baseline()
		base = &bl
	}
	return profiler.Measure(ctx, b, req.Scenario, req.Strategy, labOptions(machine, base, labTimeCap))
}

// ranksLostMsg says a rank was lost: the lab says which and ends.
type ranksLostMsg struct{ err error }

// ranksQuitMsg ends the lab after a lost rank, once the status line had
// time to say which.
type ranksQuitMsg struct{}

// lostLinger is how long the lab shows which rank was lost before it ends.
const lostLinger = 2 * time.Second

// watchRanks sends the program a ranksLostMsg when a rank is lost (or
// returns when done closes).
func watchRanks(r Ranks, p *tea.Program, done <-chan struct{}) {
	select {
	case <-r.Lost():
		p.Send(ranksLostMsg{r.Err()})
	case <-done:
	}
}

// rankMeasureCmd is measureCmd across the ranks: rank 0's measurement at
// the start gate every rank passes for the request, in the command's
// goroutine.
func rankMeasureCmd(ctx context.Context, g *runGate, ranks Ranks, b backends.Backend, machine profiler.Machine, idx int, sc scenarios.Scenario, st scenarios.Strategy, seq int, base *profiler.Baseline) tea.Cmd {
	return func() tea.Msg {
		if !g.enter() {
			return resultMsg{seq: seq, index: idx, err: context.Canceled}
		}
		defer g.leave()
		start := time.Now()
		req := RankRequest{Seq: seq, Scenario: sc, Strategy: st, Live: base != nil}
		r, all, err := ranks.Measure(ctx, req, func(ctx context.Context) (profiler.Result, error) {
			return profiler.Measure(ctx, b, sc, st, labOptions(machine, base, labTimeCap))
		})
		return resultMsg{seq: seq, index: idx, result: r, err: err, started: start, took: time.Since(start), ranks: all}
	}
}

// rankSummary is what the header says of the ranks' last request, most
// detailed form first: how many reported a result, and the spread of
// their start-gate releases.
func rankSummary(all []RankResult, world int) []string {
	ok := 0
	lo, hi := int64(0), int64(0)
	for i, r := range all {
		if r.Err == "" && r.Result != nil {
			ok++
		}
		if i == 0 || r.Released < lo {
			lo = r.Released
		}
		if i == 0 || r.Released > hi {
			hi = r.Released
		}
	}
	n := fmt.Sprintf("%d/%d ranks", ok, world)
	skew := report.Duration(float64(hi - lo))
	return []string{n + " reported · start skew " + skew, n + " · skew " + skew, n}
}

// rankFailures names the ranks whose measurement failed, for the status
// line ("" when none did).
func rankFailures(all []RankResult) string {
	s := ""
	for _, r := range all[min(1, len(all)):] {
		if r.Err != "" {
			if s != "" {
				s += "; "
			}
			s += fmt.Sprintf("rank %d: %s", r.Rank, r.Err)
		}
	}
	return s
}

// rankIndicator is the header's forms of the ranks' word (none in one
// process or before the first result).
func (m Model) rankIndicator() []string {
	out := make([]string, 0, len(m.rankLine))
	for _, s := range m.rankLine {
		out = append(out, m.styles.Dim.Render(s))
	}
	return out
}
