package tui

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// testSuite is a small fixed suite; tests never depend on the simulator.
func testSuite() []scenarios.Scenario {
	gemm := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 8192, K: 8192, DType: scenarios.BF16}
	return []scenarios.Scenario{
		{Name: "ag-gemm-balanced", GPUs: 2, Compute: gemm, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 256 << 20}, Reps: 4},
		{Name: "a2a-moe-comm-long", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16}, Comm: scenarios.CommOp{Collective: scenarios.AllToAll, Bytes: 512 << 20}, Reps: 4},
		{Name: "rs-gemm-long", GPUs: 2, Compute: gemm, Comm: scenarios.CommOp{Collective: scenarios.ReduceScatter, Bytes: 64 << 20}, Reps: 4},
		{Name: "stream-ag-memory-bound", GPUs: 2, Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30}, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 256 << 20}, Reps: 4},
		{Name: "ar-tp-small-messages", GPUs: 2, Compute: gemm, Comm: scenarios.CommOp{Collective: scenarios.AllReduce, Bytes: 8 << 20}, Reps: 4},
	}
}

// h200Caps is the capability report of a fake H200 backend with every knob.
func h200Caps() backends.Capabilities {
	return backends.Capabilities{
		Limits: scenarios.Limits{
			Device: "NVIDIA H200", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3,
			HighestPriority: -5, DTypes: scenarios.DTypes, MemoryBytes: 141 << 30,
		},
		Explains: true, Deterministic: true,
		TelemetryNames: []string{backends.MetricSMUtil, backends.MetricTensorUtil, backends.MetricHBMUtil,
			backends.MetricLinkTXUtil, backends.MetricLinkRXUtil, backends.MetricCopyStreamsBusy,
			backends.MetricSMsCompute, backends.MetricSMsComm},
	}.With(scenarios.CapPriority, scenarios.CapSMPartition, scenarios.CapCommCTACap, scenarios.CapDMA)
}

// fakeBackend is a tiny deterministic backend whose concurrent time depends
// on the strategy, so turning a knob changes the figures.
type fakeBackend struct {
	caps  backends.Capabilities
	delay time.Duration

	mu          sync.Mutex
	inFlight    int
	maxInFlight int
	runs        int
	fail        error // when set, every run fails with it
	// noEffect, when set, is the backend's answer to NoEffect.
	noEffect func(sc scenarios.Scenario, from, to scenarios.Strategy) string
}

// NoEffect implements backends.EffectChecker with the test's answer.
func (f *fakeBackend) NoEffect(sc scenarios.Scenario, from, to scenarios.Strategy) string {
	if f.noEffect == nil {
		return ""
	}
	return f.noEffect(sc, from, to)
}

func newFake() *fakeBackend { return &fakeBackend{caps: h200Caps()} }

func (f *fakeBackend) Name() string { return "fake" }

func (f *fakeBackend) Devices() []backends.DeviceInfo {
	d := backends.DeviceInfo{Name: "NVIDIA H200", SMs: 132, MemoryBytes: 141 << 30, CopyEngines: 3, Simulated: true}
	d1 := d
	d1.Index = 1
	return []backends.DeviceInfo{d, d1}
}

func (f *fakeBackend) Capabilities() backends.Capabilities { return f.caps }

func (f *fakeBackend) Close() error { return nil }

// fakeTimes returns the isolated and concurrent times (ns) under st.
func fakeTimes(st scenarios.Strategy) (comp, comm, c3, compIn, commIn int64) {
	st = st.Normalize()
	comp, comm = 1_400_000, 1_250_000
	c3 = 2_300_000
	if st.Launch == scenarios.CommFirst {
		c3 -= 150_000
	}
	if st.CommPriority != 0 {
		c3 -= 100_000
	}
	c3 -= int64(min(st.CommSMs, 32)) * 10_000
	if st.CommCTAs > 0 {
		c3 -= 30_000
	}
	if st.CommEngine == scenarios.EngineDMA {
		c3 = 1_520_000
		if st.CopyEngines > 0 {
			c3 += int64(3-st.CopyEngines) * 150_000
		}
	}
	compIn = min(c3, comp+comp/8)
	commIn = c3
	return
}

func (f *fakeBackend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	f.mu.Lock()
	f.inFlight++
	f.runs++
	f.maxInFlight = max(f.maxInFlight, f.inFlight)
	fail := f.fail
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inFlight--
		f.mu.Unlock()
	}()
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-ctx.Done():
			return backends.RunResult{}, ctx.Err()
		}
	}
	if fail != nil {
		return backends.RunResult{}, fail
	}
	comp, comm, c3, compIn, commIn := fakeTimes(ex.Strategy)
	var rep backends.Rep
	switch ex.Mode {
	case backends.ModeCompute:
		rep = backends.Rep{Wall: comp, Compute: comp}
	case backends.ModeComm:
		rep = backends.Rep{Wall: comm, Comm: comm}
	default:
		rep = backends.Rep{Wall: c3, Compute: compIn, Comm: commIn}
	}
	rr := backends.RunResult{Mode: ex.Mode}
	for i := range ex.Reps {
		rr.Reps = append(rr.Reps, rep)
		if sink != nil && ex.Mode == backends.ModeConcurrent {
			spans, samples := fixtureEvents(ex.Scenario, ex.Strategy, i)
			sink.Spans(spans)
			sink.Samples(samples)
		}
	}
	rr.Explain = fixtureExplain(ex.Mode, ex.Strategy)
	return rr, nil
}

// fixtureEvents are the spans and samples of one concurrent repetition on
// both devices.
func fixtureEvents(sc scenarios.Scenario, st scenarios.Strategy, rep int) ([]backends.Span, []backends.Sample) {
	st = st.Normalize()
	_, _, c3, compIn, commIn := fakeTimes(st)
	dma := st.CommEngine == scenarios.EngineDMA
	var spans []backends.Span
	var samples []backends.Sample
	commStart := int64(60_000)
	compStart := int64(0)
	if st.Launch == scenarios.CommFirst {
		commStart, compStart = 0, 40_000
	}
	for dev := range 2 {
		spans = append(spans, backends.Span{Rep: rep, Op: backends.OpCompute, Name: sc.Compute.String(), Device: dev,
			Track: "compute", Kind: "kernel", Start: compStart, End: compStart + compIn})
		if dma {
			ces := 3
			if st.CopyEngines > 0 {
				ces = st.CopyEngines
			}
			for ce := range ces {
				spans = append(spans, backends.Span{Rep: rep, Op: backends.OpComm, Name: fmt.Sprintf("copy gpu%d->gpu%d", dev, 1-dev),
					Device: dev, Track: fmt.Sprintf("ce%d", ce), Kind: "copy", Start: commStart + int64(ce)*20_000, End: c3 - int64(ces-1-ce)*30_000})
			}
		} else {
			spans = append(spans, backends.Span{Rep: rep, Op: backends.OpComm, Name: "ncclAllGather", Device: dev,
				Track: "comm", Kind: "kernel", Start: commStart, End: commStart + commIn - 60_000})
		}
		for t := int64(0); t <= c3; t += 50_000 {
			gemm := t >= compStart && t < compStart+compIn
			coll := t >= commStart && t < c3
			add := func(metric string, v float64) {
				samples = append(samples, backends.Sample{Rep: rep, Metric: metric, Device: dev, Time: t, Value: v})
			}
			sm, tensor, hbm, link, smsComp, smsComm := 0.0, 0.0, 0.1, 0.0, 0.0, 0.0
			if gemm {
				sm, tensor, hbm, smsComp = 0.94, 0.78, 0.35, 124
			}
			if coll {
				link = 0.88
				hbm += 0.25
				if !dma {
					sm = min(sm+0.06, 1)
					smsComm = 8
					if t < 400_000 && gemm && st.Launch != scenarios.CommFirst {
						link, smsComm = 0.1, 0
					}
				}
			}
			add(backends.MetricSMUtil, sm)
			add(backends.MetricTensorUtil, tensor)
			add(backends.MetricHBMUtil, hbm)
			add(backends.MetricLinkTXUtil, link)
			add(backends.MetricLinkRXUtil, link*0.97)
			if dma {
				ce := 0.0
				if coll {
					ce = 1
				}
				add(backends.MetricCopyStreamsBusy, ce)
			}
			add(backends.MetricSMsCompute, smsComp)
			add(backends.MetricSMsComm, smsComm)
		}
	}
	return spans, samples
}

// fixtureExplain is what the fake backend says bounded each op.
func fixtureExplain(mode backends.Mode, st scenarios.Strategy) []backends.OpExplanation {
	st = st.Normalize()
	gemm := "gemm 8192x8192x8192 bf16"
	coll := "all-gather 256MiB"
	switch mode {
	case backends.ModeCompute:
		return []backends.OpExplanation{{Op: backends.OpCompute, Label: gemm, Bounds: []backends.Bound{
			{Resource: backends.ResTensor, Nanos: 1_360_000, Detail: "tensor cores at 100% on 132 SMs"},
			{Resource: backends.ResLaunch, Nanos: 40_000, Detail: "kernel launch"},
		}}}
	case backends.ModeComm:
		return []backends.OpExplanation{{Op: backends.OpComm, Label: coll, Bounds: []backends.Bound{
			{Resource: backends.ResLink, Nanos: 1_190_000, Detail: "NVLink at 92% of peak"},
			{Resource: backends.ResLaunch, Nanos: 60_000, Detail: "kernel launch and proxy"},
		}}}
	}
	if st.CommEngine == scenarios.EngineDMA {
		return []backends.OpExplanation{
			{Op: backends.OpCompute, Label: gemm, Bounds: []backends.Bound{
				{Resource: backends.ResTensor, Nanos: 1_380_000, Detail: "tensor cores at 100% on 132 SMs"},
				{Resource: backends.ResHBM, Nanos: 100_000, Detail: "HBM shared with 3 copy engines"},
			}},
			{Op: backends.OpComm, Label: coll, Bounds: []backends.Bound{
				{Resource: backends.ResLink, Nanos: 1_200_000, Detail: "NVLink at 90% of peak"},
				{Resource: backends.ResCopyEngines, Nanos: 220_000, Detail: "3 copy engines, one transfer each"},
				{Resource: backends.ResLaunch, Nanos: 100_000, Detail: "host enqueue and stream waits"},
			}},
		}
	}
	return []backends.OpExplanation{
		{Op: backends.OpCompute, Label: gemm, Bounds: []backends.Bound{
			{Resource: backends.ResTensor, Nanos: 1_360_000, Detail: "tensor cores at 100% on 124 of 132 SMs"},
			{Resource: backends.ResHBM, Nanos: 150_000, Detail: "HBM shared with the all-gather"},
		}},
		{Op: backends.OpComm, Label: coll, Bounds: []backends.Bound{
			{Resource: backends.ResWaitSMs, Nanos: 400_000, Detail: "all 132 SMs held by the GEMM; 8 CTAs queued behind its blocks"},
			{Resource: backends.ResLink, Nanos: 1_150_000, Detail: "NVLink at 88% of peak"},
			{Resource: backends.ResCTA, Nanos: 360_000, Detail: "8 CTAs move 40 GB/s each"},
		}},
	}
}

// fixtureResult builds a fixed result for scenario sc under st from the
// fake backend's numbers and the profiler's own formulas.
func fixtureResult(sc scenarios.Scenario, st scenarios.Strategy) profiler.Result {
	st = st.Normalize()
	comp, comm, c3, compIn, commIn := fakeTimes(st)
	stat := func(ns int64) profiler.Stat {
		return profiler.Summarize([]int64{ns - 5_000, ns, ns, ns + 8_000})
	}
	r := profiler.Result{
		Scenario: sc, Strategy: st, Backend: "fake", Devices: newFake().Devices(),
		TComp: stat(comp), TComm: stat(comm), TC3: stat(c3), TCompInC3: stat(compIn), TCommInC3: stat(commIn),
		Explain: map[backends.Mode][]backends.OpExplanation{},
	}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
		r.Explain[m] = fixtureExplain(m, st)
	}
	r.Timeline, r.Samples = fixtureEvents(sc, st, 0)
	// The fake node knows its HBM bandwidth (4 TB/s), so the bound shows.
	r.Derive(4e12)
	return r
}

// backends0Caps is a backend that can turn no knob (a replay, say).
func backends0Caps() backends.Capabilities {
	c := h200Caps()
	c = c.Without(scenarios.CapPriority, scenarios.CapSMPartition, scenarios.CapCommCTACap, scenarios.CapDMA)
	c.Explains = false
	return c
}
