package tui

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// snapshot is what the flows check, copied in the program's goroutine.
type snapshot struct {
	running  bool
	seq      int
	active   int
	strategy scenarios.Strategy
	has      bool // a result is on screen
	resSc    string
	resSt    scenarios.Strategy
	frac     string
	showHelp bool
	width    int
	height   int
	status   status
	rec      string // the recording's file; empty when not recording
	screen   string // ANSI stripped
}

// observer records a snapshot of the model before every message through
// tea.WithFilter, so a test can wait on the model, not on terminal bytes.
type observer struct {
	mu   sync.Mutex
	last snapshot
}

func (o *observer) filter(tm tea.Model, msg tea.Msg) tea.Msg {
	m, ok := tm.(Model)
	if !ok {
		return msg
	}
	s := snapshot{
		running: m.running, seq: m.seq, active: m.active, strategy: m.strategy,
		showHelp: m.showHelp(), width: m.width, height: m.height, status: m.status,
		rec: m.rec.cur.Path(), screen: ansi.Strip(m.View().Content),
	}
	if m.result != nil {
		s.has, s.resSc, s.resSt, s.frac = true, m.result.Scenario.Name, m.result.Strategy, fracText(*m.result)
	}
	o.mu.Lock()
	o.last = s
	o.mu.Unlock()
	return msg
}

// poke is a no-op message that makes the filter take a fresh snapshot.
type poke struct{}

// wait pokes the program until cond holds on a snapshot, or fails.
func (o *observer) wait(t *testing.T, tm *teatest.TestModel, what string, cond func(snapshot) bool) snapshot {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		tm.Send(poke{})
		time.Sleep(5 * time.Millisecond)
		o.mu.Lock()
		s := o.last
		o.mu.Unlock()
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; last status %q, screen:\n%s", what, s.status.text, s.screen)
		}
	}
}

// idle reports a snapshot with a result and nothing in flight.
func idle(s snapshot) bool { return s.has && !s.running }

// startLab runs the lab under teatest at w x h on backend b.
func startLab(t *testing.T, b *fakeBackend, w, h int) (*teatest.TestModel, *observer) {
	t.Helper()
	return startLabWith(t, Config{Backend: b, Suite: testSuite(), Start: "ag-gemm-balanced"}, w, h)
}

// startLabWith runs the lab for cfg under teatest at w x h.
func startLabWith(t *testing.T, cfg Config, w, h int) (*teatest.TestModel, *observer) {
	t.Helper()
	obs := &observer{}
	tm := teatest.NewTestModel(t, New(cfg),
		teatest.WithInitialTermSize(w, h),
		teatest.WithProgramOptions(tea.WithFilter(obs.filter)))
	t.Cleanup(func() { _ = tm.Quit() })
	return tm, obs
}

// TestFlow walks the lab as a user would: start, pick a scenario, toggle
// DMA, add an SM partition, open help, resize, quit.
func TestFlow(t *testing.T) {
	fake := newFake()
	tm, obs := startLab(t, fake, 80, 24)

	s := obs.wait(t, tm, "the first measurement", idle)
	if s.resSc != "ag-gemm-balanced" || s.resSt.String() != "baseline" {
		t.Fatalf("first result is %s under %s", s.resSc, s.resSt)
	}

	tm.Type("j")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	s = obs.wait(t, tm, "the picked scenario", func(s snapshot) bool { return idle(s) && s.resSc == "a2a-moe-comm-long" })
	before := s.frac

	tm.Type("d")
	s = obs.wait(t, tm, "the dma result", func(s snapshot) bool { return idle(s) && s.resSt.CommEngine == scenarios.EngineDMA })
	if s.frac == before {
		t.Errorf("%% of ideal stayed %s after turning DMA on", s.frac)
	}
	if !strings.Contains(s.screen, "dma") {
		t.Errorf("screen does not show the dma strategy:\n%s", s.screen)
	}

	tm.Type("]")
	s = obs.wait(t, tm, "the partitioned result", func(s snapshot) bool { return idle(s) && s.resSt.CommSMs == 8 })
	if got := s.resSt.String(); got != "comm_sms=8 dma" {
		t.Errorf("strategy %q, want comm_sms=8 dma", got)
	}

	tm.Type("?")
	s = obs.wait(t, tm, "the help overlay", func(s snapshot) bool { return s.showHelp })
	if !strings.Contains(s.screen, "Help · keys and knobs") {
		t.Errorf("help overlay missing:\n%s", s.screen)
	}

	tm.Send(tea.WindowSizeMsg{Width: 160, Height: 50})
	s = obs.wait(t, tm, "the resize", func(s snapshot) bool { return s.width == 160 })
	checkScreen(t, s.screen, 160, 50)
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	s = obs.wait(t, tm, "the overlay to close", func(s snapshot) bool { return !s.showHelp })
	if strings.Contains(s.screen, "Help · keys") || !strings.Contains(s.screen, "Timeline · GPU 0") {
		t.Errorf("160x50 screen after closing help:\n%s", s.screen)
	}

	tm.Type("q")
	fm, ok := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	if !ok {
		t.Fatal("final model is not a Model")
	}
	if !fm.quitting || fm.running {
		t.Errorf("final model: quitting=%v running=%v", fm.quitting, fm.running)
	}
	if fm.strategy.CommEngine != scenarios.EngineDMA || fm.strategy.CommSMs != 8 || fm.suite[fm.active].Name != "a2a-moe-comm-long" {
		t.Errorf("final strategy %s on %s", fm.strategy, fm.suite[fm.active].Name)
	}
	if fake.maxInFlight != 1 {
		t.Errorf("backend ran %d experiments at once, want 1", fake.maxInFlight)
	}
}

// TestFlowStaleResultsDropped turns knobs faster than the backend answers:
// only the latest strategy's result may land, one run at a time.
func TestFlowStaleResultsDropped(t *testing.T) {
	fake := newFake()
	fake.delay = 20 * time.Millisecond
	tm, obs := startLab(t, fake, 120, 40)
	obs.wait(t, tm, "the first measurement", idle)

	tm.Type("o") // comm-first
	tm.Type("c") // ctas=8
	tm.Type("c") // ctas=16
	tm.Type("o") // back to compute-first
	want := scenarios.Strategy{CommCTAs: 16}.Normalize()
	s := obs.wait(t, tm, "the latest result", func(s snapshot) bool { return idle(s) && s.resSt == want })
	if s.strategy != want {
		t.Errorf("model strategy %s, want %s", s.strategy, want)
	}
	// Give any stale result time to (wrongly) land, then check again.
	time.Sleep(150 * time.Millisecond)
	s = obs.wait(t, tm, "a quiet lab", idle)
	if s.resSt != want {
		t.Errorf("a stale result replaced the latest: %s", s.resSt)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	fake.mu.Lock()
	defer fake.mu.Unlock()
	if fake.maxInFlight != 1 {
		t.Errorf("backend ran %d experiments at once, want 1", fake.maxInFlight)
	}
}

// TestFlowMissingKnobs checks that keys for knobs the backend lacks say so
// and measure nothing.
func TestFlowMissingKnobs(t *testing.T) {
	fake := newFake()
	fake.caps = backends0Caps()
	tm, obs := startLab(t, fake, 80, 24)
	s := obs.wait(t, tm, "the first measurement", idle)
	seq := s.seq
	for _, tc := range []struct{ key, want string }{
		{"p", "cannot set stream priorities"},
		{"]", "cannot partition SMs"},
		{"c", "cannot cap the collective's CTAs"},
		{"d", "cannot run collectives on copy engines"},
		{"e", "cannot run collectives on copy engines"},
	} {
		tm.Type(tc.key)
		s = obs.wait(t, tm, "the refusal of "+tc.key, func(s snapshot) bool { return strings.Contains(s.status.text, tc.want) })
		if s.status.kind != statusWarn || s.seq != seq || !strings.Contains(s.screen, tc.want) {
			t.Errorf("%s: status %+v, seq %d (was %d)", tc.key, s.status, s.seq, seq)
		}
	}
	if !strings.Contains(s.screen, "prio n/a") {
		t.Errorf("help line does not mark missing knobs:\n%s", s.screen)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// TestFlowErrorShowsInStatus checks that a failed measurement is one line
// in the status bar.
func TestFlowErrorShowsInStatus(t *testing.T) {
	fake := newFake()
	tm, obs := startLab(t, fake, 80, 24)
	obs.wait(t, tm, "the first measurement", idle)
	// A reduce-scatter cannot go on copy engines without DMA reductions.
	tm.Type("jj")
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	obs.wait(t, tm, "the reduce-scatter result", func(s snapshot) bool { return idle(s) && s.resSc == "rs-gemm-long" })
	tm.Type("d")
	s := obs.wait(t, tm, "the refusal", func(s snapshot) bool { return strings.Contains(s.status.text, "needs a reduction") })
	if s.strategy.CommEngine == scenarios.EngineDMA {
		t.Errorf("dma turned on for a reduce-scatter without DMA reductions")
	}
	fake.mu.Lock()
	fake.fail = errors.New("device lost\nsecond line of detail")
	fake.mu.Unlock()
	tm.Type("r")
	s = obs.wait(t, tm, "the error", func(s snapshot) bool { return !s.running && s.status.kind == statusError })
	if strings.Contains(s.status.text, "\n") || !strings.Contains(s.screen, "error: ") || !strings.Contains(s.screen, "✗ failed") {
		t.Errorf("error status %q; screen:\n%s", s.status.text, s.screen)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
