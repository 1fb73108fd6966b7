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
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Advice is a suggested strategy with the reasons for it.
type Advice struct {
	Strategy scenarios.Strategy `json:"strategy"`
	Reasons  []string           `json:"reasons"`
	// Candidates are strategies worth measuring against the advice.
	Candidates []profiler.NamedStrategy `json:"candidates"`
	// Model names the model that ranked the candidates (AdviseModel);
	// empty for the rules alone.
	Model string `json:"model,omitempty"`
	// Advised is the advised candidate's name (AdviseModel).
	Advised string `json:"advised,omitempty"`
	// Predictions are the top candidates' predicted figures, the advice
	// first (AdviseModel).
	Predictions []Prediction `json:"predictions,omitempty"`
}

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
// capabilities, quoting the findings for its device (FindingsFor). It
// measures nothing; Tune does.
func Advise(sc scenarios.Scenario, caps backends.Capabilities) Advice {
	return advise(sc, caps, FindingsFor(caps.Limits.Device))
}

// advise is Advise quoting f.
func advise(sc scenarios.Scenario, caps backends.Capabilities, f Findings) Advice {
	var a Advice
	st := scenarios.Strategy{}
	say := func(f string, v ...any) { a.Reasons = append(a.Reasons, fmt.Sprintf(f, v...)) }
	coll := sc.Comm.Collective
	memBound := MemoryBound(sc.Compute)
	if coll.IsHostCopy() {
		return adviseHostCopy(sc, caps, memBound, f)
	}

	if caps.Has(scenarios.CapPriority) {
		st.Launch, st.CommPriority = scenarios.CommFirst, caps.Limits.HighestPriority
		say("launch the collective first at priority %d: a GEMM enqueued first keeps every SM until its last wave, and the collective waits%s", st.CommPriority, f.in("comm-first"))
	} else {
		st.Launch = scenarios.CommFirst
		say("launch the collective first: it then holds its SMs before the GEMM fills the GPU")
	}

	large := sc.Comm.Bytes >= f.DMAMinBytes
	dma := caps.Has(scenarios.CapDMA)
	switch {
	case dma && coll.IsPureCopy() && large:
		st.CommEngine = scenarios.EngineDMA
		say("run the %s on the copy engines: it is a pure copy, needs no SM, and at %s per rank the engines' launch overhead is small", coll, sc.Comm.Bytes)
	case dma && caps.DMAReductions && !coll.IsPureCopy() && large:
		st.CommEngine = scenarios.EngineDMA
		say("run the %s's copies on the copy engines and its add as one kernel after them, at top priority: the copies need no SM, and the add's SM time is the same whether it runs next to the GEMM or after it%s%s", coll, f.in("add-kernel-memory"), f.join(". ", "dma-reductions", ""))
		if caps.Has(scenarios.CapSMPartition) && !memBound {
			if n := leaveSMs(caps.Limits); n > 0 {
				st.ComputeSMs = n
				say("confine the GEMM to %d SMs so the add starts on the SMs it leaves free as soon as the copies land, not when the GEMM ends%s", n, f.in("gemm-partition-for-add"))
			}
		}
	case coll.IsPureCopy() && !large:
		say("keep the %s on the SMs: at %s per rank the copy engines' launch and synchronization overhead outweighs what they save%s", coll, sc.Comm.Bytes, f.in("dma-small-messages"))
	case !coll.IsPureCopy() && caps.DMAReductions:
		say("keep the %s on NCCL's kernels: at %s per rank the copy engines' synchronization overhead outweighs what they save", coll, sc.Comm.Bytes)
	case !coll.IsPureCopy():
		say("keep the %s on the SMs: copy engines cannot add, and this backend has no copy-engine reduction", coll)
	}
	if st.CommEngine != scenarios.EngineDMA && caps.Has(scenarios.CapSMPartition) {
		// Only a memory-bound op can give SMs away cheaply.
		if memBound {
			st.CommSMs = 32
			say("give the collective a 32-SM partition (its saturation point for NCCL on NVLink): the compute op is memory-bound, so losing SMs costs it little")
		} else {
			say("no SM partition: the GEMM is compute-bound and loses speed in proportion to the SMs it gives up for its whole run%s", f.in("partition-cost"))
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
// f's (c3lab's runs on one GPU, backends/cuda/HOSTCOPIES.md).
func adviseHostCopy(sc scenarios.Scenario, caps backends.Capabilities, memBound bool, f Findings) Advice {
	var a Advice
	say := func(f string, v ...any) { a.Reasons = append(a.Reasons, fmt.Sprintf(f, v...)) }
	coll := sc.Comm.Collective
	first := scenarios.Strategy{Launch: scenarios.CommFirst}
	if caps.Has(scenarios.CapPriority) {
		first.CommPriority = caps.Limits.HighestPriority
	}
	if !caps.Has(scenarios.CapDMA) {
		a.Strategy = first
		say("launch the copy kernel first at top priority: this backend has no copy engines, and a copy kernel enqueued after a GEMM waits for the GPU's SMs%s", f.in("host-kernel-after-gemm"))
		a.Candidates = []profiler.NamedStrategy{{Name: "advice", Strategy: a.Strategy}, {Name: "baseline", Strategy: scenarios.Strategy{}}}
		return a
	}
	a.Strategy = scenarios.Strategy{CommEngine: scenarios.EngineDMA}
	say("run the %s on the copy engines: they take no SM, so the kernel beside them keeps the whole GPU%s", coll, f.in("host-copy-engines"))
	say("not c3lab's SM copy kernel: enqueued after a GEMM it waits for the SMs%s, and launched first at top priority it holds SMs the GEMM needs%s%s",
		f.in("host-kernel-waits"), f.join(", and ", "host-kernel-slows-gemm", ""), f.in("host-kernel-best"))
	if writesToHost(sc) {
		say("above all for a copy to the host: while the copy kernel writes to host memory, every kernel beside it waits at its end and at its launch%s", f.in("host-kernel-write-waits"))
	}
	if coll == scenarios.HostSwap {
		say("keep each direction on an engine of its own (copy_engines 2 or more, unchunked)%s", f.join(": ", "pcie-duplex", ""))
	}
	if int64(sc.Comm.Bytes) < 1<<20 {
		say("at %s the copy engines' fixed cost%s is most of the copy's time; the copy kernel starts%s, but only when SMs are free", sc.Comm.Bytes, f.in("host-copy-setup"), f.join(" in ", "host-kernel-start", ""))
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
// copy-engine reduction's add kernel, rounded down to the partition step
// (profiler.GEMMPartitions, the split the sweep's dma-gemm-112 uses); 0
// when the GPU is too small to spare any.
func leaveSMs(l scenarios.Limits) int {
	_, split := profiler.GEMMPartitions(l)
	return split
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
	if caps.Has(scenarios.CapPriority) {
		first.CommPriority = caps.Limits.HighestPriority
	}
	add("comm-first+prio", first)
	if caps.Has(scenarios.CapSMPartition) {
		for _, n := range []int{16, 32, 64} {
			if n <= caps.Limits.SMs-caps.Limits.SMStep {
				p := first
				p.CommSMs = n
				add(fmt.Sprintf("comm-first+prio+sms-%d", n), p)
			}
		}
	}
	if caps.Has(scenarios.CapDMA) && (coll.IsPureCopy() || caps.DMAReductions) {
		d := first
		d.CommEngine = scenarios.EngineDMA
		add("dma", d)
		if n := leaveSMs(caps.Limits); !coll.IsPureCopy() && caps.Has(scenarios.CapSMPartition) && n > 0 {
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
	// FWithinNoise says F is above 100 % only within its interval.
	FWithinNoise bool `json:"fraction_within_noise,omitempty"`
	// Uplift is U, the speedup over the serial default: what trials are
	// ranked by (F is each trial's own, against its own isolated times).
	Uplift float64 `json:"uplift,omitempty"`
	TC3    float64 `json:"t_c3_ns"`
	// UpliftCI and TC3CI are their 95 % intervals, when measured.
	UpliftCI *profiler.Interval `json:"uplift_ci,omitempty"`
	TC3CI    *profiler.Interval `json:"t_c3_ci,omitempty"`
	// Tied says the trial is not told apart from the best (their
	// intervals overlap, profiler.Compare); on the best, that another is.
	Tied bool `json:"tied,omitempty"`
	// Remeasured, on the best only, is the best measured again in fresh
	// interleaved rounds: its figure without the upward bias of being
	// the highest of single measurements.
	Remeasured *profiler.Remeasured `json:"remeasured,omitempty"`
	// Fallback, on the baseline only, says why Tune answers with it
	// rather than the measured best: the best, measured again, was
	// slower than the baseline beyond their intervals.
	Fallback string `json:"fallback,omitempty"`
	Err      string `json:"error,omitempty"`
}

// Tune measures every candidate on b and returns the trials and the index
// of the answer (-1 when all failed). The baseline (the default
// strategy) is always among the candidates: Tune measures it last when
// cands lack it. The measured best is the highest uplift U over the
// serial default, else the shortest concurrent time (profiler.Leads;
// never the fraction of ideal, whose denominator a strategy changes).
// The trials whose intervals overlap the answer's are marked Tied, and
// the answer as well when any is. The serial default is measured once
// and reused across the candidates; the best is then measured again in
// fresh rounds (Trial.Remeasured), what to report as its figure. When
// that fresh figure is behind the baseline's beyond their intervals
// (profiler.Compare), the answer is the baseline, and its
// Trial.Fallback says why: Tune never answers with a strategy measured
// slower than the default.
func Tune(ctx context.Context, b backends.Backend, sc scenarios.Scenario, cands []profiler.NamedStrategy, opt profiler.Options) ([]Trial, int, error) {
	cands, base := withBaseline(cands)
	best := -1
	var trials []Trial
	var results []*profiler.Result
	fresh := opt
	for _, c := range cands {
		if err := ctx.Err(); err != nil {
			return trials, best, err
		}
		t := Trial{Name: c.Name, Strategy: c.Strategy}
		r, err := profiler.Measure(ctx, b, sc, c.Strategy, opt)
		if err != nil {
			t.Err = err.Error()
			results = append(results, nil)
		} else {
			t.Fraction, t.Uplift, t.TC3, t.FWithinNoise = r.FractionOfIdeal, r.Uplift, r.TC3.Median, r.FWithinNoise()
			t.UpliftCI, t.TC3CI = profiler.RemeasuredOf(r).UpliftCI, profiler.RemeasuredOf(r).TC3CI
			if best < 0 || profiler.Leads(r, *results[best]) {
				best = len(trials)
			}
			results = append(results, &r)
			if r.SerialDefault > 0 {
				bl := r.Baseline()
				opt.Baseline = &bl
			}
		}
		trials = append(trials, t)
	}
	if best < 0 {
		return trials, best, nil
	}
	markTies(trials, results, best)
	if err := ctx.Err(); err != nil {
		return trials, best, err
	}
	fresh.Baseline = nil
	r, err := profiler.Measure(ctx, b, sc, cands[best].Strategy, fresh)
	switch {
	case err != nil && ctx.Err() != nil:
		return trials, best, ctx.Err()
	case err != nil:
		trials[best].Remeasured = &profiler.Remeasured{Err: err.Error()}
	default:
		trials[best].Remeasured = profiler.RemeasuredOf(r)
		if best != base && results[base] != nil && profiler.Compare(r, *results[base]) == profiler.Worse {
			trials[base].Fallback = fmt.Sprintf("%s, measured again in fresh rounds (%s), is slower than the baseline (%s) beyond their intervals: "+
				"its lead was selection and noise, so the default stays", trials[best].Name, figure(r), figure(*results[base]))
			best = base
			markTies(trials, results, best)
		}
	}
	return trials, best, nil
}

// withBaseline returns cands with the baseline (the default strategy)
// appended when none of them is it, and the baseline's index.
func withBaseline(cands []profiler.NamedStrategy) ([]profiler.NamedStrategy, int) {
	def := scenarios.Strategy{}.Normalize()
	if i := slices.IndexFunc(cands, func(c profiler.NamedStrategy) bool { return c.Strategy.Normalize() == def }); i >= 0 {
		return cands, i
	}
	out := append(slices.Clone(cands), profiler.NamedStrategy{Name: "baseline"})
	return out, len(out) - 1
}

// markTies marks the trials not told apart from the best's (by their
// first measurements, profiler.Compare) as Tied, and the best when any
// is; it clears the marks of the others.
func markTies(trials []Trial, results []*profiler.Result, best int) {
	for i := range trials {
		trials[i].Tied = false
	}
	for i, r := range results {
		if i != best && r != nil && profiler.Compare(*results[best], *r) == profiler.NotToldApart {
			trials[i].Tied, trials[best].Tied = true, true
		}
	}
}

// figure is a result's ranking figure for a reason: U with its interval
// when it has one, else T_c3.
func figure(r profiler.Result) string {
	re := profiler.RemeasuredOf(r)
	if r.Uplift > 0 {
		return "U " + report.UpliftCI(re.Uplift, re.UpliftCI)
	}
	return "T_c3 " + report.DurationCI(re.TC3, re.TC3CI)
}
