package cuda

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// One process per GPU (backends/MULTINODE.md). Under a launcher that
// starts a rank per GPU, each rank's backend opens only its own GPU and
// runs every experiment as one rank of the job:
//
//   - The backend's logic still sees the job's GPUs, 0..world-1 (rank r's
//     GPU is device r): rankGPU stands between it and this process's GPU.
//     Work for this rank's device goes to the GPU; work for another rank's
//     device is that rank's and is skipped here (its handles are
//     placeholders), so each rank enqueues only its share and a
//     collective is one call per rank, on a communicator made with
//     ncclCommInitRank from an id rank 0 shares (Peers.ShareID).
//   - All ranks make the same calls in the same order, so communicators
//     are created in one order everywhere, and the ranks stay in step at
//     a few exchanges (Peers.AllGather): when a run starts, after its
//     setup, after its verification, and after every repetition. The
//     last carries each rank's event times, so every rank computes the
//     job's results (Wall, Compute, Comm, per op) exactly as one process
//     would from every GPU's events, and any rank's failure fails the run
//     on every rank at the next exchange.
//   - One start gate: every rank's streams wait on a word of a page the
//     ranks of a node share (procGate); the last rank to finish enqueuing
//     opens it for all GPUs at once. Across nodes, each rank opens its own
//     gate at the moment Peers.StartGate names.
//   - The first work after the gate is a one-thread kernel that reads the
//     GPU's %globaltimer (native.StampKernel); the spread of the ranks'
//     stamps is the start skew, reported per repetition.
//   - A canceled run aborts this rank's communicators from a watchdog
//     (ncclCommAbort), which frees a call blocked in NCCL.

// Peers is the job a rank's backend belongs to: the control plane of
// backends/dist/group (group.Group implements it).
type Peers interface {
	Rank() int
	Size() int
	// ShareID returns the 128-byte NCCL id newID makes on rank 0, on
	// every rank (every rank calls it, in the same order).
	ShareID(ctx context.Context, newID func() ([]byte, error)) ([]byte, error)
	// AllGather returns every rank's data, in rank order.
	AllGather(ctx context.Context, name string, data []byte) ([][]byte, error)
	// StartGate returns when every rank has armed the gate name, at a
	// moment it names (ranks on other hosts: their clocks' offset adds).
	StartGate(ctx context.Context, name string) (time.Time, error)
}

// Process makes the backend one rank of a job with one process per GPU.
type Process struct {
	Peers Peers
	// Context bounds the backend's setup with the other ranks (its
	// cancellation stops a rank waiting for the others at Open).
	Context context.Context
	// LocalRank picks this rank's GPU among those the driver sees; when
	// the driver sees one GPU (CUDA_VISIBLE_DEVICES set per rank), that
	// one.
	LocalRank int
	// GateDir is where the ranks of one node make their shared start-gate
	// page: "" means /dev/shm.
	GateDir string
	// Host is the name this rank gives its host (ranks of one host share
	// a start-gate page and CUDA IPC); "" means os.Hostname.
	Host string
}

// errNotMine says a buffer lives on another rank's GPU.
var errNotMine = errors.New("the buffer is on another rank's GPU (one process per GPU)")

// ErrCopyEngineAcrossProcesses is the refusal of copy-engine work between
// GPUs of different processes that c3lab does not map with CUDA IPC.
var ErrCopyEngineAcrossProcesses = errors.New("between processes, c3lab runs the copy-engine collectives of one-pair scenarios only (all-gather, all-to-all, and reductions outside a comm_sms partition), through CUDA IPC: use NCCL (--comm-engine sm, or nccl-ce for NCCL's own copy-engine path), or run one process per node so one process drives every GPU")

// procGPU is what a rank's own GPU offers beyond gpu: per-process
// communicators, the timestamp kernel, the shared start gate and an
// abort any goroutine may call.
type procGPU interface {
	gpu
	// NewUniqueID makes an NCCL unique id (rank 0, for ShareID).
	NewUniqueID() ([]byte, error)
	// SetCommID makes the communicators of spec one rank (rank of world)
	// of the job's, from id.
	SetCommID(spec commSpec, id []byte, world, rank int)
	// Stamp enqueues on s a one-thread kernel that writes the GPU's
	// %globaltimer (ns) to the 8 bytes at at (pinned host memory).
	Stamp(s streamID, at bufRef) error
	// UseSharedGate makes the start gate the first word of the page at p
	// (bytes long, mapped by every rank of the node): it is registered
	// with the driver, and GateWait waits on it.
	UseSharedGate(p []byte) error
	// AbortAsync aborts every communicator; any goroutine may call it,
	// even while the worker is blocked in NCCL. The worker finds them
	// aborted and makes new ones.
	AbortAsync()
	// CUDA IPC, for copy-engine collectives between processes
	// (proc_ipc.go): ExportBuf returns the handle of this GPU's buffer b;
	// OpenPeerBuf maps a buffer of bytes another process exported, as a
	// buffer of this GPU's that Free (or Close) unmaps.
	ExportBuf(b bufID) ([]byte, error)
	OpenPeerBuf(handle []byte, bytes int64) (bufID, error)
	// UseFlags names this GPU's buffer b as ordering flags; ReleaseFlags
	// writes v to every word of them from the host, from any goroutine,
	// so streams waiting for a lost peer's flags go on.
	UseFlags(b bufID)
	ReleaseFlags(v uint32)
}

// phantom marks a handle of another rank's device.
const phantom = 0

// rankGPU presents the job's GPUs to the backend and runs this rank's
// share on its own GPU (device rank, the inner GPU's device 0).
type rankGPU struct {
	in          procGPU
	rank, world int
	devs        []devInfo
	next        int
	bufs        map[bufID]rankHandle
	streams     map[streamID]rankHandle
	events      map[eventID]rankHandle
	// share returns the NCCL id of a new communicator (all ranks call it
	// in the same order), within the current run's ctx; ids says for
	// which specs it was shared.
	share func(ctx context.Context, spec commSpec) ([]byte, error)
	ctx   context.Context
	ids   map[commSpec]bool
	// recorded lists this rank's events recorded since the last
	// exchange; times holds the other ranks' event times (ns from each
	// rank's own reference event).
	recorded []eventID
	inBatch  map[eventID]bool
	times    map[eventID]int64
	// stampBuf holds the %globaltimer stamp of the first kernel after the
	// gate; stampV is the gate value it was taken for.
	stampBuf bufID
	stampV   uint32
	// flagSeq numbers the copy-engine collectives' ordering flags
	// (proc_ipc.go); released is set once ReleaseFlags ran, so the next
	// run starts over on every rank. Both are read from the watchdog.
	flagSeq  atomic.Uint32
	released atomic.Bool
}

// rankHandle is a handle of device dev; inner is the GPU's own, or
// phantom for another rank's device.
type rankHandle struct {
	dev   int
	inner int
	// bytes is a buffer's size; mapped is set for another rank's buffer
	// mapped into this process with CUDA IPC (inner is the mapping).
	bytes  int64
	mapped bool
}

func newRankGPU(in procGPU, rank, world int, devs []devInfo) *rankGPU {
	return &rankGPU{in: in, rank: rank, world: world, devs: devs, bufs: map[bufID]rankHandle{}, streams: map[streamID]rankHandle{},
		events: map[eventID]rankHandle{}, ids: map[commSpec]bool{}, inBatch: map[eventID]bool{}, times: map[eventID]int64{}}
}

func (r *rankGPU) id() int { r.next++; return r.next }

func (r *rankGPU) mine(dev int) bool { return dev == r.rank }

func (r *rankGPU) Devices() []devInfo { return r.devs }

func (r *rankGPU) FreeMemory(dev int) (int64, error) {
	if !r.mine(dev) {
		// That rank checks its own GPU; its failure reaches every rank at
		// the setup exchange.
		return 1 << 62, nil
	}
	return r.in.FreeMemory(0)
}

func (r *rankGPU) alloc(dev int, bytes int64, f func() (bufID, error)) (bufID, error) {
	h := rankHandle{dev: dev, bytes: bytes}
	if r.mine(dev) {
		b, err := f()
		if err != nil {
			return 0, err
		}
		h.inner = int(b)
	}
	id := bufID(r.id())
	r.bufs[id] = h
	return id, nil
}

func (r *rankGPU) Alloc(dev int, bytes int64) (bufID, error) {
	return r.alloc(dev, bytes, func() (bufID, error) { return r.in.Alloc(0, bytes) })
}

func (r *rankGPU) AllocSymmetric(dev int, bytes int64) (bufID, error) {
	return r.alloc(dev, bytes, func() (bufID, error) { return r.in.AllocSymmetric(0, bytes) })
}

func (r *rankGPU) AllocHost(dev int, bytes int64) (bufID, error) {
	return r.alloc(dev, bytes, func() (bufID, error) { return r.in.AllocHost(0, bytes) })
}

// buf is the GPU's own buffer behind b, or errNotMine.
func (r *rankGPU) buf(b bufID) (bufID, error) {
	h, ok := r.bufs[b]
	if !ok {
		return 0, fmt.Errorf("unknown buffer %d", b)
	}
	if h.inner == phantom {
		return 0, fmt.Errorf("buffer %d of GPU %d: %w", b, h.dev, errNotMine)
	}
	return bufID(h.inner), nil
}

func (r *rankGPU) ref(b bufRef) (bufRef, error) {
	id, err := r.buf(b.b)
	return bufRef{id, b.off}, err
}

// stream is the GPU's own stream behind s; ok is false for another
// rank's (whose work is skipped here).
func (r *rankGPU) stream(s streamID) (streamID, bool) {
	h := r.streams[s]
	return streamID(h.inner), h.inner != phantom
}

func (r *rankGPU) RegisterWindows(spec commSpec, bufs []bufID) error {
	if err := r.commID(spec); err != nil {
		return err
	}
	if r.rank >= spec.Ranks {
		return nil
	}
	b, err := r.buf(bufs[r.rank])
	if err != nil {
		return err
	}
	return r.in.RegisterWindows(spec, []bufID{b})
}

func (r *rankGPU) Free(b bufID) error {
	h, ok := r.bufs[b]
	if !ok {
		return fmt.Errorf("free of unknown buffer %d", b)
	}
	delete(r.bufs, b)
	if h.inner == phantom {
		return nil
	}
	return r.in.Free(bufID(h.inner))
}

func (r *rankGPU) Upload(b bufID, data []byte) error {
	if h := r.bufs[b]; h.inner == phantom || h.mapped {
		return nil // that rank fills its own
	}
	id, err := r.buf(b)
	if err != nil {
		return err
	}
	return r.in.Upload(id, data)
}

func (r *rankGPU) Download(b bufID, out []byte) error {
	id, err := r.buf(b)
	if err != nil {
		return err
	}
	return r.in.Download(id, out)
}

func (r *rankGPU) Stream(dev int, spec streamSpec) (streamID, error) {
	h := rankHandle{dev: dev}
	if r.mine(dev) {
		s, err := r.in.Stream(0, spec)
		if err != nil {
			return 0, err
		}
		h.inner = int(s)
	}
	id := streamID(r.id())
	r.streams[id] = h
	return id, nil
}

func (r *rankGPU) Event(dev int) (eventID, error) {
	h := rankHandle{dev: dev}
	if r.mine(dev) {
		e, err := r.in.Event(0)
		if err != nil {
			return 0, err
		}
		h.inner = int(e)
	}
	id := eventID(r.id())
	r.events[id] = h
	return id, nil
}

// pair checks that an event and a stream are of one device, and says
// whether it is this rank's.
func (r *rankGPU) pair(e eventID, s streamID) (eventID, streamID, bool, error) {
	eh, sh := r.events[e], r.streams[s]
	if eh.dev != sh.dev && (r.mine(eh.dev) || r.mine(sh.dev)) {
		return 0, 0, false, fmt.Errorf("a stream of GPU %d and an event of GPU %d are in different processes: %w", sh.dev, eh.dev, ErrCopyEngineAcrossProcesses)
	}
	return eventID(eh.inner), streamID(sh.inner), r.mine(sh.dev), nil
}

func (r *rankGPU) Record(e eventID, s streamID) error {
	ie, is, mine, err := r.pair(e, s)
	if err != nil || !mine {
		return err
	}
	if err := r.in.Record(ie, is); err != nil {
		return err
	}
	if !r.inBatch[e] {
		r.inBatch[e] = true
		r.recorded = append(r.recorded, e)
	}
	return nil
}

func (r *rankGPU) Wait(s streamID, e eventID) error {
	ie, is, mine, err := r.pair(e, s)
	if err != nil || !mine {
		return err
	}
	return r.in.Wait(is, ie)
}

func (r *rankGPU) Done(e eventID) (bool, error) {
	h := r.events[e]
	if h.inner == phantom {
		return true, nil // that rank waits for its own
	}
	return r.in.Done(eventID(h.inner))
}

func (r *rankGPU) Elapsed(from, to eventID) (int64, error) {
	a, b := r.events[from], r.events[to]
	if a.dev != b.dev {
		return 0, fmt.Errorf("events of GPUs %d and %d cannot be compared", a.dev, b.dev)
	}
	if r.mine(a.dev) {
		return r.in.Elapsed(eventID(a.inner), eventID(b.inner))
	}
	ta, okA := r.times[from]
	tb, okB := r.times[to]
	if !okA || !okB {
		return 0, fmt.Errorf("rank %d sent no time for an event of its GPU", a.dev)
	}
	return tb - ta, nil
}

// takeTimes returns this rank's events recorded since the last call, in
// ns from the first of them, and starts a new batch.
func (r *rankGPU) takeTimes() (map[eventID]int64, error) {
	defer func() { r.recorded, r.inBatch = nil, map[eventID]bool{} }()
	out := map[eventID]int64{}
	if len(r.recorded) == 0 {
		return out, nil
	}
	ref := r.recorded[0]
	for _, e := range r.recorded {
		t, err := r.Elapsed(ref, e)
		if err != nil {
			return nil, err
		}
		out[e] = t
	}
	return out, nil
}

// absorb keeps another rank's event times.
func (r *rankGPU) absorb(times map[eventID]int64) {
	for e, t := range times {
		if h, ok := r.events[e]; ok && !r.mine(h.dev) {
			r.times[e] = t
		}
	}
}

func (r *rankGPU) GateWait(s streamID, v uint32) error {
	is, mine := r.stream(s)
	if !mine {
		return nil
	}
	if err := r.in.GateWait(is, v); err != nil {
		return err
	}
	if r.stampV == v {
		return nil
	}
	// The first kernel after the gate: the rank's stamp of its start.
	if r.stampBuf == 0 {
		b, err := r.in.AllocHost(0, 8)
		if err != nil {
			return fmt.Errorf("the start stamp's word: %w", err)
		}
		r.stampBuf = b
	}
	if err := r.in.Stamp(is, bufRef{r.stampBuf, 0}); err != nil {
		return fmt.Errorf("the start stamp: %w", err)
	}
	r.stampV = v
	return nil
}

// stamp reads the start stamp of gate value v, once the GPU is done.
func (r *rankGPU) stamp(v uint32) (uint64, bool, error) {
	if r.stampBuf == 0 || r.stampV != v {
		return 0, false, nil
	}
	b := make([]byte, 8)
	if err := r.in.Download(r.stampBuf, b); err != nil {
		return 0, false, err
	}
	return binary.LittleEndian.Uint64(b), true, nil
}

func (r *rankGPU) OpenGate(v uint32) { r.in.OpenGate(v) }

// local maps every place of a kernel on stream s to this rank's GPU; ok
// is false when the stream is another rank's.
func (r *rankGPU) local(s streamID, refs ...*bufRef) (streamID, bool, error) {
	is, mine := r.stream(s)
	if !mine {
		return 0, false, nil
	}
	for _, p := range refs {
		q, err := r.ref(*p)
		if err != nil {
			return 0, false, fmt.Errorf("%w: %w", err, ErrCopyEngineAcrossProcesses)
		}
		*p = q
	}
	return is, true, nil
}

func (r *rankGPU) Reduce(s streamID, out bufID, outOff int64, srcs []bufRef, n int64) error {
	o := bufRef{out, outOff}
	refs := []*bufRef{&o}
	srcs = append([]bufRef(nil), srcs...)
	for i := range srcs {
		refs = append(refs, &srcs[i])
	}
	is, mine, err := r.local(s, refs...)
	if err != nil || !mine {
		return err
	}
	return r.in.Reduce(is, o.b, o.off, srcs, n)
}

func (r *rankGPU) ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error {
	sync := bufRef{ps.sync, 0}
	srcs = append([]bufRef(nil), srcs...)
	refs := []*bufRef{&out, &sync}
	for i := range srcs {
		refs = append(refs, &srcs[i])
	}
	is, mine, err := r.local(s, refs...)
	if err != nil || !mine {
		return err
	}
	ps.sync = sync.b
	return r.in.ReducePipelined(is, out, srcs, n, ps)
}

// ReduceLoad runs on this rank's GPU; a source of another rank's GPU is
// its CUDA IPC mapping here (ipcMap maps the send buffers for p2p-load).
func (r *rankGPU) ReduceLoad(s streamID, out bufRef, srcs []bufRef, n int64, ctas int) error {
	srcs = append([]bufRef(nil), srcs...)
	refs := []*bufRef{&out}
	for i := range srcs {
		refs = append(refs, &srcs[i])
	}
	is, mine, err := r.local(s, refs...)
	if err != nil || !mine {
		return err
	}
	return r.in.ReduceLoad(is, out, srcs, n, ctas)
}

func (r *rankGPU) WriteFlag(s streamID, w bufRef, v uint32) error {
	is, mine, err := r.local(s, &w)
	if err != nil || !mine {
		return err
	}
	return r.in.WriteFlag(is, w, v)
}

func (r *rankGPU) WaitFlag(s streamID, w bufRef, v uint32) error {
	is, mine, err := r.local(s, &w)
	if err != nil || !mine {
		return err
	}
	return r.in.WaitFlag(is, w, v)
}

func (r *rankGPU) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	d, sr := bufRef{dst, dstOff}, bufRef{src, srcOff}
	is, mine, err := r.local(s, &d, &sr)
	if err != nil || !mine {
		return err
	}
	return r.in.CopyPeer(d.b, d.off, sr.b, sr.off, n, is)
}

func (r *rankGPU) CopyKernel(s streamID, segs []copySeg, ctas int) error {
	segs = append([]copySeg(nil), segs...)
	var refs []*bufRef
	for i := range segs {
		refs = append(refs, &segs[i].dst, &segs[i].src)
	}
	is, mine, err := r.local(s, refs...)
	if err != nil || !mine {
		return err
	}
	return r.in.CopyKernel(is, segs, ctas)
}

func (r *rankGPU) GEMM(s streamID, g gemmSpec, a, b, d bufID) error {
	return r.GEMMAt(s, g, bufRef{a, 0}, bufRef{b, 0}, bufRef{d, 0})
}

func (r *rankGPU) GEMMAt(s streamID, g gemmSpec, a, b, d bufRef) error {
	is, mine, err := r.local(s, &a, &b, &d)
	if err != nil || !mine {
		return err
	}
	return r.in.GEMMAt(is, g, a, b, d)
}

func (r *rankGPU) StreamOp(s streamID, in, out bufID, bytes int64) error {
	a, b := bufRef{in, 0}, bufRef{out, 0}
	is, mine, err := r.local(s, &a, &b)
	if err != nil || !mine {
		return err
	}
	return r.in.StreamOp(is, a.b, b.b, bytes)
}

// commID shares, once per communicator config, the NCCL id of its
// communicators, and hands it to this rank's GPU. Every rank calls it for
// every config, members or not, in the same order: the ids go out in one
// sequence.
func (r *rankGPU) commID(spec commSpec) error {
	if r.ids[spec] {
		return nil
	}
	if spec.Ranks < 1 || spec.Ranks > r.world {
		return fmt.Errorf("a communicator of %d ranks in a job of %d processes", spec.Ranks, r.world)
	}
	if r.share == nil {
		return errors.New("the backend has no link to the other ranks to share an NCCL id through")
	}
	ctx := r.ctx
	if ctx == nil {
		ctx = context.Background()
	}
	id, err := r.share(ctx, spec)
	if err != nil {
		return err
	}
	if r.rank < spec.Ranks {
		r.in.SetCommID(spec, id, spec.Ranks, r.rank)
	}
	r.ids[spec] = true
	return nil
}

func (r *rankGPU) Collective(c collective, send, recv []bufID, streams []streamID) error {
	at := func(ids []bufID) []bufRef {
		out := make([]bufRef, len(ids))
		for i, id := range ids {
			out[i] = bufRef{id, 0}
		}
		return out
	}
	return r.CollectiveAt(c, at(send), at(recv), streams)
}

func (r *rankGPU) CollectiveAt(c collective, send, recv []bufRef, streams []streamID) error {
	if err := r.commID(c.Comm); err != nil {
		return err
	}
	if r.rank >= c.Comm.Ranks {
		return nil // not in this collective
	}
	if len(send) <= r.rank || len(recv) <= r.rank || len(streams) <= r.rank {
		return fmt.Errorf("%s of %d ranks given %d send, %d receive buffers and %d streams", c.Kind, c.Comm.Ranks, len(send), len(recv), len(streams))
	}
	s, rv := send[r.rank], recv[r.rank]
	is, mine, err := r.local(streams[r.rank], &s, &rv)
	if err != nil {
		return err
	}
	if !mine {
		return fmt.Errorf("rank %d's %s is given a stream of another GPU", r.rank, c.Kind)
	}
	return r.in.CollectiveAt(c, []bufRef{s}, []bufRef{rv}, []streamID{is})
}

// Abort abandons this rank's communicators; the next collective makes
// new ones from new ids (every rank aborts at the next run's start when
// any did: procState.begin).
func (r *rankGPU) Abort() error {
	clear(r.ids)
	r.releaseFlags() // a copy-engine collective's waits, too
	return r.in.Abort()
}

func (r *rankGPU) Synchronize(dev int) error {
	if !r.mine(dev) {
		return nil
	}
	return r.in.Synchronize(0)
}

func (r *rankGPU) Close() error { return r.in.Close() }

// procState is a per-process backend's link to the other ranks.
type procState struct {
	peers Peers
	rg    *rankGPU
	gate  procGate
	// aborted is set when the watchdog aborted the communicators: the
	// next run starts with new ones on every rank.
	aborted atomic.Bool
	// lastSkew is the start skew of the last gated repetition (ns), -1
	// when it was not measured.
	lastSkew int64
	// hosts[r] is rank r's host; oneHost says they are all one (copy
	// engines reach every rank's GPU through CUDA IPC only then).
	hosts   []string
	oneHost bool
}

// sharedErr is an error every rank knows of already (from an exchange):
// the run ends without telling the others.
type sharedErr struct{ err error }

func (e sharedErr) Error() string { return e.err.Error() }
func (e sharedErr) Unwrap() error { return e.err }

// procReport is what a rank sends at an exchange.
type procReport struct {
	Err     string            `json:"err,omitempty"`
	Times   map[eventID]int64 `json:"times,omitempty"`
	Stamp   uint64            `json:"stamp,omitempty"`
	Stamped bool              `json:"stamped,omitempty"`
	Stalled bool              `json:"stalled,omitempty"`
	Reset   bool              `json:"reset,omitempty"`
	// Handles are the CUDA IPC handles of this rank's buffers a
	// copy-engine collective's peers map (proc_ipc.go).
	Handles [][]byte `json:"handles,omitempty"`
}

// exchange sends this rank's report and returns every rank's. When any
// rank failed, every rank returns the failures (this rank's own error as
// it was), as a sharedErr.
func (ps *procState) exchange(ctx context.Context, stage string, rep procReport) ([]procReport, error) {
	b, err := json.Marshal(rep)
	if err != nil {
		return nil, sharedErr{err}
	}
	all, err := ps.peers.AllGather(ctx, "cuda", b)
	if err != nil {
		return nil, sharedErr{fmt.Errorf("the ranks' %s exchange: %w", stage, err)}
	}
	reps := make([]procReport, len(all))
	var failed []string
	for q, b := range all {
		if err := json.Unmarshal(b, &reps[q]); err != nil {
			return nil, sharedErr{fmt.Errorf("rank %d's %s report cannot be read: %w", q, stage, err)}
		}
		if reps[q].Err != "" && q != ps.peers.Rank() {
			failed = append(failed, fmt.Sprintf("rank %d failed: %s", q, reps[q].Err))
		}
	}
	if rep.Err != "" {
		return reps, sharedErr{errors.New(rep.Err)}
	}
	if len(failed) > 0 {
		return reps, sharedErr{errors.New(strings.Join(failed, "; "))}
	}
	return reps, nil
}

// agree is an exchange of errors only: every rank goes on, or every rank
// stops with the failures.
func (ps *procState) agree(ctx context.Context, stage string, err error) error {
	rep := procReport{}
	if err != nil {
		var se sharedErr
		if errors.As(err, &se) {
			return err
		}
		rep.Err = err.Error()
	}
	_, xerr := ps.exchange(ctx, stage, rep)
	if xerr != nil && err != nil {
		return sharedErr{err} // this rank's own error, unchanged
	}
	return xerr
}

// begin starts a run. It reports whether any rank's communicators were
// aborted: every rank then drops its own, so all make new ones from new
// ids in one order.
func (ps *procState) begin(ctx context.Context) (reset bool, err error) {
	aborted := ps.aborted.Swap(false)
	released := ps.rg.released.Swap(false)
	rep := procReport{Reset: aborted || released}
	reps, err := ps.exchange(ctx, "start", rep)
	if err != nil {
		return false, err
	}
	for _, r := range reps {
		reset = reset || r.Reset
	}
	return reset, nil
}

// settle ends a repetition on every rank: each sends its event times,
// start stamp and gate verdict (or its failure), and keeps the others'.
// It returns whether the start gate stalled on any rank (the repetition
// is then run again everywhere).
func (ps *procState) settle(ctx context.Context, rg *repGate, waitErr error) (bool, error) {
	ps.lastSkew = -1
	rep := procReport{}
	local := errors.Join(rg.err, waitErr)
	if local == nil {
		times, err := ps.rg.takeTimes()
		if err == nil && rg.gated {
			rep.Stamp, rep.Stamped, err = ps.rg.stamp(rg.v)
			rep.Stalled = ps.gate.stalled(rg.v)
		}
		rep.Times, local = times, err
	}
	if local != nil {
		rep.Err = local.Error()
	}
	reps, err := ps.exchange(ctx, "repetition", rep)
	if err != nil {
		if local != nil {
			return false, sharedErr{local}
		}
		return false, err
	}
	stalled := false
	lo, hi, stamped := uint64(0), uint64(0), 0
	for q, r := range reps {
		stalled = stalled || r.Stalled
		if q != ps.peers.Rank() {
			ps.rg.absorb(r.Times)
		}
		if r.Stamped {
			if stamped == 0 || r.Stamp < lo {
				lo = r.Stamp
			}
			hi = max(hi, r.Stamp)
			stamped++
		}
	}
	if stamped == len(reps) {
		ps.lastSkew = int64(hi - lo)
	}
	return stalled, nil
}

// abandon tells the other ranks this rank's run failed (unless they know).
func (ps *procState) abandon(ctx context.Context, err error) {
	var se sharedErr
	if err == nil || errors.As(err, &se) {
		return
	}
	ps.exchange(ctx, "failure", procReport{Err: err.Error()})
}

// crossProcessDMA reports whether a run moves data between GPUs on the
// copy engines (which one process per GPU does through CUDA IPC, on one
// node: procDMACheck).
func crossProcessDMA(sc scenarios.Scenario, st scenarios.Strategy) bool {
	if st.Normalize().CommEngine != scenarios.EngineDMA {
		return false
	}
	if !sc.IsGraph() {
		return !sc.Comm.Collective.IsHostCopy() && sc.Comm.Collective != ""
	}
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			if o.Kind.IsComm() && !o.AsComm().Collective.IsHostCopy() {
				return true
			}
		}
	}
	return false
}

// procDevice picks this rank's GPU among the n the driver sees.
func procDevice(n, localRank int) (int, error) {
	switch {
	case n == 1:
		return 0, nil
	case localRank >= 0 && localRank < n:
		return localRank, nil
	}
	return 0, fmt.Errorf("this is local rank %d, and the driver sees %d GPUs: start one rank per GPU, or set CUDA_VISIBLE_DEVICES per rank", localRank, n)
}

// joinJob sets the backend up as one rank of the job (on the worker): it
// gathers every rank's GPU, checks they agree, and sets up the start gate
// (a page shared by the ranks of one node, else a timed gate per node).
func (b *Backend) joinJob(in procGPU, pr *Process) error {
	ctx := pr.Context
	if ctx == nil {
		ctx = context.Background()
	}
	peers := pr.Peers
	host := pr.Host
	if host == "" {
		host, _ = os.Hostname()
	}
	mine := in.Devices()
	if len(mine) != 1 {
		return fmt.Errorf("a rank's backend drives one GPU; it opened %d", len(mine))
	}
	type rankInfo struct {
		Host string  `json:"host"`
		Dev  devInfo `json:"dev"`
	}
	data, err := json.Marshal(rankInfo{host, mine[0]})
	if err != nil {
		return err
	}
	all, err := peers.AllGather(ctx, "cuda-devices", data)
	if err != nil {
		return fmt.Errorf("gathering the ranks' GPUs: %w", err)
	}
	devs := make([]devInfo, len(all))
	hosts := make([]string, len(all))
	oneHost := true
	var first rankInfo
	for q, d := range all {
		var ri rankInfo
		if err := json.Unmarshal(d, &ri); err != nil {
			return fmt.Errorf("rank %d's GPU report cannot be read: %w", q, err)
		}
		if q == 0 {
			first = ri
		}
		if ri.Dev.Name != first.Dev.Name {
			return fmt.Errorf("rank 0 has a %s and rank %d a %s: c3lab runs one process per GPU on GPUs of one model", first.Dev.Name, q, ri.Dev.Name)
		}
		oneHost = oneHost && ri.Host == first.Host
		hosts[q] = ri.Host
		devs[q] = ri.Dev
	}
	for q := range devs {
		// On one host a copy engine reaches every rank's GPU through a
		// CUDA IPC mapping (proc_ipc.go; a pair without a P2P path fails
		// when it maps); across hosts none does.
		devs[q].Peers = nil
		for p := range devs {
			if oneHost && p != q {
				devs[q].Peers = append(devs[q].Peers, p)
			}
		}
	}
	rg := newRankGPU(in, peers.Rank(), peers.Size(), devs)
	rg.share = func(ctx context.Context, spec commSpec) ([]byte, error) {
		id, err := peers.ShareID(ctx, in.NewUniqueID)
		if err != nil {
			return nil, fmt.Errorf("sharing the NCCL id of a %d-rank communicator: %w", spec.Ranks, err)
		}
		return id, nil
	}
	ps := &procState{peers: peers, rg: rg, lastSkew: -1, hosts: hosts, oneHost: oneHost}
	if oneHost {
		ps.gate, err = newShmGate(ctx, peers, in, pr.GateDir)
	} else {
		ps.gate = &timedGate{peers: peers, ctx: ctx, g: in, stalls: map[uint32]bool{}}
	}
	if err != nil {
		return err
	}
	b.attach(rg)
	b.proc = ps
	return nil
}

// procRun is Run's part for one process per GPU: the communicators'
// watchdog and the ranks' agreement that the run starts and ends.
func (b *Backend) procRun(ctx context.Context, run func() (any, error)) (any, error) {
	ps := b.proc
	ps.rg.ctx = ctx
	defer func() { ps.rg.ctx = nil }()
	stop := context.AfterFunc(ctx, func() {
		ps.rg.in.AbortAsync()
		ps.rg.releaseFlags() // streams waiting for a lost rank's copies
		ps.aborted.Store(true)
	})
	defer stop()
	reset, err := ps.begin(ctx)
	if err != nil {
		return nil, err
	}
	if reset {
		err := b.g.Abort()
		if b.prepared != nil && b.prepared.ceWindows != nil {
			clear(b.prepared.ceWindows) // the aborted communicators took their windows along
		}
		if b.prepared != nil {
			b.prepared.flagsDirty = true // released flags: cleared again on every rank
		}
		ps.rg.released.Store(false) // this reset's own release
		if err != nil {
			ps.abandon(ctx, err)
			return nil, err
		}
	}
	res, err := run()
	if err != nil {
		ps.abandon(ctx, err)
	}
	return res, err
}
