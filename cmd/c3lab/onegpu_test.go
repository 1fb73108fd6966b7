package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler/sweepfile"
)

// oneGPUNode is a simulated node of one H200, as a one-GPU box is.
func oneGPUNode() *sim.Backend {
	p := sim.H200()
	p.MaxGPUs = 1
	return sim.New(p)
}

// On a one-GPU node the list classifies what runs there (the host copies)
// and marks the rest with the reason instead of failing.
func TestScenarioRowsOnOneGPU(t *testing.T) {
	rows, skipped, err := scenarioRows(context.Background(), oneGPUNode())
	if err != nil {
		t.Fatal(err)
	}
	runs := 0
	for _, r := range rows {
		hostCopy := r.Comm.Collective.IsHostCopy()
		if r.Runs != hostCopy {
			t.Errorf("%s: runs here %v, want %v", r.Name, r.Runs, hostCopy)
		}
		if r.Runs {
			runs++
			if r.Class == "" || r.TComp <= 0 {
				t.Errorf("%s: runnable but not classified: %+v", r.Name, r)
			}
		} else if r.Why == "" {
			t.Errorf("%s: not runnable and no reason", r.Name)
		}
	}
	if runs == 0 || skipped != len(rows)-runs {
		t.Errorf("%d runnable, %d skipped of %d", runs, skipped, len(rows))
	}
}

// On a one-GPU node, run and the lab start on the first scenario that runs
// there, and one naming a collective gets one line saying why it cannot
// run and what can.
func TestExperimentOnOneGPU(t *testing.T) {
	lim := oneGPUNode().Capabilities().Limits
	for _, tc := range []struct {
		name, arg, want string // want: the scenario's name or a part of the error
		flags           []string
		ok              bool
	}{
		{"default", "", "llama3-70b-ffn-gate-up-act-offload-d2h-112m-1gpu", nil, true},
		{"a host copy", "llama3-70b-adam-stream-optimizer-swap-32m", "llama3-70b-adam-stream-optimizer-swap-16m-1gpu", []string{"--comm-engine", "dma"}, true},
		{"a collective", "llama3-70b-tp-qkv-ag-224m", "scenario llama3-70b-tp-qkv-ag-224m-2gpu cannot run here: gpus is 2 but NVIDIA H200 has only 1 GPU here, and a collective needs 2; host copies (h2d, d2h, swap) run on 1 GPU, and --backend sim runs collectives on a simulated node", nil, false},
		{"a bad flag is still the strategy's", "llama3-70b-adam-stream-optimizer-swap-32m", "strategy: ", []string{"--comm-sms", "12"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFlags("run", "run", stdio{})
			var sf strategyFlags
			sf.register(fs)
			if err := fs.Parse(tc.flags); err != nil {
				t.Fatal(err)
			}
			sc, _, err := sf.experiment(tc.arg, lim)
			switch {
			case tc.ok && (err != nil || sc.Name != tc.want):
				t.Errorf("experiment(%q) = %s, %v; want %s", tc.arg, sc.Name, err, tc.want)
			case !tc.ok && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("experiment(%q) error %v; want it to contain %q", tc.arg, err, tc.want)
			}
		})
	}
	runs, note := runnableSuite(oneGPUNode())
	if len(runs) == 0 || !strings.Contains(note, "61 of the 73 built-in scenarios cannot run here: 61 need more GPUs than this 1-GPU node has") || !strings.Contains(note, "--sim-gpus 2 or more") {
		t.Errorf("runnableSuite: %d runnable, note %q", len(runs), note)
	}
	if _, note := runnableSuite(sim.New(sim.H200())); note != "" {
		t.Errorf("on 8 simulated GPUs nothing should be left out: %q", note)
	}
}

// A whole-suite sweep on a one-GPU node runs the host copies only, says in
// one line what it left out, and records that in the file.
func TestSweepOnOneGPU(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "s.json")
	var o, e bytes.Buffer
	code := realMain(context.Background(), []string{"sweep", "--backend", "sim", "--sim-gpus", "1", "--strategies", "baseline,dma", "--out", out}, stdio{out: &o, errOut: &e})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, e.String())
	}
	if !strings.Contains(e.String(), "61 of the 73 built-in scenarios cannot run here") {
		t.Errorf("stderr does not say what was left out:\n%s", e.String())
	}
	f, err := sweepfile.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 12*2 || !strings.Contains(f.Skipped, "61 need more GPUs") {
		t.Errorf("%d results, skipped %q; want the 8 host-copy pairs and 4 one-GPU stream scenarios under 2 strategies and the 61 left out", len(f.Results), f.Skipped)
	}
	for _, r := range f.Results {
		if r.Err != "" || r.Result == nil || !r.Result.Scenario.Comm.Collective.IsHostCopy() {
			t.Errorf("%s · %s: %s", r.Scenario, r.Strategy, r.Err)
		}
	}
}
