package cuda

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// faultCase is one experiment the fault tests run.
type faultCase struct {
	name string
	sc   scenarios.Scenario
	st   scenarios.Strategy
	mode backends.Mode
}

// faultCases cover every path of an experiment: NCCL on the SMs, a stream
// op in an SM partition, copy-engine collectives with the reduction after
// the copies or pipelined with them, NCCL's copy-engine path, host copies
// on the copy engines and on the SMs, and format-2 graphs (decomposed
// pairs on NCCL and on the copy engines, collectives of count 2 on the
// copy engines, a host reload feeding a GEMM, a host swap spread over copy
// engines, an isolated mode).
func faultCases() []faultCase {
	streamOp := smallGEMM(scenarios.AllGather)
	streamOp.Compute = scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 12}
	allReduce := smallGEMM(scenarios.AllReduce)
	allReduce.Comm.Bytes = 128 << 10 // a 64 KiB chunk per block
	return []faultCase{
		{"GEMM next to an NCCL all-gather", smallGEMM(scenarios.AllGather),
			scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommCTAs: 8}, backends.ModeConcurrent},
		{"stream op in a partition", streamOp, scenarios.Strategy{ComputeSMs: 64}, backends.ModeCompute},
		{"copy-engine all-reduce, pipelined", allReduce,
			scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16, ChunkBytes: 64 << 10}, backends.ModeComm},
		{"copy-engine reduce-scatter", smallGEMM(scenarios.ReduceScatter), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm},
		{"NCCL's copy engines", smallGEMM(scenarios.AllToAll), scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE}, backends.ModeComm},
		{"p2p-load reduce-scatter next to a GEMM", smallGEMM(scenarios.ReduceScatter), scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineP2PLoad, CommSMs: 16}, backends.ModeConcurrent},
		{"p2p-load all-reduce", allReduce, scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad, CommCTAs: 8}, backends.ModeComm},
		{"host swap on the copy engines", hostCopyScenario(scenarios.HostSwap, 1), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm},
		{"host copy on the SMs", hostCopyScenario(scenarios.HostToDevice, 1), scenarios.Strategy{CommCTAs: 4}, backends.ModeComm},
		{"graph: decomposed all-gather -> GEMM", agGEMM(2, 2), scenarios.Strategy{Launch: scenarios.CommFirst, CommCTAs: 8}, backends.ModeConcurrent},
		{"graph: GEMM -> reduce-scatter in a partition", gemmRS(2, 2), scenarios.Strategy{CommSMs: 16}, backends.ModeConcurrent},
		{"graph: host reload feeding a GEMM on the copy engines", offload(2), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeConcurrent},
		{"graph: GEMMs alone", agGEMM(2, 2), scenarios.Strategy{}, backends.ModeCompute},
		{"graph: decomposed all-gather -> GEMM on the copy engines", agGEMM(2, 2), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeConcurrent},
		{"graph: GEMM -> reduce-scatter on the copy engines", gemmRS(2, 2), scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 2}, backends.ModeConcurrent},
		{"graph: all-reduces of count 2 on the copy engines", arGraph(2), scenarios.Strategy{CommEngine: scenarios.EngineDMA}, backends.ModeComm},
		{"graph: GEMM -> reduce-scatter on the copy engines, pipelined in a partition", gemmRS(2, 2), scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}, backends.ModeConcurrent},
		{"graph: all-reduces of count 2 on the copy engines, pipelined", arGraph(2), scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}, backends.ModeComm},
		{"graph: chunked host swap over copy engines", hostSwapGraph(), scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10}, backends.ModeConcurrent},
	}
}

// arGraph is a GEMM next to count all-reduces on 2 GPUs.
func arGraph(count int) scenarios.Scenario {
	ar := commOp("ar", scenarios.AllReduce, 2048)
	ar.Count = count
	return scenarios.Scenario{Name: "ar", GPUs: 2, Streams: []scenarios.StreamSpec{
		{Name: "compute", Ops: []scenarios.StreamOp{gemmOp("g", 16, 8, 8)}},
		{Name: "comm", Ops: []scenarios.StreamOp{ar}},
	}}
}

func (c faultCase) experiment() backends.Experiment {
	return backends.Experiment{Scenario: c.sc, Strategy: c.st, Mode: c.mode, Reps: 1, Warmup: 1} // a warm-up (ungated) and a gated repetition
}

// The whole backend over fake libraries, one experiment of faultCases at a
// time: open, the experiment, close. The fakes compute nothing, so an
// experiment that verifies data stops at verification, after its buffers,
// streams, communicators and windows exist. Call k of a clean run fails,
// for every k; each time, every resource acquired was released exactly
// once, and the buffers the experiment allocated are gone as soon as the
// backend releases them (not held until Close).
func TestBackendReleasesEverythingOnEveryError(t *testing.T) {
	for _, c := range faultCases() {
		t.Run(c.name, func(t *testing.T) {
			runOnce := func(failAt int) (l *ledger, held int) {
				l = newLedger(2, failAt)
				b, err := open(Options{}, func() (*libs, error) { return l.libs(), nil })
				if err != nil {
					return l, 0
				}
				b.Run(context.Background(), c.experiment(), nil)
				b.do(func() {
					b.release()
					held = len(b.g.(*nativeGPU).bufs)
				})
				b.Close()
				return l, held
			}
			clean, held := runOnce(0)
			if len(clean.problems) > 0 || len(clean.leaks()) > 0 || held > 0 {
				t.Fatalf("clean run: problems %q, leaks %q, %d buffers held after release", clean.problems, clean.leaks(), held)
			}
			for k := 1; k <= clean.calls; k++ {
				l, held := runOnce(k)
				what := fmt.Sprintf("call %d (%s) failing", k, l.failed)
				if leaks := l.leaks(); len(leaks) > 0 {
					t.Errorf("%s leaks %s", what, strings.Join(leaks, ", "))
				}
				for _, p := range l.problems {
					t.Errorf("%s: %s", what, p)
				}
				if held > 0 {
					t.Errorf("%s: %d buffers of the experiment held after release", what, held)
				}
				if l.groups != 0 {
					t.Errorf("%s leaves %d NCCL groups open", what, l.groups)
				}
			}
		})
	}
}

// faultyGPU is the fake GPUs with call failAt (1-based) of the gpu
// interface failing, and checks that buffers, streams and communicators
// fit together (a reduction's buffers on its stream's GPU, one buffer and
// stream per rank), so state left wrong by a failure shows.
type faultyGPU struct {
	*fakeGPU
	calls, failAt int
	failed        string
	// windows are the registered windows, per buffer and communicator.
	windows map[bufID]map[commSpec]bool
}

func (f *faultyGPU) fail(call string) error {
	f.calls++
	if f.calls == f.failAt {
		f.failed = call
		return fmt.Errorf("%s: a failure the test injected", call)
	}
	return nil
}

// onDev checks that buffers live on GPU dev.
func (f *faultyGPU) onDev(call string, dev int, bufs ...bufID) error {
	for _, b := range bufs {
		if fb, ok := f.bufs[b]; !ok || fb.dev != dev {
			return fmt.Errorf("fake: %s on GPU %d given buffer %d, not one of that GPU", call, dev, b)
		}
	}
	return nil
}

// perRank checks one buffer per rank, each on its rank's GPU.
func (f *faultyGPU) perRank(call string, ranks int, lists ...[]bufID) error {
	for _, l := range lists {
		if len(l) != ranks {
			return fmt.Errorf("fake: %s of %d ranks given %d buffers", call, ranks, len(l))
		}
		for r, b := range l {
			if err := f.onDev(call, r, b); err != nil {
				return err
			}
		}
	}
	return nil
}

func (f *faultyGPU) FreeMemory(dev int) (int64, error) {
	if err := f.fail("FreeMemory"); err != nil {
		return 0, err
	}
	return f.fakeGPU.FreeMemory(dev)
}

func (f *faultyGPU) Alloc(dev int, bytes int64) (bufID, error) {
	if err := f.fail("Alloc"); err != nil {
		return 0, err
	}
	return f.fakeGPU.Alloc(dev, bytes)
}

func (f *faultyGPU) AllocSymmetric(dev int, bytes int64) (bufID, error) {
	if err := f.fail("AllocSymmetric"); err != nil {
		return 0, err
	}
	return f.fakeGPU.AllocSymmetric(dev, bytes)
}

func (f *faultyGPU) AllocHost(dev int, bytes int64) (bufID, error) {
	if err := f.fail("AllocHost"); err != nil {
		return 0, err
	}
	return f.fakeGPU.AllocHost(dev, bytes)
}

func (f *faultyGPU) RegisterWindows(spec commSpec, bufs []bufID) error {
	if err := f.fail("RegisterWindows"); err != nil {
		return err
	}
	if err := f.perRank("RegisterWindows", spec.Ranks, bufs); err != nil {
		return err
	}
	if f.windows == nil {
		f.windows = map[bufID]map[commSpec]bool{}
	}
	for _, b := range bufs {
		if f.windows[b][spec] {
			return fmt.Errorf("fake: buffer %d registered twice as a window of %+v (the first window is lost)", b, spec)
		}
	}
	for _, b := range bufs {
		if f.windows[b] == nil {
			f.windows[b] = map[commSpec]bool{}
		}
		f.windows[b][spec] = true
	}
	return f.fakeGPU.RegisterWindows(spec, bufs)
}

func (f *faultyGPU) Free(b bufID) error {
	err := f.fail("Free")
	delete(f.windows, b)
	return errors.Join(err, f.fakeGPU.Free(b)) // freed even when the call fails
}

func (f *faultyGPU) Upload(b bufID, data []byte) error {
	if err := f.fail("Upload"); err != nil {
		return err
	}
	return f.fakeGPU.Upload(b, data)
}

func (f *faultyGPU) Download(b bufID, out []byte) error {
	if err := f.fail("Download"); err != nil {
		return err
	}
	return f.fakeGPU.Download(b, out)
}

func (f *faultyGPU) Stream(dev int, spec streamSpec) (streamID, error) {
	if err := f.fail("Stream"); err != nil {
		return 0, err
	}
	return f.fakeGPU.Stream(dev, spec)
}

func (f *faultyGPU) Event(dev int) (eventID, error) {
	if err := f.fail("Event"); err != nil {
		return 0, err
	}
	return f.fakeGPU.Event(dev)
}

func (f *faultyGPU) Record(e eventID, s streamID) error {
	if err := f.fail("Record"); err != nil {
		return err
	}
	return f.fakeGPU.Record(e, s)
}

func (f *faultyGPU) Wait(s streamID, e eventID) error {
	if err := f.fail("Wait"); err != nil {
		return err
	}
	return f.fakeGPU.Wait(s, e)
}

func (f *faultyGPU) Done(e eventID) (bool, error) {
	if err := f.fail("Done"); err != nil {
		return false, err
	}
	return f.fakeGPU.Done(e)
}

func (f *faultyGPU) Elapsed(from, to eventID) (int64, error) {
	if err := f.fail("Elapsed"); err != nil {
		return 0, err
	}
	return f.fakeGPU.Elapsed(from, to)
}

func (f *faultyGPU) GateWait(s streamID, v uint32) error {
	if err := f.fail("GateWait"); err != nil {
		return err
	}
	return f.fakeGPU.GateWait(s, v)
}

func (f *faultyGPU) Reduce(s streamID, out bufID, outOff int64, srcs []bufRef, n int64) error {
	if err := f.fail("Reduce"); err != nil {
		return err
	}
	bufs := []bufID{out}
	for _, r := range srcs {
		bufs = append(bufs, r.b)
	}
	if err := f.onDev("Reduce", f.streams[s].dev, bufs...); err != nil {
		return err
	}
	return f.fakeGPU.Reduce(s, out, outOff, srcs, n)
}

func (f *faultyGPU) ReduceLoad(s streamID, out bufRef, srcs []bufRef, n int64, ctas int) error {
	if err := f.fail("ReduceLoad"); err != nil {
		return err
	}
	if err := f.onDev("ReduceLoad", f.streams[s].dev, out.b); err != nil {
		return err
	}
	return f.fakeGPU.ReduceLoad(s, out, srcs, n, ctas)
}

func (f *faultyGPU) ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error {
	if err := f.fail("ReducePipelined"); err != nil {
		return err
	}
	bufs := []bufID{out.b, ps.sync}
	for _, r := range srcs {
		bufs = append(bufs, r.b)
	}
	if err := f.onDev("ReducePipelined", f.streams[s].dev, bufs...); err != nil {
		return err
	}
	return f.fakeGPU.ReducePipelined(s, out, srcs, n, ps)
}

func (f *faultyGPU) WriteFlag(s streamID, w bufRef, v uint32) error {
	if err := f.fail("WriteFlag"); err != nil {
		return err
	}
	return f.fakeGPU.WriteFlag(s, w, v)
}

func (f *faultyGPU) WaitFlag(s streamID, w bufRef, v uint32) error {
	if err := f.fail("WaitFlag"); err != nil {
		return err
	}
	return f.fakeGPU.WaitFlag(s, w, v)
}

func (f *faultyGPU) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	if err := f.fail("CopyPeer"); err != nil {
		return err
	}
	return f.fakeGPU.CopyPeer(dst, dstOff, src, srcOff, n, s)
}

func (f *faultyGPU) CopyKernel(s streamID, segs []copySeg, ctas int) error {
	if err := f.fail("CopyKernel"); err != nil {
		return err
	}
	return f.fakeGPU.CopyKernel(s, segs, ctas)
}

func (f *faultyGPU) GEMM(s streamID, g gemmSpec, a, b, d bufID) error {
	if err := f.fail("GEMM"); err != nil {
		return err
	}
	if err := f.onDev("GEMM", f.streams[s].dev, a, b, d); err != nil {
		return err
	}
	return f.fakeGPU.GEMM(s, g, a, b, d)
}

func (f *faultyGPU) GEMMAt(s streamID, g gemmSpec, a, b, d bufRef) error {
	if err := f.fail("GEMMAt"); err != nil {
		return err
	}
	if err := f.onDev("GEMMAt", f.streams[s].dev, a.b, b.b, d.b); err != nil {
		return err
	}
	return f.fakeGPU.GEMMAt(s, g, a, b, d)
}

func (f *faultyGPU) CollectiveAt(c collective, send, recv []bufRef, streams []streamID) error {
	if err := f.fail("CollectiveAt"); err != nil {
		return err
	}
	ids := func(rs []bufRef) []bufID {
		out := make([]bufID, len(rs))
		for i, r := range rs {
			out[i] = r.b
		}
		return out
	}
	if err := f.perRank("CollectiveAt", c.Comm.Ranks, ids(send), ids(recv)); err != nil {
		return err
	}
	return f.fakeGPU.CollectiveAt(c, send, recv, streams)
}

func (f *faultyGPU) StreamOp(s streamID, in, out bufID, bytes int64) error {
	if err := f.fail("StreamOp"); err != nil {
		return err
	}
	return f.fakeGPU.StreamOp(s, in, out, bytes)
}

func (f *faultyGPU) Collective(c collective, send, recv []bufID, streams []streamID) error {
	if err := f.fail("Collective"); err != nil {
		return err
	}
	if err := f.perRank("Collective", c.Comm.Ranks, send, recv); err != nil {
		return err
	}
	return f.fakeGPU.Collective(c, send, recv, streams)
}

func (f *faultyGPU) Abort() error {
	if err := f.fail("Abort"); err != nil {
		return err
	}
	clear(f.windows) // the communicators took their windows along
	return f.fakeGPU.Abort()
}

func (f *faultyGPU) Synchronize(dev int) error {
	if err := f.fail("Synchronize"); err != nil {
		return err
	}
	return f.fakeGPU.Synchronize(dev)
}

// An experiment that fails at any call of the gpu interface leaves the
// backend as it found it: no buffer of the failed experiment is held once
// the backend releases its buffers, and the same experiment, run again,
// succeeds (nothing set up halfway is reused as if whole). Call k of a
// clean run fails, for every k.
func TestBackendRecoversFromEveryFailure(t *testing.T) {
	for _, c := range faultCases() {
		t.Run(c.name, func(t *testing.T) {
			runOnce := func(failAt int) (f *faultyGPU, first, again error, held int) {
				f = &faultyGPU{fakeGPU: newFakeGPU(2), failAt: failAt}
				b := newBackend(Options{})
				defer b.Close()
				b.do(func() { b.attach(f) })
				_, first = b.Run(context.Background(), c.experiment(), nil)
				_, again = b.Run(context.Background(), c.experiment(), nil)
				b.do(func() {
					b.release()
					held = len(f.bufs)
				})
				return f, first, again, held
			}
			clean, first, again, held := runOnce(0)
			if first != nil || again != nil || held > 0 {
				t.Fatalf("clean run: %v, then %v, %d buffers held after release", first, again, held)
			}
			calls := clean.calls / 2 // the first run's
			for k := 1; k <= calls; k++ {
				f, first, again, held := runOnce(k)
				what := fmt.Sprintf("call %d (%s) failing", k, f.failed)
				// Freeing the GEMM check's operands ignores a failure.
				if (first == nil && f.failed != "Free") || (first != nil && !strings.Contains(first.Error(), "injected")) {
					t.Errorf("%s: the experiment returned %v, want the injected failure", what, first)
				}
				if again != nil {
					t.Errorf("%s: the experiment run again failed: %v", what, again)
				}
				if held > 0 {
					t.Errorf("%s: %d buffers held after release", what, held)
				}
			}
		})
	}
}
