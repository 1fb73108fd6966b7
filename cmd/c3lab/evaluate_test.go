package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Four scenarios of the committed reduction sweep under five strategies:
// small enough to evaluate on, calibrating twice, in a test.
const evalFixture = "testdata/advise-eval-fixture.json"

// advise --evaluate prints a row per case and the summaries, and --json
// the same figures: every scenario scored once, by the fold it is in.
func TestAdviseEvaluate(t *testing.T) {
	code, out, errOut := call(t, "advise", "--evaluate", evalFixture, "--folds", "2", "--starts", "1", "--evals", "2")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "output", out, "2 folds by scenario", "4 cases (scenario x sweep) of 4 scenarios", "REGRET", "llama3-70b-tp-o-proj-rs-224m-2gpu", "class comm-long", "reduce-scatter", "targets (issue 18)", "TUNE POS", "TUNE <= 4", "tune within 4 on")
	code, out, errOut = call(t, "advise", "--evaluate", evalFixture, "--folds", "2", "--starts", "1", "--evals", "2", "--json")
	if code != 0 || errOut != "" {
		t.Fatalf("--json: exit %d, stderr %q", code, errOut)
	}
	var rep evalReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	folds := map[int]bool{}
	for _, c := range rep.Cases {
		folds[c.Fold] = true
		if c.Err != "" || c.BestTC3 <= 0 || c.AdvisedTC3 < c.BestTC3*0.99 || c.Regret < -0.01 || c.TunePosition < 1 || c.TunePosition > c.Strategies {
			t.Errorf("case %+v", c)
		}
	}
	if rep.All.Cases != 4 || len(folds) != 2 || len(rep.ByComm) != 2 {
		t.Errorf("summary %+v over folds %v", rep.All, folds)
	}
}

// Bad input is one line, exit 2, before any fit.
func TestAdviseEvaluateRefusesBadInput(t *testing.T) {
	junk := filepath.Join(t.TempDir(), "junk.json")
	os.WriteFile(junk, []byte("{not json"), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--evaluate", evalFixture, "--folds", "1"}, "--folds is 1"},
		{[]string{"--evaluate", evalFixture, "--tune"}, "--tune has no effect with --evaluate"},
		{[]string{"--evaluate", evalFixture, evalFixture}, "given twice"},
		{[]string{"--evaluate", junk}, "junk.json"},
		{[]string{"--evaluate", "no-such.json"}, "no-such.json"},
		{[]string{"--backend", "sim", "--folds", "3"}, "--folds has no effect without --evaluate"},
		{[]string{"--backend", "sim", "--top", "0"}, "--top is 0"},
		{[]string{"--backend", "sim", "stray"}, "unexpected argument"},
	} {
		code, _, errOut := call(t, append([]string{"advise"}, tc.args...)...)
		if code != 2 || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("advise %v: exit %d, %q; want exit 2 and %q in one line", tc.args, code, errOut, tc.want)
		}
	}
}

// With C3LAB_EVAL_FULL=1, the committed evaluation on the H200 sweeps
// (heuristics/evaluation/README.md) runs again, minutes, and must give
// the committed summary.
func TestAdviseEvaluateCommitted(t *testing.T) {
	if os.Getenv("C3LAB_EVAL_FULL") != "1" {
		t.Skip("minutes; C3LAB_EVAL_FULL=1 runs it")
	}
	r := "../../backends/cuda/results/"
	args := []string{"advise", "--json", "--evaluate"}
	for _, s := range []string{"2026-11-30-h200x2-gated/sweep.json", "2026-11-30-h200x2-session3/sweep-copies.json",
		"2026-11-30-h200x2-session3/sweep-reductions-run3.json", "2026-12-01-h200x1/sweep-host.json",
		"2026-12-03-h200x1-s16/sweep-graphs-1gpu.json", "2026-12-03-h200x1-s16/sweep-fixed.json"} {
		args = append(args, r+s)
	}
	args = append(args, "--ref", r+"2026-11-30-h200x2-gated/c3lab-ref.json")
	code, out, errOut := call(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var now, committed evalReport
	data, err := os.ReadFile("../../heuristics/evaluation/h200-advise-eval.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &committed); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &now); err != nil {
		t.Fatal(err)
	}
	if now.All != committed.All {
		t.Errorf("summary now %+v, committed %+v", now.All, committed.All)
	}
}
