// Package group is the control plane of c3lab's ranks, whatever backend
// they run: it joins the ranks a launcher started (rank 0 serves the
// store, every rank connects), hands out the NCCL unique id rank 0 makes
// (through MPI under mpirun, as nccl-tests does, else through the store),
// lets every rank through one start gate together and records when,
// gathers each rank's results to rank 0, carries rank 0's commands to the
// others, and cancels every rank's work within seconds when one rank dies
// or hangs, with one line naming it.
//
// Data between GPUs never goes through here: that is NCCL's (or CUDA
// IPC's) job. This is for bytes of control: ids, results, commands.
package group

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/c3lab/c3lab/backends/dist/launch"
	"github.com/c3lab/c3lab/backends/dist/store"
)

// Broadcaster sends a fixed-size block of bytes from rank 0 to every rank:
// MPI_Bcast under mpirun (dist/mpiboot). Close ends it (MPI_Finalize).
type Broadcaster interface {
	// Bcast sends buf from root to every rank; each rank passes a buffer
	// of the same size.
	Bcast(buf []byte, root int) error
	// Rank and Size are the channel's own view of the job, checked
	// against the launcher's.
	Rank() int
	Size() int
	Close() error
}

// BlockBytes is the size of every block sent through a Broadcaster: an
// NCCL unique id's.
const BlockBytes = 128

// Options tune Join.
type Options struct {
	// Store tunes the store's timing (heartbeats, silence, join).
	Store store.Options
	// MPI, when set, is the launcher's MPI: rank 0's store address goes
	// through it when the launcher named none, and so do NCCL ids.
	MPI Broadcaster
	// Host and PID name this rank in messages; os.Hostname and os.Getpid
	// when empty.
	Host string
	PID  int
}

// Group is this rank's membership of the job.
type Group struct {
	env    launch.Env
	client *store.Client
	server *store.Server // rank 0 only
	mpi    Broadcaster

	mu      sync.Mutex
	ids     int // NCCL ids shared so far
	cmdSeq  int // commands published (rank 0) or read (others)
	gathers map[string]int

	closeOnce sync.Once
	closeErr  error
}

// Join joins the job env describes: rank 0 serves the store on
// MasterAddr:MasterPort (or a free port it sends through MPI), and every
// rank connects to it and waits for the others. A port in use, a rank
// that never comes, a world size the ranks disagree on: each fails Join
// with one line that says what to do.
func Join(ctx context.Context, env launch.Env, opt Options) (*Group, error) {
	if opt.Host == "" {
		opt.Host, _ = os.Hostname()
	}
	if opt.PID == 0 {
		opt.PID = os.Getpid()
	}
	g := &Group{env: env, mpi: opt.MPI, gathers: map[string]int{}}
	if g.mpi != nil {
		if r, s := g.mpi.Rank(), g.mpi.Size(); r != env.Rank || s != env.WorldSize {
			return nil, fmt.Errorf("MPI says rank %d of %d, the %s environment says rank %d of %d: the job was started twice over, or by another launcher", r, s, env.Launcher, env.Rank, env.WorldSize)
		}
	}
	addr := env.Store()
	if env.Rank == 0 {
		if addr == "" && g.mpi == nil {
			return nil, noAddress(env)
		}
		// Every interface, for the other nodes; only loopback when that
		// is the address named. Port 0 (none named) picks a free one.
		listen := ":" + strconv.Itoa(env.MasterPort)
		if loopback(env.MasterAddr) {
			listen = net.JoinHostPort(env.MasterAddr, strconv.Itoa(env.MasterPort))
		}
		s, err := store.Listen(listen, env.WorldSize, opt.Store)
		if err != nil {
			return nil, err
		}
		g.server = s
		if addr == "" {
			// Sent through MPI: MASTER_ADDR when named, else this host.
			host := env.MasterAddr
			if host == "" {
				host = opt.Host
			}
			addr = net.JoinHostPort(host, strconv.Itoa(s.Port()))
		}
	}
	if env.Store() == "" {
		// The launcher named no address: rank 0 sends its own through MPI.
		if g.mpi == nil {
			return nil, noAddress(env)
		}
		got, err := g.bcast([]byte(addr))
		if err != nil {
			g.closeServer()
			return nil, fmt.Errorf("sending rank 0's store address through MPI: %w", err)
		}
		addr = string(got)
	}
	c, err := store.Dial(ctx, addr, store.Hello{Rank: env.Rank, World: env.WorldSize, Host: opt.Host, PID: opt.PID}, opt.Store)
	if err != nil {
		g.closeServer()
		return nil, err
	}
	g.client = c
	if _, err := c.Barrier(ctx, "join"); err != nil {
		g.Close()
		return nil, fmt.Errorf("waiting for every rank to join: %w", err)
	}
	return g, nil
}

func noAddress(env launch.Env) error {
	return fmt.Errorf("%s started %d ranks but named no address for rank 0's store: set MASTER_ADDR and MASTER_PORT (or C3LAB_MASTER_ADDR and C3LAB_MASTER_PORT) for every rank", env.Launcher, env.WorldSize)
}

// loopback reports whether host is this machine's loopback (then only
// local ranks can come, and the store listens there only).
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// bcast sends b (at most BlockBytes) from rank 0 through MPI.
func (g *Group) bcast(b []byte) ([]byte, error) {
	if len(b) > BlockBytes-1 {
		return nil, fmt.Errorf("%d bytes do not fit a %d-byte block", len(b), BlockBytes)
	}
	buf := make([]byte, BlockBytes)
	if g.env.Rank == 0 {
		buf[0] = byte(len(b))
		copy(buf[1:], b)
	}
	if err := g.mpi.Bcast(buf, 0); err != nil {
		return nil, err
	}
	n := int(buf[0])
	if n > BlockBytes-1 {
		return nil, errors.New("a broken block came through MPI")
	}
	return buf[1 : 1+n], nil
}

// Env is what the launcher said about this rank.
func (g *Group) Env() launch.Env { return g.env }

// Rank is this rank; Size the world's.
func (g *Group) Rank() int { return g.env.Rank }

// Size is the number of ranks.
func (g *Group) Size() int { return g.env.WorldSize }

// Err is why the group failed (a *store.FailedError naming the rank when
// one is to blame), nil while it has not.
func (g *Group) Err() error {
	if err := g.client.Err(); err != nil {
		return err
	}
	if g.server != nil {
		return g.server.Err()
	}
	return nil
}

// Failed is closed when the group fails.
func (g *Group) Failed() <-chan struct{} { return g.client.Failed() }

// Context returns a context canceled when the group fails (or parent
// ends): what runs under it stops, and its backends close, within the
// store's silence of a rank's death or hang.
func (g *Group) Context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-g.client.Failed():
			cancel(g.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}

// StartGate is the one start gate: every rank arms it and waits; when the
// last has armed, rank 0's store names a moment a little ahead (GateLead
// after the release, on rank 0's clock) and every rank waits for it on
// its own clock, spinning the last stretch, so ranks on one host leave
// within microseconds of each other instead of the milliseconds their
// messages take. It returns when this rank left, on its own clock
// (compare ranks' times with Skew); across hosts their clocks' offset
// adds to the skew.
func (g *Group) StartGate(ctx context.Context, name string) (time.Time, error) {
	at, err := g.client.Barrier(ctx, "gate/"+name)
	if err != nil {
		return time.Time{}, err
	}
	return waitUntil(ctx, at.Add(GateLead))
}

// GateLead is how far past the barrier's release the ranks leave the start
// gate: more than the release takes to reach every rank.
const GateLead = 20 * time.Millisecond

// waitUntil returns at t (or at once when t has passed): sleeping, then
// spinning the last spinFor, where a sleep's wake-up is too coarse.
func waitUntil(ctx context.Context, t time.Time) (time.Time, error) {
	if d := time.Until(t) - spinFor; d > 0 {
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(d):
		}
	}
	for {
		now := time.Now()
		if !now.Before(t) {
			return now, nil
		}
	}
}

// Barrier waits until every rank has reached the barrier name.
func (g *Group) Barrier(ctx context.Context, name string) error {
	_, err := g.client.Barrier(ctx, "barrier/"+name)
	return err
}

// Skew is the spread of the ranks' release times (Unix ns): the latest
// minus the earliest. Ranks on one host share its clock; across hosts the
// clocks' own offset adds to it.
func Skew(releases []int64) time.Duration {
	if len(releases) == 0 {
		return 0
	}
	lo, hi := releases[0], releases[0]
	for _, r := range releases[1:] {
		lo, hi = min(lo, r), max(hi, r)
	}
	return time.Duration(hi - lo)
}

// Gather sends data to rank 0. On rank 0 it returns every rank's data in
// rank order, waiting for each (and failing as soon as a rank is lost);
// on the others it returns nil. Each name may be gathered more than once.
func (g *Group) Gather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	g.mu.Lock()
	round := g.gathers[name]
	g.gathers[name]++
	g.mu.Unlock()
	key := func(r int) string { return fmt.Sprintf("gather/%s/%d/%d", name, round, r) }
	if err := g.client.Set(ctx, key(g.env.Rank), data); err != nil {
		return nil, err
	}
	if g.env.Rank != 0 {
		return nil, nil
	}
	out := make([][]byte, g.env.WorldSize)
	for r := range out {
		v, err := g.client.Get(ctx, key(r))
		if err != nil {
			return nil, fmt.Errorf("gathering %s from rank %d: %w", name, r, err)
		}
		out[r] = v
	}
	return out, nil
}

// AllGather is Gather to every rank: each sends data and every rank gets
// every rank's, in rank order (waiting for each, and failing as soon as a
// rank is lost). One process per GPU exchanges its GPU's times with it
// after each repetition. Each name may be gathered more than once.
func (g *Group) AllGather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	g.mu.Lock()
	round := g.gathers["all/"+name]
	g.gathers["all/"+name]++
	g.mu.Unlock()
	key := func(r int) string { return fmt.Sprintf("allgather/%s/%d/%d", name, round, r) }
	if err := g.client.Set(ctx, key(g.env.Rank), data); err != nil {
		return nil, err
	}
	out := make([][]byte, g.env.WorldSize)
	for r := range out {
		if r == g.env.Rank {
			out[r] = data
			continue
		}
		v, err := g.client.Get(ctx, key(r))
		if err != nil {
			return nil, fmt.Errorf("gathering %s from rank %d: %w", name, r, err)
		}
		out[r] = v
	}
	return out, nil
}

// Publish sends a command from rank 0 to every other rank, in order
// (the lab's knob changes); the others read them with Next.
func (g *Group) Publish(ctx context.Context, cmd []byte) error {
	if g.env.Rank != 0 {
		return errors.New("only rank 0 publishes commands")
	}
	g.mu.Lock()
	seq := g.cmdSeq
	g.cmdSeq++
	g.mu.Unlock()
	return g.client.Set(ctx, "cmd/"+strconv.Itoa(seq), cmd)
}

// Next waits for rank 0's next command.
func (g *Group) Next(ctx context.Context) ([]byte, error) {
	if g.env.Rank == 0 {
		return nil, errors.New("rank 0 publishes commands; it does not follow them")
	}
	g.mu.Lock()
	seq := g.cmdSeq
	g.cmdSeq++
	g.mu.Unlock()
	return g.client.Get(ctx, "cmd/"+strconv.Itoa(seq))
}

// ShareID hands the NCCL unique id rank 0 makes (newID is called on rank 0
// only; it returns the id's 128 bytes) to every rank: through MPI_Bcast
// under mpirun, as nccl-tests does, else through the store.
func (g *Group) ShareID(ctx context.Context, newID func() ([]byte, error)) ([]byte, error) {
	g.mu.Lock()
	n := g.ids
	g.ids++
	g.mu.Unlock()
	var id []byte
	if g.env.Rank == 0 {
		var err error
		if id, err = newID(); err != nil {
			return nil, fmt.Errorf("rank 0 making an NCCL id: %w", err)
		}
		if len(id) != BlockBytes {
			return nil, fmt.Errorf("an NCCL id is %d bytes, rank 0 made %d", BlockBytes, len(id))
		}
	}
	if g.mpi != nil {
		buf := make([]byte, BlockBytes)
		copy(buf, id)
		if err := g.mpi.Bcast(buf, 0); err != nil {
			return nil, fmt.Errorf("broadcasting the NCCL id through MPI: %w", err)
		}
		return buf, nil
	}
	key := "nccl-id/" + strconv.Itoa(n)
	if g.env.Rank == 0 {
		return id, g.client.Set(ctx, key, id)
	}
	return g.client.Get(ctx, key)
}

// Close leaves the group: this rank says goodbye; rank 0 then waits a
// little for the others' goodbyes before it stops serving, so none is cut
// off. MPI, when in use, is finalized.
func (g *Group) Close() error {
	g.closeOnce.Do(func() { g.closeErr = g.close() })
	return g.closeErr
}

func (g *Group) close() error {
	var errs []error
	if g.client != nil {
		errs = append(errs, g.client.Close())
	}
	g.closeServer()
	if g.mpi != nil {
		errs = append(errs, g.mpi.Close())
	}
	return errors.Join(errs...)
}

func (g *Group) closeServer() {
	if g.server != nil {
		g.server.Close(5 * time.Second)
	}
}

// spinFor is the stretch of the start gate's wait spent spinning: a
// sleep's wake-up on a busy host can be milliseconds late.
const spinFor = 5 * time.Millisecond
