package group

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends/dist/launch"
	"github.com/c3lab/c3lab/backends/dist/store"
)

var fast = store.Options{Heartbeat: 20 * time.Millisecond, Silence: 300 * time.Millisecond, Join: 3 * time.Second}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// fakeWorld is MPI for ranks that are goroutines: the nth Bcast of every
// rank carries the root's nth buffer.
type fakeWorld struct {
	size   int
	mu     sync.Mutex
	rounds map[int]chan []byte
	closed int
}

type fakeMPI struct {
	w          *fakeWorld
	rank, size int
	n          int
}

func (w *fakeWorld) round(n int) chan []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.rounds[n] == nil {
		w.rounds[n] = make(chan []byte, 1)
	}
	return w.rounds[n]
}

func (f *fakeMPI) Bcast(buf []byte, root int) error {
	ch := f.w.round(f.n)
	f.n++
	if f.rank == root {
		ch <- bytes.Clone(buf)
		return nil
	}
	b := <-ch
	ch <- b // for the next rank
	copy(buf, b)
	return nil
}
func (f *fakeMPI) Rank() int { return f.rank }
func (f *fakeMPI) Size() int { return f.size }
func (f *fakeMPI) Close() error {
	f.w.mu.Lock()
	f.w.closed++
	f.w.mu.Unlock()
	return nil
}

// join starts world ranks as goroutines; env makes each rank's
// environment, mpi (when not nil) its MPI.
func join(t *testing.T, world int, env func(r int) launch.Env, mpi func(r int) Broadcaster) []*Group {
	t.Helper()
	gs := make([]*Group, world)
	errs := make([]error, world)
	var wg sync.WaitGroup
	for r := range world {
		wg.Go(func() {
			opt := Options{Store: fast, Host: "h", PID: 10 + r}
			if mpi != nil {
				opt.MPI = mpi(r)
			}
			gs[r], errs[r] = Join(context.Background(), env(r), opt)
		})
	}
	wg.Wait()
	for r, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", r, err)
		}
	}
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, g := range gs {
			wg.Go(func() { g.Close() })
		}
		wg.Wait()
	})
	return gs
}

func torchEnv(world, port int) func(int) launch.Env {
	return func(r int) launch.Env {
		return launch.Env{Launcher: launch.Torchrun, Rank: r, WorldSize: world, LocalRank: r, LocalWorldSize: world, MasterAddr: "127.0.0.1", MasterPort: port}
	}
}

func TestGatherGatePublish(t *testing.T) {
	const world = 4
	gs := join(t, world, torchEnv(world, freePort(t)), nil)
	ctx := context.Background()
	// The start gate lets every rank go together.
	releases := make([]int64, world)
	var lastArmed atomic.Int64
	var wg sync.WaitGroup
	for r, g := range gs {
		wg.Go(func() {
			if r == 3 {
				time.Sleep(100 * time.Millisecond) // the last to arm
				lastArmed.Store(time.Now().UnixNano())
			}
			at, err := g.StartGate(ctx, "run")
			if err != nil {
				t.Error(err)
			}
			releases[r] = at.UnixNano()
		})
	}
	wg.Wait()
	// No rank leaves before the last one armed, and they leave together:
	// within 20 ms on one host, against the 100 ms the last armed after
	// the others. (Typically well under a millisecond; a loaded 2-core CI
	// machine took 1.3 ms to schedule four spinning goroutines. The
	// multi-process test reports the real figure.)
	for r, at := range releases {
		if at < lastArmed.Load() {
			t.Errorf("rank %d left the gate %v before the last rank armed", r, time.Duration(lastArmed.Load()-at))
		}
	}
	if s := Skew(releases); s > 20*time.Millisecond {
		t.Errorf("ranks let go %v apart; the gate waits for the last and lets all go at once", s)
	}
	// A plain barrier holds the early ranks until the last arrives.
	var arrived sync.WaitGroup
	last := make(chan struct{})
	for r, g := range gs {
		arrived.Go(func() {
			if r == 0 {
				time.Sleep(50 * time.Millisecond)
				close(last) // arriving now
			}
			if err := g.Barrier(ctx, "done"); err != nil {
				t.Error(err)
			}
			select {
			case <-last:
			default:
				t.Errorf("rank %d passed the barrier before rank 0 arrived", r)
			}
		})
	}
	arrived.Wait()
	// Two gathers of one name: each round keeps its own data.
	for round := range 2 {
		got := make([][][]byte, world)
		for r, g := range gs {
			wg.Go(func() {
				var err error
				if got[r], err = g.Gather(ctx, "result", fmt.Appendf(nil, "r%d-%d", r, round)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for r := 1; r < world; r++ {
			if got[r] != nil {
				t.Errorf("rank %d got gathered data", r)
			}
		}
		for r, b := range got[0] {
			if want := fmt.Sprintf("r%d-%d", r, round); string(b) != want {
				t.Errorf("round %d: rank 0 got %q from rank %d, want %q", round, b, r, want)
			}
		}
	}
	// AllGather: every rank gets every rank's data, round by round.
	for round := range 2 {
		got := make([][][]byte, world)
		for r, g := range gs {
			wg.Go(func() {
				var err error
				if got[r], err = g.AllGather(ctx, "times", fmt.Appendf(nil, "t%d-%d", r, round)); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		for r := range world {
			if len(got[r]) != world {
				t.Fatalf("round %d: rank %d got %d ranks' data, want %d", round, r, len(got[r]), world)
			}
			for q, b := range got[r] {
				if want := fmt.Sprintf("t%d-%d", q, round); string(b) != want {
					t.Errorf("round %d: rank %d got %q from rank %d, want %q", round, r, b, q, want)
				}
			}
		}
	}
	// Commands arrive in order on every other rank.
	cmds := []string{"comm-sms=32", "engine=dma", "quit"}
	for _, g := range gs[1:] {
		wg.Go(func() {
			for _, want := range cmds {
				got, err := g.Next(ctx)
				if err != nil || string(got) != want {
					t.Errorf("rank %d: %q, %v; want %q", g.Rank(), got, err, want)
				}
			}
		})
	}
	for _, c := range cmds {
		if err := gs[0].Publish(ctx, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	wg.Wait()
	if err := gs[1].Publish(ctx, nil); err == nil {
		t.Error("rank 1 published a command")
	}
	if _, err := gs[0].Next(ctx); err == nil {
		t.Error("rank 0 followed a command")
	}
}

// The NCCL id rank 0 makes reaches every rank, through the store and
// through MPI; under mpirun with no address named, rank 0's store
// address goes through MPI too.
func TestShareID(t *testing.T) {
	const world = 3
	id := bytes.Repeat([]byte{7}, BlockBytes)
	for _, tc := range []struct {
		name string
		env  func(int) launch.Env
		mpi  bool
	}{
		{"store", torchEnv(world, freePort(t)), false},
		{"mpi", func(r int) launch.Env {
			// An address but no port: rank 0 picks one and sends it through MPI.
			return launch.Env{Launcher: launch.OpenMPI, Rank: r, WorldSize: world, LocalRank: r, LocalWorldSize: world, MasterAddr: "127.0.0.1"}
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &fakeWorld{size: world, rounds: map[int]chan []byte{}}
			var mpi func(int) Broadcaster
			if tc.mpi {
				mpi = func(r int) Broadcaster { return &fakeMPI{w: w, rank: r, size: world} }
			}
			gs := join(t, world, tc.env, mpi)
			var wg sync.WaitGroup
			for r, g := range gs {
				wg.Go(func() {
					got, err := g.ShareID(context.Background(), func() ([]byte, error) {
						if r != 0 {
							t.Errorf("rank %d made an id", r)
						}
						return id, nil
					})
					if err != nil || !bytes.Equal(got, id) {
						t.Errorf("rank %d: %v, %v", r, got[:min(len(got), 4)], err)
					}
				})
			}
			wg.Wait()
			for _, g := range gs {
				wg.Go(func() { g.Close() })
			}
			wg.Wait()
			if tc.mpi && w.closed != world {
				t.Errorf("MPI closed by %d ranks, want %d", w.closed, world)
			}
		})
	}
}

// When the group fails, every rank's work context ends, with the
// failure as its cause.
func TestContextEndsOnFailure(t *testing.T) {
	gs := join(t, 2, torchEnv(2, freePort(t)), nil)
	ctx, cancel := gs[1].Context(context.Background())
	defer cancel()
	gs[0].server.Close(0) // rank 0's store goes away
	select {
	case <-ctx.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("the context outlived the group")
	}
	var fe *store.FailedError
	if err := context.Cause(ctx); !errors.As(err, &fe) || fe.Rank != 0 || !strings.Contains(err.Error(), "rank 0 is gone") {
		t.Errorf("cause %v", err)
	}
	if err := gs[1].Err(); err == nil {
		t.Error("Err is nil after the failure")
	}
}

func TestJoinRefusals(t *testing.T) {
	port := freePort(t)
	ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for _, tc := range []struct {
		name string
		env  launch.Env
		mpi  Broadcaster
		want string
	}{
		{"port in use", torchEnv(2, port)(0), nil, fmt.Sprintf("rank 0 cannot serve the store on 127.0.0.1:%d: the port is in use", port)},
		{"no address", launch.Env{Launcher: launch.Slurm, WorldSize: 2, LocalWorldSize: 2}, nil,
			"srun started 2 ranks but named no address for rank 0's store: set MASTER_ADDR and MASTER_PORT"},
		{"mpi disagrees", launch.Env{Launcher: launch.OpenMPI, Rank: 1, WorldSize: 2, LocalWorldSize: 2}, &fakeMPI{rank: 0, size: 2},
			"MPI says rank 0 of 2, the mpirun environment says rank 1 of 2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opt := Options{Store: fast}
			if tc.mpi != nil {
				opt.MPI = tc.mpi
			}
			_, err := Join(context.Background(), tc.env, opt)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("%v, want one line starting %q", err, tc.want)
			}
		})
	}
}

func TestSkew(t *testing.T) {
	for _, tc := range []struct {
		in   []int64
		want time.Duration
	}{
		{nil, 0},
		{[]int64{5}, 0},
		{[]int64{100, 40, 70}, 60},
	} {
		if got := Skew(tc.in); got != tc.want {
			t.Errorf("Skew(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
