package cuda

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// ceFirst runs the collective on the copy engines, launched first.
var ceFirst = scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineDMA}

// sizedGEMM is smallGEMM on gpus GPUs moving bytes.
func sizedGEMM(coll scenarios.Collective, gpus int, bytes float64) scenarios.Scenario {
	sc := smallGEMM(coll)
	sc.GPUs, sc.Comm.Bytes = gpus, scenarios.ByteSize(bytes)
	return sc
}

// mappings is every rank's count of open CUDA IPC mappings.
func mappings(fb *fakeFabric) []int {
	fb.mu.Lock()
	defer fb.mu.Unlock()
	return append([]int(nil), fb.mapped...)
}

// TestPerProcessCopyEngineMatchesOneProcess runs copy-engine collectives
// as one process per GPU, each rank mapping its peers' buffers through
// (fake) CUDA IPC: every rank's results equal the one-process fake's,
// every rank verified its own output (a run verifies before it times),
// each rank's GPU carried only its own copies, all pushes from its own
// memory into a peer's mapped one, and the copy-engine spans come out.
func TestPerProcessCopyEngineMatchesOneProcess(t *testing.T) {
	cases := []struct {
		name string
		sc   scenarios.Scenario
		st   scenarios.Strategy
		mode backends.Mode
	}{
		{"all-gather", sizedGEMM(scenarios.AllGather, 2, 4096), ceFirst, backends.ModeConcurrent},
		{"all-to-all", sizedGEMM(scenarios.AllToAll, 2, 4096), ceFirst, backends.ModeConcurrent},
		{"all-gather 3 ranks", sizedGEMM(scenarios.AllGather, 3, 4096), ceFirst, backends.ModeConcurrent},
		{"all-to-all 3 ranks comm only", sizedGEMM(scenarios.AllToAll, 3, 6144), ceFirst, backends.ModeComm},
		{"all-gather chunked", sizedGEMM(scenarios.AllGather, 2, 256<<10), scenarios.Strategy{CommEngine: scenarios.EngineDMA, ChunkBytes: 64 << 10}, backends.ModeConcurrent},
		{"reduce-scatter", sizedGEMM(scenarios.ReduceScatter, 2, 4096), ceFirst, backends.ModeConcurrent},
		{"all-reduce 3 ranks", sizedGEMM(scenarios.AllReduce, 3, 6144), ceFirst, backends.ModeConcurrent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			world := tc.sc.GPUs
			ex := backends.Experiment{Scenario: tc.sc, Strategy: tc.st, Mode: tc.mode, Reps: 3, Warmup: 1}
			one := fakeBackend(t, newFakeGPU(world), Options{})
			wantCol := &backends.Collector{}
			want, err := one.Run(context.Background(), ex, wantCol)
			if err != nil {
				t.Fatal(err)
			}
			fb := newFakeFabric(world)
			bs, fs := procBackends(t, world, fb, Options{})
			got, cols, errs := runRanks(context.Background(), bs, ex)
			for r := range bs {
				sameAsOneProcess(t, r, got[r], errs[r], want)
				if n, w := ceSpans(cols[r]), ceSpans(wantCol); n != w {
					t.Errorf("rank %d: %d copy-engine spans, one process %d", r, n, w)
				}
				f := fs[r]
				// Each peer's output and flags, and a reduction's staging.
				wantOpens := 2 * (world - 1)
				if !tc.sc.Comm.Collective.IsPureCopy() {
					wantOpens = 3 * (world - 1)
				}
				if f.ipcOpens != wantOpens {
					t.Errorf("rank %d opened %d IPC mappings for %d peers; want %d", r, f.ipcOpens, world-1, wantOpens)
				}
				pushes := 0
				for _, c := range f.copyLog {
					src, dst := f.bufs[c.src.b], f.bufs[c.dst.b]
					if src == nil || dst == nil {
						continue // freed since
					}
					if src.peer != 0 {
						t.Errorf("rank %d's copy engines read rank %d's memory; they push from their own", r, src.peer-1)
					}
					if dst.peer != 0 {
						pushes++
					}
				}
				if pushes == 0 {
					t.Errorf("rank %d pushed nothing into its peers' buffers", r)
				}
				rankKeptToItself(t, r, f, "copies")
			}
			closeRanksUnmapped(t, bs, fb)
		})
	}
}

// rankKeptToItself fails when rank r's GPU (dev0 of its fake) was given
// work of another GPU, or waited on no flag word, so that its peers' work
// (what: copies, loads) was not ordered before its end.
func rankKeptToItself(t *testing.T, r int, f *fakeGPU, what string) {
	t.Helper()
	for _, l := range f.log {
		if strings.Contains(l, "dev1") || strings.Contains(l, "dev2") {
			t.Errorf("rank %d's GPU was given work of another: %s", r, l)
			break
		}
	}
	if !f.logHas("wait-flag dev0") {
		t.Errorf("rank %d waited on no flag: its peers' %s are not ordered before its end", r, what)
	}
}

// closeRanksUnmapped closes every rank and fails when an IPC mapping of
// the fabric is left open.
func closeRanksUnmapped(t *testing.T, bs []*Backend, fb *fakeFabric) {
	t.Helper()
	for _, b := range bs {
		b.Close()
	}
	if m := mappings(fb); !allZero(m) {
		t.Errorf("open IPC mappings after Close: %v", m)
	}
}

// ceSpans counts the copy-stream spans (tracks ceN).
func ceSpans(c *backends.Collector) int {
	n := 0
	for _, s := range c.SpanList {
		if strings.HasPrefix(s.Track, "ce") {
			n++
		}
	}
	return n
}

func allZero(v []int) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

// TestPerProcessCopyEngineWrongCopyFailsEveryRank: rank 1's copy engines
// corrupt what they push, so rank 0's output is wrong: rank 0's own check
// finds it, and rank 1 stops too, naming rank 0.
func TestPerProcessCopyEngineWrongCopyFailsEveryRank(t *testing.T) {
	for _, kind := range []scenarios.Collective{scenarios.AllGather, scenarios.AllToAll} {
		t.Run(string(kind), func(t *testing.T) {
			bs, fs := procBackends(t, 2, newFakeFabric(2), Options{})
			fs[1].corruptCopies = true
			_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(kind), Strategy: ceFirst, Mode: backends.ModeConcurrent, Reps: 2})
			if errs[0] == nil || !strings.Contains(errs[0].Error(), "wrong result") {
				t.Errorf("rank 0: %v; want its wrong result", errs[0])
			}
			if errs[1] == nil || !strings.Contains(errs[1].Error(), "rank 0 failed") {
				t.Errorf("rank 1: %v; want rank 0's failure", errs[1])
			}
		})
	}
}

// TestPerProcessCopyEngineLostPeer: rank 1 stalls on the host in the
// middle of a repetition, so rank 0's comm stream waits for flags rank 1
// has not raised; the job's context is canceled (the group lost a rank):
// rank 0's watchdog releases its flags and it leaves at once, every rank
// ends with an error, the next run works on every rank, and Close leaves
// no mapping open.
func TestPerProcessCopyEngineLostPeer(t *testing.T) {
	fb := newFakeFabric(2)
	bs, fs := procBackends(t, 2, fb, Options{})
	ex := backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Strategy: scenarios.Strategy{Launch: scenarios.ComputeFirst, CommEngine: scenarios.EngineDMA}, Mode: backends.ModeConcurrent, Reps: 2}
	// Verified first, so the stall falls in a repetition.
	if _, _, errs := runRanks(context.Background(), bs, ex); errs[0] != nil || errs[1] != nil {
		t.Fatalf("first run: %v", errs)
	}
	fs[1].stallGEMMs, fs[1].stall = 1, 800*time.Millisecond
	errs, ended := runCanceled(bs, ex, 150*time.Millisecond)
	for r := range bs {
		if errs[r] == nil {
			t.Errorf("rank %d finished a canceled run", r)
		}
		if fs[r].releases == 0 {
			t.Errorf("rank %d's flags were not released", r)
		}
	}
	t.Logf("rank 0: %v after %v; rank 1: %v after %v", errs[0], ended[0], errs[1], ended[1])
	if ended[0] > 600*time.Millisecond {
		t.Errorf("rank 0 took %v to leave its wait for rank 1's flags; the release should free it at once", ended[0])
	}
	fs[1].stallGEMMs = 0
	one := fakeBackend(t, newFakeGPU(2), Options{})
	want, err := one.Run(context.Background(), ex, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _, errs := runRanks(context.Background(), bs, ex)
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d after the loss: %v", r, err)
		}
		for i := range want.Reps {
			if got[r].Reps[i].Comm != want.Reps[i].Comm {
				t.Errorf("rank %d rep %d after the loss: comm %d; one process %d (stale flags?)", r, i, got[r].Reps[i].Comm, want.Reps[i].Comm)
			}
		}
	}
	closeRanksUnmapped(t, bs, fb)
}

// TestPerProcessCopyEngineMappingsFollowBuffers: a new scenario shape
// frees the old buffers, and with them the mappings of the peers' ones;
// runs of one shape map once.
func TestPerProcessCopyEngineMappingsFollowBuffers(t *testing.T) {
	fb := newFakeFabric(2)
	bs, fs := procBackends(t, 2, fb, Options{})
	for i, bytes := range []float64{4096, 4096, 8192} {
		_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: sizedGEMM(scenarios.AllGather, 2, bytes), Strategy: ceFirst, Mode: backends.ModeComm, Reps: 1})
		for r, err := range errs {
			if err != nil {
				t.Fatalf("run %d rank %d: %v", i, r, err)
			}
		}
		// Each rank maps its peer's output and flags.
		if m := mappings(fb); m[0] != 2 || m[1] != 2 {
			t.Errorf("run %d: open mappings %v; want 2 per rank", i, m)
		}
	}
	if fs[0].ipcOpens != 4 {
		t.Errorf("rank 0 opened %d mappings over two shapes; want 4 (runs of one shape reuse them)", fs[0].ipcOpens)
	}
}

// TestPerProcessCopyEngineSmallerScenario: a 2-GPU copy-engine
// collective in a job of 3 ranks runs on ranks 0 and 1; rank 2 takes
// part in every exchange but maps nothing.
func TestPerProcessCopyEngineSmallerScenario(t *testing.T) {
	fb := newFakeFabric(3)
	bs, fs := procBackends(t, 3, fb, Options{})
	_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllToAll), Strategy: ceFirst, Mode: backends.ModeConcurrent, Reps: 2})
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	if got := []int{fs[0].ipcOpens, fs[1].ipcOpens, fs[2].ipcOpens}; got[0] != 2 || got[1] != 2 || got[2] != 0 {
		t.Errorf("mappings opened per rank %v; want [2 2 0]", got)
	}
}

// TestPerProcessCopyEngineRefusals: across hosts, copy-engine collectives
// are refused in one line advising NCCL (NCCL still runs); a pipelined
// reduction is refused too; a GPU pair whose mapping fails stops every
// rank with the driver's reason.
func TestPerProcessCopyEngineRefusals(t *testing.T) {
	bs, _ := procBackendsOn(t, 2, newFakeFabric(2), Options{}, []string{"node-a", "node-b"})
	_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Strategy: ceFirst, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if !errors.Is(err, ErrCopyEngineAcrossNodes) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "use NCCL") || !strings.Contains(err.Error(), "node-a, node-b") {
			t.Errorf("rank %d: %v; want the across-nodes refusal naming the hosts and advising NCCL", r, err)
		}
	}
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d: NCCL across hosts: %v", r, err)
		}
	}

	bs, _ = procBackends(t, 2, newFakeFabric(2), Options{})
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.ReduceScatter), Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA, CommSMs: 16}, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if !errors.Is(err, ErrCopyEngineAcrossProcesses) || strings.Contains(err.Error(), "\n") {
			t.Errorf("rank %d: %v; want the pipelined reduction refused", r, err)
		}
	}

	fb := newFakeFabric(2)
	fb.openFails = true
	bs, _ = procBackends(t, 2, fb, Options{})
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllToAll), Strategy: ceFirst, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "peer access is not supported") {
			t.Errorf("rank %d: %v; want the failed mapping", r, err)
		}
	}
}
