package cuda

import (
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/backendtest"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/knobtest"
)

// knobScenarios are a small GEMM next to an all-gather on 4 GPUs (where
// copy engines have peers to share) and next to a host copy large enough
// to chunk, on the fake's first GPU, and graphs whose pairs decompose
// splits.
func knobScenarios() []scenarios.Scenario {
	ag := smallGEMM(scenarios.AllGather)
	ag.GPUs = 4
	h2d := smallGEMM(scenarios.HostToDevice)
	h2d.Name, h2d.GPUs, h2d.Comm.Bytes = "h2d", 1, 16<<20
	// A format-2 reload feeding a GEMM on one GPU, and a TP all-gather
	// feeding a GEMM on 4: decompose splits them, comm_engine dma puts the
	// all-gather on the copy engines. All go through profiler.Measure.
	return []scenarios.Scenario{ag, h2d, offload(0), agGEMM(4, 0)}
}

// observe measures on a backend over fresh fake GPUs under table ks and
// returns every call the backend made to them.
func observe(t *testing.T, ks scenarios.Knobs) backendtest.Observe {
	return func(sc scenarios.Scenario, st scenarios.Strategy) (string, error) {
		f := newFakeGPU(4)
		// A watchdog that opens the gate on a loaded machine (the fakes
		// copy real bytes while the gate holds) would add calls to one
		// observation and not the next: give it a minute.
		b := fakeBackend(t, f, Options{GateStallNanos: 60e9})
		_, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: 2, Warmup: -1, Rounds: 1, Knobs: ks})
		return strings.Join(f.log, "\n"), err
	}
}

// The cuda backend applies every knob it claims, so that the GPU calls
// differ, and refuses the rest naming them: on the fake, whose NCCL has no
// copy-engine path, nccl-ce.
func TestEveryKnobAppliedOrRefused(t *testing.T) {
	caps := fakeBackend(t, newFakeGPU(4), Options{}).Capabilities()
	for _, o := range backendtest.WalkKnobs(t, scenarios.StrategyKnobs(), caps, knobScenarios(), observe(t, nil)) {
		wantRefused := o.Knob.Key == "comm_engine" && o.Example == string(scenarios.EngineNCCLCE)
		if o.Applied() == wantRefused {
			t.Errorf("%s %s: applied %v, want %v (%v)", o.Knob.Key, o.Example, o.Applied(), !wantRefused, o.Err)
		}
	}
}

// A knob added to the table that the backend does not apply is refused,
// naming it, before any GPU call.
func TestNewKnobRefused(t *testing.T) {
	ks, depth := knobtest.Table()
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	*depth = 3
	_, err := profiler.Measure(context.Background(), b, smallGEMM(scenarios.AllGather), scenarios.Strategy{}, profiler.Options{Reps: 2, Knobs: ks})
	if err == nil || !strings.Contains(err.Error(), "the cuda backend cannot "+string(knobtest.Need)+", which "+knobtest.Key+" 3 asks for") {
		t.Errorf("the dummy knob: %v", err)
	}
	if len(f.log) != 0 {
		t.Errorf("the refused run reached the GPUs:\n%s", strings.Join(f.log, "\n"))
	}
	*depth = knobtest.Max + 1
	_, err = profiler.Measure(context.Background(), b, smallGEMM(scenarios.AllGather), scenarios.Strategy{}, profiler.Options{Reps: 2, Knobs: ks})
	if err == nil || !strings.Contains(err.Error(), knobtest.Key) || !strings.Contains(err.Error(), "allowed 0 (off)") {
		t.Errorf("an invalid dummy setting: %v", err)
	}
}

// With the structured-rest probe on, a compute op on the rest of a comm
// partition runs on a structured group of the rest's SMs rounded down to
// the partition step, and cuBLASLt plans for that many; every other
// placement is as without it.
func TestStructuredRestPartitions(t *testing.T) {
	for _, tc := range []struct {
		name       string
		st         scenarios.Strategy
		structured bool
		wantComp   partition
		wantTarget int
	}{
		{"comm 16, rest as is", scenarios.Strategy{CommSMs: 16}, false, partition{GroupSMs: 16, Rest: true}, 116},
		{"comm 16, structured rest", scenarios.Strategy{CommSMs: 16}, true, partition{GroupSMs: 16, Rest: true, Structured: 112}, 112},
		{"comm 64, structured rest", scenarios.Strategy{CommSMs: 64}, true, partition{GroupSMs: 64, Rest: true, Structured: 64}, 64},
		{"comm 8, structured rest", scenarios.Strategy{CommSMs: 8}, true, partition{GroupSMs: 8, Rest: true, Structured: 120}, 120},
		{"compute group: already structured", scenarios.Strategy{ComputeSMs: 112, CommSMs: 20}, true, partition{GroupSMs: 112}, 112},
		{"no partition", scenarios.Strategy{}, true, partition{}, 0},
		{"an SM target wins", scenarios.Strategy{CommSMs: 16, GEMMSMTarget: 100}, true, partition{GroupSMs: 16, Rest: true, Structured: 112}, 100},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{devs: []devInfo{{SMs: 132, SMStep: 8}}, structuredRest: tc.structured}
			comp, _, err := b.partitions(tc.st)
			if err != nil {
				t.Fatal(err)
			}
			if comp != tc.wantComp {
				t.Errorf("compute partition %+v, want %+v", comp, tc.wantComp)
			}
			if got := gemmSMTarget(132, tc.st, comp); got != tc.wantTarget {
				t.Errorf("GEMM SM target %d, want %d", got, tc.wantTarget)
			}
		})
	}
}
