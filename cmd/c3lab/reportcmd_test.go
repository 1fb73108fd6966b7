package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/sweepfile"
)

const (
	passes1  = "../../backends/cuda/results/2026-12-01-h200x1-i16/sweep-passes-1.json"
	passes2  = "../../backends/cuda/results/2026-12-01-h200x1-i16/sweep-passes-2.json"
	runC3rec = "../../backends/cuda/results/2026-12-01-h200x1-i16/run-llama3-8b-act-reload-h2d-gemm-decomp4-1gpu.c3rec"
)

func TestReportCommand(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "r.html")
	code, stdout, errOut := call(t, "report", passes1, runC3rec, "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "wrote "+out) {
		t.Errorf("stdout %q", stdout)
	}
	page, err := os.ReadFile(out)
	if err != nil || !strings.Contains(string(page), `<section id="compare"`) {
		t.Fatalf("the page: %v", err)
	}
	// Refused without --force; replaced with it; --json says what was written.
	if code, _, errOut := call(t, "report", passes1, "--out", out); code != exitUsage || !strings.Contains(errOut, "--force") {
		t.Errorf("overwrite without --force: exit %d, %q", code, errOut)
	}
	code, stdout, errOut = call(t, "report", passes1, "--out", out, "--force", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var sum reportSummary
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("--json: %v: %q", err, stdout)
	}
	if len(sum.Inputs) != 1 || sum.Inputs[0].Scenarios != 3 || sum.Inputs[0].Strategies != 4 || sum.Compare {
		t.Errorf("--json: %+v", sum)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"report", "--out", filepath.Join(dir, "x.html")}, "at least one input"},
		{[]string{"report", passes1}, "--out"},
		{[]string{"report", passes1, "--out", dir}, "folder"},
		{[]string{"report", "no-such.json", "--out", filepath.Join(dir, "y.html")}, "no-such.json"},
		{[]string{"report", passes1, "--out", filepath.Join(dir, "z.html"), "--timeline", "nope"}, "--timeline nope"},
	} {
		code, _, errOut := call(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) {
			t.Errorf("%v: exit %d, %q; want exit 2 naming %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestEndPlotsGolden: a sweep's heatmap and a comparison's change chart
// from committed H200 sweeps, plain, at several widths.
func TestEndPlotsGolden(t *testing.T) {
	f, err := sweepfile.Load(passes1)
	if err != nil {
		t.Fatal(err)
	}
	var in [2]compare.Input
	for i, p := range []string{passes1, passes2} {
		if in[i], err = compare.Load(p); err != nil {
			t.Fatal(err)
		}
	}
	rep := compare.Compare(in[0], in[1], compare.Options{})
	for _, w := range []int{60, 80, 100} {
		t.Run(fmt.Sprintf("heatmap_%d", w), func(t *testing.T) {
			golden.RequireEqual(t, []byte(strings.Join(sweepHeatmap(f, w, false), "\n")+"\n"))
		})
		t.Run(fmt.Sprintf("change_%d", w), func(t *testing.T) {
			golden.RequireEqual(t, []byte(strings.Join(compareChart(rep, w, false), "\n")+"\n"))
		})
	}
}

// TestCompareEndsWithChart: compare's text ends with the change chart,
// plain off a terminal; --json holds none.
func TestCompareEndsWithChart(t *testing.T) {
	code, out, errOut := call(t, "compare", passes1, passes2)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "T_c3 change, new vs old") || strings.Contains(out, "\x1b") {
		t.Errorf("no plain change chart at the end:\n%s", out)
	}
	_, out, _ = call(t, "compare", passes1, passes2, "--json")
	if strings.Contains(out, "T_c3 change, new vs old") {
		t.Error("--json output holds the chart")
	}
}

// TestSweepEndsWithHeatmap: a sweep's summary ends with the heatmap, and
// --json prints the summary only.
func TestSweepEndsWithHeatmap(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--backend", "sim", "--reps", "1", "--scenarios", "llama3-70b-tp-qkv-ag-224m-2gpu", "--strategies", "baseline,comm-first+prio"}
	code, out, errOut := call(t, append(args, "--out", filepath.Join(dir, "a.json"))...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "U by scenario and strategy") || !strings.Contains(out, "A baseline · B comm-first+prio") {
		t.Errorf("no heatmap:\n%s", out)
	}
	code, out, errOut = call(t, append(args, "--out", filepath.Join(dir, "b.json"), "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if strings.Contains(out, "U by scenario") {
		t.Error("--json output holds the heatmap")
	}
	var v any
	if err := json.Unmarshal([]byte(out), &v); err != nil {
		t.Errorf("--json is not JSON: %v", err)
	}
}
