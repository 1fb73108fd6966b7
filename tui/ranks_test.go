package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
)

// fakeRanks is a job of world ranks whose other ranks answer each request
// at once: rank r releases r*skew after rank 0 and reports a copy of rank
// 0's result, or fails with failErr[r].
type fakeRanks struct {
	world   int
	skew    time.Duration
	failErr map[int]string

	mu       sync.Mutex
	reqs     []RankRequest
	recorded [][]RankResult
	lost     chan struct{}
	err      error
}

func newFakeRanks(world int) *fakeRanks {
	return &fakeRanks{world: world, skew: 1500 * time.Microsecond, lost: make(chan struct{})}
}

func (f *fakeRanks) Size() int { return f.world }

func (f *fakeRanks) Measure(ctx context.Context, req RankRequest, own func(context.Context) (profiler.Result, error)) (profiler.Result, []RankResult, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	f.mu.Unlock()
	r, err := own(ctx)
	if err != nil {
		return r, nil, err
	}
	t0 := time.Now().UnixNano()
	all := []RankResult{{Rank: 0, Released: t0, Result: &r}}
	for rank := 1; rank < f.world; rank++ {
		rr := RankResult{Rank: rank, Released: t0 + int64(rank)*f.skew.Nanoseconds()}
		if e := f.failErr[rank]; e != "" {
			rr.Err = e
		} else {
			c := r
			rr.Result = &c
		}
		all = append(all, rr)
	}
	return r, all, nil
}

func (f *fakeRanks) Record(rec *recordings.Recorder, results []RankResult) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.recorded = append(f.recorded, results)
}

func (f *fakeRanks) Lost() <-chan struct{} { return f.lost }
func (f *fakeRanks) Err() error            { return f.err }

func (f *fakeRanks) requests() []RankRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]RankRequest(nil), f.reqs...)
}

// runCmds runs cmd (a batch part by part, at once) and returns the
// messages of the parts that end within a second: the lab's commands out;
// a tick or a wait is not one of the lab's answers.
func runCmds(t *testing.T, cmd tea.Cmd) []tea.Msg {
	t.Helper()
	return msgsWithin(cmd, time.Second)
}

// resultOf is the measurement among msgs (failing when there is none).
func resultOf(t *testing.T, msgs []tea.Msg) resultMsg {
	t.Helper()
	for _, m := range msgs {
		if r, ok := m.(resultMsg); ok {
			return r
		}
	}
	t.Fatalf("no measurement among the commands' messages %v", msgs)
	return resultMsg{}
}

// TestLabRanks drives the lab on rank 0 with a fake group: each request
// (the first, a knob) goes to the ranks with the lab's scenario and
// strategy, the header says how many reported and their skew, the other
// ranks' results go to the recording, a failed rank is named, and a lost
// rank is named in the status line and ends the lab.
func TestLabRanks(t *testing.T) {
	ranks := newFakeRanks(2)
	m := newModel(t.Context(), Config{Backend: newFake(), Suite: testSuite(), Ranks: ranks})
	m, _ = update(m, tea.WindowSizeMsg{Width: 160, Height: 40})

	m, _ = update(m, resultOf(t, runCmds(t, m.measure())))
	reqs := ranks.requests()
	if len(reqs) != 1 || reqs[0].Seq != 1 || reqs[0].Scenario.Name != testSuite()[0].Name || reqs[0].Strategy != m.strategy {
		t.Fatalf("first request %+v; want seq 1 on %s under %s", reqs, testSuite()[0].Name, m.strategy)
	}
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "2/2 ranks reported · start skew 1.50 ms") {
		t.Errorf("the header does not say the ranks reported:\n%s", strings.SplitN(screen, "\n", 2)[0])
	}
	if len(ranks.recorded) != 1 || len(ranks.recorded[0]) != 1 || ranks.recorded[0][0].Rank != 1 {
		t.Errorf("recorded %+v; want rank 1's result", ranks.recorded)
	}

	// A knob: the new strategy goes out with the next request.
	before := m.strategy
	m, cmd := update(m, tea.KeyPressMsg{Code: 'o', Text: "o"})
	if m.strategy == before {
		t.Fatalf("o did not change the launch order (%s)", m.strategy)
	}
	ranks.failErr = map[int]string{1: "device lost"}
	m, _ = update(m, resultOf(t, runCmds(t, cmd)))
	reqs = ranks.requests()
	if len(reqs) != 2 || reqs[1].Seq != 2 || reqs[1].Strategy != m.strategy {
		t.Fatalf("requests %+v; want the second under %s", reqs, m.strategy)
	}
	if !strings.Contains(m.status.text, "rank 1: device lost") {
		t.Errorf("status %q does not name the failed rank", m.status.text)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), "1/2 ranks reported") {
		t.Error("the header does not say only one rank reported")
	}

	// A lost rank: named, measuring stops, the lab ends after a while.
	m, cmd = update(m, ranksLostMsg{errors.New("rank 1 (host n1, pid 42) is gone: its connection closed")})
	if m.status.kind != statusError || !strings.Contains(m.status.text, "rank 1 (host n1, pid 42) is gone") {
		t.Errorf("status %+v does not say which rank was lost", m.status)
	}
	if cmd == nil || m.quitting {
		t.Fatal("the lab should linger on the lost rank's line, then end")
	}
	// A measurement ending now does not hide the line.
	m, _ = update(m, resultMsg{seq: m.seq, err: errors.New("gathering lab/2 from rank 1: gone")})
	if !strings.Contains(m.status.text, "is gone") {
		t.Errorf("a late result replaced the lost rank's line: %q", m.status.text)
	}
	m, cmd = update(m, ranksQuitMsg{})
	if !m.quitting || cmd == nil {
		t.Fatal("the lab did not end after the lost rank")
	}
	if _, ok := cmd().(tea.QuitMsg); !ok {
		t.Error("the lab's command after a lost rank is not quit")
	}
}

// TestRankSummary checks the header's forms and the failed-rank line.
func TestRankSummary(t *testing.T) {
	r := &profiler.Result{}
	all := []RankResult{{Rank: 0, Released: 100, Result: r}, {Rank: 1, Released: 40, Result: r}, {Rank: 2, Released: 90, Err: "boom"}}
	got := rankSummary(all, 3)
	want := []string{"2/3 ranks reported · start skew 60 ns", "2/3 ranks · skew 60 ns", "2/3 ranks"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rankSummary = %q, want %q", got, want)
	}
	if f := rankFailures(all); f != "rank 2: boom" {
		t.Errorf("rankFailures = %q", f)
	}
	if f := rankFailures(nil); f != "" {
		t.Errorf("rankFailures(nil) = %q", f)
	}
}

// withRanks is h after a request two of three ranks reported.
func withRanks(h headerState) headerState {
	r := &profiler.Result{}
	h.ranks = rankSummary([]RankResult{{Rank: 0, Released: 1000, Result: r}, {Rank: 1, Released: 13_000, Result: r}, {Rank: 2, Err: "device lost", Released: 5000}}, 3)
	return h
}
