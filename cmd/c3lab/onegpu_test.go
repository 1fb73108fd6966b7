package main

import (
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
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
		{"default", "", "llama3-70b-ffn-gate-up-act-offload-d2h-112m", nil, true},
		{"a host copy", "llama3-70b-adam-stream-optimizer-swap-32m", "llama3-70b-adam-stream-optimizer-swap-32m", []string{"--comm-engine", "dma"}, true},
		{"a collective", "llama3-70b-tp-qkv-ag-224m", "scenario llama3-70b-tp-qkv-ag-224m cannot run here: gpus is 2 but NVIDIA H200 has only 1 GPU here, and a collective needs 2; host copies (h2d, d2h, swap) run on 1 GPU, and --backend sim runs collectives on a simulated node", nil, false},
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
	runs, note := runnableSuite(lim)
	if len(runs) == 0 || !strings.Contains(note, "cannot run on this 1-GPU node") || !strings.Contains(note, "--backend sim runs them") {
		t.Errorf("runnableSuite: %d runnable, note %q", len(runs), note)
	}
	if _, note := runnableSuite(sim.H200().Limits()); note != "" {
		t.Errorf("on 8 simulated GPUs nothing should be left out: %q", note)
	}
}
