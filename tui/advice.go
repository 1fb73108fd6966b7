package tui

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Advisor advises on a scenario with a model, as `c3lab advise` does
// (heuristics.AdviseModel with the calibrated simulator and the committed
// measurements). The lab calls it in a command, off the UI loop, one
// scenario at a time, and keeps each answer; it should honour ctx. An
// advice without predictions is the rules' (the model ran no candidate),
// its first reason saying why.
type Advisor func(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error)

// adviceMsg delivers the advisor's answer on sc.
type adviceMsg struct {
	sc     scenarios.Scenario
	advice heuristics.Advice
	err    error
}

// adviceEntry is the advisor's answer on one definition of a scenario.
type adviceEntry struct {
	sc     scenarios.Scenario
	advice heuristics.Advice
	err    error
}

// advising is a screen's model advice (the lab's, the lessons'): the
// advisor, its answers per scenario name (each valid for the definition
// it was given), and the scenario being ranked, at most one at a time.
type advising struct {
	advisor Advisor
	ctx     context.Context
	stop    context.CancelFunc
	cache   map[string]adviceEntry
	// busy says a ranking of inFlight is running.
	busy     bool
	inFlight scenarios.Scenario
	// first is the ranking the lab starts with (Init runs it).
	first tea.Cmd
}

// end cancels the ranking in flight and any to come: the lab is ending.
func (a *advising) end() {
	if a.stop != nil {
		a.stop()
	}
}

// sameScenario reports whether a and b are the same definition.
func sameScenario(a, b scenarios.Scenario) bool { return reflect.DeepEqual(a, b) }

// lookup is the answer on sc's definition, if the advisor gave one.
func (a *advising) lookup(sc scenarios.Scenario) (adviceEntry, bool) {
	e, ok := a.cache[sc.Name]
	if !ok || !sameScenario(e.sc, sc) {
		return adviceEntry{}, false
	}
	return e, true
}

// view is what the why panel shows of the advice on sc.
func (a *advising) view(sc scenarios.Scenario) adviceView {
	if a.advisor == nil {
		return adviceView{}
	}
	e, ok := a.lookup(sc)
	switch {
	case !ok:
		// Not asked yet counts as ranking: it is next in line.
		return adviceView{state: adviceRanking}
	case e.err != nil:
		return adviceView{state: adviceFailed, err: e.err}
	}
	return adviceView{state: adviceReady, advice: e.advice}
}

// wanted are the scenarios whose advice the lab shows or applies: the
// active one (the advice key), then the result's (the why panel).
func (m *Model) wanted() []scenarios.Scenario {
	var out []scenarios.Scenario
	if m.backend != nil && m.active < len(m.suite) && m.play() == nil {
		out = append(out, m.suite[m.active])
	}
	if m.result != nil {
		out = append(out, m.result.Scenario)
	}
	return out
}

// adviseNext starts ranking the first wanted scenario the advisor has not
// answered on, unless a ranking is running (its answer starts the next),
// or the lab is measuring on real GPUs: the ranking runs the simulator on
// the CPU, which would compete with the measurement's launches, so it
// waits for the measurement's end (Update calls this again then).
func (m *Model) adviseNext() tea.Cmd {
	if m.adv.advisor == nil {
		return nil
	}
	return m.adv.next(m.wanted(), m.quitting || (m.running && !m.caps.Deterministic))
}

// newAdvising is the advice of advisor (nil: the rules alone), its
// rankings under a context of ctx that end cancels.
func newAdvising(ctx context.Context, advisor Advisor) advising {
	a := advising{advisor: advisor, cache: map[string]adviceEntry{}}
	a.ctx, a.stop = context.WithCancel(ctx)
	return a
}

// next starts ranking the first of wanted the advisor has not answered
// on, unless there is no advisor, a ranking is running (its answer starts
// the next) or hold says to wait (the screen is ending, or measuring on
// real GPUs, whose launches the simulator's CPU time would disturb).
func (a *advising) next(wanted []scenarios.Scenario, hold bool) tea.Cmd {
	if a.advisor == nil || a.busy || hold {
		return nil
	}
	for _, sc := range wanted {
		if _, ok := a.lookup(sc); ok {
			continue
		}
		a.busy, a.inFlight = true, sc
		return adviseCmd(a.ctx, a.advisor, sc)
	}
	return nil
}

// adviseCmd runs the advisor on sc in its own goroutine.
func adviseCmd(ctx context.Context, advisor Advisor, sc scenarios.Scenario) tea.Cmd {
	return func() tea.Msg {
		adv, err := advisor(ctx, sc)
		return adviceMsg{sc: sc, advice: adv, err: err}
	}
}

// onAdvice keeps an answer; Update then starts the next ranking.
func (m Model) onAdvice(msg adviceMsg) Model {
	m.adv.keep(msg)
	return m
}

// keep records the advisor's answer and that no ranking runs. An answer
// cut short because the screen is ending is not kept.
func (a *advising) keep(msg adviceMsg) {
	a.busy = false
	if msg.err != nil && errors.Is(msg.err, context.Canceled) && a.ctx != nil && a.ctx.Err() != nil {
		return
	}
	a.cache[msg.sc.Name] = adviceEntry{sc: msg.sc, advice: msg.advice, err: msg.err}
}

// modelAdvice is the model's advice on sc when it is ready and holds
// predictions, else the rules' with the reason the model's is not used.
func (m *Model) modelAdvice(sc scenarios.Scenario) (a heuristics.Advice, fromModel bool, why string) {
	v := m.adv.view(sc)
	switch v.state {
	case adviceReady:
		if len(v.advice.Predictions) > 0 {
			return v.advice, true, ""
		}
		why = "the model ranked no candidate"
	case adviceRanking:
		why = "the model is still ranking"
	case adviceFailed:
		why = "the model failed: " + errLine(v.err)
	}
	return heuristics.Advise(sc, m.caps), false, why
}

// adviceView is the advice the why panel shows on the result's scenario.
func (m *Model) adviceView() adviceView {
	if m.result == nil {
		return adviceView{}
	}
	return m.adv.view(m.result.Scenario)
}

// applyAdvice sets the strategy to the advice on the active scenario: the
// model's when it is ready, else the rules', the status line saying which
// and why.
func (m *Model) applyAdvice() {
	sc := m.suite[m.active]
	a, fromModel, why := m.modelAdvice(sc)
	m.strategy = a.Strategy
	if fromModel {
		p := a.Predictions[0]
		m.status = status{statusInfo, fmt.Sprintf("applied the model's advice: %s (%s, predicted U %s, T_c3 %s)",
			a.Strategy, a.Advised, report.Uplift(p.Uplift), report.Duration(p.TC3))}
		return
	}
	m.status = status{statusInfo, "applied the advice: " + a.Strategy.String()}
	if why != "" {
		m.status = status{statusWarn, "applied the rules' advice: " + a.Strategy.String() + " (" + why + ")"}
	}
}
