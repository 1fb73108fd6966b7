package tui

import (
	"context"
	"fmt"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios/learn"
)

// learnFixture is the lessons' model on the simulated H200, with the
// built-in lessons, at w x h, saving progress into *saved.
func learnFixture(tb testing.TB, start, w, h int, saved *learn.Progress) LearnModel {
	tb.Helper()
	return learnFixtureOn(tb, sim.New(sim.DefaultProfile()), nil, start, w, h, saved)
}

// learnFixtureOn is learnFixture on the backend b with the advisor adv
// (nil: the rules alone).
func learnFixtureOn(tb testing.TB, b backends.Backend, adv Advisor, start, w, h int, saved *learn.Progress) LearnModel {
	tb.Helper()
	refs, err := learn.CommittedH200()
	if err != nil {
		tb.Fatal(err)
	}
	ls, err := learn.Builtin(b.Capabilities().Limits, refs)
	if err != nil {
		tb.Fatal(err)
	}
	save := func(p learn.Progress) error { *saved = p; return nil }
	m := newLearn(context.Background(), LearnConfig{Backend: b, Lessons: ls, Progress: learn.NewProgress(), Save: save, H200: refs, Start: start, Advisor: adv})
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return nm.(LearnModel)
}

// settle runs cmd and the commands it leads to, feeding the lessons'
// results, saves and advice back into m (as the program would); other
// messages (the cursor's blink) are dropped.
func settle(m LearnModel, cmd tea.Cmd) LearnModel {
	for queue := []tea.Cmd{cmd}; len(queue) > 0; {
		c := queue[0]
		queue = queue[1:]
		if c == nil {
			continue
		}
		switch msg := c().(type) {
		case tea.BatchMsg:
			queue = append(queue, msg...)
		case learnResultMsg, learnSavedMsg, adviceMsg:
			nm, next := m.Update(msg)
			m = nm.(LearnModel)
			queue = append(queue, next)
		}
	}
	return m
}

// learnKeys sends each key (a word: enter, esc, up, down; else its runes one
// by one) and settles what it starts.
func learnKeys(m LearnModel, ks ...string) LearnModel {
	for _, k := range ks {
		var msgs []tea.KeyPressMsg
		switch k {
		case "enter":
			msgs = append(msgs, tea.KeyPressMsg{Code: tea.KeyEnter})
		case "esc":
			msgs = append(msgs, tea.KeyPressMsg{Code: tea.KeyEscape})
		case "up":
			msgs = append(msgs, tea.KeyPressMsg{Code: tea.KeyUp})
		case "down":
			msgs = append(msgs, tea.KeyPressMsg{Code: tea.KeyDown})
		default:
			for _, r := range k {
				msgs = append(msgs, tea.KeyPressMsg{Code: r, Text: string(r)})
			}
		}
		for _, msg := range msgs {
			nm, cmd := m.Update(msg)
			m = settle(nm.(LearnModel), cmd)
		}
	}
	return m
}

// TestLearnFlow walks the lesson flow key by key: what each sequence
// leaves on screen, in the progress kept, and in which stage.
func TestLearnFlow(t *testing.T) {
	tests := []struct {
		name  string
		start int
		keys  []string
		stage learnStage
		cur   int
		// check looks at the model and the progress kept.
		check func(t *testing.T, m LearnModel, p learn.Progress)
	}{
		{"a prediction that is no number stays", 1, []string{"abc", "enter"}, stageAsk, 1, func(t *testing.T, m LearnModel, _ learn.Progress) {
			if !strings.Contains(m.inputErr, "not a number") {
				t.Errorf("input error %q", m.inputErr)
			}
		}},
		{"no prediction stays", 1, []string{"enter"}, stageAsk, 1, nil},
		{"the run waits for the knob", 1, []string{"40", "enter", "r"}, stageFlip, 1, func(t *testing.T, m LearnModel, _ learn.Progress) {
			if !strings.Contains(m.status, "flip the knob first") {
				t.Errorf("status %q", m.status)
			}
		}},
		{"flip and run answer the question", 1, []string{"40", "enter", "f", "r"}, stageAnswer, 1, func(t *testing.T, m LearnModel, p learn.Progress) {
			l := m.lessons[1]
			to, _ := l.To.Resolve(m.caps.Limits)
			r, err := profiler.Measure(context.Background(), m.backend, l.Scenario, to, labOptions(nil, nil, labTimeCap))
			if err != nil {
				t.Fatal(err)
			}
			want, _ := l.Figure.Of(r)
			rec := p.Of(l.ID)
			if rec.State != learn.StateDone || rec.Prediction == nil || *rec.Prediction != 40 || rec.Answer == nil || *rec.Answer != want {
				t.Errorf("kept %+v, want done with 40 against %v", rec, want)
			}
			if m.from == nil {
				t.Error("the from strategy was not measured")
			}
			screen := ansi.Strip(m.screen())
			if !strings.Contains(screen, "Answer: "+l.Figure.Format(want)) {
				t.Errorf("the answer %s is not on screen:\n%s", l.Figure.Format(want), screen)
			}
		}},
		{"a lesson without from runs once", 0, []string{"1.5", "enter", "f", "r"}, stageAnswer, 0, func(t *testing.T, m LearnModel, _ learn.Progress) {
			if m.from != nil || m.to == nil {
				t.Errorf("from %v to %v", m.from, m.to)
			}
		}},
		{"next opens the next lesson", 1, []string{"40", "enter", "f", "r", "n"}, stageAsk, 2, nil},
		{"replay asks again", 1, []string{"40", "enter", "f", "r", "p"}, stageAsk, 1, func(t *testing.T, m LearnModel, p learn.Progress) {
			if m.input.Value() != "" || m.flipped || m.to != nil {
				t.Errorf("replay kept state: %q %v %v", m.input.Value(), m.flipped, m.to)
			}
			if p.Of(m.lessons[1].ID).State != learn.StateDone {
				t.Error("replay forgot the lesson was done")
			}
		}},
		{"skip moves on", 1, []string{"40", "enter", "s"}, stageAsk, 2, func(t *testing.T, m LearnModel, p learn.Progress) {
			if p.Of(m.lessons[1].ID).State != learn.StateSkipped {
				t.Errorf("lesson 2 kept as %q", p.Of(m.lessons[1].ID).State)
			}
		}},
		{"esc goes to the list", 1, []string{"esc"}, stageList, 1, nil},
		{"the list opens the lesson under the cursor", -1, []string{"down", "down", "enter"}, stageAsk, 2, nil},
		{"the list skips and resets", -1, []string{"s", "esc", "up", "x"}, stageList, 0, func(t *testing.T, m LearnModel, p learn.Progress) {
			if p.Of(m.lessons[0].ID).State != learn.StateNew {
				t.Errorf("lesson 1 kept as %q after the reset", p.Of(m.lessons[0].ID).State)
			}
		}},
		{"the last lesson's next shows the list", 9, []string{"1.2", "enter", "f", "r", "n"}, stageList, 9, func(t *testing.T, m LearnModel, _ learn.Progress) {
			if !strings.Contains(m.status, "every lesson") {
				t.Errorf("status %q", m.status)
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var saved learn.Progress
			m := learnFixture(t, tc.start, 120, 40, &saved)
			m = learnKeys(m, tc.keys...)
			if m.stage != tc.stage || m.cur != tc.cur && tc.stage != stageList || tc.stage == stageList && m.cursor != tc.cur {
				t.Fatalf("stage %d lesson %d cursor %d, want stage %d lesson %d; status %q", m.stage, m.cur, m.cursor, tc.stage, tc.cur, m.status)
			}
			if tc.check != nil {
				tc.check(t, m, saved)
			}
		})
	}
}

// TestLearnGolden renders the lesson screens (the list, the question, the
// knob, the answer beside the H200 runs) at 80, 100 and 140 columns; every
// line fits the width.
func TestLearnGolden(t *testing.T) {
	stages := []struct {
		name  string
		start int
		keys  []string
	}{
		{"list", -1, []string{"down"}},
		{"ask", 1, []string{"4"}},
		{"flip", 1, []string{"40", "enter", "f"}},
		{"answer", 1, []string{"40", "enter", "f", "r"}},
		{"answer_ratio", 3, []string{"1.3", "enter", "f", "r"}},
	}
	for _, w := range []int{80, 100, 140} {
		for _, s := range stages {
			t.Run(fmt.Sprintf("%s_%d", s.name, w), func(t *testing.T) {
				var saved learn.Progress
				m := learnFixture(t, s.start, w, 36, &saved)
				m.styles = DefaultStyles(true)
				m = learnKeys(m, s.keys...)
				lines := m.screenLines()
				if len(lines) != 36 {
					t.Errorf("%d lines, want 36", len(lines))
				}
				golden.RequireEqual(t, plain(t, lines, w))
			})
		}
	}
}
