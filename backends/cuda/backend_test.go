package cuda

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// fakeBackend is a Backend driving fake GPUs.
func fakeBackend(t *testing.T, f *fakeGPU, opts Options) *Backend {
	t.Helper()
	b := newBackend(opts)
	b.do(func() { b.attach(f) })
	t.Cleanup(func() { b.Close() })
	return b
}

// small scenarios keep the fake's real arithmetic cheap.
func smallGEMM(coll scenarios.Collective) scenarios.Scenario {
	return scenarios.Scenario{
		Name: "small", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 48, N: 40, K: 32, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: coll, Bytes: 4096},
	}
}

func run(t *testing.T, b *Backend, sc scenarios.Scenario, st scenarios.Strategy, mode backends.Mode) (backends.RunResult, error) {
	t.Helper()
	return b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: st, Mode: mode, Reps: 2}, nil)
}

func TestLaunchOrderAndSharedStart(t *testing.T) {
	for _, tc := range []struct {
		launch scenarios.LaunchOrder
		first  string
	}{
		{scenarios.ComputeFirst, "gemm"},
		{scenarios.CommFirst, "collective"},
	} {
		t.Run(string(tc.launch), func(t *testing.T) {
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{})
			if _, err := run(t, b, smallGEMM(scenarios.AllGather), scenarios.Strategy{Launch: tc.launch}, backends.ModeConcurrent); err != nil {
				t.Fatal(err)
			}
			// After verification, the timed reps: waits, then ops in order.
			var ops []string
			for _, l := range f.log {
				if strings.HasPrefix(l, "gemm") || strings.HasPrefix(l, "collective") {
					ops = append(ops, strings.Fields(l)[0])
				}
			}
			// verification runs gemm x2 then collective; then each rep.
			rep := ops[3:]
			if rep[0] != tc.first {
				t.Errorf("first op of a repetition is %s, want %s (log %v)", rep[0], tc.first, ops)
			}
			if !f.logHas("wait dev1") {
				t.Error("the second stream never waited for the shared start event")
			}
		})
	}
}

func TestTimesFromEvents(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.AllGather)
	res, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeCompute)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Reps[0]; got.Compute != f.gemmNs || got.Wall != f.gemmNs || got.Comm != 0 {
		t.Errorf("isolated compute rep %+v, want compute = wall = %d", got, f.gemmNs)
	}
	res, err = run(t, b, sc, scenarios.Strategy{}, backends.ModeComm)
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Reps[0]; got.Comm != f.commNs || got.Compute != 0 {
		t.Errorf("isolated comm rep %+v, want comm = %d", got, f.commNs)
	}
	var col backends.Collector
	res, err = b.Run(context.Background(), backends.Experiment{Scenario: sc, Mode: backends.ModeConcurrent, Reps: 3}, &col)
	if err != nil {
		t.Fatal(err)
	}
	// The fake runs the streams independently: both ops from the shared start.
	if got := res.Reps[2]; got.Compute != f.gemmNs || got.Comm != f.commNs || got.Wall != f.gemmNs {
		t.Errorf("concurrent rep %+v", got)
	}
	if len(col.SpanList) != 3*2*2 {
		t.Errorf("%d spans, want 3 reps x 2 GPUs x 2 ops", len(col.SpanList))
	}
}

func TestStrategyApplication(t *testing.T) {
	for _, tc := range []struct {
		name string
		st   scenarios.Strategy
		want []string // fragments that must appear in the fake's log
	}{
		{"priority", scenarios.Strategy{CommPriority: -5}, []string{"prio=-5 part={GroupSMs:0 Rest:false Structured:0}"}},
		{"comm partition", scenarios.Strategy{CommSMs: 32}, []string{"prio=0 part={GroupSMs:32 Rest:false Structured:0}", "prio=0 part={GroupSMs:32 Rest:true Structured:0}", "target=100"}},
		{"compute partition", scenarios.Strategy{ComputeSMs: 64}, []string{"part={GroupSMs:64 Rest:false Structured:0}", "target=64"}},
		{"GEMM SM target", scenarios.Strategy{GEMMSMTarget: 96}, []string{"target=96"}},
		{"CTA cap", scenarios.Strategy{CommCTAs: 8}, []string{"ctas=8"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{})
			if _, err := run(t, b, smallGEMM(scenarios.ReduceScatter), tc.st, backends.ModeConcurrent); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !f.logHas(w) {
					t.Errorf("log lacks %q:\n%s", w, strings.Join(f.log, "\n"))
				}
			}
		})
	}
}

func TestRefusesWhatItCannotDo(t *testing.T) {
	b := fakeBackend(t, newFakeGPU(2), Options{})
	for _, tc := range []struct {
		name string
		sc   scenarios.Scenario
		st   scenarios.Strategy
		want string
	}{
		{"dma all-reduce that does not split", func() scenarios.Scenario { s := smallGEMM(scenarios.AllReduce); s.Comm.Bytes = 4098; return s }(), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, "do not split evenly"},
		{"both partitions", smallGEMM(scenarios.AllGather), scenarios.Strategy{CommSMs: 32, ComputeSMs: 64}, "compute_sms"},
		{"too many GPUs", func() scenarios.Scenario { s := smallGEMM(scenarios.AllGather); s.GPUs = 4; return s }(), scenarios.Strategy{}, "at most 2"},
		{"odd bytes", func() scenarios.Scenario { s := smallGEMM(scenarios.AllGather); s.Comm.Bytes = 4097; return s }(), scenarios.Strategy{}, "odd"},
		{"more than the GPU's memory", func() scenarios.Scenario { s := smallGEMM(scenarios.AllReduce); s.Comm.Bytes = 8 << 30; return s }(), scenarios.Strategy{}, "but Fake H200 has 8.0 GiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := run(t, b, tc.sc, tc.st, backends.ModeConcurrent)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
}

func TestVerifiesOnceAndRejectsWrongResults(t *testing.T) {
	for _, coll := range scenarios.Collectives {
		t.Run(string(coll), func(t *testing.T) {
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{})
			sc := smallGEMM(coll)
			if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err != nil {
				t.Fatal(err)
			}
			before := f.colls
			if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err != nil {
				t.Fatal(err)
			}
			if f.colls != before+2 {
				t.Errorf("second run made %d collective calls, want 2 (no second verification)", f.colls-before)
			}
			bad := newFakeGPU(2)
			bad.corrupt = true
			bb := fakeBackend(t, bad, Options{})
			_, err := run(t, bb, sc, scenarios.Strategy{}, backends.ModeComm)
			if err == nil || !strings.Contains(err.Error(), "wrong result") {
				t.Errorf("corrupt collective: error %v", err)
			}
		})
	}
}

func TestGEMMVerificationPerDType(t *testing.T) {
	for _, d := range scenarios.DTypes {
		t.Run(string(d), func(t *testing.T) {
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{})
			sc := smallGEMM(scenarios.AllGather)
			sc.Compute.DType = d
			if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeCompute); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestMemoryCheckedBeforeAllocating(t *testing.T) {
	f := newFakeGPU(2)
	f.free = 64 << 20
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.AllGather)
	sc.Comm.Bytes = 256 << 20
	_, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "GiB is free") {
		t.Fatalf("error %v", err)
	}
	if len(f.bufs) != 0 {
		t.Errorf("%d buffers allocated for a scenario that does not fit", len(f.bufs))
	}
}

func TestHangIsAbortedAndBackendStaysUsable(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{RepTimeoutNanos: 50e6})
	sc := smallGEMM(scenarios.AllGather)
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err != nil { // verifies first
		t.Fatal(err)
	}
	f.hang = true
	_, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "aborted") || f.aborted != 1 {
		t.Fatalf("error %v, aborts %d", err, f.aborted)
	}
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err != nil {
		t.Errorf("after an abort the backend should run again: %v", err)
	}
}

func TestCancelledContextStops(t *testing.T) {
	b := fakeBackend(t, newFakeGPU(2), Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Run(ctx, backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Mode: backends.ModeComm, Reps: 5}, nil)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
}

func TestCloseFreesEverything(t *testing.T) {
	f := newFakeGPU(2)
	b := newBackend(Options{})
	b.do(func() { b.attach(f) })
	if _, err := run(t, b, smallGEMM(scenarios.AllToAll), scenarios.Strategy{}, backends.ModeConcurrent); err != nil {
		t.Fatal(err)
	}
	// A new scenario shape releases the old buffers first.
	sc := smallGEMM(scenarios.AllToAll)
	sc.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 16}
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeConcurrent); err != nil {
		t.Fatal(err)
	}
	if n := len(f.bufs); n != 2*4 {
		t.Errorf("%d live buffers for one stream-op scenario on 2 GPUs, want 8 (in, out, send, recv each)", n)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !f.closed || len(f.bufs) != 0 {
		t.Errorf("after Close: closed=%v, %d buffers", f.closed, len(f.bufs))
	}
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeConcurrent); err == nil {
		t.Error("a closed backend ran an experiment")
	}
}

// The profiler's protocol runs unchanged on the cuda backend.
func TestMeasureOnFakeGPUs(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	r, err := profiler.Measure(context.Background(), b, smallGEMM(scenarios.AllGather), scenarios.Strategy{CommPriority: -5}, profiler.Options{Reps: 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.TComp.Median != float64(f.gemmNs) || r.TComm.Median != float64(f.commNs) {
		t.Errorf("medians %v / %v", r.TComp.Median, r.TComm.Median)
	}
	if f, ok := r.Fraction(); !ok || f != 1 {
		t.Errorf("fraction %v (the fake overlaps perfectly)", f)
	}
}

// Copy-engine collectives: correct results, copies spread over the engines,
// no NCCL call and no kernel for the collective.
func TestCopyEngineCollectives(t *testing.T) {
	for _, tc := range []struct {
		name          string
		gpus          int
		coll          scenarios.Collective
		st            scenarios.Strategy
		copiesPerRank int // per repetition
		streams       int // copy streams that carried copies, per rank
	}{
		// Unchunked, one copy per peer: on 2 GPUs one stream works.
		{"all-gather", 2, scenarios.AllGather, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1, 1},
		{"all-gather, 4 GPUs: a peer per engine", 4, scenarios.AllGather, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 3, 3},
		{"all-gather, 4 GPUs, 2 engines", 4, scenarios.AllGather, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 2}, 3, 2},
		{"all-gather, 64 KiB chunks over the engines", 2, scenarios.AllGather, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10}, 4, 3},
		{"all-to-all (peer block only)", 2, scenarios.AllToAll, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1, 1},
		{"reduce-scatter, add after the copies", 2, scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1, 1},
		{"all-reduce, add after the copies", 2, scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 2, 1},
		// In a comm partition the add is pipelined with the copies: one
		// copy per chunk (256 KiB in 64 KiB chunks), and for the
		// all-reduce (128 KiB blocks) 2 chunks each way.
		{"reduce-scatter, pipelined", 2, scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16, ChunkBytes: 64 << 10}, 4, 3},
		{"all-reduce, pipelined", 2, scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 8, ChunkBytes: 64 << 10}, 4, 4},
		{"all-reduce, pipelined, one chunk", 2, scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 8}, 2, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(tc.gpus)
			// The copies are counted per repetition: the gate's watchdog,
			// which runs a repetition again when enqueuing it takes past
			// GateStallNanos (on a loaded machine it did: 2 copies where 1
			// was due), must not fire here.
			b := fakeBackend(t, f, Options{GateStallNanos: int64(time.Minute)})
			sc := smallGEMM(tc.coll)
			sc.GPUs, sc.Comm.Bytes = tc.gpus, 256<<10
			if _, err := run(t, b, sc, tc.st, backends.ModeComm); err != nil {
				t.Fatal(err)
			}
			if f.colls != 0 {
				t.Errorf("%d NCCL calls for a copy-engine collective", f.colls)
			}
			before := f.copies
			if _, err := run(t, b, sc, tc.st, backends.ModeComm); err != nil {
				t.Fatal(err)
			}
			if got := (f.copies - before) / 2 / tc.gpus; got != tc.copiesPerRank {
				t.Errorf("%d copies per rank per repetition, want %d", got, tc.copiesPerRank)
			}
			var sink backends.Collector
			if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: tc.st, Mode: backends.ModeComm, Reps: 1}, &sink); err != nil {
				t.Fatal(err)
			}
			streams := 0
			for _, sp := range sink.SpanList {
				if sp.Device == 0 && strings.HasPrefix(sp.Track, "ce") {
					streams++
				}
			}
			if streams != tc.streams {
				t.Errorf("%d copy streams carried copies on GPU 0, want %d", streams, tc.streams)
			}
			bad := newFakeGPU(tc.gpus)
			bb := fakeBackend(t, bad, Options{})
			bb.do(func() { bb.attach(&corruptingCopies{bad}) })
			if _, err := run(t, bb, sc, tc.st, backends.ModeComm); err == nil || !strings.Contains(err.Error(), "wrong result") {
				t.Errorf("corrupted copies: error %v", err)
			}
		})
	}
}

// corruptingCopies drops the last byte of every copy.
type corruptingCopies struct{ *fakeGPU }

func (c *corruptingCopies) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	return c.fakeGPU.CopyPeer(dst, dstOff, src, srcOff, n-1, s)
}

// With the gate, timed repetitions hold every GPU's first stream at the
// start gate until all ops are enqueued; warm-up repetitions run ungated.
func TestGatedRepetitions(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.AllGather)
	if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Mode: backends.ModeConcurrent, Reps: 2, Warmup: 1}, nil); err != nil {
		t.Fatal(err)
	}
	// verification (gemm x2, collective), one ungated warm-up, then two
	// gated reps: gate-wait x2, gemm x2, collective, one gate-open.
	want := []string{"gemm", "gemm", "collective", "gemm", "gemm", "collective"}
	for range 2 {
		want = append(want, "gate-wait", "gate-wait", "gemm", "gemm", "collective", "gate-open")
	}
	if got := callSequence(f); got != strings.Join(want, " ") {
		t.Errorf("call order\n got %v\nwant %v", got, want)
	}
}

// callSequence is the fake's log reduced to the gate, GEMM and collective calls.
func callSequence(f *fakeGPU) string {
	var seq []string
	for _, l := range f.log {
		for _, k := range []string{"gate-wait", "gate-open", "gemm", "collective"} {
			if strings.HasPrefix(l, k) {
				seq = append(seq, k)
			}
		}
	}
	return strings.Join(seq, " ")
}

// A host stall while a gated repetition is enqueued (a library waiting on
// the device the gate holds) cannot deadlock: the watchdog opens the gate,
// the repetition is thrown away and run again, and after maxGateStalls the
// experiment finishes ungated.
func TestGateWatchdog(t *testing.T) {
	for _, tc := range []struct {
		name       string
		stallGEMMs int
		wantStalls int
		wantGated  int // gated repetitions that completed
	}{
		{name: "one stall is retried", stallGEMMs: 1, wantStalls: 1, wantGated: 2},
		{name: "persistent stalls fall back to ungated", stallGEMMs: 1000, wantStalls: maxGateStalls, wantGated: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(2)
			// A watchdog far above what enqueuing a clean repetition takes
			// on a loaded test machine (a few ms; under 300 ms once seen
			// with every package's tests running at once), and a stall that
			// only the watchdog's opening of the gate ends (10 s at most),
			// so each stall costs the watchdog's second and no more.
			b := fakeBackend(t, f, Options{GateStallNanos: int64(time.Second)})
			sc := smallGEMM(scenarios.AllGather)
			ex := backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 2}
			if _, err := b.Run(context.Background(), ex, nil); err != nil { // verifies and loads everything
				t.Fatal(err)
			}
			f.log, f.stall, f.stallUntilOpen, f.stallGEMMs, b.gateStalls = nil, 10*time.Second, true, tc.stallGEMMs, 0
			res, err := b.Run(context.Background(), ex, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Reps) != 2 {
				t.Errorf("%d repetitions, want 2", len(res.Reps))
			}
			if b.gateStalls != tc.wantStalls {
				t.Errorf("%d stalls counted, want %d", b.gateStalls, tc.wantStalls)
			}
			// A stalled repetition's gate opens before its GEMMs are
			// enqueued (the fake stalls before it logs the GEMM).
			seq := callSequence(f)
			if got := strings.Count(seq, "gate-wait gate-wait gate-open gemm gemm"); got != tc.wantStalls {
				t.Errorf("%d watchdog openings in %q, want %d", got, seq, tc.wantStalls)
			}
			if got := strings.Count(seq, "gate-wait gate-wait gemm gemm gate-open"); got != tc.wantGated {
				t.Errorf("%d clean gated repetitions in %q, want %d", got, seq, tc.wantGated)
			}
		})
	}
}

// Copy-engine reductions on 4 GPUs add 4 blocks per rank, correctly.
func TestCopyEngineReductionsOnFourGPUs(t *testing.T) {
	for _, coll := range []scenarios.Collective{scenarios.ReduceScatter, scenarios.AllReduce} {
		f := newFakeGPU(4)
		b := fakeBackend(t, f, Options{})
		sc := smallGEMM(coll)
		sc.GPUs, sc.Comm.Bytes = 4, 256<<10
		if _, err := run(t, b, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm); err != nil {
			t.Fatalf("%s: %v", coll, err)
		}
		if !f.logHas("reduce dev3 4 sources") || f.colls != 0 {
			t.Errorf("%s: no 4-source reduction, or NCCL was called (%d)", coll, f.colls)
		}
	}
}

// NCCL's copy-engine path: symmetric buffers registered as windows once per
// communicator config, a communicator with CTA policy 2, results verified.
func TestNCCLCopyEnginePath(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	st := scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}
	for _, coll := range []scenarios.Collective{scenarios.AllGather, scenarios.AllToAll} {
		sc := smallGEMM(coll)
		for range 2 {
			if _, err := run(t, b, sc, st, backends.ModeConcurrent); err != nil {
				t.Fatalf("%s: %v", coll, err)
			}
		}
	}
	windows, policy2 := 0, 0
	for _, l := range f.log {
		if strings.HasPrefix(l, "windows policy=2 ranks=2") {
			windows++
		}
		if strings.HasPrefix(l, "collective") && strings.HasSuffix(l, "policy=2") {
			policy2++
		}
	}
	// Two scenarios x (send, recv) windows; every collective on policy 2.
	if windows != 4 || policy2 == 0 || policy2 != f.colls {
		t.Errorf("%d window registrations (want 4), %d of %d collectives on CTA policy 2", windows, policy2, f.colls)
	}
	if !f.logHas("alloc-symmetric") {
		t.Error("no symmetric memory allocated")
	}
	_, err := run(t, b, smallGEMM(scenarios.ReduceScatter), st, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "all-gather and all-to-all") {
		t.Errorf("reduce-scatter on NCCL's copy engines: %v", err)
	}
}

// Timing operands are finite, of magnitude 0.25..4, and use every
// mantissa bit (their power draw should match real data's).
func TestTimingOperandBytes(t *testing.T) {
	for _, tc := range []struct {
		d        scenarios.DType
		mantBits int
	}{{scenarios.BF16, 7}, {scenarios.FP16, 10}, {scenarios.FP32, 23}, {scenarios.FP8, 3}} {
		data := timingOperandBytes(tc.d, 1, 0, 4096)
		size := int(tc.d.Size())
		distinct := map[float64]bool{}
		var mantOr uint64
		for i := 0; i < len(data); i += size {
			var v float64
			switch tc.d {
			case scenarios.FP8:
				e, m := int(data[i]>>3&15), float64(data[i]&7)
				v = math.Ldexp(1+m/8, e-7)
				if data[i]>>7 == 1 {
					v = -v
				}
				mantOr |= uint64(data[i] & 7)
			case scenarios.FP32:
				bits := binary.LittleEndian.Uint32(data[i:])
				v = float64(math.Float32frombits(bits))
				mantOr |= uint64(bits & (1<<23 - 1))
			default:
				v = decode(tc.d, data[i:])
				bits := binary.LittleEndian.Uint16(data[i:])
				mantOr |= uint64(bits) & (1<<tc.mantBits - 1)
			}
			if a := math.Abs(v); math.IsNaN(v) || a < 0.25 || a >= 4 {
				t.Fatalf("%s element %d = %v, want magnitude in [0.25, 4)", tc.d, i/size, v)
			}
			distinct[v] = true
		}
		if mantOr != 1<<tc.mantBits-1 {
			t.Errorf("%s: mantissa bits used %b, want all %d", tc.d, mantOr, tc.mantBits)
		}
		if len(distinct) < 64 {
			t.Errorf("%s: only %d distinct values in 4096", tc.d, len(distinct))
		}
	}
}

// A copy-engine collective reports one span per copy stream that carried
// copies (tracks ce0, ce1, ...) inside the collective's own span, so the
// timeline shows what each engine did; an NCCL collective reports none.
func TestCopyEngineSpans(t *testing.T) {
	for _, tc := range []struct {
		name    string
		coll    scenarios.Collective
		st      scenarios.Strategy
		engines int
		tracks  []string // when not ce0..ce(engines-1)
	}{
		{"all-gather, one peer: one engine", scenarios.AllGather, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1, nil},
		{"all-to-all, 1 engine", scenarios.AllToAll, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1}, 1, nil},
		{"all-reduce, 2 phases on one stream", scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, 1, nil},
		// One chunk: one pull stream (ce0) and one gather stream (ce3) work.
		{"all-reduce, pipelined: pulls and gathers", scenarios.AllReduce, scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}, 2, []string{"ce0", "ce3"}},
		{"nccl", scenarios.AllGather, scenarios.Strategy{}, 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tracks == nil {
				for k := range tc.engines {
					tc.tracks = append(tc.tracks, fmt.Sprintf("ce%d", k))
				}
			}
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{})
			var sink backends.Collector
			ex := backends.Experiment{Scenario: smallGEMM(tc.coll), Strategy: tc.st, Mode: backends.ModeConcurrent, Reps: 1}
			if _, err := b.Run(context.Background(), ex, &sink); err != nil {
				t.Fatal(err)
			}
			comm := map[int]backends.Span{}
			ce := map[int][]backends.Span{}
			for _, s := range sink.SpanList {
				switch {
				case s.Track == "comm":
					comm[s.Device] = s
				case strings.HasPrefix(s.Track, "ce"):
					ce[s.Device] = append(ce[s.Device], s)
				}
			}
			util := 0
			for _, smp := range sink.SampleList {
				if smp.Metric == backends.MetricCopyStreamsBusy {
					util++
				}
			}
			if (util > 0) != (tc.engines > 0) {
				t.Errorf("%d busy-copy-stream samples with %d engines in use", util, tc.engines)
			}
			for dev := range 2 {
				if len(ce[dev]) != tc.engines {
					t.Fatalf("GPU %d: %d copy-engine spans, want %d", dev, len(ce[dev]), tc.engines)
				}
				for k, s := range ce[dev] {
					if s.Track != tc.tracks[k] || s.Kind != "copy" || s.End <= s.Start || s.Start < comm[dev].Start || s.End > comm[dev].End {
						t.Errorf("GPU %d span %+v, inside comm span %d..%d", dev, s, comm[dev].Start, comm[dev].End)
					}
				}
			}
		})
	}
}

// Busy copy streams come from the copy streams' spans: their share of the
// device's engines, piecewise constant, per device.
func TestCopyEngineSamples(t *testing.T) {
	ce := func(dev, k int, s, e int64) backends.Span {
		return backends.Span{Device: dev, Track: fmt.Sprintf("ce%d", k), Kind: "copy", Start: s, End: e}
	}
	for _, tc := range []struct {
		name    string
		spans   []backends.Span
		engines int
		want    string // dev@t=value, in order
	}{
		{"one engine of three", []backends.Span{ce(0, 0, 10, 50)}, 3, "0@10=0.33 0@50=0"},
		{"overlapping", []backends.Span{ce(0, 0, 0, 100), ce(0, 1, 20, 60), ce(0, 2, 20, 100)}, 3, "0@0=0.33 0@20=1 0@60=0.67 0@100=0"},
		{"back to back on one engine", []backends.Span{ce(0, 0, 0, 10), ce(0, 0, 10, 20)}, 1, "0@0=1 0@20=0"},
		{"two devices", []backends.Span{ce(1, 0, 5, 9), ce(0, 0, 1, 2)}, 1, "0@1=1 0@2=0 1@5=1 1@9=0"},
		{"kernels and comm spans ignored", []backends.Span{{Track: "comm", Kind: "copy", Start: 0, End: 9}, {Track: "compute", Kind: "kernel", Start: 0, End: 9}}, 3, ""},
		{"no engines", []backends.Span{ce(0, 0, 0, 9)}, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range copyEngineSamples(tc.spans, tc.engines, 4) {
				if s.Metric != backends.MetricCopyStreamsBusy || s.Rep != 4 {
					t.Errorf("sample %+v", s)
				}
				got = append(got, fmt.Sprintf("%d@%d=%.2g", s.Device, s.Time, s.Value))
			}
			if g := strings.Join(got, " "); g != tc.want {
				t.Errorf("got %q, want %q", g, tc.want)
			}
		})
	}
}

// Copy-engine collectives on 8 GPUs are correct (Run verifies them), and
// every round of copies is a permutation: each GPU receives from exactly
// one peer per round, so no GPU's NVLink ports take all 7 senders at once.
func TestCopyEngineCollectivesOnEightGPUs(t *testing.T) {
	for _, coll := range scenarios.Collectives {
		t.Run(string(coll), func(t *testing.T) {
			f := newFakeGPU(8)
			b := fakeBackend(t, f, Options{})
			sc := smallGEMM(coll)
			sc.GPUs, sc.Comm.Bytes = 8, 256<<10
			for _, st := range []scenarios.Strategy{
				{CommEngine: scenarios.EngineDMA},
				{CommEngine: scenarios.EngineDMA, CommSMs: 16, ChunkBytes: 64 << 10},
			} {
				if _, err := run(t, b, sc, st, backends.ModeComm); err != nil {
					t.Fatalf("%v: %v", st, err)
				}
			}
			if f.colls != 0 {
				t.Errorf("%d NCCL calls for a copy-engine collective", f.colls)
			}
		})
	}
	p := &prepared{gpus: 8}
	for r := range 8 {
		p.send = append(p.send, bufID(100+r))
		p.recv = append(p.recv, bufID(200+r))
		p.staging = append(p.staging, bufID(300+r))
	}
	owner := func(id bufID) int { return int(id) % 100 }
	for _, kind := range scenarios.Collectives {
		c := collective{Kind: kind, Count: 8 << 10}
		rounds := map[int]map[int]bool{} // round -> receivers
		for q := range 8 {
			ts := dmaTransfers(c, p, q)
			if len(ts) != 7 {
				t.Fatalf("%s: rank %d sends %d transfers, want 7 (peers only)", kind, q, len(ts))
			}
			for j, tr := range ts {
				if rounds[j] == nil {
					rounds[j] = map[int]bool{}
				}
				dst := owner(tr.dst)
				if dst == q || rounds[j][dst] {
					t.Errorf("%s round %d: rank %d sends to %d, already a receiver this round (or itself)", kind, j, q, dst)
				}
				rounds[j][dst] = true
			}
		}
	}
}

// Without peer access between two GPUs, copy-engine collectives are
// refused with a reason (a "peer" copy would go through host memory);
// NCCL still runs.
func TestCopyEnginesNeedPeerAccess(t *testing.T) {
	f := newFakeGPU(2)
	f.devs[1].Peers = nil
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.AllGather)
	_, err := run(t, b, sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "GPU 1 cannot map GPU 0") || !strings.Contains(err.Error(), "comm_engine sm") {
		t.Errorf("copy engines without P2P: error %v", err)
	}
	if _, err := run(t, b, sc, scenarios.Strategy{}, backends.ModeComm); err != nil {
		t.Errorf("NCCL without P2P: %v", err)
	}
}

// A pipelined reduction whose kernel gave up waiting for its copies (the
// status word set) fails the experiment with the reason, rather than
// report times of a wrong result; the next experiment starts clean.
func TestPipelinedReductionTimeout(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	g := &timingOutReduction{fakeGPU: f, fail: true}
	b.do(func() { b.attach(g) })
	sc := smallGEMM(scenarios.ReduceScatter)
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 8}
	_, err := run(t, b, sc, st, backends.ModeConcurrent)
	if err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Fatalf("timed-out reduction: error %v", err)
	}
	g.fail = false
	if _, err := run(t, b, sc, st, backends.ModeConcurrent); err != nil {
		t.Errorf("the next experiment: %v", err)
	}
	// A timeout in a timed repetition only, after verification passed.
	g.fail, g.after = true, f.pipeReduces+2
	if _, err := run(t, b, scenarios.Scenario{Name: "other", GPUs: 2, Compute: sc.Compute, Comm: scenarios.CommOp{Collective: scenarios.ReduceScatter, Bytes: 8192}}, st, backends.ModeConcurrent); err == nil || !strings.Contains(err.Error(), "gave up") {
		t.Errorf("a timeout in a timed repetition: error %v", err)
	}
	if f.pipeReduces == 0 || f.pipeGrids[0] != 8*pipeCTAsPerSM {
		t.Errorf("%d pipelined reductions, grids %v", f.pipeReduces, f.pipeGrids)
	}
}

// timingOutReduction sets the status word as a kernel that timed out does.
type timingOutReduction struct {
	*fakeGPU
	fail  bool
	after int // with fail, only calls past this many pipelined reductions time out
}

func (g *timingOutReduction) ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error {
	if err := g.fakeGPU.ReducePipelined(s, out, srcs, n, ps); err != nil {
		return err
	}
	if g.fail && g.pipeReduces > g.after {
		g.bufs[ps.sync].data[0] |= native.ReduceSyncStatusTimeout
	}
	return nil
}

func TestPipeChunk(t *testing.T) {
	for _, tc := range []struct{ n, chunkBytes, want int64 }{
		{64 << 20, 0, 4 << 20},        // 128 MiB blocks: 8 MiB chunks
		{1 << 30, 0, 1 << 24},         // 2 GiB blocks: 64 chunks of 32 MiB
		{1000, 0, 1000},               // smaller than one chunk: one chunk
		{1001, 0, 1008},               // rounded up to 16 bytes
		{64 << 20, 8 << 20, 4 << 20},  // chunk_bytes as asked
		{64 << 20, 64 << 10, 1 << 20}, // at most 64 chunks
	} {
		if got := pipeChunk(tc.n, tc.chunkBytes); got != tc.want {
			t.Errorf("pipeChunk(%d, %d) = %d, want %d", tc.n, tc.chunkBytes, got, tc.want)
		}
		if got := pipeChunk(tc.n, tc.chunkBytes); (tc.n+got-1)/got > pipeMaxChunks || got%8 != 0 {
			t.Errorf("pipeChunk(%d, %d) = %d: too many chunks or not 16-byte words", tc.n, tc.chunkBytes, got)
		}
	}
}

// Pushed (the default) and pulled chunks give the same pipelined
// reduction, on 2 and 4 GPUs.
func TestPipelinedReductionPushAndPull(t *testing.T) {
	for _, pull := range []bool{false, true} {
		for _, gpus := range []int{2, 4} {
			for _, coll := range []scenarios.Collective{scenarios.ReduceScatter, scenarios.AllReduce} {
				f := newFakeGPU(gpus)
				b := fakeBackend(t, f, Options{PipePull: pull})
				sc := smallGEMM(coll)
				sc.GPUs, sc.Comm.Bytes = gpus, 512<<10
				st := scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 8, ChunkBytes: 64 << 10}
				if _, err := run(t, b, sc, st, backends.ModeConcurrent); err != nil {
					t.Errorf("pull=%v, %d GPUs, %s: %v", pull, gpus, coll, err)
				}
				if f.pipeReduces == 0 {
					t.Errorf("pull=%v, %d GPUs, %s: no pipelined reduction ran", pull, gpus, coll)
				}
			}
		}
	}
}

// With both compute_sms and comm_sms, the GEMM gets the aligned group of
// the split and the collective the rest; a pipelined reduction sizes its
// grid for the rest. A pair that does not add up to the GPU is refused.
func TestComputeGroupCommRest(t *testing.T) {
	f := newFakeGPU(2)
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.AllReduce)
	st := scenarios.Strategy{CommEngine: scenarios.EngineDMA, Launch: scenarios.CommFirst, ComputeSMs: 112, CommSMs: 20}
	if _, err := run(t, b, sc, st, backends.ModeConcurrent); err != nil {
		t.Fatal(err)
	}
	parts := map[partition]bool{}
	for _, s := range f.streams {
		parts[s.spec.Partition] = true
	}
	if !parts[partition{GroupSMs: 112}] || !parts[partition{GroupSMs: 112, Rest: true}] {
		t.Errorf("stream partitions %v, want the 112-SM group and its rest", parts)
	}
	if len(f.pipeGrids) == 0 || f.pipeGrids[0] != 20*pipeCTAsPerSM {
		t.Errorf("pipelined grids %v, want %d", f.pipeGrids, 20*pipeCTAsPerSM)
	}
	bad := scenarios.Strategy{CommEngine: scenarios.EngineDMA, ComputeSMs: 104, CommSMs: 16}
	if _, err := run(t, b, sc, bad, backends.ModeConcurrent); err == nil || !strings.Contains(err.Error(), "must be the 28 SMs") {
		t.Errorf("comm_sms 16 with compute_sms 104: error %v", err)
	}
}

// Unchunked copy-engine collectives cut transfers of splitMinBytes and up
// over every engine and keep smaller ones whole, on one engine per peer.
func TestCopyEngineSplitRule(t *testing.T) {
	for _, tc := range []struct {
		gpus           int
		kind           scenarios.Collective
		bytes          int64 // per transfer
		wantEngines    int
		wantChunk      int64
		chunkBytesKnob scenarios.ByteSize
	}{
		{2, scenarios.AllGather, 32 << 20, 1, 0, 0},
		{2, scenarios.AllGather, 64 << 20, 3, (64<<20/3 + 15) / 16 * 16, 0},
		{2, scenarios.AllToAll, 128 << 20, 3, (128<<20/3 + 15) / 16 * 16, 0},
		{4, scenarios.AllGather, 16 << 20, 3, 0, 0},
		{4, scenarios.AllGather, 64 << 20, 3, 64 << 20, 0},
		{2, scenarios.AllGather, 64 << 20, 3, 8 << 20, 8 << 20},
	} {
		f := newFakeGPU(tc.gpus)
		b := fakeBackend(t, f, Options{})
		p := &prepared{gpus: tc.gpus, coll: collective{Kind: tc.kind, Count: tc.bytes / 2}}
		var d *dmaPlan
		var err error
		b.do(func() {
			d, err = b.dmaSetup(p, scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: tc.chunkBytesKnob})
		})
		if err != nil {
			t.Fatal(err)
		}
		if d.engines != tc.wantEngines || d.chunk != tc.wantChunk {
			t.Errorf("%d GPUs, %s of %d MiB per transfer: %d engines, chunk %d; want %d, %d", tc.gpus, tc.kind, tc.bytes>>20, d.engines, d.chunk, tc.wantEngines, tc.wantChunk)
		}
	}
}
