package heuristics

import (
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func scenario(compute scenarios.ComputeOp, coll scenarios.Collective, bytes scenarios.ByteSize) scenarios.Scenario {
	return scenarios.Scenario{Name: "s", GPUs: 2, Compute: compute, Comm: scenarios.CommOp{Collective: coll, Bytes: bytes}}
}

var (
	bigGEMM   = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16}
	smallMGEM = scenarios.ComputeOp{Kind: scenarios.GEMM, M: 64, N: 28672, K: 8192, DType: scenarios.BF16}
)

func TestMemoryBound(t *testing.T) {
	for _, tc := range []struct {
		c    scenarios.ComputeOp
		want bool
	}{
		{bigGEMM, false},
		{smallMGEM, true},
		{scenarios.ComputeOp{Kind: scenarios.GEMM, M: 256, N: 32768, K: 6144, DType: scenarios.FP8}, true},
		{scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30}, true},
		{scenarios.ComputeOp{Kind: scenarios.GEMM, M: 2048, N: 2048, K: 2048, DType: scenarios.FP32}, false},
	} {
		if got := MemoryBound(tc.c); got != tc.want {
			t.Errorf("%s: memory-bound %v, want %v", tc.c, got, tc.want)
		}
	}
}

func TestAdvise(t *testing.T) {
	simCaps := sim.New(sim.H200()).Capabilities()
	noDMAReductions := simCaps
	noDMAReductions.DMAReductions = false
	for _, tc := range []struct {
		name   string
		sc     scenarios.Scenario
		caps   backends.Capabilities
		want   scenarios.Strategy
		reason string
	}{
		{"large all-gather goes to the copy engines", scenario(bigGEMM, scenarios.AllGather, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA}, "copy engines"},
		{"small all-gather stays on the SMs, no partition next to a compute-bound GEMM", scenario(bigGEMM, scenarios.AllGather, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "overhead"},
		{"a memory-bound GEMM can give SMs to the collective", scenario(smallMGEM, scenarios.AllGather, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommSMs: 32}, "memory-bound"},
		{"reduce-scatter next to a compute-bound GEMM: copy engines, the add after them, the GEMM leaving 20 SMs", scenario(bigGEMM, scenarios.ReduceScatter, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA, ComputeSMs: 112}, "SM time is the same"},
		{"all-reduce next to a memory-bound op: copy engines, no GEMM partition", scenario(smallMGEM, scenarios.AllReduce, 224<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA}, "copy engines"},
		{"a small all-reduce stays on NCCL", scenario(bigGEMM, scenarios.AllReduce, 1<<20), simCaps,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "synchronization overhead"},
		{"no copy-engine reductions: reduce-scatter stays on the SMs", scenario(bigGEMM, scenarios.ReduceScatter, 224<<20), noDMAReductions,
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}, "no copy-engine reduction"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Advise(tc.sc, tc.caps)
			if a.Strategy.Normalize() != tc.want.Normalize() {
				t.Errorf("advice %s, want %s", a.Strategy, tc.want)
			}
			if !strings.Contains(strings.Join(a.Reasons, " "), tc.reason) {
				t.Errorf("reasons lack %q: %v", tc.reason, a.Reasons)
			}
			if errs := scenarios.ValidateStrategy(a.Strategy, tc.caps.Limits); len(errs) > 0 {
				t.Errorf("advice is not a valid strategy: %v", errs)
			}
			if len(a.Candidates) < 3 || a.Candidates[0].Name != "advice" {
				t.Errorf("candidates %v", a.Candidates)
			}
		})
	}
}

// On the simulator the advice beats plain C3 on a balanced scenario, and
// the tuner finds a strategy at least as good as the advice.
func TestTuneOnTheSimulator(t *testing.T) {
	b := sim.New(sim.H200())
	sc, err := scenarios.Find("llama3-70b-fsdp-ffn-up-ag-224m")
	if err != nil {
		t.Fatal(err)
	}
	a := Advise(sc, b.Capabilities())
	trials, best, err := Tune(context.Background(), b, sc, a.Candidates, profiler.Options{Reps: 3})
	if err != nil || best < 0 {
		t.Fatalf("tune: best %d, %v", best, err)
	}
	frac := func(name string) float64 {
		for _, tr := range trials {
			if tr.Name == name && tr.Fraction != nil {
				return *tr.Fraction
			}
		}
		t.Fatalf("no trial %s", name)
		return 0
	}
	if frac("advice") <= frac("baseline") {
		t.Errorf("advice %.2f does not beat baseline %.2f", frac("advice"), frac("baseline"))
	}
	if trials[best].TC3 > trials[0].TC3 {
		t.Errorf("the best trial is slower than the advice")
	}
}

// For reductions the candidates hold both copy-engine designs: the add
// after the copies at top priority on the whole GPU, and the add pipelined
// with the copies on the 20 SMs a GEMM on an aligned 112-SM group leaves.
func TestReductionCandidates(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	a := Advise(scenario(bigGEMM, scenarios.AllReduce, 224<<20), caps)
	want := map[string]scenarios.Strategy{
		"dma":               {Launch: scenarios.CommFirst, CommPriority: -5, CommEngine: scenarios.EngineDMA},
		"dma-gemm-112-pipe": {Launch: scenarios.CommFirst, CommEngine: scenarios.EngineDMA, ComputeSMs: 112, CommSMs: 20},
	}
	for _, c := range a.Candidates {
		if w, ok := want[c.Name]; ok {
			if c.Strategy.Normalize() != w.Normalize() {
				t.Errorf("%s candidate %s, want %s", c.Name, c.Strategy, w)
			}
			delete(want, c.Name)
		}
	}
	if len(want) > 0 {
		t.Errorf("candidates %v lack %v", a.Candidates, want)
	}
}

func TestLeaveSMs(t *testing.T) {
	for _, tc := range []struct{ sms, step, want int }{
		{132, 8, 112}, // H200
		{304, 8, 256}, // MI300X-sized
		{8, 8, 0},     // nothing to spare
	} {
		if got := leaveSMs(scenarios.Limits{SMs: tc.sms, SMStep: tc.step}); got != tc.want {
			t.Errorf("leaveSMs(%d SMs, step %d) = %d, want %d", tc.sms, tc.step, got, tc.want)
		}
	}
}

// A host copy goes to the copy engines, with reasons that say why not the
// copy kernel and that priority does not act on copies; without copy
// engines the copy kernel is launched first at top priority.
func TestAdviseHostCopy(t *testing.T) {
	caps := sim.New(sim.H200()).Capabilities()
	noCE := caps
	noCE = noCE.Without(scenarios.CapDMA)
	for _, tc := range []struct {
		name    string
		coll    scenarios.Collective
		bytes   scenarios.ByteSize
		caps    backends.Capabilities
		want    scenarios.Strategy
		reasons []string
	}{
		{"d2h", scenarios.DeviceToHost, 112 << 20, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"copy engines: they take no SM", "not c3lab's SM copy kernel", "do not act on copy engines"}},
		{"swap", scenarios.HostSwap, 96 << 20, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"each direction on an engine of its own"}},
		{"small h2d", scenarios.HostToDevice, 512 << 10, caps, scenarios.Strategy{CommEngine: scenarios.EngineDMA},
			[]string{"fixed cost (about 15 µs"}},
		{"no copy engines", scenarios.HostToDevice, 64 << 20, noCE, scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5},
			[]string{"has no copy engines"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := scenario(bigGEMM, tc.coll, tc.bytes)
			sc.GPUs = 1
			a := Advise(sc, tc.caps)
			if a.Strategy != tc.want {
				t.Errorf("advice %s, want %s", a.Strategy, tc.want)
			}
			all := strings.Join(a.Reasons, "\n")
			for _, r := range tc.reasons {
				if !strings.Contains(all, r) {
					t.Errorf("reasons lack %q:\n%s", r, all)
				}
			}
			if strings.Contains(all, "collective") || strings.Contains(all, "NCCL") {
				t.Errorf("host-copy reasons speak of collectives:\n%s", all)
			}
			if len(a.Candidates) < 2 || a.Candidates[0].Strategy != tc.want {
				t.Errorf("candidates %v", a.Candidates)
			}
		})
	}
}
