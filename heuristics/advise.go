// Package heuristics holds c3lab's strategy rules and its tuner. The rules
// come from the ConCCL paper and from c3lab's own runs on H200s (the sweep
// in backends/cuda/results/2026-11-30-h200x2): launch the collective first
// at top priority, move pure-copy collectives to the copy engines when the
// messages are large enough, give an SM collective a partition only where
// the GEMM can afford it. The tuner measures candidate strategies on any
// backend and keeps the best.
package heuristics

import (
	"context"
	"fmt"
	"math"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// Advice is a suggested strategy with the reasons for it.
type Advice struct {
	Strategy scenarios.Strategy `json:"strategy"`
	Reasons  []string           `json:"reasons"`
	// Candidates are strategies worth measuring against the advice.
	Candidates []profiler.NamedStrategy `json:"candidates"`
}

// dmaMinBytes is the per-rank message below which copy engines are not
// advised: their synchronization overhead dominates small transfers. On
// 2 x H200 c3lab's copy-engine all-gather and all-to-all take about 31 µs
// up to 1 MiB per rank, against 20-30 µs for NCCL, and beat both NCCL paths
// alone from 4 MiB up (backends/cuda/FINDINGS.md section 1).
const dmaMinBytes = 4 << 20

// machineBalance is roughly the FLOP per HBM byte at which a GEMM of the
// element type turns from memory-bound to compute-bound on a Hopper GPU
// (dense tensor peak over ~4 TB/s of HBM).
func machineBalance(d scenarios.DType) float64 {
	switch d {
	case scenarios.FP8:
		return 495
	case scenarios.FP32:
		return 17
	}
	return 247
}

// MemoryBound reports whether the compute op is limited by HBM rather than
// by arithmetic, from its shape: its arithmetic intensity (FLOP per byte
// it must move at the least) against the machine balance.
func MemoryBound(c scenarios.ComputeOp) bool {
	if c.Kind != scenarios.GEMM {
		return true
	}
	hbm, _ := profiler.HBMBytes(scenarios.Scenario{Compute: c})
	return c.FLOPs()/hbm < machineBalance(c.DType)
}

// Advise suggests a strategy for a scenario on a backend with the given
// capabilities. It measures nothing; Tune does.
func Advise(sc scenarios.Scenario, caps backends.Capabilities) Advice {
	var a Advice
	st := scenarios.Strategy{}
	say := func(f string, v ...any) { a.Reasons = append(a.Reasons, fmt.Sprintf(f, v...)) }
	coll := sc.Comm.Collective
	memBound := MemoryBound(sc.Compute)
	if coll.IsHostCopy() {
		return adviseHostCopy(sc, caps, memBound)
	}

	if caps.Priority {
		st.Launch, st.CommPriority = scenarios.CommFirst, caps.Limits.HighestPriority
		say("launch the collective first at priority %d: a GEMM enqueued first keeps every SM until its last wave, and the collective waits (on 2 x H200, plain C3 reached 0.3 %% of the ideal uplift on average, comm-first with priority 65.7 %%)", st.CommPriority)
	} else {
		st.Launch = scenarios.CommFirst
		say("launch the collective first: it then holds its SMs before the GEMM fills the GPU")
	}

	large := int64(sc.Comm.Bytes) >= dmaMinBytes
	switch {
	case caps.DMA && coll.IsPureCopy() && large:
		st.CommEngine = scenarios.EngineDMA
		say("run the %s on the copy engines: it is a pure copy, needs no SM, and at %s per rank the engines' launch overhead is small", coll, sc.Comm.Bytes)
	case caps.DMA && caps.DMAReductions && !coll.IsPureCopy() && large:
		st.CommEngine = scenarios.EngineDMA
		say("run the %s's copies on the copy engines and its add as one kernel after them, at top priority: the copies need no SM, and the add's SM time is the same whether it runs next to the GEMM or after it (next to a GEMM an add kernel gets only its SMs' share of the memory system, about 40 GB/s per SM on H200). On 2 x H200 this reached 82.0 %% of ideal on average next to GEMMs, NCCL launched first 75.1 %%", coll)
		if caps.SMPartition && !memBound {
			if n := leaveSMs(caps.Limits); n > 0 {
				st.ComputeSMs = n
				say("confine the GEMM to %d SMs so the add starts on the SMs it leaves free as soon as the copies land, not when the GEMM ends (dma-gemm-112 on H200: 84.5 %% on average, 67.1 %% next to GEMM-long ones against 57.6 %% without)", n)
			}
		}
	case coll.IsPureCopy() && !large:
		say("keep the %s on the SMs: at %s per rank the copy engines' launch and synchronization overhead outweighs what they save (on H200 they win alone from 4 MiB per rank up)", coll, sc.Comm.Bytes)
	case !coll.IsPureCopy() && caps.DMAReductions:
		say("keep the %s on NCCL's kernels: at %s per rank the copy engines' synchronization overhead outweighs what they save", coll, sc.Comm.Bytes)
	case !coll.IsPureCopy():
		say("keep the %s on the SMs: copy engines cannot add, and this backend has no copy-engine reduction", coll)
	}
	if st.CommEngine != scenarios.EngineDMA && caps.SMPartition {
		// Only a memory-bound op can give SMs away cheaply.
		if memBound {
			st.CommSMs = 32
			say("give the collective a 32-SM partition (its saturation point for NCCL on NVLink): the compute op is memory-bound, so losing SMs costs it little")
		} else {
			say("no SM partition: the GEMM is compute-bound and loses speed in proportion to the SMs it gives up for its whole run (on H200, 32-SM partitions cost GEMM-long scenarios more than they gained)")
		}
	}
	if memBound {
		say("the compute op is memory-bound: both ops share HBM, so the ideal speedup may be out of physical reach; judge the result against the bound")
	}
	a.Strategy = st
	a.Candidates = candidates(st, caps, coll)
	return a
}

// adviseHostCopy advises on a host<->device copy next to a kernel: the copy
// engines, which take no SM, unless the backend has none. The figures are
// c3lab's runs on one H200 (backends/cuda/results/2026-12-01-h200x1).
func adviseHostCopy(sc scenarios.Scenario, caps backends.Capabilities, memBound bool) Advice {
	var a Advice
	say := func(f string, v ...any) { a.Reasons = append(a.Reasons, fmt.Sprintf(f, v...)) }
	coll := sc.Comm.Collective
	first := scenarios.Strategy{Launch: scenarios.CommFirst}
	if caps.Priority {
		first.CommPriority = caps.Limits.HighestPriority
	}
	if !caps.DMA {
		a.Strategy = first
		say("launch the copy kernel first at top priority: this backend has no copy engines, and a copy kernel enqueued after a GEMM waits for the GPU's SMs (on one H200 it reached 4 %% of the ideal next to a bf16 8192^3 GEMM)")
		a.Candidates = []profiler.NamedStrategy{{Name: "advice", Strategy: a.Strategy}, {Name: "baseline", Strategy: scenarios.Strategy{}}}
		return a
	}
	a.Strategy = scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	say("run the %s on the copy engines: they take no SM, so the kernel beside them keeps the whole GPU (on one H200, 99 %% of the ideal next to a bf16 8192^3 GEMM, 96 %% on average over the eight host-copy scenarios)", coll)
	say("not c3lab's SM copy kernel: enqueued after a GEMM it waits for the SMs (4 %% of the ideal), and launched first at top priority it holds SMs the GEMM needs, and writing to host memory from SMs slowed a bf16 8192^3 GEMM 1.8-2.0x and a memory-bound decode GEMM up to 11x (its best placement, first at top priority: 62-64 %% on average)")
	if coll == scenarios.HostSwap {
		say("keep each direction on an engine of its own (copy_engines 2 or more, unchunked): PCIe carries about 100 GB/s both ways at once against 55 GB/s each way, and one engine alternating directions moves 55 GB/s in all")
	}
	if int64(sc.Comm.Bytes) < 1<<20 {
		say("at %s the copy engines' fixed cost (about 15 µs on H200) is most of the copy's time; the copy kernel starts in about 6 µs, but only when SMs are free", sc.Comm.Bytes)
	}
	say("launch order and priority do not act on copy engines: they order kernels, not copies")
	if memBound {
		say("the compute op is memory-bound and the copy reads or writes HBM too, at PCIe speed: a small share of HBM, so little to lose")
	}
	a.Candidates = []profiler.NamedStrategy{
		{Name: "advice", Strategy: a.Strategy},
		{Name: "baseline", Strategy: scenarios.Strategy{}},
		{Name: "comm-first+prio", Strategy: first},
		{Name: "dma-1ce", Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}},
	}
	return a
}

// leaveSMs is the SM count that leaves about 15 % of the GPU free for a
// copy-engine reduction's add kernel (112 of 132 on H200), rounded down to
// the partition step; 0 when the GPU is too small to spare any.
func leaveSMs(l scenarios.Limits) int {
	step := max(l.SMStep, 1)
	n := (l.SMs * 85 / 100) / step * step
	if n <= 0 || n >= l.SMs {
		return 0
	}
	return n
}

// candidates are the advice and the strategies it is worth comparing with.
func candidates(advice scenarios.Strategy, caps backends.Capabilities, coll scenarios.Collective) []profiler.NamedStrategy {
	out := []profiler.NamedStrategy{{Name: "advice", Strategy: advice}, {Name: "baseline", Strategy: scenarios.Strategy{}}}
	add := func(name string, st scenarios.Strategy) {
		for _, c := range out {
			if c.Strategy.Normalize() == st.Normalize() {
				return
			}
		}
		out = append(out, profiler.NamedStrategy{Name: name, Strategy: st})
	}
	first := scenarios.Strategy{Launch: scenarios.CommFirst}
	if caps.Priority {
		first.CommPriority = caps.Limits.HighestPriority
	}
	add("comm-first+prio", first)
	if caps.SMPartition {
		for _, n := range []int{16, 32, 64} {
			if n <= caps.Limits.SMs-caps.Limits.SMStep {
				p := first
				p.CommSMs = n
				add(fmt.Sprintf("comm-first+prio+sms-%d", n), p)
			}
		}
	}
	if caps.DMA && (coll.IsPureCopy() || caps.DMAReductions) {
		d := first
		d.CommEngine = scenarios.EngineDMA
		add("dma", d)
		if n := leaveSMs(caps.Limits); !coll.IsPureCopy() && caps.SMPartition && n > 0 {
			// The GEMM on an aligned group, the add pipelined with the
			// copies on the SMs it leaves: the best measured next to
			// GEMM-long shapes and some all-reduces.
			p := d
			p.CommPriority, p.ComputeSMs, p.CommSMs = 0, n, caps.Limits.SMs-n
			add(fmt.Sprintf("dma-gemm-%d-pipe", n), p)
		}
	}
	return out
}

// Trial is one candidate's measurement in a tuning run.
type Trial struct {
	Name     string             `json:"name"`
	Strategy scenarios.Strategy `json:"strategy"`
	Fraction *float64           `json:"fraction_of_ideal"`
	TC3      float64            `json:"t_c3_ns"`
	Err      string             `json:"error,omitempty"`
}

// Tune measures every candidate on b and returns the trials and the index
// of the best (the shortest concurrent time, which is the highest realized
// speedup; -1 when all failed).
func Tune(ctx context.Context, b backends.Backend, sc scenarios.Scenario, cands []profiler.NamedStrategy, opt profiler.Options) ([]Trial, int, error) {
	best, bestT := -1, math.Inf(1)
	var trials []Trial
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return trials, best, err
		}
		t := Trial{Name: c.Name, Strategy: c.Strategy}
		r, err := profiler.Measure(ctx, b, sc, c.Strategy, opt)
		if err != nil {
			t.Err = err.Error()
		} else {
			t.Fraction, t.TC3 = r.FractionOfIdeal, r.TC3.Median
			if t.TC3 < bestT {
				best, bestT = len(trials), t.TC3
			}
		}
		trials = append(trials, t)
	}
	return trials, best, nil
}
