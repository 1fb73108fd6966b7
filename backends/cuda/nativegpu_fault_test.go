package cuda

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// exercise makes every kind of call an experiment makes of the GPUs, in
// the order the backend makes them (buffers, streams in SM partitions,
// events, windows, the gate, GEMMs, c3lab's kernels, copies, flags, NCCL
// collectives, an abort and new communicators), and stops at the first
// error, as the backend does.
func exercise(g *nativeGPU) error {
	const n = 1024 // bf16 elements per buffer
	var send, recv, symSend, symRecv, a, bm, d, sync, host []bufID
	var compute, comm, copies, structured []streamID
	var evs []eventID
	for dev := range 2 {
		if _, err := g.FreeMemory(dev); err != nil {
			return err
		}
		for _, list := range []*[]bufID{&send, &recv, &a, &bm, &d} {
			b, err := g.Alloc(dev, 2*n)
			if err != nil {
				return err
			}
			*list = append(*list, b)
			if err := g.Upload(b, make([]byte, 2*n)); err != nil {
				return err
			}
		}
		s, err := g.Alloc(dev, pipeSyncBytes)
		if err != nil {
			return err
		}
		sync = append(sync, s)
		h, err := g.AllocHost(dev, 2*n)
		if err != nil {
			return err
		}
		host = append(host, h)
		if err := g.Upload(h, make([]byte, 2*n)); err != nil {
			return err
		}
		for _, list := range []*[]bufID{&symSend, &symRecv} {
			b, err := g.AllocSymmetric(dev, 2*n)
			if err != nil {
				return err
			}
			*list = append(*list, b)
		}
		for _, sp := range []struct {
			list *[]streamID
			spec streamSpec
		}{
			{&compute, streamSpec{Partition: partition{GroupSMs: 16, Rest: true}}},
			{&comm, streamSpec{Priority: -5, Partition: partition{GroupSMs: 16}}},
			{&copies, streamSpec{}},
			{&structured, streamSpec{Partition: partition{GroupSMs: 16, Rest: true, Structured: 112}}},
		} {
			s, err := g.Stream(dev, sp.spec)
			if err != nil {
				return err
			}
			*sp.list = append(*sp.list, s)
		}
		for range 2 {
			e, err := g.Event(dev)
			if err != nil {
				return err
			}
			evs = append(evs, e)
		}
	}
	ce := commSpec{Ranks: 2, CTAPolicy: 2}
	for _, bufs := range [][]bufID{symSend, symRecv} {
		if err := g.RegisterWindows(ce, bufs); err != nil {
			return err
		}
	}
	steps := []func() error{
		func() error { return g.GateWait(compute[0], 1) },
		func() error { return g.GateWait(compute[1], 1) },
		func() error { return g.Record(evs[0], compute[0]) },
		func() error { return g.Wait(comm[0], evs[0]) },
		func() error {
			return g.GEMM(compute[0], gemmSpec{M: 32, N: 32, K: 32, DType: scenarios.BF16, SMTarget: 116}, a[0], bm[0], d[0])
		},
		func() error { return g.StreamOp(compute[1], a[1], d[1], 2*n) },
		func() error {
			return g.GEMM(structured[0], gemmSpec{M: 32, N: 32, K: 32, DType: scenarios.BF16, SMTarget: 112}, a[0], bm[0], d[0])
		},
		func() error {
			return g.CopyKernel(comm[0], []copySeg{{dst: bufRef{host[0], 0}, src: bufRef{d[0], 0}, bytes: 2 * n}}, 4)
		},
		func() error { return g.CopyPeer(recv[1], 0, send[0], 0, 2*n, copies[0]) },
		func() error { return g.CopyPeer(recv[0], 0, send[0], 0, 2*n, copies[0]) },
		func() error { return g.CopyPeer(host[1], 0, d[1], 0, 2*n, copies[1]) },
		func() error { return g.Reduce(comm[0], recv[0], 0, []bufRef{{send[0], 0}, {recv[0], 0}}, n/2) },
		func() error {
			return g.ReducePipelined(comm[1], bufRef{recv[1], 0}, []bufRef{{send[1], 0}, {recv[1], 0}}, n/2,
				pipeSync{sync: sync[1], chunk: 64, seq: 1, grid: 4})
		},
		func() error { return g.WriteFlag(copies[0], bufRef{sync[1], 64}, 1) },
		func() error { return g.WaitFlag(copies[1], bufRef{sync[1], 64}, 1) },
		func() error {
			return g.Collective(collective{Kind: scenarios.AllGather, Count: n / 2, Comm: commSpec{Ranks: 2, MaxCTAs: 4}}, send, recv, comm)
		},
		func() error {
			return g.Collective(collective{Kind: scenarios.AllToAll, Count: n / 2, Comm: ce}, symSend, symRecv, comm)
		},
		func() error { g.OpenGate(1); return nil },
		func() error { _, err := g.Done(evs[0]); return err },
		func() error { _, err := g.Elapsed(evs[0], evs[1]); return err },
		func() error { return g.Synchronize(0) },
		func() error { return g.Download(d[0], make([]byte, 2*n)) },
		func() error { return g.Download(host[0], make([]byte, 2*n)) },
		func() error { return g.Free(symRecv[0]) }, // drops its window
		func() error { return g.Abort() },
		func() error {
			return g.Collective(collective{Kind: scenarios.ReduceScatter, Count: n / 4, Comm: commSpec{Ranks: 2}}, send, recv, comm)
		},
		func() error { return g.Free(a[0]) },
		func() error { return g.Free(host[1]) },
	}
	for _, step := range steps {
		if err := step(); err != nil {
			return err
		}
	}
	return nil
}

// tolerated says whether nativeGPU works around a call's failure by
// design: device facts read as best it can, peer access probed
// (collectives fall back to NCCL's own paths), the copy-engine hint (a
// plain copy instead).
func tolerated(call string) bool {
	switch call {
	case "cuDeviceGetAttribute", "cuDeviceTotalMem", "cuDeviceGetUuid", "cuDeviceCanAccessPeer", "cuMemcpyBatchAsync":
		return true
	}
	return false
}

// nativeGPU releases every resource it acquired exactly once, whichever
// driver or library call fails: opening the GPUs, during an experiment,
// or while closing. Call k of a clean run fails, for every k.
func TestNativeGPUReleasesEverythingOnEveryError(t *testing.T) {
	runOnce := func(failAt int) (*ledger, error) {
		l := newLedger(2, failAt)
		g, err := newNativeGPU(l.libs())
		if err != nil {
			return l, err
		}
		err = exercise(g)
		return l, errors.Join(err, g.Close())
	}
	clean, err := runOnce(0)
	if err != nil || len(clean.problems) > 0 || len(clean.leaks()) > 0 {
		t.Fatalf("clean run: error %v, problems %q, leaks %q", err, clean.problems, clean.leaks())
	}
	if clean.calls < 100 {
		t.Fatalf("the clean run made only %d calls", clean.calls)
	}
	for k := 1; k <= clean.calls; k++ {
		l, err := runOnce(k)
		what := fmt.Sprintf("call %d (%s) failing", k, l.failed)
		var ce *native.CUDAError
		if l.failed == "" || (!tolerated(l.failed) && (!errors.As(err, &ce) || ce.Code != 999)) {
			t.Errorf("%s: error %v, want the injected one", what, err)
		}
		if leaks := l.leaks(); len(leaks) > 0 {
			t.Errorf("%s leaks %s", what, strings.Join(leaks, ", "))
		}
		for _, p := range l.problems {
			t.Errorf("%s: %s", what, p)
		}
		if l.groups != 0 {
			t.Errorf("%s leaves %d NCCL groups open", what, l.groups)
		}
	}
}

// exerciseIPC makes the CUDA IPC calls of one process per GPU: a buffer
// exported, a peer's mapped, flags named, a push into the mapping with
// its flag, the flags released, and the mapping freed (another left for
// Close).
func exerciseIPC(g *nativeGPU) error {
	own, err := g.Alloc(0, 4096)
	if err != nil {
		return err
	}
	flags, err := g.Alloc(0, 256)
	if err != nil {
		return err
	}
	g.UseFlags(flags)
	s, err := g.Stream(0, streamSpec{})
	if err != nil {
		return err
	}
	h, err := g.ExportBuf(own)
	if err != nil {
		return err
	}
	var peers []bufID
	for range 2 {
		p, err := g.OpenPeerBuf(h, 4096)
		if err != nil {
			return err
		}
		peers = append(peers, p)
	}
	if err := g.CopyPeer(peers[0], 0, own, 0, 4096, s); err != nil {
		return err
	}
	if err := g.WriteFlag(s, bufRef{peers[1], 4}, 7); err != nil {
		return err
	}
	if err := g.WaitFlag(s, bufRef{flags, 4}, 7); err != nil {
		return err
	}
	g.ReleaseFlags(1 << 20)
	if _, err := g.ExportBuf(peers[0]); err == nil {
		return errors.New("a mapping of a peer's buffer was exported again")
	}
	return g.Free(peers[0])
}

// The CUDA IPC mappings of one process per GPU are closed exactly once,
// by Free or by Close, whichever call fails; a push into a mapping is a
// cuMemcpyAsync (the peer's GPU is not one of this process's).
func TestNativeGPUIPCReleasesEveryMapping(t *testing.T) {
	runOnce := func(failAt int) (*ledger, error) {
		l := newLedger(1, failAt)
		g, err := newNativeGPUOn(l.libs(), 0)
		if err != nil {
			return l, err
		}
		err = exerciseIPC(g)
		return l, errors.Join(err, g.Close())
	}
	clean, err := runOnce(0)
	if err != nil || len(clean.problems) > 0 || len(clean.leaks()) > 0 {
		t.Fatalf("clean run: error %v, problems %q, leaks %q", err, clean.problems, clean.leaks())
	}
	failed := map[string]bool{}
	for k := 1; k <= clean.calls; k++ {
		l, err := runOnce(k)
		failed[l.failed] = true
		what := fmt.Sprintf("call %d (%s) failing", k, l.failed)
		// Device facts are read as best it can; ReleaseFlags (a context
		// made current, a write) is best effort: nothing to report to.
		if err == nil && !tolerated(l.failed) && l.failed != "cuMemcpyHtoD" && l.failed != "cuCtxSetCurrent" {
			t.Errorf("%s: no error", what)
		}
		if leaks := l.leaks(); len(leaks) > 0 {
			t.Errorf("%s leaks %s", what, strings.Join(leaks, ", "))
		}
		for _, p := range l.problems {
			t.Errorf("%s: %s", what, p)
		}
	}
	for _, call := range []string{"cuIpcGetMemHandle", "cuIpcOpenMemHandle", "cuIpcCloseMemHandle", "cuMemcpyAsync", "cuMemcpyHtoD"} {
		if !failed[call] {
			t.Errorf("the run made no %s call", call)
		}
	}
	for _, call := range []string{"cuMemcpyPeerAsync", "cuMemcpyBatchAsync"} {
		if failed[call] {
			t.Errorf("a push into a mapping called %s; it is a cuMemcpyAsync", call)
		}
	}
}
