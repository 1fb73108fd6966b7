package cuda

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// gemmOp is a small bf16 GEMM stream op.
func gemmOp(name string, m, n, k int, after ...string) scenarios.StreamOp {
	return scenarios.StreamOp{Name: name, Kind: scenarios.OpKind(scenarios.GEMM), M: m, N: n, K: k, DType: scenarios.BF16, After: after}
}

// commOp is a communication stream op of bytes per rank.
func commOp(name string, c scenarios.Collective, bytes int64, after ...string) scenarios.StreamOp {
	return scenarios.StreamOp{Name: name, Kind: scenarios.OpKind(c), Bytes: scenarios.ByteSize(bytes), After: after}
}

// agGEMM is a TP all-gather feeding the GEMM that consumes it: each of gpus
// ranks holds m/gpus rows of A (k wide), gathered into the GEMM's m x k A.
func agGEMM(gpus, chunks int) scenarios.Scenario {
	const m, n, k = 64, 24, 32
	return scenarios.Scenario{Name: "ag-gemm", GPUs: gpus, Streams: []scenarios.StreamSpec{
		{Name: "tp", Ops: []scenarios.StreamOp{commOp("ag", scenarios.AllGather, int64(m*k*2/gpus))}},
		{Name: "compute", Ops: []scenarios.StreamOp{func() scenarios.StreamOp {
			o := gemmOp("qkv", m, n, k, "ag")
			o.Decompose = chunks
			return o
		}()}},
	}}
}

// gemmRS is a GEMM whose output a reduce-scatter reduces.
func gemmRS(gpus, chunks int) scenarios.Scenario {
	const m, n, k = 64, 24, 32
	rs := commOp("rs", scenarios.ReduceScatter, int64(m*n*2/gpus), "proj")
	rs.Decompose = chunks
	return scenarios.Scenario{Name: "gemm-rs", GPUs: gpus, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("proj", m, n, k)}},
		{Name: "tp", Ops: []scenarios.StreamOp{rs}},
	}}
}

// offload is a host-to-device reload feeding a GEMM on one GPU.
func offload(chunks int) scenarios.Scenario {
	const m, n, k = 64, 24, 32
	g := gemmOp("mlp", m, n, k, "reload")
	g.Decompose = chunks
	return scenarios.Scenario{Name: "offload", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "copy", Ops: []scenarios.StreamOp{commOp("reload", scenarios.HostToDevice, m*k*2)}},
		{Name: "compute", Ops: []scenarios.StreamOp{g}},
	}}
}

func runGraphOn(t *testing.T, f *fakeGPU, sc scenarios.Scenario, st scenarios.Strategy, mode backends.Mode) (backends.RunResult, *backends.Collector, error) {
	t.Helper()
	b := fakeBackend(t, f, Options{})
	c := &backends.Collector{}
	res, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: st, Mode: mode, Reps: 2}, c)
	return res, c, err
}

// linesWith returns the fake's log lines holding fragment.
func linesWith(f *fakeGPU, fragment string) []string {
	var out []string
	for _, l := range f.log {
		if strings.Contains(l, fragment) {
			out = append(out, l)
		}
	}
	return out
}

// A decomposed pair reads and writes real slices of one buffer: chunk i
// of the collective and of the GEMM at byte offset i*chunk, the gathered
// data the GEMM's A; the chunked result is checked against the unchunked
// one before timing (so a wrong offset fails the run), every instance is
// timed and on the timeline.
func TestGraphDecomposedPairs(t *testing.T) {
	for _, tc := range []struct {
		name   string
		sc     scenarios.Scenario
		chunks int
		// want are log fragments the run must show, one per chunk.
		want func(c int) []string
	}{
		{"all-gather -> GEMM", agGEMM(2, 4), 4, func(c int) []string {
			// A chunk of 16 rows x 32 bf16 = 1024 bytes; the output's 16 x 24 = 768.
			return []string{fmt.Sprintf("collective-at send+%d recv+%d", c*512, c*1024), fmt.Sprintf("gemm-at dev1 a+%d d+%d", c*1024, c*768)}
		}},
		{"GEMM -> reduce-scatter", gemmRS(2, 4), 4, func(c int) []string {
			return []string{fmt.Sprintf("collective-at send+%d recv+%d", c*768, c*384), fmt.Sprintf("gemm-at dev0 a+%d d+%d", c*1024, c*768)}
		}},
		{"h2d -> GEMM", offload(2), 2, func(c int) []string {
			return []string{fmt.Sprintf("gemm-at dev0 a+%d d+%d", c*2048, c*1536)}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(2)
			res, c, err := runGraphOn(t, f, tc.sc, scenarios.Strategy{}, backends.ModeConcurrent)
			if err != nil {
				t.Fatal(err)
			}
			for ch := 1; ch < tc.chunks; ch++ { // chunk 0 is at offset 0
				for _, w := range tc.want(ch) {
					if !f.logHas(w) {
						t.Errorf("chunk %d: no %q in the GPU calls:\n%s", ch, w, strings.Join(f.log, "\n"))
					}
				}
			}
			for _, r := range res.Reps {
				if len(r.Ops) != 2 || r.Ops[0] <= 0 || r.Ops[1] <= 0 || r.Wall < max(r.Compute, r.Comm) {
					t.Errorf("rep %+v: want both ops timed", r)
				}
			}
			// Every instance of both ops on every GPU, every repetition.
			spans := map[string]int{}
			for _, s := range c.SpanList {
				spans[fmt.Sprintf("%s[%d]", s.GraphOp, s.Instance)]++
			}
			if len(spans) != 2*tc.chunks {
				t.Errorf("spans of %d instances, want %d: %v", len(spans), 2*tc.chunks, spans)
			}
			for k, n := range spans {
				if n != 2*tc.sc.GPUs {
					t.Errorf("instance %s has %d spans, want one per GPU and repetition (%d)", k, n, 2*tc.sc.GPUs)
				}
			}
		})
	}
}

// A measurement alternates a decomposed strategy with its serial default
// (the whole pair) round after round: both are layouts of one set of
// buffers, allocated and filled once, and each layout is still verified
// and gives the right instance count.
func TestGraphDecompositionsShareBuffers(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	sc := agGEMM(2, 0)
	allocs := -1
	for round := range 3 {
		for _, chunks := range []int{4, 1, 2} {
			c := &backends.Collector{}
			_, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: scenarios.Strategy{Decompose: chunks}, Mode: backends.ModeConcurrent, Reps: 1}, c)
			if err != nil {
				t.Fatalf("round %d, %d chunks: %v", round, chunks, err)
			}
			n := 0
			for _, s := range c.SpanList {
				if s.GraphOp == "qkv" && s.Device == 0 {
					n++
				}
			}
			if n != chunks {
				t.Errorf("round %d: %d GEMM instances on GPU 0, want %d", round, n, chunks)
			}
		}
		if round == 0 {
			// The first round verified each layout (a decomposed GEMM is
			// checked against a whole one, in a scratch output).
			allocs = f.allocs
		}
	}
	if f.allocs != allocs {
		t.Errorf("%d allocations after the first round, %d after two more rounds of alternating decompositions; want none more", allocs, f.allocs)
	}
	for _, chunks := range []int{2, 4} {
		if !f.logHas(fmt.Sprintf("gemm-at dev1 a+%d", 1024*4/chunks)) {
			t.Errorf("no GEMM chunk at the offset of chunk 1 of %d", chunks)
		}
	}
}

// A wrong chunk is caught before timing: the fake's collective corrupts an
// element, and the check against the unchunked result fails the run.
func TestGraphVerificationCatchesWrongData(t *testing.T) {
	for _, sc := range []scenarios.Scenario{agGEMM(2, 4), gemmRS(2, 2)} {
		f := newFakeGPU(2)
		f.corrupt = true
		_, _, err := runGraphOn(t, f, sc, scenarios.Strategy{}, backends.ModeConcurrent)
		if err == nil || !strings.Contains(err.Error(), "wrong result") {
			t.Errorf("%s: a corrupt collective gave %v, want a wrong result", sc.Name, err)
		}
	}
}

// The chunked GEMM is compared with the whole one: output stored in the
// wrong block fails.
func TestCompareChunkedGEMM(t *testing.T) {
	whole := gemmSpec{M: 4, N: 2, K: 1, DType: scenarios.BF16}
	want := make([]byte, 2*8)
	for e := range 8 {
		encode(scenarios.BF16, float64(e+1), want[2*e:])
	}
	// Two chunks of 2 rows: chunk c's block holds rows 2c, 2c+1.
	got := make([]byte, 2*8)
	for c := range 2 {
		for j := range 2 {
			for i := range 2 {
				copy(got[2*(c*4+i+j*2):], want[2*(c*2+i+j*4):][:2])
			}
		}
	}
	if err := compareChunkedGEMM(whole, 2, 0, got, want); err != nil {
		t.Errorf("the right blocks: %v", err)
	}
	if err := compareChunkedGEMM(whole, 2, 0, want, want); err == nil {
		t.Error("the whole layout read as blocks passed")
	}
}

// The host enqueues in Graph.EnqueueOrder; each GPU's streams wait once
// on the common start, and each dependency across streams costs exactly
// one event wait per GPU (stream order covers the rest).
func TestGraphEnqueueOrderAndWaits(t *testing.T) {
	sc := scenarios.Scenario{Name: "fork", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("a", 16, 8, 8), gemmOp("b", 16, 8, 8, "ag")}},
		{Name: "comm", Ops: []scenarios.StreamOp{commOp("ag", scenarios.AllGather, 64, "a"), commOp("ar", scenarios.AllReduce, 64)}},
	}}
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{Ungated: true})
	_, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Mode: backends.ModeConcurrent, Reps: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// The verification run and the timed one: per run and GPU the first
	// stream joins the other, the other waits for the common start, and
	// two dependencies (ag after a, b after ag).
	if got, want := len(linesWith(f, "wait dev0")), 2*(2+2); got != want {
		t.Errorf("%d waits on GPU 0, want %d:\n%s", got, want, strings.Join(f.log, "\n"))
	}
	// Order of the timed run: a, then ag (comm), then b and ar.
	var kinds []string
	for _, l := range f.log[len(f.log)/2:] {
		if strings.HasPrefix(l, "gemm dev0") || strings.HasPrefix(l, "collective") && !strings.HasPrefix(l, "collective-at") {
			kinds = append(kinds, strings.Fields(l)[0]+" "+strings.Fields(l)[1])
		}
	}
	if got := strings.Join(kinds, ", "); !strings.HasSuffix(got, "gemm dev0, collective all-gather, gemm dev0, collective all-reduce") &&
		!strings.HasSuffix(got, "gemm dev0, collective all-gather, collective all-reduce, gemm dev0") {
		t.Errorf("enqueue order %s", got)
	}
}

// An op of count n reuses one buffer set; in an isolated mode its
// instances run one after another, each timed: the op's time is n times
// the instance's.
func TestGraphCountReuseAndSerialTiming(t *testing.T) {
	sc := scenarios.Scenario{Name: "count", GPUs: 1, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{func() scenarios.StreamOp { o := gemmOp("g", 16, 8, 8); o.Count = 3; return o }()}},
		{Name: "comm", Ops: []scenarios.StreamOp{func() scenarios.StreamOp {
			o := commOp("h", scenarios.HostToDevice, 1<<12)
			o.Count = 2
			return o
		}()}},
	}}
	f := newFakeGPU(1)
	res, c, err := runGraphOn(t, f, sc, scenarios.Strategy{}, backends.ModeCompute)
	if err != nil {
		t.Fatal(err)
	}
	// g: A, B, D; h: source and destination.
	if len(f.bufs) != 5 {
		t.Errorf("%d buffers, want one set per op (5)", len(f.bufs))
	}
	if f.logHas("gemm-at") {
		t.Error("an op that is not decomposed used offsets")
	}
	for _, r := range res.Reps {
		if r.Ops[0] != 3*f.gemmNs || r.Ops[1] != 0 || r.Compute != 3*f.gemmNs || r.Comm != 0 {
			t.Errorf("rep %+v: want the GEMM op 3 x %d ns alone", r, f.gemmNs)
		}
	}
	starts := map[int64]bool{}
	for _, s := range c.SpanList {
		if s.Rep == 0 {
			starts[s.Start] = true
		}
		if s.GraphOp != "g" || s.End-s.Start != f.gemmNs {
			t.Errorf("span %+v", s)
		}
	}
	if len(starts) != 3 {
		t.Errorf("instances start at %v, want 3 one after another", starts)
	}
}

// A dependency that never fires (the collective it waits for hangs) times
// out naming the instance still pending, and the backend stays usable and
// releases everything.
func TestGraphStalledDependency(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{RepTimeoutNanos: 5e6})
	sc := agGEMM(2, 2)
	ex := backends.Experiment{Scenario: sc, Mode: backends.ModeConcurrent, Reps: 1}
	if _, err := b.Run(context.Background(), ex, nil); err != nil {
		t.Fatal(err)
	}
	f.hang = true
	_, err := b.Run(context.Background(), ex, nil)
	if err == nil || !strings.Contains(err.Error(), "never ended") || !strings.Contains(err.Error(), "dependency") {
		t.Fatalf("a hung dependency: %v", err)
	}
	if f.aborted != 1 {
		t.Errorf("%d aborts, want 1", f.aborted)
	}
	if _, err := b.Run(context.Background(), ex, nil); err != nil {
		t.Errorf("after the timeout: %v", err)
	}
	b.do(func() { b.release() })
	if len(f.bufs) != 0 {
		t.Errorf("%d buffers held after release", len(f.bufs))
	}
}

// The launch gap is measured between an instance and what it waited for,
// and reported as a launch bound.
func TestGraphLaunchGap(t *testing.T) {
	f := newFakeGPU(2)
	res, _, err := runGraphOn(t, f, agGEMM(2, 2), scenarios.Strategy{}, backends.ModeConcurrent)
	if err != nil {
		t.Fatal(err)
	}
	// The fake starts an instance the moment its wait ends: no gap.
	for _, e := range res.Explain {
		t.Errorf("a gap on a fake that has none: %+v", e)
	}
	g, _ := agGEMM(2, 2).Graph(scenarios.Strategy{})
	ex := launchExplain(g, []int64{0, 3000}, 2)
	if len(ex) != 1 || ex[0].Bounds[0].Resource != backends.ResLaunch || ex[0].Bounds[0].Nanos != 1500 {
		t.Errorf("explain %+v", ex)
	}
}

// Collectives in a graph run on NCCL or c3lab's copy engines: NCCL's
// copy-engine path is refused naming the knob; host copies take the copy
// engines.
func TestGraphCommEngine(t *testing.T) {
	f := newFakeGPU(2)
	_, _, err := runGraphOn(t, f, agGEMM(2, 2), scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "comm_engine nccl-ce") {
		t.Errorf("nccl-ce collectives in a graph: %v", err)
	}
	f = newFakeGPU(2)
	if _, _, err := runGraphOn(t, f, agGEMM(2, 2), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm); err != nil || f.colls != 0 || f.copies == 0 {
		t.Errorf("dma collectives in a graph: %v, %d NCCL calls, %d copies", err, f.colls, f.copies)
	}
	f = newFakeGPU(1)
	if _, _, err := runGraphOn(t, f, offload(2), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm); err != nil {
		t.Fatal(err)
	}
	if f.copies == 0 || f.logHas("copy-kernel") && len(linesWith(f, "copy ")) == 0 {
		t.Errorf("host copies did not take the copy engines:\n%s", strings.Join(f.log, "\n"))
	}
}

// A host stall while a gated graph repetition is enqueued: the watchdog
// opens the gate, the repetition is thrown away and run again.
func TestGraphGateStall(t *testing.T) {
	f := newFakeGPU(2)
	// A watchdog far above what enqueuing takes on a loaded test machine,
	// and a stall that only the watchdog's opening of the gate ends.
	b := fakeBackend(t, f, Options{GateStallNanos: int64(time.Second)})
	ex := backends.Experiment{Scenario: agGEMM(2, 2), Mode: backends.ModeConcurrent, Reps: 2}
	if _, err := b.Run(context.Background(), ex, nil); err != nil {
		t.Fatal(err)
	}
	f.stallGEMMs, f.stall, f.stallUntilOpen, b.gateStalls = 1, 10*time.Second, true, 0
	res, err := b.Run(context.Background(), ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Reps) != 2 || b.gateStalls != 1 {
		t.Errorf("%d reps, %d stalls; want 2 clean reps after 1 stall", len(res.Reps), b.gateStalls)
	}
}

// opIndex is the index of the op named name in g.
func opIndex(t *testing.T, g *scenarios.Graph, name string) int {
	t.Helper()
	for i, o := range g.Ops {
		if o.Name == name {
			return i
		}
	}
	t.Fatalf("no op %q in the graph", name)
	return -1
}

// A copy or collective whose output a GEMM reads carries random
// full-mantissa operands in the timed runs (a GEMM on the test data's small
// integers runs faster under the power cap) and the checkable test data in
// the verification run; any other keeps its test data in both.
func TestGraphInputOfOpsFeedingGEMMs(t *testing.T) {
	const n = 4096
	cases := []struct {
		name  string
		sc    scenarios.Scenario
		op    string
		feeds bool
	}{
		{"h2d reload feeding a GEMM", offload(1), "reload", true},
		{"decomposed reload", offload(4), "reload", true},
		{"all-gather feeding a GEMM", agGEMM(2, 1), "ag", true},
		{"reduce-scatter of a GEMM's output", gemmRS(2, 1), "rs", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			g, err := tc.sc.Graph(scenarios.Strategy{})
			if err != nil {
				t.Fatal(err)
			}
			i := opIndex(t, g, tc.op)
			test := sendBytes(1, n/2)
			if g.Ops[i].Comm.Collective.IsHostCopy() {
				test = hostPattern(1, false, n)
			}
			if check := graphInput(g, i, 1, n, true); !bytes.Equal(check, test) {
				t.Errorf("verification input is not the test data")
			}
			timing := graphInput(g, i, 1, n, false)
			if len(timing) != n {
				t.Fatalf("timing input of %d bytes, want %d", len(timing), n)
			}
			want := test
			if tc.feeds {
				want = timingOperandBytes(scenarios.BF16, 1, 2, n/2)
			}
			if !bytes.Equal(timing, want) {
				t.Errorf("timing input: feeds a GEMM %v, but it is not the data that calls for", tc.feeds)
			}
			if ownInput(g, i) != tc.feeds {
				t.Errorf("ownInput = %v, want %v", !tc.feeds, tc.feeds)
			}
		})
	}
}

// After a verified and timed run the GEMM fed by a reload reads random
// operands: the reload's destination holds the timing data, not the test
// pattern the verification run checked.
func TestGraphFedGEMMReadsTimingData(t *testing.T) {
	for _, chunks := range []int{1, 4} {
		f := newFakeGPU(1)
		if _, _, err := runGraphOn(t, f, offload(chunks), scenarios.Strategy{}, backends.ModeConcurrent); err != nil {
			t.Fatal(err)
		}
		const m, k = 64, 32
		want := timingOperandBytes(scenarios.BF16, 0, 2, m*k)
		found := false
		for _, b := range f.bufs {
			if !b.host && bytes.Equal(b.data, want) {
				found = true
			}
		}
		if !found {
			t.Errorf("%d chunks: no device buffer holds the reload's timing data after the run", chunks)
		}
	}
}
