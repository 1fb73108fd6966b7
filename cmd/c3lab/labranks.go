package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/dist/group"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/tui"
)

// The lab under a launcher: rank 0 opens it; each measurement it asks
// for (a knob, a rerun, another scenario) goes to every other rank as a
// command (group.Publish), every rank passes one start gate for it and
// measures, and each sends rank 0 its result (group.Gather). The other
// ranks run headless (followLab) until rank 0 quits or is lost. With
// --record, rank 0 records its own results to the file and rank R's to
// NAME.rankR.EXT, as run and sweep name every rank's files.

// job is the group a command runs in under a launcher, found in its
// context; parent is the context before the group's (which the group's
// failure cancels): the lab on rank 0 runs under parent so it can say
// which rank was lost before it ends.
type job struct {
	g      *group.Group
	parent context.Context
	ended  bool // rank 0 told the others the lab ended
}

// end tells the other ranks, once, that rank 0's lab ended.
func (j *job) end() error {
	if j.ended {
		return nil
	}
	j.ended = true
	return endLab(j.g)
}

type jobKey struct{}

func withJob(ctx context.Context, j *job) context.Context {
	return context.WithValue(ctx, jobKey{}, j)
}

// jobFrom is the job ctx runs in, nil without a launcher.
func jobFrom(ctx context.Context) *job {
	j, _ := ctx.Value(jobKey{}).(*job)
	return j
}

// labCommand is one command of rank 0's lab to the other ranks.
type labCommand struct {
	// Op is "measure" (Request is set) or "quit".
	Op      string           `json:"op"`
	Request *tui.RankRequest `json:"request,omitempty"`
}

const (
	labMeasure = "measure"
	labQuit    = "quit"
)

// labGate names the start gate and the gathering of one request.
func labGate(seq int) string { return "lab/" + strconv.Itoa(seq) }

// labRanks is tui.Ranks over the job's group.
type labRanks struct {
	g    *group.Group
	recs *labRecordings
}

func (l *labRanks) Size() int { return l.g.Size() }

func (l *labRanks) Lost() <-chan struct{} { return l.g.Failed() }

func (l *labRanks) Err() error { return l.g.Err() }

// Measure publishes req, passes the request's start gate with every rank,
// runs rank 0's own measurement and gathers the others' outcomes.
func (l *labRanks) Measure(ctx context.Context, req tui.RankRequest, own func(context.Context) (profiler.Result, error)) (profiler.Result, []tui.RankResult, error) {
	cmd, err := json.Marshal(labCommand{Op: labMeasure, Request: &req})
	if err != nil {
		return profiler.Result{}, nil, fmt.Errorf("encoding the request for the ranks: %w", err)
	}
	if err := l.g.Publish(ctx, cmd); err != nil {
		return profiler.Result{}, nil, fmt.Errorf("sending the request to the ranks: %w", err)
	}
	released, err := l.g.StartGate(ctx, labGate(req.Seq))
	if err != nil {
		return profiler.Result{}, nil, fmt.Errorf("the ranks' start gate: %w", err)
	}
	r, err := own(ctx)
	if err != nil {
		return r, nil, err
	}
	mine, _ := json.Marshal(tui.RankResult{Rank: 0, Released: released.UnixNano()})
	got, err := l.g.Gather(ctx, labGate(req.Seq), mine)
	if err != nil {
		return r, nil, err
	}
	all := make([]tui.RankResult, len(got))
	for rank, b := range got {
		if err := json.Unmarshal(b, &all[rank]); err != nil {
			return r, nil, fmt.Errorf("rank %d's result cannot be read: %w", rank, err)
		}
		all[rank].Rank = rank
	}
	all[0].Result = &r
	return r, all, nil
}

// Record writes each other rank's result to its recording next to rec.
func (l *labRanks) Record(rec *recordings.Recorder, results []tui.RankResult) {
	for _, res := range results {
		c := l.recs.companion(rec, res.Rank)
		switch {
		case c == nil:
		case res.Err != "":
			c.Error(res.Err)
		case res.Result != nil:
			c.Result(*res.Result)
		}
	}
}

// companion is rank's recording opened with main, nil when there is none.
func (l *labRecordings) companion(main *recordings.Recorder, rank int) *recordings.Recorder {
	if main == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	cs := l.companions[main]
	if rank < 1 || rank > len(cs) {
		return nil
	}
	return cs[rank-1]
}

// openCompanions opens, next to main at path, one recording per other
// rank (NAME.rankR.EXT), each starting with a marker naming its rank.
func (l *labRecordings) openCompanions(main *recordings.Recorder, rf recordFlags, gpus int) error {
	var cs []*recordings.Recorder
	for rank := 1; rank < l.world; rank++ {
		crf := recordFlags{path: rankPath(rf.path, rank), overwrite: rf.overwrite}
		c, err := crf.open(l.b, gpus)
		if err != nil {
			for _, o := range cs {
				o.Close()
			}
			return fmt.Errorf("rank %d's recording: %w", rank, err)
		}
		c.Marker(fmt.Sprintf("rank %d of %d: the results rank %d measured; the header is rank 0's", rank, l.world, rank))
		cs = append(cs, c)
	}
	l.mu.Lock()
	if l.companions == nil {
		l.companions = map[*recordings.Recorder][]*recordings.Recorder{}
	}
	l.companions[main] = cs
	l.mu.Unlock()
	return nil
}

// followLab is the lab on a rank other than 0: headless, it measures each
// request rank 0's lab sends, at the request's start gate, and sends
// rank 0 its outcome, until rank 0 quits (nil) or the group fails. A
// request superseded by the next one (rank 0 turned another knob) is
// cancelled. Each measurement is one line on out (rank 0 prints it after
// its lab ends).
func followLab(ctx context.Context, ef *experimentFlags, g *group.Group, s stdio) error {
	b, _, _, err := ef.open(io.Discard, true)
	if err != nil {
		return err
	}
	defer b.Close()
	type next struct {
		c   labCommand
		err error
	}
	cmds := make(chan next)
	go func() {
		for {
			raw, err := g.Next(ctx)
			var c labCommand
			if err == nil {
				if jerr := json.Unmarshal(raw, &c); jerr != nil || (c.Op == labMeasure && c.Request == nil) {
					err = fmt.Errorf("rank 0 sent a command this rank cannot read: %q", raw)
				}
			}
			select {
			case cmds <- next{c, err}:
			case <-ctx.Done():
				return
			}
			if err != nil || c.Op == labQuit {
				return
			}
		}
	}()
	var prev *profiler.Result
	var pending *next
	for {
		var n next
		if pending != nil {
			n, pending = *pending, nil
		} else {
			select {
			case n = <-cmds:
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if n.err != nil {
			return n.err
		}
		switch n.c.Op {
		case labQuit:
			return nil
		case labMeasure:
		default:
			return fmt.Errorf("rank 0 sent an unknown command %q", n.c.Op)
		}
		req := *n.c.Request
		mctx, cancel := context.WithCancel(ctx)
		done := make(chan tui.RankResult, 1)
		go func() { done <- measureShare(mctx, g, b, req, prev) }()
		var rr tui.RankResult
		select {
		case rr = <-done:
		case nn := <-cmds:
			// Superseded: rank 0 has left this request behind.
			cancel()
			<-done
			pending = &nn
			continue
		}
		cancel()
		if rr.Result != nil {
			prev = rr.Result
		}
		out, err := json.Marshal(rr)
		if err != nil {
			return fmt.Errorf("encoding request %d's result: %w", req.Seq, err)
		}
		if _, err := g.Gather(ctx, labGate(req.Seq), out); err != nil {
			return err
		}
		fmt.Fprintln(s.out, followLine(req, rr))
	}
}

// measureShare is this rank's part of one request: the start gate, then
// the measurement as the lab makes it.
func measureShare(ctx context.Context, g *group.Group, b backends.Backend, req tui.RankRequest, prev *profiler.Result) tui.RankResult {
	rr := tui.RankResult{Rank: g.Rank()}
	released, err := g.StartGate(ctx, labGate(req.Seq))
	if err != nil {
		rr.Err = "start gate: " + err.Error()
		return rr
	}
	rr.Released = released.UnixNano()
	r, err := tui.MeasureRequest(ctx, b, nil, req, prev)
	if err != nil {
		rr.Err = err.Error()
		return rr
	}
	rr.Result = &r
	return rr
}

// followLine is one measurement of a following rank, in one line.
func followLine(req tui.RankRequest, rr tui.RankResult) string {
	head := fmt.Sprintf("request %d: %s under %s", req.Seq, req.Scenario.Name, req.Strategy.String())
	if rr.Result == nil {
		return head + ": failed: " + rr.Err
	}
	return head + ": T_c3 " + report.Duration(rr.Result.TC3.Median) + ", speedup " + report.Ratio(rr.Result.RealizedSpeedup)
}

// endLab tells the other ranks rank 0's lab ended (they leave with exit 0
// when the group holds).
func endLab(g *group.Group) error {
	if g.Err() != nil {
		return nil // the job failed: every rank leaves on its own
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	b, _ := json.Marshal(labCommand{Op: labQuit})
	if err := g.Publish(ctx, b); err != nil {
		return fmt.Errorf("telling the ranks the lab ended: %w", err)
	}
	return nil
}
