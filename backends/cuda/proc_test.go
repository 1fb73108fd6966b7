package cuda

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// sameAsOneProcess fails the test unless rank r's run (err, got) gave the
// same repetitions as one process driving every GPU (want): wall,
// compute, comm and per-op times.
func sameAsOneProcess(t *testing.T, r int, got backends.RunResult, err error, want backends.RunResult) {
	t.Helper()
	if err != nil {
		t.Fatalf("rank %d: %v", r, err)
	}
	if len(got.Reps) != len(want.Reps) {
		t.Fatalf("rank %d: %d repetitions, one process %d", r, len(got.Reps), len(want.Reps))
	}
	for i := range want.Reps {
		g, w := got.Reps[i], want.Reps[i]
		if g.Wall != w.Wall || g.Compute != w.Compute || g.Comm != w.Comm || !equalInts(g.Ops, w.Ops) {
			t.Errorf("rank %d rep %d: %+v; one process %+v", r, i, g, w)
		}
	}
}

// runCanceled runs ex on every rank's backend at once, cancels the job
// after the given time, and returns each rank's error and when it left.
func runCanceled(bs []*Backend, ex backends.Experiment, after time.Duration) ([]error, []time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make([]error, len(bs))
	ended := make([]time.Duration, len(bs))
	start := time.Now()
	var wg sync.WaitGroup
	for r, b := range bs {
		wg.Go(func() {
			_, errs[r] = b.Run(ctx, ex, nil)
			ended[r] = time.Since(start)
		})
	}
	time.Sleep(after)
	cancel()
	wg.Wait()
	return errs, ended
}

// procBackends opens world rank backends on fakes that share one fabric,
// one link and one gate page, as world processes of one node would.
func procBackends(t *testing.T, world int, fb *fakeFabric, opts Options) ([]*Backend, []*fakeGPU) {
	t.Helper()
	return procBackendsOn(t, world, fb, opts, nil)
}

// procBackendsOn is procBackends with rank r on host hosts[r] (nil: all
// on this one).
func procBackendsOn(t *testing.T, world int, fb *fakeFabric, opts Options, hosts []string) ([]*Backend, []*fakeGPU) {
	t.Helper()
	links := newLinks(world)
	dir := t.TempDir()
	bs, fs, errs := make([]*Backend, world), make([]*fakeGPU, world), make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		fs[r] = newRankFake(fb, r)
		bs[r] = newBackend(opts)
		pr := &Process{Peers: links[r], GateDir: dir}
		if hosts != nil {
			pr.Host = hosts[r]
		}
		wg.Go(func() {
			bs[r].do(func() { errs[r] = bs[r].joinJob(fs[r], pr) })
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d joining: %v", r, err)
		}
	}
	t.Cleanup(func() {
		for _, b := range bs {
			b.Close()
		}
	})
	return bs, fs
}

// runRanks runs one experiment on every rank at once.
func runRanks(ctx context.Context, bs []*Backend, ex backends.Experiment) ([]backends.RunResult, []*backends.Collector, []error) {
	res, cols, errs := make([]backends.RunResult, len(bs)), make([]*backends.Collector, len(bs)), make([]error, len(bs))
	var wg sync.WaitGroup
	for r, b := range bs {
		cols[r] = &backends.Collector{}
		wg.Go(func() { res[r], errs[r] = b.Run(ctx, ex, cols[r]) })
	}
	wg.Wait()
	return res, cols, errs
}

// TestPerProcessMatchesOneProcess runs scenarios as two processes of one
// GPU each and as one process of two GPUs: every rank's results (computed
// from every rank's event times) equal the one process's, every
// collective is verified on every rank, and every repetition's start skew
// is the fabric's offset between the ranks' %globaltimer stamps.
func TestPerProcessMatchesOneProcess(t *testing.T) {
	cases := []struct {
		name string
		sc   scenarios.Scenario
		mode backends.Mode
	}{
		{"all-gather", smallGEMM(scenarios.AllGather), backends.ModeConcurrent},
		{"reduce-scatter", smallGEMM(scenarios.ReduceScatter), backends.ModeConcurrent},
		{"all-reduce", smallGEMM(scenarios.AllReduce), backends.ModeConcurrent},
		{"all-to-all", smallGEMM(scenarios.AllToAll), backends.ModeConcurrent},
		{"all-reduce comm only", smallGEMM(scenarios.AllReduce), backends.ModeComm},
		{"graph all-gather feeding a GEMM", agGEMM(2, 2), backends.ModeConcurrent},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ex := backends.Experiment{Scenario: tc.sc, Strategy: scenarios.Strategy{Launch: scenarios.CommFirst}, Mode: tc.mode, Reps: 3, Warmup: 1}
			one := fakeBackend(t, newFakeGPU(2), Options{})
			want, err := one.Run(context.Background(), ex, &backends.Collector{})
			if err != nil {
				t.Fatal(err)
			}
			fb := newFakeFabric(2)
			fb.offset[1] = 1500
			bs, fs := procBackends(t, 2, fb, Options{})
			got, cols, errs := runRanks(context.Background(), bs, ex)
			for r := range bs {
				sameAsOneProcess(t, r, got[r], errs[r], want)
				if len(got[r].StartSkews) != len(want.Reps) {
					t.Errorf("rank %d: %d start skews for %d gated repetitions", r, len(got[r].StartSkews), len(want.Reps))
				}
				for _, s := range got[r].StartSkews {
					if s != 1500 {
						t.Errorf("rank %d: start skew %d ns; the ranks' stamps are 1500 ns apart", r, s)
					}
				}
				if len(cols[r].SpanList) == 0 {
					t.Errorf("rank %d: no spans", r)
				}
				if fs[r].colls == 0 {
					t.Errorf("rank %d called no collective", r)
				}
				// Only this rank's GPU ran anything: its fake has one device.
				for _, l := range fs[r].log {
					if strings.Contains(l, "dev1") {
						t.Errorf("rank %d's GPU was given work of another: %s", r, l)
						break
					}
				}
			}
			if want.StartSkews != nil {
				t.Errorf("one process reported start skews %v", want.StartSkews)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPerProcessWrongResultFailsEveryRank: a collective that gives a wrong
// result on one rank stops the run on every rank, naming that rank.
func TestPerProcessWrongResultFailsEveryRank(t *testing.T) {
	for _, kind := range []scenarios.Collective{scenarios.AllGather, scenarios.ReduceScatter, scenarios.AllReduce, scenarios.AllToAll} {
		t.Run(string(kind), func(t *testing.T) {
			bs, fs := procBackends(t, 2, newFakeFabric(2), Options{})
			fs[1].corrupt = true
			_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(kind), Mode: backends.ModeConcurrent, Reps: 2})
			if errs[1] == nil || !strings.Contains(errs[1].Error(), "wrong result") {
				t.Errorf("rank 1: %v; want its wrong result", errs[1])
			}
			if errs[0] == nil || !strings.Contains(errs[0].Error(), "rank 1 failed") || !strings.Contains(errs[0].Error(), "wrong result") {
				t.Errorf("rank 0: %v; want rank 1's wrong result", errs[0])
			}
		})
	}
}

// TestPerProcessCancelAbortsCollective: rank 0 waits in a collective for
// rank 1, held up on the host; the job's context is canceled (the group
// lost a rank): the watchdog aborts the communicators, rank 0's blocked
// call returns at once, and every rank ends with an error.
func TestPerProcessCancelAbortsCollective(t *testing.T) {
	bs, fs := procBackends(t, 2, newFakeFabric(2), Options{})
	fs[1].stallGEMMs, fs[1].stall = 1, 800*time.Millisecond
	ex := backends.Experiment{Scenario: smallGEMM(scenarios.AllReduce), Strategy: scenarios.Strategy{Launch: scenarios.ComputeFirst}, Mode: backends.ModeConcurrent, Reps: 2}
	errs, ended := runCanceled(bs, ex, 150*time.Millisecond)
	for r := range bs {
		if errs[r] == nil {
			t.Errorf("rank %d finished a canceled run", r)
		}
		if fs[r].asyncAborts == 0 {
			t.Errorf("rank %d's communicators were not aborted", r)
		}
	}
	if !errors.Is(errs[0], errFabricAborted) && !errors.Is(errs[0], context.Canceled) {
		t.Errorf("rank 0: %v; want the aborted collective", errs[0])
	}
	t.Logf("rank 0: %v after %v; rank 1: %v after %v", errs[0], ended[0], errs[1], ended[1])
	if ended[0] > 600*time.Millisecond {
		t.Errorf("rank 0 took %v to leave its blocked collective; the abort should free it at once", ended[0])
	}
	// The next run starts over on new communicators, on every rank.
	fs[1].stallGEMMs = 0
	_, _, errs = runRanks(context.Background(), bs, ex)
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d after the abort: %v", r, err)
		}
	}
}

// TestPerProcessRefusals: copy-engine collectives of a format-2 scenario
// across processes, and a graph whose collective takes another process's
// GEMM output, are refused in one line on every rank.
func TestPerProcessRefusals(t *testing.T) {
	bs, _ := procBackends(t, 2, newFakeFabric(2), Options{})
	_, _, errs := runRanks(context.Background(), bs, backends.Experiment{Scenario: agGEMM(2, 2), Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if !errors.Is(err, ErrCopyEngineAcrossProcesses) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "use NCCL") {
			t.Errorf("rank %d: %v; want the copy-engine refusal advising NCCL", r, err)
		}
	}
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: gemmRS(2, 1), Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "another process") {
			t.Errorf("rank %d: %v; want the GEMM-fed collective refused", r, err)
		}
	}
	// Both ranks still run what they can.
	_, _, errs = runRanks(context.Background(), bs, backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Mode: backends.ModeConcurrent, Reps: 1})
	for r, err := range errs {
		if err != nil {
			t.Errorf("rank %d after the refusals: %v", r, err)
		}
	}
}

// TestPerProcessDevices: every rank reports the job's GPUs.
func TestPerProcessDevices(t *testing.T) {
	bs, _ := procBackends(t, 3, newFakeFabric(3), Options{})
	for r, b := range bs {
		if d := b.Devices(); len(d) != 3 {
			t.Errorf("rank %d reports %d GPUs, want the job's 3", r, len(d))
		}
		if got := b.Capabilities().Limits.MaxGPUs; got != 3 {
			t.Errorf("rank %d: max GPUs %d, want 3", r, got)
		}
	}
}

// TestShmGateVerdict: the last arrival opens the gate; a stall opens it
// early and every rank reads the same verdict; a late stall after the
// gate opened changes nothing.
func TestShmGateVerdict(t *testing.T) {
	var words [gateWords]uint32
	g := &shmGate{words: (*[gateWords]uint32)(unsafe.Pointer(&words[0])), world: 2}
	ctx := context.Background()
	g.arrive(ctx, 1)
	if words[gateWord] != 0 {
		t.Fatal("the gate opened before the last rank arrived")
	}
	g.arrive(ctx, 1)
	if words[gateWord] != 1 || g.stalled(1) {
		t.Fatalf("gate %d, stalled %v after both arrived; want open, not stalled", words[gateWord], g.stalled(1))
	}
	g.stall(1) // a late watchdog
	if g.stalled(1) {
		t.Error("a stall after the gate opened marked it stalled")
	}
	g.arrive(ctx, 2)
	g.stall(2) // rank 1 stalled while enqueuing
	if words[gateWord] != 2 || !g.stalled(2) {
		t.Fatalf("gate %d, stalled %v; the stall opens the gate and marks it", words[gateWord], g.stalled(2))
	}
	g.arrive(ctx, 2) // rank 1 arrives late: no change
	if !g.stalled(2) || words[gateWord] != 2 {
		t.Error("the late arrival changed the verdict")
	}
	g.arrive(ctx, 3)
	g.arrive(ctx, 3)
	if words[gateWord] != 3 || g.stalled(3) {
		t.Error("the count went out of step after a stall")
	}
}

func TestProcDevice(t *testing.T) {
	for _, tc := range []struct{ n, local, want int }{{1, 3, 0}, {4, 2, 2}, {2, 0, 0}} {
		if got, err := procDevice(tc.n, tc.local); err != nil || got != tc.want {
			t.Errorf("procDevice(%d, %d) = %d, %v; want %d", tc.n, tc.local, got, err, tc.want)
		}
	}
	if _, err := procDevice(2, 2); err == nil || !strings.Contains(err.Error(), "CUDA_VISIBLE_DEVICES") {
		t.Errorf("local rank 2 of 2 GPUs: %v", err)
	}
}
