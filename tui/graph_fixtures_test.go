package tui

import (
	"fmt"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// graphScenario is a format-2 fixture: a TP all-gather feeding the GEMM
// that consumes it (a decomposable pair), a stream of small all-reduces,
// and more GEMMs after the pair. m is the consuming GEMM's rows (8192
// splits into 2, 4 and 8 chunks; 8196 into 2 and 4 only).
func graphScenario(m int) scenarios.Scenario {
	gemm := func(name string, mm, count int, after ...string) scenarios.StreamOp {
		return scenarios.StreamOp{Name: name, Kind: scenarios.OpKind(scenarios.GEMM), M: mm, N: 8192, K: 8192, DType: scenarios.BF16, Count: count, After: after}
	}
	sc := scenarios.Scenario{
		Name: "tp-ag-gemm-streams", GPUs: 2, Reps: 4,
		Streams: []scenarios.StreamSpec{
			{Name: "tp", Ops: []scenarios.StreamOp{{Name: "ag", Kind: scenarios.OpKind(scenarios.AllGather), Bytes: scenarios.ByteSize(m * 8192)}}},
			{Name: "compute", Ops: []scenarios.StreamOp{gemm("qkv", m, 1, "ag"), gemm("mlp", 4096, 4)}},
			{Name: "dp", Ops: []scenarios.StreamOp{{Name: "ar", Kind: scenarios.OpKind(scenarios.AllReduce), Bytes: 8 << 20, Count: 6}}},
		},
	}
	return withLead(sc)
}

// graphCaps is the fake H200 that can also decompose pairs.
func graphCaps() backends.Capabilities { return h200Caps().With(scenarios.CapDecompose) }

// graphResult is a synthetic result of graphScenario(8192) decomposed in
// 4 chunks: a span per op instance on both GPUs (the chunks of ag and qkv
// interleaving, the mlp GEMMs and the all-reduces), the graph figures and
// per-op figures, and an explanation per graph op.
func graphResult() profiler.Result {
	sc := graphScenario(8192)
	st := scenarios.Strategy{Decompose: 4}.Normalize()
	stat := func(ns int64) profiler.Stat { return profiler.Summarize([]int64{ns - 4_000, ns, ns, ns + 6_000}) }
	r := profiler.Result{
		Scenario: sc, Strategy: st, Backend: "fake", Devices: newFake().Devices(), Deterministic: true,
		TComp: stat(3_100_000), TComm: stat(1_300_000), TC3: stat(3_510_000),
		TCompInC3: stat(3_300_000), TCommInC3: stat(1_700_000),
		TSerial: 4_400_000, TIdeal: 3_220_000, SerialDefault: 4_520_000,
	}
	r.IdealSpeedup = r.TSerial / r.TIdeal
	r.RealizedSpeedup = r.TSerial / r.TC3.Median
	f := (r.RealizedSpeedup - 1) / (r.IdealSpeedup - 1)
	r.FractionOfIdeal = &f
	r.Uplift = r.SerialDefault / r.TC3.Median
	r.CompSlowdown = r.TCompInC3.Median / r.TComp.Median
	r.CommSlowdown = r.TCommInC3.Median / r.TComm.Median
	r.Class = profiler.GEMMLong
	r.Ops = []profiler.OpResult{
		{Name: "ag", Role: scenarios.RoleComm, Label: "ag: all-gather 16MiB x4", Count: 4, TAlone: stat(700_000), TInC3: stat(820_000), Slowdown: 820.0 / 700},
		{Name: "qkv", Role: scenarios.RoleCompute, Label: "qkv: gemm 2048x8192x8192 bf16 x4", Count: 4, TAlone: stat(1_500_000), TInC3: stat(1_580_000), Slowdown: 1580.0 / 1500},
		{Name: "mlp", Role: scenarios.RoleCompute, Label: "mlp: gemm 4096x8192x8192 bf16 x4", Count: 4, TAlone: stat(1_600_000), TInC3: stat(1_720_000), Slowdown: 1720.0 / 1600},
		{Name: "ar", Role: scenarios.RoleComm, Label: "ar: all-reduce 8MiB x6", Count: 6, TAlone: stat(600_000), TInC3: stat(880_000), Slowdown: 880.0 / 600},
	}
	r.Explain = map[backends.Mode][]backends.OpExplanation{
		backends.ModeConcurrent: {
			{Op: backends.OpComm, Label: "ag: all-gather 16MiB x4", Bounds: []backends.Bound{
				{Resource: backends.ResLink, Nanos: 640_000, Detail: "NVLink at 90% of peak"},
				{Resource: backends.ResWaitSMs, Nanos: 180_000, Detail: "chunks 1-3 queued behind qkv's last wave"},
			}},
			{Op: backends.OpCompute, Label: "qkv: gemm 2048x8192x8192 bf16 x4", Bounds: []backends.Bound{
				{Resource: backends.ResTensor, Nanos: 1_420_000, Detail: "tensor cores at 100% on 124 of 132 SMs"},
				{Resource: backends.ResDependency, Nanos: 160_000, Detail: "waiting for its all-gather chunk"},
			}},
			{Op: backends.OpCompute, Label: "mlp: gemm 4096x8192x8192 bf16 x4", Bounds: []backends.Bound{
				{Resource: backends.ResTensor, Nanos: 1_600_000, Detail: "tensor cores at 100% on 132 SMs"},
				{Resource: backends.ResHBM, Nanos: 120_000, Detail: "HBM shared with the all-reduces"},
			}},
			{Op: backends.OpComm, Label: "ar: all-reduce 8MiB x6", Bounds: []backends.Bound{
				{Resource: backends.ResWaitSMs, Nanos: 400_000, Detail: "each all-reduce waits for a GEMM's kernel boundary"},
				{Resource: backends.ResLaunch, Nanos: 300_000, Detail: "six launches and their fixed cost"},
				{Resource: backends.ResLink, Nanos: 180_000, Detail: "NVLink at 40% of peak"},
			}},
		},
	}
	// Spans per instance on both GPUs: ag[i] then qkv[i] (chunk by
	// chunk), then mlp[0..3] on the compute stream; ar[0..5] on the dp
	// stream, each after a kernel boundary of the compute stream.
	for dev := range 2 {
		add := func(op backends.Op, name string, inst int, track string, a, b int64) {
			r.Timeline = append(r.Timeline, backends.Span{Op: op, GraphOp: name, Instance: inst, Name: fmt.Sprintf("%s[%d]", name, inst),
				Device: dev, Track: track, Kind: "kernel", Start: a + int64(dev)*3_000, End: b + int64(dev)*3_000})
		}
		t := int64(0)
		for i := range 4 {
			add(backends.OpComm, "ag", i, "tp", int64(i)*205_000, int64(i+1)*205_000)
			t = max(t, int64(i+1)*205_000)
			add(backends.OpCompute, "qkv", i, "compute", t, t+395_000)
			t += 395_000
		}
		for i := range 4 {
			add(backends.OpCompute, "mlp", i, "compute", t, t+430_000)
			t += 430_000
		}
		for i := range 6 {
			a := int64(600_000) + int64(i)*450_000
			add(backends.OpComm, "ar", i, "dp", a, a+146_000)
		}
	}
	return r
}
