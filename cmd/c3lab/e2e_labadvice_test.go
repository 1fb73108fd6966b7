package main_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler/report"
)

// TestE2ETmuxLabAdvice checks that the lab's why panel shows the advice
// `c3lab advise --backend sim --json` gives for the same scenario: its
// strategy and name, its predicted U and T_c3 and its runner-up; then a
// applies it, and the panel says it is in force.
func TestE2ETmuxLabAdvice(t *testing.T) {
	bin, dir := e2eBinary(t)
	out, err := exec.Command(bin, "advise", "--backend", "sim", "--json").Output()
	if err != nil {
		t.Fatalf("c3lab advise --backend sim --json: %v", err)
	}
	var rep struct {
		Scenario string            `json:"scenario"`
		Advice   heuristics.Advice `json:"advice"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("reading advise's JSON: %v\n%s", err, out)
	}
	a := rep.Advice
	if rep.Scenario == "" || len(a.Predictions) < 2 {
		t.Fatalf("advise gave no scenario or fewer than two predictions:\n%s", out)
	}
	head := "advice   " + a.Strategy.String()
	if a.Advised != "" && a.Advised != a.Strategy.String() {
		head += " (" + a.Advised + ")"
	}
	predicted := "predicted U " + report.Uplift(a.Predictions[0].Uplift) + " · T_c3 " + report.Duration(a.Predictions[0].TC3)
	runnerUp := a.Predictions[1].Name
	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "labadvice", 200, 80, fmt.Sprintf("%s lab --backend sim --scenario %s; echo $? > %s", quote(bin), quote(rep.Scenario), quote(exitFile)))
	x.waitFor("the model's advice in the why panel", 60*time.Second, func(s string) bool {
		return strings.Contains(s, head) && strings.Contains(s, predicted)
	})
	line := ""
	for _, l := range strings.Split(x.screen, "\n") {
		if strings.Contains(l, predicted) {
			line = l
		}
	}
	if !strings.Contains(line, runnerUp) {
		t.Errorf("the predicted line does not name the runner-up %s: %q", runnerUp, line)
	}
	if strings.Contains(x.screen, "rules of thumb:") {
		t.Errorf("the why panel falls back on the rules:\n%s", x.screen)
	}
	x.send("a")
	x.waitFor("the advice in force", 60*time.Second, func(s string) bool {
		return strings.Contains(s, head+" (in force)")
	})
	x.send("q")
	if code := x.waitExit(exitFile, 15*time.Second); code != "0" {
		t.Errorf("the lab exited with status %s; screen:\n%s", code, x.capture(false))
	}
}
