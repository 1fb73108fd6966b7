package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// testAdvisor ranks with heuristics.AdviseModel on the fake backend (the
// model the tests stand in for the simulator), or with model when set,
// counting its calls per scenario; a scenario named in fail gets that
// error instead.
type testAdvisor struct {
	mu    sync.Mutex
	calls []string
	fail  map[string]error
	model Advisor
}

func (a *testAdvisor) advise(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
	a.mu.Lock()
	a.calls = append(a.calls, sc.Name)
	err := a.fail[sc.Name]
	a.mu.Unlock()
	if err != nil {
		return heuristics.Advice{}, err
	}
	if a.model != nil {
		return a.model(ctx, sc)
	}
	return fakeModelAdvice(ctx, sc)
}

// count is how many times sc was ranked.
func (a *testAdvisor) count(name string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, c := range a.calls {
		if c == name {
			n++
		}
	}
	return n
}

// fakeModelAdvice is AdviseModel's advice on sc with the fake backend as
// the model.
func fakeModelAdvice(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
	return heuristics.AdviseModel(ctx, heuristics.BackendModel{Backend: newFake(), Label: "the fake model"}, sc, h200Caps(), heuristics.AdviseOptions{})
}

// msgsOf runs cmd and every command of its batches, each in its own
// goroutine, and returns the messages those done within ten seconds sent
// (a spinner tick takes a moment; a recording's tick never comes).
func msgsOf(cmd tea.Cmd) []tea.Msg { return msgsWithin(cmd, 10*time.Second) }

// msgsWithin is msgsOf with wait as each command's limit.
func msgsWithin(cmd tea.Cmd, wait time.Duration) []tea.Msg {
	if cmd == nil {
		return nil
	}
	done := make(chan tea.Msg, 1)
	go func() { done <- cmd() }()
	var msg tea.Msg
	select {
	case msg = <-done:
	case <-time.After(wait):
		return nil
	}
	batch, ok := msg.(tea.BatchMsg)
	if !ok {
		return []tea.Msg{msg}
	}
	var out []tea.Msg
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, c := range batch {
		wg.Go(func() {
			got := msgsWithin(c, wait)
			mu.Lock()
			out = append(out, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// adviceMsgs are the advice answers among cmd's messages.
func adviceMsgs(cmd tea.Cmd) []adviceMsg {
	var out []adviceMsg
	for _, msg := range msgsOf(cmd) {
		if a, ok := msg.(adviceMsg); ok {
			out = append(out, a)
		}
	}
	return out
}

// advisedLab is a lab on the fake backend with adv as its advisor,
// showing a result of its first scenario under the baseline, 160x60.
func advisedLab(t *testing.T, adv Advisor) Model {
	t.Helper()
	suite := testSuite()
	m := New(Config{Backend: newFake(), Suite: suite, Advisor: adv})
	m.cancel()
	m.running = false
	m.setResult(fixtureResult(suite[0], scenarios.Strategy{}))
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 60})
	return nm.(Model)
}

// update feeds msg to m.
func update(m Model, msg tea.Msg) (Model, tea.Cmd) {
	nm, cmd := m.Update(msg)
	return nm.(Model), cmd
}

// whyText is the why panel's text.
func whyText(m Model) string {
	return ansi.Strip(strings.Join(whyLinesAdvised(m.styles, m.result, 156, m.name, m.caps, m.adviceView()), "\n"))
}

// TestAdviceArrivesAndIsCached: the lab starts ranking its scenario at
// once; the why panel says "ranking…" until the answer comes, then shows
// the model's advice (strategy, predicted U and T_c3), and the next
// messages do not rank it again.
func TestAdviceArrivesAndIsCached(t *testing.T) {
	ta := &testAdvisor{}
	m := advisedLab(t, ta.advise)
	sc := m.suite[0]
	if m.adv.first == nil || !m.adv.busy || m.adv.inFlight.Name != sc.Name {
		t.Fatalf("the lab does not start ranking %s (busy %v, in flight %q)", sc.Name, m.adv.busy, m.adv.inFlight.Name)
	}
	if why := whyText(m); !strings.Contains(why, "ranking…") {
		t.Errorf("the why panel does not say it is ranking:\n%s", why)
	}
	if ta.count(sc.Name) != 0 {
		t.Fatalf("the advisor ran before its command did (in Update or New)")
	}
	msgs := adviceMsgs(m.adv.first)
	if len(msgs) != 1 {
		t.Fatalf("the first command sent %d advice messages, want 1", len(msgs))
	}
	m, cmd := update(m, msgs[0])
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("the answer started another ranking of %s", got[0].sc.Name)
	}
	want, err := fakeModelAdvice(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	why := whyText(m)
	head := "advice   " + want.Strategy.String()
	if want.Advised != want.Strategy.String() {
		head += " (" + want.Advised + ")"
	}
	for _, s := range []string{
		head + " (a applies it)",
		"predicted U " + report.Uplift(want.Predictions[0].Uplift),
		"T_c3 " + report.Duration(want.Predictions[0].TC3),
		"by the fake model",
	} {
		if !strings.Contains(why, s) {
			t.Errorf("the why panel lacks %q:\n%s", s, why)
		}
	}
	if strings.Contains(why, "ranking") || strings.Contains(why, "rules of thumb:") {
		t.Errorf("the why panel still says it ranks or falls back:\n%s", why)
	}
	for range 3 {
		var cmd tea.Cmd
		m, cmd = update(m, poke{})
		if cmd != nil {
			t.Errorf("a message with the advice cached returned a command")
		}
	}
	if n := ta.count(sc.Name); n != 1 {
		t.Errorf("%s was ranked %d times, want once", sc.Name, n)
	}
}

// TestAdviceOneAtATimeOnSwitch: picking another scenario while the first
// is ranked starts nothing; the first answer starts the new one's, and
// going back to the first ranks nothing again.
func TestAdviceOneAtATimeOnSwitch(t *testing.T) {
	ta := &testAdvisor{}
	m := advisedLab(t, ta.advise)
	first := m.adv.first
	m = press(m, "j")
	m, cmd := update(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if m.active != 1 {
		t.Fatalf("enter did not pick the second scenario (active %d)", m.active)
	}
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Fatalf("a second ranking (%s) started while the first ran", got[0].sc.Name)
	}
	msgs := adviceMsgs(first)
	if len(msgs) != 1 || msgs[0].sc.Name != m.suite[0].Name {
		t.Fatalf("the first ranking answered %v", msgs)
	}
	m, cmd = update(m, msgs[0])
	next := adviceMsgs(cmd)
	if len(next) != 1 || next[0].sc.Name != m.suite[1].Name {
		t.Fatalf("the first answer did not start the picked scenario's ranking: %v", next)
	}
	if !m.adv.busy {
		t.Errorf("the lab does not know a ranking is running")
	}
	m, cmd = update(m, next[0])
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("with both answers in, another ranking started: %s", got[0].sc.Name)
	}
	// Back to the first scenario: its advice is kept.
	m.list.cursor = 0
	m, cmd = update(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("going back ranked %s again", got[0].sc.Name)
	}
	for i, name := range []string{m.suite[0].Name, m.suite[1].Name} {
		if n := ta.count(name); n != 1 {
			t.Errorf("scenario %d (%s) was ranked %d times, want once", i, name, n)
		}
	}
}

// TestAdviceEditedScenarioAdvisedAfresh: a scenario composed again under
// the same name with another definition is ranked again; the old answer
// does not stand for it.
func TestAdviceEditedScenarioAdvisedAfresh(t *testing.T) {
	ta := &testAdvisor{}
	m := advisedLab(t, ta.advise)
	m, _ = update(m, adviceMsgs(m.adv.first)[0])
	// What the composer's add does to the suite: the same name, the
	// edited definition, made active.
	edited := m.suite[0]
	edited.Comm.Bytes *= 2
	m.suite[0] = edited
	if _, ok := m.adv.lookup(edited); ok {
		t.Fatalf("the answer on the old definition stands for the edited one")
	}
	m, cmd := update(m, poke{})
	got := adviceMsgs(cmd)
	if len(got) != 1 || got[0].sc.Comm.Bytes != edited.Comm.Bytes {
		t.Fatalf("the edited scenario was not ranked afresh: %v", got)
	}
	m, _ = update(m, got[0])
	if _, ok := m.adv.lookup(edited); !ok {
		t.Errorf("the edited scenario's answer is not kept")
	}
	if n := ta.count(edited.Name); n != 2 {
		t.Errorf("%s was ranked %d times, want twice (before and after the edit)", edited.Name, n)
	}
}

// TestAdviceErrorFallsBackOnRules: when the model fails, the why panel
// shows the rules' advice with a line saying why, and the advice key
// applies the rules' with a warning.
func TestAdviceErrorFallsBackOnRules(t *testing.T) {
	ta := &testAdvisor{fail: map[string]error{"ag-gemm-balanced": errors.New("profile h300 not found")}}
	m := advisedLab(t, ta.advise)
	m, _ = update(m, adviceMsgs(m.adv.first)[0])
	rules := heuristics.Advise(m.suite[0], m.caps)
	why := whyText(m)
	for _, s := range []string{"advice   " + rules.Strategy.String(), "rules of thumb: the model failed: profile h300 not found"} {
		if !strings.Contains(why, s) {
			t.Errorf("the why panel lacks %q:\n%s", s, why)
		}
	}
	if strings.Contains(why, "predicted U") {
		t.Errorf("the why panel shows predictions after a failure:\n%s", why)
	}
	m = press(m, "a")
	if m.strategy != rules.Strategy {
		t.Errorf("a applied %s, want the rules' %s", m.strategy, rules.Strategy)
	}
	if m.status.kind != statusWarn || !strings.Contains(m.status.text, "rules' advice") || !strings.Contains(m.status.text, "model failed") {
		t.Errorf("status %q (kind %d) does not say the rules' advice was applied and why", m.status.text, m.status.kind)
	}
}

// TestAdviceKeyAppliesModelAdvice: before the answer the advice key
// applies the rules' and says the model is still ranking; after it, the
// model's, with its predicted figures in the status line.
func TestAdviceKeyAppliesModelAdvice(t *testing.T) {
	ta := &testAdvisor{}
	m := advisedLab(t, ta.advise)
	sc := m.suite[0]
	early := press(m, "a")
	rules := heuristics.Advise(sc, m.caps)
	if early.strategy != rules.Strategy || !strings.Contains(early.status.text, "still ranking") {
		t.Errorf("before the answer a applied %s with %q; want the rules' %s, saying the model still ranks", early.strategy, early.status.text, rules.Strategy)
	}
	m, _ = update(m, adviceMsgs(m.adv.first)[0])
	want, err := fakeModelAdvice(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if want.Strategy.Normalize() == rules.Strategy.Normalize() {
		t.Logf("the model and the rules agree on %s here", want.Strategy)
	}
	m = press(m, "a")
	if m.strategy != want.Strategy {
		t.Errorf("a applied %s, want the model's %s", m.strategy, want.Strategy)
	}
	wantStatus := fmt.Sprintf("applied the model's advice: %s (%s, predicted U %s", want.Strategy, want.Advised, report.Uplift(want.Predictions[0].Uplift))
	if !strings.HasPrefix(m.status.text, wantStatus) || m.status.kind != statusInfo {
		t.Errorf("status %q, want it to start %q", m.status.text, wantStatus)
	}
}

// TestAdviceNotKeptWhenCancelled: an answer cut short because the lab
// ends is dropped, and nothing new starts after quitting.
func TestAdviceNotKeptWhenCancelled(t *testing.T) {
	m := advisedLab(t, func(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
		<-ctx.Done()
		return heuristics.Advice{}, ctx.Err()
	})
	first := m.adv.first
	m = press(m, "q")
	if !m.quitting {
		t.Fatal("q did not quit")
	}
	msgs := adviceMsgs(first)
	if len(msgs) != 1 {
		t.Fatalf("the cancelled ranking sent %d messages", len(msgs))
	}
	m, cmd := update(m, msgs[0])
	if _, ok := m.adv.lookup(m.suite[0]); ok {
		t.Errorf("a cancelled answer was kept")
	}
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("a ranking started after quitting")
	}
}

// TestAdviceNoAdvisorKeepsRules: without an advisor the lab ranks
// nothing and the why panel shows the rules' advice as before, with no
// line about a model.
func TestAdviceNoAdvisorKeepsRules(t *testing.T) {
	m := advisedLab(t, nil)
	if m.adv.first != nil || m.adv.busy {
		t.Fatalf("a lab without an advisor started ranking")
	}
	why := whyText(m)
	if !strings.Contains(why, "advice   "+heuristics.Advise(m.suite[0], m.caps).Strategy.String()) || strings.Contains(why, "rules of thumb:") || strings.Contains(why, "ranking") {
		t.Errorf("the why panel without a model:\n%s", why)
	}
}

// TestWhyAdviceGolden renders the why panel of the first fixture with
// the model's advice, while it ranks, after it failed and when the model
// ran no candidate, at several widths; `go test ./tui -update`
// regenerates the files.
func TestWhyAdviceGolden(t *testing.T) {
	st := DefaultStyles(true)
	suite := testSuite()
	base := fixtureResult(suite[0], scenarios.Strategy{})
	ready, err := fakeModelAdvice(context.Background(), suite[0])
	if err != nil {
		t.Fatal(err)
	}
	none := heuristics.Advise(suite[0], h200Caps())
	none.Reasons = append([]string{"the fake model predicts none of the 9 candidates; these are the rules of thumb alone"}, none.Reasons...)
	views := []struct {
		name string
		v    adviceView
	}{
		{"model", adviceView{state: adviceReady, advice: ready}},
		{"ranking", adviceView{state: adviceRanking}},
		{"failed", adviceView{state: adviceFailed, err: errors.New("reading profile h300.yaml: no such file")}},
		{"no_prediction", adviceView{state: adviceReady, advice: none}},
	}
	for _, w := range []int{60, 80, 120, 160} {
		for _, v := range views {
			t.Run(fmt.Sprintf("%s_%d", v.name, w), func(t *testing.T) {
				lines := whyLinesAdvised(st, &base, w-2, "fake", h200Caps(), v.v)
				golden.RequireEqual(t, plain(t, box(st, whyTitle(), lines, w, len(lines)+2), w))
			})
		}
	}
}

// TestAdviceWaitsForGPUMeasurement: on a backend whose runs vary (real
// GPUs), the lab does not rank (the simulator, on the CPU) while a
// measurement runs, so as not to compete with its launches; it ranks once
// the measurement is over. On a deterministic backend it ranks at once.
func TestAdviceWaitsForGPUMeasurement(t *testing.T) {
	for _, deterministic := range []bool{false, true} {
		ta := &testAdvisor{}
		f := newFake()
		f.caps.Deterministic = deterministic
		suite := testSuite()
		m := New(Config{Backend: f, Suite: suite, Advisor: ta.advise})
		m.cancel()
		m.adv.busy, m.adv.first = false, nil // as if the first ranking had not started
		m.running = true
		if cmd := m.adviseNext(); (cmd != nil) != deterministic {
			t.Errorf("deterministic %v: a ranking starts during the measurement: %v", deterministic, cmd != nil)
		}
		m.adv.busy = false
		m.running = false
		if cmd := m.adviseNext(); cmd == nil {
			t.Errorf("deterministic %v: no ranking once the measurement is over", deterministic)
		}
	}
}
