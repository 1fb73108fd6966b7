package learn

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// Lesson is one guided lesson, as a lesson file describes it.
type Lesson struct {
	// ID names the lesson in the progress file: the file's base name
	// without its extension ("02-starvation").
	ID string
	// Title is the lesson's heading.
	Title string
	// Scenario is what runs: a built-in scenario or one written inline.
	Scenario scenarios.Scenario
	// Intro teaches what the learner needs before the question.
	Intro string
	// Question asks for a number; Figure says which figure of the run
	// answers it.
	Question string
	Figure   Figure
	// From is the strategy the lesson starts on (nil: the ops one after
	// another, no overlap, so flipping the knob turns C3 on); To is the
	// strategy the knob flips to, whose run answers the question.
	From *StrategySpec
	To   StrategySpec
	// Knob says in words what flipping it does.
	Knob string
	// Explain is read after the answer: why the figure came out so.
	Explain string
	// H200 names the committed H200 runs shown beside the learner's.
	H200 Reference
}

// StrategySpec is a strategy as a lesson names it: a named strategy of
// the sweep grids ("comm-first+prio", resolved on the device's limits) or
// knobs written out.
type StrategySpec struct {
	// Name is the grid's name, empty for knobs written out.
	Name string
	// Knobs is the strategy written out (Name empty).
	Knobs scenarios.Strategy
}

// Resolve is the strategy on a device of limits lim.
func (s StrategySpec) Resolve(lim scenarios.Limits) (scenarios.Strategy, error) {
	if s.Name == "" {
		return s.Knobs, nil
	}
	g, err := profiler.ParseGrid([]string{s.Name}, lim)
	if err != nil {
		return scenarios.Strategy{}, fmt.Errorf("lesson strategy %q: %w", s.Name, err)
	}
	return g[0].Strategy, nil
}

// Label names the strategy on screen.
func (s StrategySpec) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Knobs.String()
}

// Reference names committed H200 runs: a scenario (as the committed index
// names it) under strategies, from one sweep or, with Source empty, the
// first that measured it.
type Reference struct {
	Scenario   string
	Strategies []string
	Source     string
}

// Figure is a figure of a run a lesson asks about.
type Figure string

// The figures a lesson may ask for.
const (
	// FigF is the share of the ideal speedup realized, in percent.
	FigF Figure = "F"
	// FigU is the uplift over the serial default, a ratio.
	FigU Figure = "U"
	// FigIdeal is the ideal speedup S_ideal, a ratio.
	FigIdeal Figure = "S_ideal"
	// FigCompSlowdown is the compute op's slowdown in C3, a ratio.
	FigCompSlowdown Figure = "compute_slowdown"
	// FigCommSlowdown is the collective's slowdown in C3, a ratio.
	FigCommSlowdown Figure = "comm_slowdown"
)

// Figures lists the figures a lesson may ask for.
func Figures() []Figure {
	return []Figure{FigF, FigU, FigIdeal, FigCompSlowdown, FigCommSlowdown}
}

// Valid reports whether f is one of Figures.
func (f Figure) Valid() bool {
	for _, g := range Figures() {
		if f == g {
			return true
		}
	}
	return false
}

// Percent reports whether the figure is read in percent (else as a ratio,
// "1.49x").
func (f Figure) Percent() bool { return f == FigF }

// Name is the figure in words.
func (f Figure) Name() string {
	switch f {
	case FigF:
		return "F, % of the ideal speedup"
	case FigU:
		return "U, uplift over the serial default"
	case FigIdeal:
		return "S_ideal, the ideal speedup"
	case FigCompSlowdown:
		return "the compute op's slowdown in C3"
	case FigCommSlowdown:
		return "the collective's slowdown in C3"
	}
	return string(f)
}

// Of is the figure's value in r, in the unit the learner predicts it in
// (percent for F), and whether r has it.
func (f Figure) Of(r profiler.Result) (float64, bool) {
	var v float64
	switch f {
	case FigF:
		if r.FractionOfIdeal == nil {
			return 0, false
		}
		v = *r.FractionOfIdeal * 100
	case FigU:
		v = r.Uplift
	case FigIdeal:
		v = r.IdealSpeedup
	case FigCompSlowdown:
		v = r.CompSlowdown
	case FigCommSlowdown:
		v = r.CommSlowdown
	default:
		return 0, false
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || (v == 0 && f != FigF) {
		return 0, false
	}
	return v, true
}

// Format prints a value of the figure as the lessons show it: "63.2 %"
// for F, "1.49x" for ratios.
func (f Figure) Format(v float64) string {
	if f.Percent() {
		return strconv.FormatFloat(v, 'f', 1, 64) + " %"
	}
	return strconv.FormatFloat(v, 'f', 2, 64) + "x"
}

// Miss says how far a prediction was from the answer: in points for F, in
// percent of the answer for ratios.
func (f Figure) Miss(prediction, answer float64) string {
	d := prediction - answer
	if f.Percent() {
		return fmt.Sprintf("off by %s points", strconv.FormatFloat(math.Abs(d), 'f', 1, 64))
	}
	if answer == 0 {
		return ""
	}
	return fmt.Sprintf("off by %s %%", strconv.FormatFloat(math.Abs(d/answer)*100, 'f', 0, 64))
}

// Close reports whether a prediction counts as right: within 10 points
// for F, within 10 % of the answer for ratios.
func (f Figure) Close(prediction, answer float64) bool {
	if f.Percent() {
		return math.Abs(prediction-answer) <= 10
	}
	return answer != 0 && math.Abs(prediction-answer)/math.Abs(answer) <= 0.10
}

// ParsePrediction reads a prediction as typed: a number, with an optional
// "%" for F or "x" for ratios.
func (f Figure) ParsePrediction(text string) (float64, error) {
	t := strings.TrimSpace(text)
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(t, "%"), "x"))
	if t == "" {
		return 0, fmt.Errorf("type a number first")
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("%q is not a number; type one, like %s", text, f.Example())
	}
	if math.Abs(v) > 1e6 {
		return 0, fmt.Errorf("%q is far out of range; type a number like %s", text, f.Example())
	}
	return v, nil
}

// Example is a prediction typed the way the figure reads.
func (f Figure) Example() string {
	if f.Percent() {
		return "40"
	}
	return "1.3"
}
