package cuda

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// GPU tests of format-2 scenarios. The one-GPU parts (GEMM streams, host
// copies feeding GEMMs, decomposed offload) run on any node; the
// tensor-parallel pairs need 2 GPUs and skip on one, saying so. They call
// the backend directly (all three modes), and report what they saw to
// C3LAB_GRAPH_REPORT when set.

// runModes runs a graph scenario in the three modes and returns the runs.
func runModes(t *testing.T, b *Backend, sc scenarios.Scenario, st scenarios.Strategy, reps int) map[backends.Mode]backends.RunResult {
	t.Helper()
	out := map[backends.Mode]backends.RunResult{}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
		s := st.Normalize()
		if m != backends.ModeConcurrent {
			s = s.Isolated()
		}
		res, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: s, Mode: m, Reps: reps, Warmup: 2}, nil)
		if err != nil {
			t.Fatalf("%s %s: %v", sc.Name, m, err)
		}
		out[m] = res
	}
	return out
}

// medianWall is the median Wall of a run's repetitions.
func medianWall(res backends.RunResult) int64 {
	w := make([]int64, len(res.Reps))
	for i, r := range res.Reps {
		w[i] = r.Wall
	}
	sort.Slice(w, func(i, j int) bool { return w[i] < w[j] })
	return w[len(w)/2]
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
			runs := runModes(t, b, sc, st, 5)
			comp, comm, conc := medianWall(runs[backends.ModeCompute]), medianWall(runs[backends.ModeComm]), medianWall(runs[backends.ModeConcurrent])
			t.Logf("%s: GEMMs alone %.3f ms, copies alone %.3f ms, together %.3f ms, launch %+v", st, float64(comp)/1e6, float64(comm)/1e6, float64(conc)/1e6, runs[backends.ModeConcurrent].Explain)
			if float64(conc) < 0.9*float64(max(comp, comm)) || float64(conc) > 1.1*float64(comp+comm) {
				t.Errorf("together %d ns, alone %d and %d ns", conc, comp, comm)
			}
			for _, r := range runs[backends.ModeConcurrent].Reps {
				if len(r.Ops) != 2 || r.Ops[0] <= 0 || r.Ops[1] <= 0 {
					t.Errorf("rep %+v: both ops timed", r)
				}
			}
			writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-streams", map[string]any{"strategy": st.String(), "gemms_ns": comp, "copies_ns": comm, "together_ns": conc,
				"explain": runs[backends.ModeConcurrent].Explain})
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
	var col backends.Collector
	res, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Mode: backends.ModeConcurrent, Reps: 3, Warmup: 1}, &col)
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]backends.Span{}
	for _, s := range col.SpanList {
		if s.Rep == 2 {
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
	t.Logf("%d of 3 later copies start under the previous GEMM chunk; wall %d ns; launch %+v", overlap, res.Reps[2].Wall, res.Explain)
	writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-offload", map[string]any{"spans": spans, "overlap": overlap, "explain": res.Explain})
}

// Tensor-parallel pairs on 2 GPUs, whole and decomposed in 4: the
// all-gather's output is the GEMM's A, the GEMM's output the
// reduce-scatter's input, checked against the unchunked result before
// timing.
func TestGPUGraphTPPairs(t *testing.T) {
	b := openGPU(t)
	if len(b.Devices()) < 2 {
		t.Skipf("the tensor-parallel pairs need 2 GPUs for their collectives; this node has %d (the one-GPU parts are TestGPUGraphStreams and TestGPUGraphOffloadDecomposed)", len(b.Devices()))
	}
	const m, n, k = 8192, 8192, 8192
	for _, chunks := range []int{1, 4} {
		ag := gemmOp("qkv", m, n, k, "ag")
		ag.Decompose = chunks
		rs := commOp("rs", scenarios.ReduceScatter, m*n*2/2, "proj")
		rs.Decompose = chunks
		for _, sc := range []scenarios.Scenario{
			{Name: "gpu-graph-ag-gemm", GPUs: 2, Streams: []scenarios.StreamSpec{
				{Name: "tp", Ops: []scenarios.StreamOp{commOp("ag", scenarios.AllGather, m*k*2/2)}},
				{Name: "compute", Ops: []scenarios.StreamOp{ag}}}},
			{Name: "gpu-graph-gemm-rs", GPUs: 2, Streams: []scenarios.StreamSpec{
				{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("proj", m, n, k)}},
				{Name: "tp", Ops: []scenarios.StreamOp{rs}}}},
		} {
			t.Run(fmt.Sprintf("%s/%d", sc.Name, chunks), func(t *testing.T) {
				runs := runModes(t, b, sc, scenarios.Strategy{}, 5)
				comp, comm, conc := medianWall(runs[backends.ModeCompute]), medianWall(runs[backends.ModeComm]), medianWall(runs[backends.ModeConcurrent])
				t.Logf("%d chunks: GEMM alone %.3f ms, collective alone %.3f ms, together %.3f ms", chunks, float64(comp)/1e6, float64(comm)/1e6, float64(conc)/1e6)
				if float64(conc) < 0.9*float64(max(comp, comm)) {
					t.Errorf("together %d ns is shorter than the longer op alone (%d, %d)", conc, comp, comm)
				}
				writeReport(t, "C3LAB_GRAPH_REPORT", "gpu-graph-tp", map[string]any{"scenario": sc.Name, "chunks": chunks, "gemm_ns": comp, "comm_ns": comm, "together_ns": conc})
			})
		}
	}
}
