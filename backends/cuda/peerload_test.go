package cuda

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// p2pFirst is a p2p-load reduction launched first.
var p2pFirst = scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineP2PLoad}

// p2p-load reductions on the one-process fakes: every run verifies the
// sums before timing it (the fake computes them from the buffers the
// kernel was given, so a source read from the wrong place fails), no NCCL
// call and no staging copy is made, every rank's kernel loads its peers'
// blocks from their memory, on the CTAs the strategy allows; an
// all-reduce gathers on the copy engines.
func TestPeerLoadReductions(t *testing.T) {
	for _, tc := range []struct {
		name string
		gpus int
		coll scenarios.Collective
		st   scenarios.Strategy
		ctas int
	}{
		{"reduce-scatter", 2, scenarios.ReduceScatter, p2pFirst, peerLoadCTAs},
		{"reduce-scatter, 3 GPUs, 8 CTAs", 3, scenarios.ReduceScatter, scenarios.Strategy{CommEngine: scenarios.EngineP2PLoad, CommCTAs: 8}, 8},
		{"all-reduce", 2, scenarios.AllReduce, p2pFirst, peerLoadCTAs},
		{"all-reduce, 4 GPUs in a 16-SM partition", 4, scenarios.AllReduce, scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineP2PLoad, CommSMs: 16}, 16 * pipeCTAsPerSM},
		{"all-reduce, 32-SM partition capped at 16 CTAs", 2, scenarios.AllReduce, scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineP2PLoad, CommSMs: 32, CommCTAs: 16}, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFakeGPU(tc.gpus)
			b := fakeBackend(t, f, Options{GateStallNanos: int64(time.Minute)})
			if !b.Capabilities().Has(scenarios.CapPeerLoad) {
				t.Fatal("the fake node with peer access lacks the p2p-load capability")
			}
			sc := smallGEMM(tc.coll)
			sc.GPUs, sc.Comm.Bytes = tc.gpus, 3*4096
			var sink backends.Collector
			if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: tc.st, Mode: backends.ModeConcurrent, Reps: 2}, &sink); err != nil {
				t.Fatal(err)
			}
			if f.colls != 0 || f.reduces != 0 || f.pipeReduces != 0 {
				t.Errorf("%d NCCL calls, %d staged and %d pipelined reductions for a p2p-load one", f.colls, f.reduces, f.pipeReduces)
			}
			// Verification and 2 repetitions, one kernel per rank each.
			if f.loads != 3*tc.gpus {
				t.Errorf("%d p2p-load kernels, want %d", f.loads, 3*tc.gpus)
			}
			if want := 3 * tc.gpus * (tc.gpus - 1); f.peerLoads != want {
				t.Errorf("%d sources loaded from a peer's memory, want %d", f.peerLoads, want)
			}
			for _, g := range f.loadGrids {
				if g != tc.ctas {
					t.Fatalf("kernels on %v CTAs, want %d each", f.loadGrids, tc.ctas)
				}
			}
			for _, c := range f.copyLog {
				if tc.coll == scenarios.ReduceScatter {
					t.Fatalf("a p2p-load reduce-scatter copied %d bytes on a copy engine", c.n)
				}
				if src, dst := f.bufs[c.src.b], f.bufs[c.dst.b]; src.dev != c.dev || dst.dev == c.dev {
					t.Errorf("an all-reduce gather copy on GPU %d from GPU %d to GPU %d; each rank pushes its own block to its peers", c.dev, src.dev, dst.dev)
				}
			}
			if tc.coll == scenarios.AllReduce && len(f.copyLog) == 0 {
				t.Error("the all-reduce gathered nothing on the copy engines")
			}
			names, ce := 0, 0
			for _, sp := range sink.SpanList {
				if sp.Track == "comm" && strings.HasPrefix(sp.Name, "p2p-load ") && sp.Kind == "kernel" {
					names++
				}
				if strings.HasPrefix(sp.Track, "ce") {
					ce++
				}
			}
			if names != 2*tc.gpus {
				t.Errorf("%d comm spans named p2p-load, want %d", names, 2*tc.gpus)
			}
			if (ce > 0) != (tc.coll == scenarios.AllReduce) {
				t.Errorf("%d copy-engine spans for a p2p-load %s", ce, tc.coll)
			}

			bad := newFakeGPU(tc.gpus)
			bb := fakeBackend(t, bad, Options{})
			bb.do(func() { bb.attach(&shortLoads{bad}) })
			if _, err := run(t, bb, sc, tc.st, backends.ModeComm); err == nil || !strings.Contains(err.Error(), "wrong result") {
				t.Errorf("a kernel that skips its last element: error %v", err)
			}
		})
	}
}

// shortLoads sums one element too few.
type shortLoads struct{ *fakeGPU }

func (s *shortLoads) ReduceLoad(st streamID, out bufRef, srcs []bufRef, n int64, ctas int) error {
	return s.fakeGPU.ReduceLoad(st, out, srcs, n-1, ctas)
}

// The ordering across GPUs, on a reduce-scatter of 3 GPUs: each rank's
// comm stream waits for every peer's start before its kernel, and after
// every rank's kernel it waits for every peer's (which loaded its block)
// before its part ends.
func TestPeerLoadOrdering(t *testing.T) {
	f := newFakeGPU(3)
	b := fakeBackend(t, f, Options{})
	sc := smallGEMM(scenarios.ReduceScatter)
	sc.GPUs = 3
	if _, err := b.Run(context.Background(), backends.Experiment{Scenario: sc, Strategy: p2pFirst, Mode: backends.ModeComm, Reps: 1}, nil); err != nil {
		t.Fatal(err)
	}
	// The cross-GPU waits and the kernels, in enqueue order.
	var seq []string
	for _, l := range f.log {
		var dev, on int
		if n, _ := fmt.Sscanf(l, "wait dev%d for dev%d", &dev, &on); n == 2 && dev != on {
			seq = append(seq, l)
		}
		if strings.HasPrefix(l, "reduce-load") {
			seq = append(seq, strings.Join(strings.Fields(l)[:2], " "))
		}
	}
	barrier := func() []string {
		var out []string
		for r := range 3 {
			for q := range 3 {
				if q != r {
					out = append(out, fmt.Sprintf("wait dev%d for dev%d", r, q))
				}
			}
		}
		return out
	}
	one := append(append(barrier(), "reduce-load dev0", "reduce-load dev1", "reduce-load dev2"), barrier()...)
	want := append(slices.Clone(one), one...) // verification, then the repetition
	if !slices.Equal(seq, want) {
		t.Errorf("cross-GPU waits and kernels:\n%s\nwant\n%s", strings.Join(seq, "\n"), strings.Join(want, "\n"))
	}
}

// Refusals: a pure copy (validation), GPUs without peer access (no
// capability, and the run names the pair), and what the grid allows.
func TestPeerLoadRefusals(t *testing.T) {
	b := fakeBackend(t, newFakeGPU(2), Options{})
	if _, err := run(t, b, smallGEMM(scenarios.AllGather), p2pFirst, backends.ModeComm); err == nil || !strings.Contains(err.Error(), "runs reduce-scatter and all-reduce, not all-gather") {
		t.Errorf("p2p-load all-gather: %v", err)
	}
	f := newFakeGPU(2)
	f.devs[1].Peers = nil
	np := fakeBackend(t, f, Options{})
	if np.Capabilities().Has(scenarios.CapPeerLoad) {
		t.Error("GPUs without peer access claim the p2p-load capability")
	}
	_, err := run(t, np, smallGEMM(scenarios.ReduceScatter), p2pFirst, backends.ModeComm)
	if err == nil || !strings.Contains(err.Error(), "GPU 1 cannot map GPU 0's memory (no peer access); use comm_engine dma or sm") || strings.Contains(err.Error(), "\n") {
		t.Errorf("no peer access: %v", err)
	}
	if np.prepared != nil && len(np.prepared.reduceDone) > 0 {
		t.Error("the refused run set up its events")
	}
	if one := fakeBackend(t, newFakeGPU(1), Options{}); one.Capabilities().Has(scenarios.CapPeerLoad) {
		t.Error("one GPU claims the p2p-load capability")
	}
	for _, tc := range []struct {
		n    int64
		ctas int
		want int64
	}{
		{1 << 20, 32, 32},
		{8 * native.ReduceThreads * 4, 32, 4}, // 4 CTAs' worth of words
		{3, 64, 1},
		{8*native.ReduceThreads + 8, 16, 2},
	} {
		if got := loadGrid(tc.n, tc.ctas); got != tc.want {
			t.Errorf("loadGrid(%d, %d) = %d, want %d", tc.n, tc.ctas, got, tc.want)
		}
	}
}

// One process per GPU: every rank's results equal the one-process fake's,
// each rank's kernel loads its peers' send buffers through CUDA IPC
// mappings, its GPU is given only its own work, it orders itself with the
// flags, and Close leaves no mapping open.
func TestPerProcessPeerLoadMatchesOneProcess(t *testing.T) {
	for _, tc := range []struct {
		name string
		sc   scenarios.Scenario
		st   scenarios.Strategy
	}{
		{"reduce-scatter", sizedGEMM(scenarios.ReduceScatter, 2, 4096), p2pFirst},
		{"all-reduce 3 ranks", sizedGEMM(scenarios.AllReduce, 3, 6144), p2pFirst},
		{"reduce-scatter 3 ranks, 16-SM partition", sizedGEMM(scenarios.ReduceScatter, 3, 4096), scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineP2PLoad, CommSMs: 16}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			world := tc.sc.GPUs
			ex := backends.Experiment{Scenario: tc.sc, Strategy: tc.st, Mode: backends.ModeConcurrent, Reps: 3, Warmup: 1}
			one := fakeBackend(t, newFakeGPU(world), Options{})
			want, err := one.Run(context.Background(), ex, nil)
			if err != nil {
				t.Fatal(err)
			}
			fb := newFakeFabric(world)
			bs, fs := procBackends(t, world, fb, Options{})
			got, _, errs := runRanks(context.Background(), bs, ex)
			for r := range bs {
				sameAsOneProcess(t, r, got[r], errs[r], want)
				f := fs[r]
				// Each peer's output, flags and send buffer.
				if want := 3 * (world - 1); f.ipcOpens != want {
					t.Errorf("rank %d opened %d IPC mappings; want %d", r, f.ipcOpens, want)
				}
				if f.loads == 0 || f.peerLoads != f.loads*(world-1) {
					t.Errorf("rank %d: %d kernels loaded %d peer sources; want %d each", r, f.loads, f.peerLoads, world-1)
				}
				if f.colls != 0 || f.reduces != 0 {
					t.Errorf("rank %d: %d NCCL calls, %d staged reductions", r, f.colls, f.reduces)
				}
				rankKeptToItself(t, r, f, "loads")
			}
			closeRanksUnmapped(t, bs, fb)
		})
	}
}

// One process per GPU across hosts: refused on every rank, in one line
// naming the hosts and advising NCCL; the mapping of a pair without peer
// access fails on every rank.
func TestPerProcessPeerLoadRefusals(t *testing.T) {
	bs, _ := procBackendsOn(t, 2, newFakeFabric(2), Options{}, []string{"node-a", "node-b"})
	if bs[0].Capabilities().Has(scenarios.CapPeerLoad) {
		t.Error("ranks on two hosts claim the p2p-load capability")
	}
	_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.ReduceScatter), Strategy: p2pFirst, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if !errors.Is(err, ErrPeerLoadAcrossNodes) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "comm_engine sm (NCCL)") || !strings.Contains(err.Error(), "node-a, node-b") {
			t.Errorf("rank %d: %v; want the across-nodes refusal naming the hosts and advising NCCL", r, err)
		}
	}
	fb := newFakeFabric(2)
	fb.openFails = true
	bs, fs := procBackends(t, 2, fb, Options{})
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllReduce), Strategy: p2pFirst, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "peer access is not supported") {
			t.Errorf("rank %d: %v; want the failed mapping", r, err)
		}
		if fs[r].loads != 0 {
			t.Errorf("rank %d ran %d kernels after its mapping failed", r, fs[r].loads)
		}
	}
}

// The kernel the backend launches is in the embedded source.
func TestPeerLoadKernelInSource(t *testing.T) {
	src, err := native.KernelSource("reduce.cu")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{native.ReduceKernel, native.ReducePipeKernel, native.ReduceLoadKernel} {
		if !strings.Contains(src, "\n"+k+"(") {
			t.Errorf("reduce.cu defines no kernel %s", k)
		}
	}
}
