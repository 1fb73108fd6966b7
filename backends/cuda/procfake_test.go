package cuda

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// fakeFabric is NCCL between the fake GPUs of several ranks (one process
// per GPU, each rank its own fakeGPU in one test): a collective waits
// until every rank of its communicator has called it, then each rank's
// output is computed from every rank's input, and every rank's stream
// starts it at the latest rank's clock, as the one-process fake does. It
// is also the ranks' %globaltimer: a rank's stamp is its stream's clock
// plus the rank's offset.
type fakeFabric struct {
	mu     sync.Mutex
	cond   *sync.Cond
	rounds map[string]*fabricRound
	// offset[r] is added to rank r's stamps (a start skew the gate did
	// not remove).
	offset []int64
	// CUDA IPC between the ranks' fakes: exports by handle; mapped[r]
	// counts rank r's open mappings; flagAt is the clock of the stream
	// that wrote a value to a flag word, by the word's address (one for
	// every rank that maps it) and the value: a later collective's write
	// may land before a wait for an earlier one, which must not take its
	// time. All under mu, as are the flag words.
	exports map[string]fabricExport
	mapped  []int
	flagAt  map[flagWrite]int64
	// openFails makes every OpenPeerBuf fail (a GPU pair without P2P).
	openFails bool
}

// flagWrite is a value written to a flag word.
type flagWrite struct {
	word *byte
	v    uint32
}

// fabricExport is a buffer a rank exported.
type fabricExport struct {
	rank int
	buf  *fakeBuf
}

type fabricRound struct {
	sends  map[int][]byte
	clocks map[int]int64
}

func newFakeFabric(world int) *fakeFabric {
	fb := &fakeFabric{rounds: map[string]*fabricRound{}, offset: make([]int64, world),
		exports: map[string]fabricExport{}, mapped: make([]int, world), flagAt: map[flagWrite]int64{}}
	fb.cond = sync.NewCond(&fb.mu)
	return fb
}

// newRankFake is rank's fake GPU on the fabric.
func newRankFake(fb *fakeFabric, rank int) *fakeGPU {
	f := newFakeGPU(1)
	f.devs[0].Peers = nil
	f.fabric, f.rank = fb, rank
	f.commIDs, f.commSeq = map[commSpec]string{}, map[commSpec]int{}
	return f
}

func (f *fakeGPU) NewUniqueID() ([]byte, error) {
	b := make([]byte, 128)
	rand.Read(b)
	return b, nil
}

func (f *fakeGPU) SetCommID(spec commSpec, id []byte, world, rank int) {
	if rank != f.rank || world != spec.Ranks {
		panic(fmt.Sprintf("fake: rank %d given rank %d of %d for %+v", f.rank, rank, world, spec))
	}
	f.commIDs[spec] = hex.EncodeToString(id[:8])
	f.commSeq[spec] = 0
}

func (f *fakeGPU) Stamp(s streamID, at bufRef) error {
	st := f.streams[s]
	f.stamps++
	binary.LittleEndian.PutUint64(f.bufs[at.b].data[at.off:], uint64(1e12+st.clock+f.fabric.offset[f.rank]))
	return nil
}

func (f *fakeGPU) UseSharedGate(p []byte) error {
	f.sharedGate = p
	return nil
}

func (f *fakeGPU) AbortAsync() {
	f.mu.Lock()
	f.asyncAborts++
	f.mu.Unlock()
	fb := f.fabric
	fb.mu.Lock()
	for key, r := range fb.rounds {
		if r.sends != nil {
			fb.rounds[key] = &fabricRound{} // the aborted round: every waiter fails
		}
	}
	fb.mu.Unlock()
	fb.cond.Broadcast()
}

// errFabricAborted is a collective of an aborted communicator.
var errFabricAborted = errors.New("fake NCCL: the communicator was aborted (ncclCommAbort)")

// fabricCollective is one rank's call of a collective: it waits for the
// other ranks' calls (a rank's call blocks, as NCCL's does while a peer
// is missing), then computes its output.
func (f *fakeGPU) fabricCollective(c collective, send, recv []bufRef, streams []streamID) error {
	id, ok := f.commIDs[c.Comm]
	if !ok {
		return fmt.Errorf("fake: rank %d's %s has no communicator id for %+v", f.rank, c.Kind, c.Comm)
	}
	if len(send) != 1 || len(recv) != 1 || len(streams) != 1 {
		return fmt.Errorf("fake: rank %d called a %s with %d buffers; one process per GPU passes its own", f.rank, c.Kind, len(send))
	}
	f.colls++
	f.logf("collective %s count=%d ctas=%d ranks=%d policy=%d", c.Kind, c.Count, c.Comm.MaxCTAs, c.Comm.Ranks, c.Comm.CTAPolicy)
	ranks := c.Comm.Ranks
	key := fmt.Sprintf("%s/%d", id, f.commSeq[c.Comm])
	f.commSeq[c.Comm]++
	sendN := 2 * sendElems(c, ranks)
	in := append([]byte(nil), f.bufs[send[0].b].data[send[0].off:send[0].off+sendN]...)
	st := f.streams[streams[0]]
	fb := f.fabric
	fb.mu.Lock()
	r := fb.rounds[key]
	if r == nil {
		r = &fabricRound{sends: map[int][]byte{}, clocks: map[int]int64{}}
		fb.rounds[key] = r
	}
	r.sends[f.rank], r.clocks[f.rank] = in, st.clock
	fb.cond.Broadcast()
	for {
		r = fb.rounds[key]
		if r.sends == nil {
			fb.mu.Unlock()
			return errFabricAborted
		}
		if len(r.sends) == ranks {
			break
		}
		fb.cond.Wait()
	}
	var start int64
	for _, t := range r.clocks {
		start = max(start, t)
	}
	sends := r.sends
	fb.mu.Unlock()
	out := f.bufs[recv[0].b].data[recv[0].off:]
	for e := range recvElems(c, ranks) {
		v := fakeCollectiveValue(c, ranks, f.rank, e, func(q int, i int64) int {
			return int(math.Round(1024 * decodeAny(scenarios.BF16, sends[q][2*i:])))
		})
		encodeRounded(scenarios.BF16, float64(v)/1024, out[2*e:])
	}
	if f.corrupt {
		binary.LittleEndian.PutUint16(out[2:], bf16Int(99))
	}
	st.clock = start + f.commNs
	return nil
}

// fakeLink is Peers between the ranks of one test: AllGather waits until
// every rank has sent its data for a name's round.
type fakeLink struct {
	hub  *linkHub
	rank int
	// rounds counts this rank's gathers per name.
	rounds map[string]int
}

type linkHub struct {
	mu    sync.Mutex
	cond  *sync.Cond
	world int
	data  map[string][][]byte
}

func newLinks(world int) []*fakeLink {
	h := &linkHub{world: world, data: map[string][][]byte{}}
	h.cond = sync.NewCond(&h.mu)
	var out []*fakeLink
	for r := range world {
		out = append(out, &fakeLink{hub: h, rank: r, rounds: map[string]int{}})
	}
	return out
}

func (l *fakeLink) Rank() int { return l.rank }
func (l *fakeLink) Size() int { return l.hub.world }

func (l *fakeLink) AllGather(ctx context.Context, name string, data []byte) ([][]byte, error) {
	key := fmt.Sprintf("%s/%d", name, l.rounds[name])
	l.rounds[name]++
	h := l.hub
	stop := context.AfterFunc(ctx, func() { h.mu.Lock(); h.cond.Broadcast(); h.mu.Unlock() })
	defer stop()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.data[key] == nil {
		h.data[key] = make([][]byte, h.world)
	}
	h.data[key][l.rank] = append([]byte{}, data...)
	h.cond.Broadcast()
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("fake link: %w", err)
		}
		all, n := h.data[key], 0
		for _, d := range all {
			if d != nil {
				n++
			}
		}
		if n == h.world {
			return append([][]byte(nil), all...), nil
		}
		h.cond.Wait()
	}
}

func (l *fakeLink) ShareID(ctx context.Context, newID func() ([]byte, error)) ([]byte, error) {
	var id []byte
	if l.rank == 0 {
		var err error
		if id, err = newID(); err != nil {
			return nil, err
		}
	} else {
		id = []byte{0} // AllGather waits for data, not for an empty slice
	}
	all, err := l.AllGather(ctx, "nccl-id", id)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

func (l *fakeLink) StartGate(ctx context.Context, name string) (time.Time, error) {
	_, err := l.AllGather(ctx, "gate/"+name, []byte{1})
	return time.Now(), err
}

// ExportBuf exports a buffer of this rank's fake GPU: the handle names it
// on the fabric.
func (f *fakeGPU) ExportBuf(b bufID) ([]byte, error) {
	buf, ok := f.bufs[b]
	if !ok || buf.host || buf.peer > 0 {
		return nil, fmt.Errorf("fake: buffer %d cannot be exported", b)
	}
	h := make([]byte, 64)
	copy(h, fmt.Sprintf("rank%d/buf%d", f.rank, b))
	fb := f.fabric
	fb.mu.Lock()
	fb.exports[string(h)] = fabricExport{f.rank, buf}
	fb.mu.Unlock()
	return h, nil
}

// OpenPeerBuf maps another rank's exported buffer: the new buffer shares
// its bytes (what this rank writes there, that rank reads).
func (f *fakeGPU) OpenPeerBuf(handle []byte, bytes int64) (bufID, error) {
	fb := f.fabric
	fb.mu.Lock()
	defer fb.mu.Unlock()
	ex, ok := fb.exports[string(handle)]
	switch {
	case fb.openFails:
		return 0, errors.New("fake: cuIpcOpenMemHandle: peer access is not supported between these GPUs")
	case !ok:
		return 0, fmt.Errorf("fake: no buffer was exported as %q", strings.TrimRight(string(handle), "\x00"))
	case ex.rank == f.rank:
		return 0, errors.New("fake: a process cannot open its own IPC handle")
	case int64(len(ex.buf.data)) < bytes:
		return 0, fmt.Errorf("fake: the exported buffer has %d bytes, not %d", len(ex.buf.data), bytes)
	}
	id := bufID(f.id())
	f.bufs[id] = &fakeBuf{dev: 0, data: ex.buf.data, peer: ex.rank + 1}
	fb.mapped[f.rank]++
	f.ipcOpens++
	return id, nil
}

// closeMapping closes a mapping this rank opened.
func (f *fakeGPU) closeMapping() {
	fb := f.fabric
	fb.mu.Lock()
	fb.mapped[f.rank]--
	fb.mu.Unlock()
}

func (f *fakeGPU) UseFlags(b bufID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.flagBufs = append(f.flagBufs, f.bufs[b])
}

func (f *fakeGPU) ReleaseFlags(v uint32) {
	f.mu.Lock()
	bufs := f.flagBufs
	f.releases++
	f.mu.Unlock()
	fb := f.fabric
	fb.mu.Lock()
	for _, b := range bufs {
		for i := 0; i+4 <= len(b.data); i += 4 {
			binary.LittleEndian.PutUint32(b.data[i:], v)
		}
	}
	fb.mu.Unlock()
	fb.cond.Broadcast()
}

// fabricWriteFlag is WriteFlag between ranks: the word may be a peer's.
func (f *fakeGPU) fabricWriteFlag(st *fakeStream, w bufRef, v uint32) error {
	b := f.bufs[w.b]
	fb := f.fabric
	fb.mu.Lock()
	binary.LittleEndian.PutUint32(b.data[w.off:], v)
	fb.flagAt[flagWrite{&b.data[w.off], v}] = st.clock
	fb.mu.Unlock()
	fb.cond.Broadcast()
	return nil
}

// fabricWaitFlag is WaitFlag between ranks: the call blocks until the
// word (raised by another rank's stream) reaches v, as the stream would,
// or until ReleaseFlags raises it; the stream's clock moves to the
// writer's.
func (f *fakeGPU) fabricWaitFlag(st *fakeStream, w bufRef, v uint32) error {
	b := f.bufs[w.b]
	fb := f.fabric
	fb.mu.Lock()
	defer fb.mu.Unlock()
	for int32(binary.LittleEndian.Uint32(b.data[w.off:])-v) < 0 {
		fb.cond.Wait()
	}
	st.clock = max(st.clock, fb.flagAt[flagWrite{&b.data[w.off], v}])
	return nil
}
