package cuda

import (
	"context"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// hostCopyRun is one host copy timed alone.
type hostCopyRun struct {
	Kind     scenarios.Collective `json:"kind"`
	Bytes    int64                `json:"bytes"`
	Engine   string               `json:"engine"`
	CTAs     int                  `json:"ctas,omitempty"`
	Time     profiler.Stat        `json:"time_ns"`
	GBPerSec float64              `json:"gb_per_s"` // bytes over PCIe (both ways for a swap) / median time
}

// hostCopyC3 is one host copy next to a compute op, measured by the
// profiler's protocol.
type hostCopyC3 struct {
	Compute      string   `json:"compute"`
	Comm         string   `json:"comm"`
	Strategy     string   `json:"strategy"`
	TComp        float64  `json:"t_comp_ns"`
	TComm        float64  `json:"t_comm_ns"`
	TC3          float64  `json:"t_c3_ns"`
	Fraction     *float64 `json:"fraction_of_ideal"`
	CompSlowdown float64  `json:"comp_slowdown"`
	CommSlowdown float64  `json:"comm_slowdown"`
}

// TestGPUHostCopies measures what one GPU's host copies do: their PCIe
// bandwidth and fixed cost on the copy engines and on c3lab's copy kernel
// (by CTA count), and how they share the GPU with a compute-bound GEMM, a
// memory-bound GEMM and a streaming kernel. It runs on any node (GPU 0
// only) and writes JSON to $C3LAB_HOSTCOPY_OUT.
func TestGPUHostCopies(t *testing.T) {
	b := openGPU(t)
	ctx := context.Background()
	base := gpuScenario(scenarios.HostToDevice, 1<<20)
	base.GPUs = 1
	base.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 20}
	alone := func(c scenarios.CommOp, st scenarios.Strategy) hostCopyRun {
		sc := base
		sc.Comm = c
		res, err := b.Run(ctx, backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeComm, Reps: 20, Warmup: 3}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", c, st, err)
		}
		var ns []int64
		for _, r := range res.Reps {
			ns = append(ns, r.Comm)
		}
		stat := profiler.Summarize(ns)
		engine := "copy engines"
		ctas := 0
		if st.CommEngine != scenarios.EngineDMA {
			engine, ctas = "copy kernel", hostCopyCTAs(st)
		}
		run := hostCopyRun{Kind: c.Collective, Bytes: int64(c.Bytes), Engine: engine, CTAs: ctas, Time: stat,
			GBPerSec: float64(c.SizeBytes(1)) / stat.Median}
		t.Logf("%-5s %9d B  %-12s %3d CTAs  median %9.1f µs (p10 %9.1f, p90 %9.1f)  %6.1f GB/s",
			c.Collective, c.Bytes, engine, ctas, stat.Median/1e3, stat.P10/1e3, stat.P90/1e3, run.GBPerSec)
		return run
	}
	var runs []hostCopyRun
	dma := scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	for _, kind := range scenarios.HostCopies {
		for _, bytes := range []scenarios.ByteSize{64 << 10, 4 << 20, 64 << 20, 256 << 20} {
			runs = append(runs, alone(scenarios.CommOp{Collective: kind, Bytes: bytes}, dma))
		}
		runs = append(runs, alone(scenarios.CommOp{Collective: kind, Bytes: 256 << 20}, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}))
		for _, ctas := range []int{4, 8, 16, 32, 64} {
			runs = append(runs, alone(scenarios.CommOp{Collective: kind, Bytes: 256 << 20}, scenarios.Strategy{CommCTAs: ctas}))
		}
		runs = append(runs, alone(scenarios.CommOp{Collective: kind, Bytes: 64 << 10}, scenarios.Strategy{}))
	}
	for _, r := range runs {
		if r.Bytes >= 64<<20 && r.Engine == "copy engines" && r.GBPerSec < 5 {
			t.Errorf("%s of %d bytes on the copy engines ran at %.1f GB/s; pinned host copies over PCIe should reach tens of GB/s", r.Kind, r.Bytes, r.GBPerSec)
		}
	}

	var c3 []hostCopyC3
	for _, compute := range []scenarios.ComputeOp{
		{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16},
		{Kind: scenarios.GEMM, M: 64, N: 28672, K: 8192, DType: scenarios.BF16},
		{Kind: scenarios.Stream, Bytes: 2 << 30},
	} {
		for _, kind := range scenarios.HostCopies {
			for _, st := range []scenarios.Strategy{dma, {}, {Launch: scenarios.CommFirst, CommPriority: -5}, {CommSMs: 16}} {
				sc := base
				sc.Compute, sc.Comm = compute, scenarios.CommOp{Collective: kind, Bytes: 64 << 20}
				r, err := profiler.Measure(ctx, b, sc, st, profiler.Options{Reps: 10})
				if err != nil {
					t.Fatalf("%s next to %s, %s: %v", sc.Comm, compute, st, err)
				}
				f, ok := r.Fraction()
				x := hostCopyC3{Compute: compute.String(), Comm: sc.Comm.String(), Strategy: st.String(),
					TComp: r.TComp.Median, TComm: r.TComm.Median, TC3: r.TC3.Median, CompSlowdown: r.CompSlowdown, CommSlowdown: r.CommSlowdown}
				if ok {
					x.Fraction = &f
				}
				c3 = append(c3, x)
				t.Logf("%-26s %-12s %-22s T_comp %8.1f µs T_comm %8.1f µs T_c3 %8.1f µs F %6.1f%% slowdowns %.2f / %.2f",
					compute, sc.Comm, st, r.TComp.Median/1e3, r.TComm.Median/1e3, r.TC3.Median/1e3, f*100, r.CompSlowdown, r.CommSlowdown)
			}
		}
	}
	writeReport(t, "C3LAB_HOSTCOPY_OUT", "c3lab host copies", map[string]any{"devices": b.Devices(), "doctor": Probe(), "alone": runs, "c3": c3})
}
