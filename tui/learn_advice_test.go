package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/learn"
)

// simModelAdvice is what c3lab learn's advisor gives on sc: AdviseModel
// with the simulator on the built-in H200 profile as the model, quoting
// the committed H200 measurements.
func simModelAdvice(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
	b := sim.New(sim.DefaultProfile())
	caps := b.Capabilities()
	measured, err := heuristics.CommittedMeasurements(caps.Limits.Device)
	if err != nil {
		return heuristics.Advice{}, err
	}
	return heuristics.AdviseModel(ctx, heuristics.BackendModel{Backend: b, Label: "the built-in h200 profile"}, sc, caps, heuristics.AdviseOptions{Measured: measured})
}

// variedBackend is a backend whose runs vary, as real GPUs' do.
type variedBackend struct{ backends.Backend }

func (b variedBackend) Capabilities() backends.Capabilities {
	c := b.Backend.Capabilities()
	c.Deterministic = false
	return c
}

// learnText is the lesson's whole text on screen, unstyled.
func learnText(m LearnModel) string {
	return ansi.Strip(strings.Join(m.lessonLines(m.width), "\n"))
}

// feedLearn gives m msg.
func feedLearn(m LearnModel, msg tea.Msg) (LearnModel, tea.Cmd) {
	nm, cmd := m.Update(msg)
	return nm.(LearnModel), cmd
}

// TestLearnAdviceArrives: the lesson opened first is ranked from Init,
// never in Update or New; the answer's why panel says "ranking…" until
// the answer comes, then shows the model's advice with its predicted
// figures and no key to apply it; the answer starts no second ranking,
// and the next lesson's scenario is ranked when it opens.
func TestLearnAdviceArrives(t *testing.T) {
	ta := &testAdvisor{model: simModelAdvice}
	var saved learn.Progress
	m := learnFixtureOn(t, sim.New(sim.DefaultProfile()), ta.advise, 1, 120, 40, &saved)
	sc := m.lesson().Scenario
	if m.advFirst == nil || !m.adv.busy || m.adv.inFlight.Name != sc.Name {
		t.Fatalf("the lesson does not start ranking %s (busy %v, in flight %q)", sc.Name, m.adv.busy, m.adv.inFlight.Name)
	}
	m = learnKeys(m, "40", "enter", "f", "r")
	if m.stage != stageAnswer {
		t.Fatalf("stage %d, want the answer; status %q", m.stage, m.status)
	}
	if ta.count(sc.Name) != 0 {
		t.Fatalf("the advisor ran before its command did (in Update or New)")
	}
	if text := learnText(m); !strings.Contains(text, "advice   ranking… (predicting every sensible strategy)") {
		t.Errorf("the why panel does not say the model is ranking:\n%s", text)
	}
	msgs := adviceMsgs(m.Init())
	if len(msgs) != 1 || msgs[0].sc.Name != sc.Name {
		t.Fatalf("Init sent %d advice messages (%v), want one on %s", len(msgs), msgs, sc.Name)
	}
	m, cmd := feedLearn(m, msgs[0])
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("the answer started another ranking, of %s", got[0].sc.Name)
	}
	want, err := simModelAdvice(context.Background(), sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Predictions) == 0 {
		t.Fatalf("the model predicts nothing on %s: %v", sc.Name, want.Reasons)
	}
	head := "advice   " + want.Strategy.String()
	if want.Advised != want.Strategy.String() {
		head += " (" + want.Advised + ")"
	}
	if want.Strategy.Normalize() == m.to.Strategy.Normalize() {
		head += " (in force)"
	} else {
		head += " (not the strategy run here)"
	}
	text := learnText(m)
	// The predicted line's later parts, the runner-up's lead and then the
	// model, are left off where the panel has no room: the model's name
	// is there unless the lead took its place.
	credit := "by the built-in h200 profile"
	if len(want.Predictions) > 1 {
		if lead := runnerUpLead(want.Predictions[0], want.Predictions[1]); lead != "" && !strings.Contains(text, credit) {
			credit = lead
		}
	}
	for _, s := range []string{
		head,
		"predicted U " + report.Uplift(want.Predictions[0].Uplift),
		"T_c3 " + report.Duration(want.Predictions[0].TC3),
		credit,
	} {
		if !strings.Contains(text, s) {
			t.Errorf("the why panel lacks %q:\n%s", s, text)
		}
	}
	for _, s := range []string{"ranking", "rules of thumb:", "(a applies it)"} {
		if strings.Contains(text, s) {
			t.Errorf("the why panel says %q:\n%s", s, text)
		}
	}
	// The next lesson's scenario is ranked when it opens; its answer is
	// kept beside the first's.
	m, cmd = feedLearn(m, tea.KeyPressMsg{Code: 'n', Text: "n"})
	next := adviceMsgs(cmd)
	if m.cur != 2 || len(next) != 1 || next[0].sc.Name != m.lessons[2].Scenario.Name {
		t.Fatalf("opening lesson 3 ranked %v", next)
	}
	m, _ = feedLearn(m, next[0])
	// Replaying the first lesson ranks nothing again.
	m.stage, m.cursor = stageList, 1
	m, cmd = feedLearn(m, tea.KeyPressMsg{Code: tea.KeyEnter})
	if got := adviceMsgs(cmd); m.cur != 1 || len(got) != 0 {
		t.Errorf("replaying lesson 2 (now %d) ranked %v again", m.cur+1, got)
	}
	if n := ta.count(sc.Name); n != 1 {
		t.Errorf("%s was ranked %d times, want once", sc.Name, n)
	}
}

// TestLearnAdviceFallsBack: when the model fails, or ranks no candidate,
// the answer's why panel shows the rules' advice with a line saying why,
// and no predicted figures.
func TestLearnAdviceFallsBack(t *testing.T) {
	b := sim.New(sim.DefaultProfile())
	tests := []struct {
		name string
		adv  func(sc scenarios.Scenario) Advisor
		why  string
	}{
		{"the model fails", func(sc scenarios.Scenario) Advisor {
			ta := &testAdvisor{fail: map[string]error{sc.Name: errors.New("reading profile h300.yaml: no such file")}}
			return ta.advise
		}, "rules of thumb: the model failed: reading profile h300.yaml: no such file"},
		{"the model ranks nothing", func(scenarios.Scenario) Advisor {
			return func(_ context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
				a := heuristics.Advise(sc, b.Capabilities())
				a.Reasons = append([]string{"the model predicts none of the candidates"}, a.Reasons...)
				return a, nil
			}
		}, "rules of thumb: the model predicts none of the candidates"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var saved learn.Progress
			probe := learnFixture(t, 1, 120, 40, &saved)
			sc := probe.lesson().Scenario
			m := learnFixtureOn(t, b, tc.adv(sc), 1, 120, 40, &saved)
			m = learnKeys(m, "40", "enter", "f", "r")
			msgs := adviceMsgs(m.advFirst)
			if len(msgs) != 1 {
				t.Fatalf("%d advice messages, want 1", len(msgs))
			}
			m, _ = feedLearn(m, msgs[0])
			rules := heuristics.Advise(sc, m.caps)
			text := learnText(m)
			for _, s := range []string{"advice   " + rules.Strategy.String(), tc.why} {
				if !strings.Contains(text, s) {
					t.Errorf("the why panel lacks %q:\n%s", s, text)
				}
			}
			if strings.Contains(text, "predicted U") || strings.Contains(text, "ranking") {
				t.Errorf("the why panel shows predictions or ranking after the fallback:\n%s", text)
			}
		})
	}
}

// TestLearnAdviceWaitsForGPUMeasurement: on a backend whose runs vary
// (real GPUs) the lesson's scenario is not ranked while its runs are
// measured (the simulator's CPU time would disturb their launches), but
// once the answer is in; on a deterministic backend it is ranked at once.
func TestLearnAdviceWaitsForGPUMeasurement(t *testing.T) {
	for _, deterministic := range []bool{false, true} {
		t.Run(fmt.Sprintf("deterministic_%v", deterministic), func(t *testing.T) {
			var b backends.Backend = sim.New(sim.DefaultProfile())
			if !deterministic {
				b = variedBackend{b}
			}
			ta := &testAdvisor{model: simModelAdvice}
			var saved learn.Progress
			m := learnFixtureOn(t, b, ta.advise, 1, 120, 40, &saved)
			// As if the first ranking had not started: the knob is
			// flipped and the run is to start.
			m.adv.busy, m.advFirst = false, nil
			m.stage, m.flipped, m.prediction = stageFlip, true, 40
			m, cmd := feedLearn(m, tea.KeyPressMsg{Code: 'r', Text: "r"})
			ranked := 0
			for m.stage == stageRunning {
				var res []learnResultMsg
				for _, msg := range msgsOf(cmd) {
					switch x := msg.(type) {
					case learnResultMsg:
						res = append(res, x)
					case adviceMsg:
						ranked++
					}
				}
				if !deterministic && ranked > 0 {
					t.Fatalf("the lesson's scenario was ranked during its measurement")
				}
				if len(res) != 1 {
					t.Fatalf("%d results of a run, want 1", len(res))
				}
				m, cmd = feedLearn(m, res[0])
			}
			if m.stage != stageAnswer {
				t.Fatalf("stage %d, want the answer: %s", m.stage, m.runErr)
			}
			ranked += len(adviceMsgs(cmd))
			if ranked != 1 {
				t.Errorf("the scenario was ranked %d times by the answer, want once", ranked)
			}
		})
	}
}

// TestLearnAdviceNotKeptWhenQuit: quitting cancels the ranking in flight;
// its answer is dropped and nothing new starts.
func TestLearnAdviceNotKeptWhenQuit(t *testing.T) {
	var saved learn.Progress
	m := learnFixtureOn(t, sim.New(sim.DefaultProfile()), func(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
		<-ctx.Done()
		return heuristics.Advice{}, ctx.Err()
	}, 1, 120, 40, &saved)
	first := m.advFirst
	m = learnKeys(m, "40", "enter", "q")
	if !m.quitting {
		t.Fatal("q did not quit")
	}
	msgs := adviceMsgs(first)
	if len(msgs) != 1 {
		t.Fatalf("the cancelled ranking sent %d messages", len(msgs))
	}
	m, cmd := feedLearn(m, msgs[0])
	if _, ok := m.adv.lookup(m.lesson().Scenario); ok {
		t.Errorf("a cancelled answer was kept")
	}
	if got := adviceMsgs(cmd); len(got) != 0 {
		t.Errorf("a ranking started after quitting")
	}
}

// TestLearnAdviceGolden renders the end of the answer screen, where the
// why panel advises, with the model's advice, while it ranks and after
// it failed, at 80, 100 and 140 columns, for a lesson whose advice is
// another strategy than the one it runs; `go test ./tui -update`
// regenerates the files.
func TestLearnAdviceGolden(t *testing.T) {
	states := []struct {
		name string
		adv  Advisor
		// feed gives the model's answer before the screen is drawn.
		feed bool
	}{
		{"model", simModelAdvice, true},
		{"ranking", simModelAdvice, false},
		{"failed", func(context.Context, scenarios.Scenario) (heuristics.Advice, error) {
			return heuristics.Advice{}, errors.New("reading profile h300.yaml: no such file")
		}, true},
	}
	for _, w := range []int{80, 100, 140} {
		for _, s := range states {
			t.Run(fmt.Sprintf("%s_%d", s.name, w), func(t *testing.T) {
				var saved learn.Progress
				m := learnFixtureOn(t, sim.New(sim.DefaultProfile()), s.adv, 1, w, 36, &saved)
				m.styles = DefaultStyles(true)
				first := m.advFirst
				m = learnKeys(m, "40", "enter", "f", "r")
				if s.feed {
					for _, msg := range adviceMsgs(first) {
						m, _ = feedLearn(m, msg)
					}
				}
				// The end of the answer: the why panel and its advice.
				m.scroll = 1 << 20
				lines := m.screenLines()
				if len(lines) != 36 {
					t.Errorf("%d lines, want 36", len(lines))
				}
				golden.RequireEqual(t, plain(t, lines, w))
			})
		}
	}
}
