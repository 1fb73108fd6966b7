package main_test

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// answerRE reads the answer a lesson shows: "Answer: 63.2 % measured" or
// "Answer: 1.49x measured".
var answerRE = regexp.MustCompile(`Answer: (-?[0-9]+\.[0-9]+)( %|x) measured`)

// trialLesson is what the trial reads of c3lab learn --list --json.
type trialLesson struct {
	Number     int                 `json:"number"`
	Title      string              `json:"title"`
	Scenario   string              `json:"scenario"`
	Figure     string              `json:"figure"`
	To         *scenarios.Strategy `json:"to"`
	State      string              `json:"state"`
	Prediction *float64            `json:"prediction"`
	Answer     *float64            `json:"answer"`
}

// strategyFlags are the c3lab run flags that set st: one per knob that
// differs from plain C3.
func strategyFlags(st scenarios.Strategy) []string {
	var out []string
	for _, k := range scenarios.StrategyKnobs() {
		if k.Show(st.Normalize()) != "" {
			out = append(out, "--"+k.Flag+"="+k.Text(st.Normalize()))
		}
	}
	return out
}

// runFigure measures scenario under st with c3lab run --backend sim --json
// and reads the figure a lesson asks for, in the lesson's unit.
func runFigure(t *testing.T, bin, scenario string, st scenarios.Strategy, figure string) float64 {
	t.Helper()
	args := append([]string{"run", "--backend", "sim", "--json", "--scenario", scenario}, strategyFlags(st)...)
	out, err := exec.Command(bin, args...).Output()
	if err != nil {
		t.Fatalf("c3lab %s: %v", strings.Join(args, " "), err)
	}
	var r struct {
		F     *float64 `json:"fraction_of_ideal"`
		U     float64  `json:"uplift"`
		Ideal float64  `json:"ideal_speedup"`
		Comp  float64  `json:"compute_slowdown"`
		Comm  float64  `json:"comm_slowdown"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("c3lab run --json: %v", err)
	}
	switch figure {
	case "F":
		if r.F == nil {
			t.Fatalf("%s: no fraction of ideal", scenario)
		}
		return *r.F * 100
	case "U":
		return r.U
	case "S_ideal":
		return r.Ideal
	case "compute_slowdown":
		return r.Comp
	case "comm_slowdown":
		return r.Comm
	}
	t.Fatalf("unknown figure %q", figure)
	return 0
}

// learnList runs c3lab learn --list --json under the state directory.
func learnList(t *testing.T, bin, state string) []trialLesson {
	t.Helper()
	cmd := exec.Command(bin, "learn", "--list", "--json")
	cmd.Env = append(os.Environ(), "XDG_STATE_HOME="+state)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("c3lab learn --list --json: %v", err)
	}
	var ls []trialLesson
	if err := json.Unmarshal(out, &ls); err != nil {
		t.Fatalf("c3lab learn --list --json: %v\n%s", err, out)
	}
	return ls
}

// TestE2ETeachingTrial is a learner taking every lesson on the simulator,
// in the real binary in tmux: for each lesson it types a prediction,
// flips the knob, runs, and reads the answer. Each answer on screen must
// be what c3lab run --backend sim --json gives for the lesson's scenario
// and strategy, the why panel under it must advise with the model, and
// the progress kept must hold every lesson done with its prediction and
// answer.
func TestE2ETeachingTrial(t *testing.T) {
	bin, dir := e2eBinary(t)
	state := filepath.Join(dir, "state")
	lessons := learnList(t, bin, state)
	if len(lessons) < 10 {
		t.Fatalf("%d lessons, want at least 10", len(lessons))
	}
	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "learn", 100, 30, fmt.Sprintf("XDG_STATE_HOME=%s %s learn --backend sim; echo $? > %s", quote(state), quote(bin), quote(exitFile)))
	predictions := map[int]float64{}
	shown := map[int]float64{}
	for i, l := range lessons {
		head := fmt.Sprintf("lesson %d of %d", i+1, len(lessons))
		x.waitFor(head+"'s question", 30*time.Second, func(s string) bool {
			return strings.Contains(s, head) && strings.Contains(s, "Your prediction >")
		})
		// A learner's guess: different every lesson, in the figure's unit.
		p := 1.1 + float64(i)/10
		if l.Figure == "F" {
			p = float64(10 * (i + 1))
		}
		typed := strconv.FormatFloat(p, 'f', 1, 64)
		predictions[i], _ = strconv.ParseFloat(typed, 64)
		x.send(typed, "Enter")
		x.waitFor("the knob", 10*time.Second, func(s string) bool { return strings.Contains(s, "not flipped: press f") })
		x.send("r") // the run waits for the knob
		x.waitFor("the hint to flip first", 10*time.Second, func(s string) bool { return strings.Contains(s, "flip the knob first") })
		x.send("f")
		x.waitFor("the knob flipped", 10*time.Second, func(s string) bool { return strings.Contains(s, "flipped: press r to run") })
		x.send("r")
		x.waitFor(head+"'s answer", 30*time.Second, func(s string) bool { return answerRE.MatchString(s) })
		m := answerRE.FindStringSubmatch(x.screen)
		got, _ := strconv.ParseFloat(m[1], 64)
		shown[i] = got
		if l.To == nil {
			t.Fatalf("lesson %d: --list --json gives no strategy", i+1)
		}
		want := runFigure(t, bin, l.Scenario, *l.To, l.Figure)
		tol := 0.0051
		if l.Figure == "F" {
			tol = 0.051
		}
		if math.Abs(got-want) > tol {
			t.Errorf("lesson %d (%s): the screen says %s = %v, c3lab run gives %.4f", i+1, l.Title, l.Figure, got, want)
		}
		if !strings.Contains(x.screen, "H200 · recorded") {
			t.Errorf("lesson %d: no H200 runs beside the answer:\n%s", i+1, x.screen)
		}
		// The end of the answer: the why panel advises with the model, the
		// simulator on the built-in H200 profile, as the lab does.
		x.send("Space", "Space", "Space", "Space", "Space", "Space")
		x.waitFor(head+"'s model advice", 30*time.Second, func(s string) bool {
			return strings.Contains(s, "advice   ") && strings.Contains(s, "predicted U ") && !strings.Contains(s, "rules of thumb:")
		})
		t.Logf("lesson %d: predicted %s, answer %v %s (run: %.3f)", i+1, typed, got, l.Figure, want)
		x.send("n")
	}
	x.waitFor("the list after the last lesson", 10*time.Second, func(s string) bool {
		return strings.Contains(s, "every lesson is behind you") && strings.Contains(s, fmt.Sprintf("%d done, 0 skipped, 0 to go", len(lessons)))
	})
	x.send("q")
	if code := x.waitExit(exitFile, 15*time.Second); code != "0" {
		t.Errorf("c3lab learn exited with status %s; screen:\n%s", code, x.capture(true))
	}
	for i, l := range learnList(t, bin, state) {
		if l.State != "done" || l.Prediction == nil || l.Answer == nil {
			t.Errorf("lesson %d kept as %q, prediction %v, answer %v; want done with both", i+1, l.State, l.Prediction, l.Answer)
			continue
		}
		if *l.Prediction != predictions[i] || math.Abs(*l.Answer-shown[i]) > 0.051 {
			t.Errorf("lesson %d kept prediction %v answer %v; typed %v, shown %v", i+1, *l.Prediction, *l.Answer, predictions[i], shown[i])
		}
	}
}
