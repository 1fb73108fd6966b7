package main

import (
	"context"
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
