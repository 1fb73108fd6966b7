package heuristics

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// TestKnobEffect checks the knobs that cannot apply to a scenario on any
// backend, each with its reason, and that every other change is left to
// the measurement.
func TestKnobEffect(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	ag := scenario(bigGEMM, scenarios.AllGather, 224<<20)
	rs := scenario(bigGEMM, scenarios.ReduceScatter, 224<<20)
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	with := func(st scenarios.Strategy, f func(*scenarios.Strategy)) scenarios.Strategy { f(&st); return st }
	for _, tc := range []struct {
		name     string
		sc       scenarios.Scenario
		from, to scenarios.Strategy
		want     []string // fragments of the note; none: no note
	}{
		{"a CTA cap on a dma all-gather", ag, dma, with(dma, func(s *scenarios.Strategy) { s.CommCTAs = 8 }),
			[]string{"CTA cap", "dma all-gather", "copy engines", "no NCCL CTAs"}},
		{"a CTA cap on a dma reduce-scatter", rs, dma, with(dma, func(s *scenarios.Strategy) { s.CommCTAs = 16 }),
			[]string{"CTA cap", "dma reduce-scatter", "add kernel sizes its own grid"}},
		{"a CTA cap on NCCL's kernels", ag, scenarios.Strategy{}, scenarios.Strategy{CommCTAs: 8}, nil},
		{"a CTA cap on a dma host copy", scenario(bigGEMM, scenarios.DeviceToHost, 64<<20), dma, with(dma, func(s *scenarios.Strategy) { s.CommCTAs = 8 }),
			[]string{"CTA cap", "dma d2h", "only to c3lab's copy kernel"}},
		{"a CTA cap on the copy kernel", scenario(bigGEMM, scenarios.DeviceToHost, 64<<20), scenarios.Strategy{}, scenarios.Strategy{CommCTAs: 8}, nil},
		{"priority on a dma host copy", scenario(bigGEMM, scenarios.HostSwap, 64<<20), dma, with(dma, func(s *scenarios.Strategy) { s.CommPriority = -5 }),
			[]string{"priority", "only on copy engines"}},
		{"priority on a dma all-gather", ag, dma, with(dma, func(s *scenarios.Strategy) { s.CommPriority = -5 }),
			[]string{"priority", "only on copy engines", "no kernel"}},
		{"priority on a dma reduce-scatter orders its add kernel", rs, dma, with(dma, func(s *scenarios.Strategy) { s.CommPriority = -5 }), nil},
		{"priority with a comm partition", ag, scenarios.Strategy{CommSMs: 32}, scenarios.Strategy{CommSMs: 32, CommPriority: -5},
			[]string{"priority", "own 32 SMs", "other 100", "no SM is shared"}},
		{"priority with a comm partition and a compute one", rs, scenarios.Strategy{CommSMs: 20, ComputeSMs: 112}, scenarios.Strategy{CommSMs: 20, ComputeSMs: 112, CommPriority: -5},
			[]string{"own 20 SMs", "its 112"}},
		{"priority where the collective shares the compute op's SMs", ag, scenarios.Strategy{ComputeSMs: 112}, scenarios.Strategy{ComputeSMs: 112, CommPriority: -5}, nil},
		{"comm SMs for a dma all-gather", ag, dma, with(dma, func(s *scenarios.Strategy) { s.CommSMs = 8 }),
			[]string{"runs no kernel", "8-SM comm partition", "takes 8 SMs from the compute op"}},
		{"comm SMs for a dma reduce-scatter pipeline its add", rs, dma, with(dma, func(s *scenarios.Strategy) { s.CommSMs = 8 }), nil},
		{"back to no partition", ag, with(dma, func(s *scenarios.Strategy) { s.CommSMs = 8 }), dma, nil},
		{"copy engines are the backend's to judge", ag, dma, with(dma, func(s *scenarios.Strategy) { s.CopyEngines = 1 }), nil},
		{"launch order", ag, scenarios.Strategy{}, scenarios.Strategy{Launch: scenarios.CommFirst}, nil},
		{"a CTA cap on NCCL's copy-engine path is not claimed", ag, scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}, scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE, CommCTAs: 8}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := KnobEffect(tc.sc, tc.from, tc.to, caps)
			if len(tc.want) == 0 {
				if got != "" {
					t.Errorf("note %q, want none", got)
				}
				return
			}
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("note %q lacks %q", got, w)
				}
			}
		})
	}
}
