package cuda

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// GPU tests of format-2 scenarios. The one-GPU parts (GEMM streams, host
// copies feeding GEMMs, decomposed offload) run on any node; the
// tensor-parallel pairs need 2 GPUs and skip on one, saying so. They
// measure through profiler.Measure (validation, the three modes in
// interleaved rounds, the graph metrics), and report what they saw to
// C3LAB_GRAPH_REPORT when set.

// measureGraph measures a graph scenario under st with reps repetitions
// per mode.
func measureGraph(t *testing.T, b *Backend, sc scenarios.Scenario, st scenarios.Strategy, reps int) profiler.Result {
	t.Helper()
	r, err := profiler.Measure(context.Background(), b, sc, st, profiler.Options{Reps: reps, Warmup: 2, Rounds: 1})
	if err != nil {
		t.Fatalf("%s under %s: %v", sc.Name, st, err)
	}
	return r
}

// fraction prints F, or "n/a" when undefined.
func fraction(r profiler.Result) string {
	if r.FractionOfIdeal == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.1f %%", 100**r.FractionOfIdeal)
}

// A stream of 16 GEMMs next to a stream of host-to-device copies on one
// GPU: every instance is timed, and the concurrent run is no shorter than
// its longer stream alone nor longer than both one after another (with
// 10 % for noise).
func TestGPUGraphStreams(t *testing.T) {
	b := openGPU(t)
	gemms := gemmOp("gemms", 4096, 4096, 4096)
	gemms.Count = 16
	copies := commOp("reloads", scenarios.HostToDevice, 16<<20)
	copies.Count = 16
	sc := scenarios.Scenario{Name: "gpu-graph-streams", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemms}},
		{Name: "copy", Ops: []scenarios.StreamOp{copies}},
	}}
	for _, st := range []scenarios.Strategy{{}, {CommEngine: scenarios.EngineDMA}} {
		t.Run(string(st.Normalize().CommEngine), func(t *testing.T) {
			r := measureGraph(t, b, sc, st, 5)
			comp, comm, conc := r.TComp.Median, r.TComm.Median, r.TC3.Median
			t.Logf("%s: GEMMs alone %.3f ms, copies alone %.3f ms, together %.3f ms, F %s, U %.2f, launch %+v", st, comp/1e6, comm/1e6, conc/1e6, fraction(r), r.Uplift, r.Explain[backends.ModeConcurrent])
			if conc < 0.9*max(comp, comm) || conc > 1.1*(comp+comm) {
				t.Errorf("together %.0f ns, alone %.0f and %.0f ns", conc, comp, comm)
			}
			for _, rep := range r.Reps[backends.ModeConcurrent] {
				if len(rep.Ops) != 2 || rep.Ops[0] <= 0 || rep.Ops[1] <= 0 {
					t.Errorf("rep %+v: both ops timed", rep)
				}
			}
			writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-streams", map[string]any{"strategy": st.String(), "gemms_ns": comp, "copies_ns": comm, "together_ns": conc,
				"fraction_of_ideal": r.FractionOfIdeal, "uplift": r.Uplift, "explain": r.Explain[backends.ModeConcurrent]})
		})
	}
}

// A host reload feeding a GEMM, decomposed: each GEMM chunk reads the
// rows its copy chunk brought (checked against one whole GEMM before
// timing), starts after that copy, and the next copy runs under it.
func TestGPUGraphOffloadDecomposed(t *testing.T) {
	b := openGPU(t)
	const m, n, k = 8192, 8192, 8192
	g := gemmOp("mlp", m, n, k, "reload")
	g.Decompose = 4
	sc := scenarios.Scenario{Name: "gpu-graph-offload", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "copy", Ops: []scenarios.StreamOp{commOp("reload", scenarios.HostToDevice, m*k*2)}},
		{Name: "compute", Ops: []scenarios.StreamOp{g}},
	}}
	r := measureGraph(t, b, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 3)
	spans := map[string]backends.Span{}
	for _, s := range r.Timeline {
		if s.GraphOp != "" && !strings.HasPrefix(s.Track, "cupti") {
			spans[fmt.Sprintf("%s[%d]", s.GraphOp, s.Instance)] = s
		}
	}
	overlap := 0
	for c := range 4 {
		cp, gm := spans[fmt.Sprintf("reload[%d]", c)], spans[fmt.Sprintf("mlp[%d]", c)]
		if gm.Start < cp.End {
			t.Errorf("GEMM chunk %d starts at %d, before its copy ends at %d", c, gm.Start, cp.End)
		}
		if next, ok := spans[fmt.Sprintf("reload[%d]", c+1)]; ok && next.Start < gm.End {
			overlap++
		}
		t.Logf("chunk %d: copy %d..%d ns, GEMM %d..%d ns", c, cp.Start, cp.End, gm.Start, gm.End)
	}
	t.Logf("%d of 3 later copies start under the previous GEMM chunk; T_c3 %.3f ms, F %s, U %.2f; launch %+v", overlap, r.TC3.Median/1e6, fraction(r), r.Uplift, r.Explain[backends.ModeConcurrent])
	writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-offload", map[string]any{"spans": spans, "overlap": overlap, "t_c3_ns": r.TC3.Median,
		"fraction_of_ideal": r.FractionOfIdeal, "uplift": r.Uplift, "explain": r.Explain[backends.ModeConcurrent]})
}

// Tensor-parallel pairs on 2 GPUs, whole and decomposed in 4, with the
// collectives on NCCL and on the copy engines (comm_engine dma, at 1 and 4
// chunks): the all-gather's output is the GEMM's A, the GEMM's output the
// reduce-scatter's input, checked against the unchunked result before
// timing. Each case logs (and reports to C3LAB_GRAPH_REPORT, one file per
// test: the last case's) T_c3, F and U.
func TestGPUGraphTPPairs(t *testing.T) {
	b := openGPU(t)
	if len(b.Devices()) < 2 {
		t.Skipf("the tensor-parallel pairs need 2 GPUs for their collectives; this node has %d (the one-GPU parts are TestGPUGraphStreams and TestGPUGraphOffloadDecomposed)", len(b.Devices()))
	}
	const m, n, k = 8192, 8192, 8192
	var report []map[string]any
	for _, engine := range []scenarios.CommEngine{scenarios.EngineSM, scenarios.EngineDMA} {
		for _, chunks := range []int{1, 4} {
			ag := gemmOp("qkv", m, n, k, "ag")
			rs := commOp("rs", scenarios.ReduceScatter, m*n*2/2, "proj")
			if chunks > 1 {
				ag.Decompose, rs.Decompose = chunks, chunks
			}
			for _, sc := range []scenarios.Scenario{
				{Name: "gpu-graph-ag-gemm", GPUs: 2, Streams: []scenarios.StreamSpec{
					{Name: "tp", Ops: []scenarios.StreamOp{commOp("ag", scenarios.AllGather, m*k*2/2)}},
					{Name: "compute", Ops: []scenarios.StreamOp{ag}}}},
				{Name: "gpu-graph-gemm-rs", GPUs: 2, Streams: []scenarios.StreamSpec{
					{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("proj", m, n, k)}},
					{Name: "tp", Ops: []scenarios.StreamOp{rs}}}},
			} {
				st := scenarios.Strategy{CommEngine: engine}
				t.Run(fmt.Sprintf("%s/%s/%d", sc.Name, engine, chunks), func(t *testing.T) {
					r := measureGraph(t, b, sc, st, 5)
					comp, comm, conc := r.TComp.Median, r.TComm.Median, r.TC3.Median
					t.Logf("%s, %d chunks: GEMM alone %.3f ms, collective alone %.3f ms, T_c3 %.3f ms, T_ideal %.3f ms, F %s, U %.2f",
						engine, chunks, comp/1e6, comm/1e6, conc/1e6, r.TIdeal/1e6, fraction(r), r.Uplift)
					if conc < 0.9*max(comp, comm) {
						t.Errorf("together %.0f ns is shorter than the longer op alone (%.0f, %.0f)", conc, comp, comm)
					}
					report = append(report, map[string]any{"scenario": sc.Name, "comm_engine": engine, "chunks": chunks, "gemm_ns": comp, "comm_ns": comm,
						"t_c3_ns": conc, "t_ideal_ns": r.TIdeal, "fraction_of_ideal": r.FractionOfIdeal, "uplift": r.Uplift})
				})
			}
		}
	}
	writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-tp", map[string]any{"cases": report})
}
