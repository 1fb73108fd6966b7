package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios/learn"
)

// sideBySideWidth is the narrowest screen that shows the learner's runs
// and the H200's beside each other; narrower ones stack them.
const sideBySideWidth = 100

// listLines draws the lesson list: each lesson's number, state, title and,
// once done, the prediction against the answer.
func (m LearnModel) listLines(w int) []string {
	st := m.styles
	out := []string{st.Title.Render("Lessons") + st.Dim.Render(" · enter opens one; done lessons can be replayed"), ""}
	for i, l := range m.lessons {
		r := m.prog.Of(l.ID)
		state := st.Dim.Render("·  new    ")
		switch r.State {
		case learn.StateDone:
			state = st.Good.Render("✓  done   ")
		case learn.StateSkipped:
			state = st.Warn.Render("»  skipped")
		}
		line := fmt.Sprintf("%2d  ", i+1) + state + "  " + l.Title
		if r.State == learn.StateDone && r.Prediction != nil && r.Answer != nil && r.Figure.Valid() {
			line += st.Dim.Render("  · you " + r.Figure.Format(*r.Prediction) + ", measured " + r.Figure.Format(*r.Answer))
		}
		line = fit(line, w)
		if i == m.cursor {
			line = st.Cursor.Render(ansiStrip(line))
		}
		out = append(out, line)
	}
	done, skipped := 0, 0
	for _, l := range m.lessons {
		switch m.prog.Of(l.ID).State {
		case learn.StateDone:
			done++
		case learn.StateSkipped:
			skipped++
		}
	}
	out = append(out, "", st.Dim.Render(fmt.Sprintf("%d done, %d skipped, %d to go", done, skipped, len(m.lessons)-done-skipped)))
	return out
}

// para wraps a lesson's text to w, keeping its blank lines between
// paragraphs.
func para(s string, w int) []string {
	var out []string
	for _, p := range strings.Split(s, "\n\n") {
		p = strings.Join(strings.Fields(p), " ")
		if p == "" {
			continue
		}
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, wrapWords(p, w)...)
	}
	return out
}

// lessonLines draws the lesson on screen, as far as the learner has got.
func (m LearnModel) lessonLines(w int) []string {
	st := m.styles
	l := m.lesson()
	tw := max(min(w, 100), 20)
	out := []string{st.Title.Render(l.Title), st.Label.Render("scenario ") + st.Value.Render(l.Scenario.Name), ""}
	out = append(out, para(l.Intro, tw)...)
	out = append(out, "")
	out = append(out, wrapWords(st.Value.Render("Question: ")+l.Question, tw)...)
	unit := ""
	if l.Figure.Percent() {
		unit = " %"
	}
	if m.stage == stageAsk {
		out = append(out, st.Label.Render("Your prediction ")+m.input.View()+unit)
		if m.inputErr != "" {
			out = append(out, st.Error.Render(m.inputErr))
		}
		return out
	}
	out = append(out, st.Label.Render("Your prediction ")+st.Value.Render(l.Figure.Format(m.prediction)), "")
	out = append(out, m.knobLines(tw)...)
	switch m.stage {
	case stageRunning:
		what := l.To.Label()
		if l.From != nil && m.from == nil {
			what = l.From.Label() + " (1 of 2)"
		} else if l.From != nil {
			what += " (2 of 2)"
		}
		out = append(out, "", st.Spinner.Render("⠿ ")+"measuring "+what+" on "+m.name+" …")
	case stageFailed:
		out = append(out, "", st.Error.Render("The run failed: ")+m.runErr)
		out = append(out, st.Dim.Render("r retries, s skips the lesson; c3lab learn --backend sim runs every lesson on the simulator"))
	case stageAnswer:
		out = append(out, "")
		out = append(out, m.answerLines(w, tw)...)
	}
	return out
}

// knobLines shows the knob: from what to what, and whether it is flipped.
func (m LearnModel) knobLines(w int) []string {
	st := m.styles
	l := m.lesson()
	from := "the ops one after the other (no overlap)"
	if l.From != nil {
		from = l.From.Label()
	}
	out := wrapWords(st.Value.Render("The knob: ")+l.Knob, w)
	mark, state := "[ ]", st.Dim.Render("not flipped: press f")
	if m.flipped {
		mark, state = "[x]", st.Good.Render("flipped")
		if m.stage == stageFlip {
			state += st.Dim.Render(": press r to run")
		}
	}
	out = append(out, "  "+mark+" "+st.Label.Render(from)+" → "+st.Value.Render(l.To.Label())+"  "+state)
	return out
}

// answerLines shows the answer against the prediction, the learner's
// runs beside the H200's, the lesson's explanation and the why panel of
// the run with the model's advice (else the rules').
func (m LearnModel) answerLines(w, tw int) []string {
	st := m.styles
	l := m.lesson()
	answer, _ := l.Figure.Of(*m.to)
	verdict := st.Bad.Render("✗ ")
	if l.Figure.Close(m.prediction, answer) {
		verdict = st.Good.Render("✓ ")
	}
	out := []string{verdict + st.Value.Render("Answer: "+l.Figure.Format(answer)) + " measured · " +
		st.Dim.Render("you predicted "+l.Figure.Format(m.prediction)+", "+l.Figure.Miss(m.prediction, answer))}
	out = append(out, st.Dim.Render("("+l.Figure.Name()+", under "+l.To.Label()+")"), "")
	out = append(out, m.compareLines(w)...)
	out = append(out, "", st.Title.Render("Why"))
	out = append(out, para(l.Explain, tw)...)
	out = append(out, "", st.Title.Render(whyTitle()))
	out = append(out, whyLinesAdvised(st, m.to, tw, m.name, m.caps, m.adviceView())...)
	return out
}

// firstFitting is the first of lines that fits w cells, else the last
// cut to w: the longest form of a line the room allows.
func firstFitting(w int, lines ...string) string {
	for _, l := range lines {
		if ansiWidth(l) <= w {
			return l
		}
	}
	return fit(lines[len(lines)-1], w)
}

// runLine is one strategy's run in a comparison box, as much of it as
// fits w.
func runLine(st Styles, name string, r *profiler.Result, w int) string {
	f := "—"
	if r.FractionOfIdeal != nil {
		f = fmt.Sprintf("%.1f %%", *r.FractionOfIdeal*100)
	}
	head := st.Label.Render(fit(name, 16)) + " U " + st.Value.Render(fmt.Sprintf("%.2fx", r.Uplift)) + "  F " + f
	return firstFitting(w, head+"  T_c3 "+report.Duration(r.TC3.Median), head)
}

// compareLines draws the learner's runs and the committed H200 runs side
// by side (stacked on a narrow screen).
func (m LearnModel) compareLines(w int) []string {
	st := m.styles
	l := m.lesson()
	half := w
	if w >= sideBySideWidth {
		half = (w - 1) / 2
	}
	inner := half - 2
	var here []string
	if m.from != nil {
		here = append(here, runLine(st, l.From.Label(), m.from, inner))
	}
	here = append(here, runLine(st, l.To.Label(), m.to, inner))
	for _, l := range wrapWords("T_serial "+report.Duration(m.to.TSerial)+" · T_ideal "+report.Duration(m.to.TIdeal)+fmt.Sprintf(" · S_ideal %.2fx", m.to.IdealSpeedup), inner) {
		here = append(here, st.Dim.Render(l))
	}
	var there, sources []string
	for _, name := range l.H200.Strategies {
		x, ok := m.h200.Run(l.H200.Scenario, name, l.H200.Source)
		if !ok {
			there = append(there, st.Dim.Render(fit(name+": not in this build's committed runs", inner)))
			continue
		}
		head := st.Label.Render(fit(name, 16)) + " U " + st.Value.Render(fmt.Sprintf("%.2fx", x.Result.Uplift))
		ci := ""
		if iv := x.Result.CI; iv != nil && !math.IsNaN(iv.U.Lo) && !math.IsNaN(iv.U.Hi) {
			ci = st.Dim.Render(fmt.Sprintf(" [%.2f, %.2f]", iv.U.Lo, iv.U.Hi))
		}
		tc3 := "  T_c3 " + report.Duration(x.Result.TC3.Median)
		there = append(there, firstFitting(inner, head+ci+tc3, head+tc3, head))
		if !slices.Contains(sources, x.Source) {
			sources = append(sources, x.Source)
		}
	}
	if l.H200.Scenario != l.Scenario.Name {
		there = append(there, st.Dim.Render(fit("scenario "+l.H200.Scenario, inner)))
	}
	for _, src := range sources {
		there = append(there, st.Dim.Render(fit(strings.TrimPrefix(src, "backends/cuda/results/"), inner)))
	}
	h := max(len(here), len(there)) + 2
	left := box(st, "Here · "+m.name, here, half, h)
	right := box(st, "H200 · recorded", there, half, h)
	if w < sideBySideWidth {
		return append(left, right...)
	}
	out := make([]string, h)
	for i := range h {
		out[i] = left[i] + " " + right[i]
	}
	return out
}

// ansiStrip drops styling, so a cursor row can be drawn in one style.
func ansiStrip(s string) string { return ansi.Strip(s) }
