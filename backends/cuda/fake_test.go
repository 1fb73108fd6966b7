package cuda

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// fakeGPU is a node of fake GPUs for CPU-side tests. It keeps buffers in
// host memory and computes real results (so verification is exercised),
// and it keeps a clock per stream: ops advance their stream's clock by a
// fixed duration, events take the clock of the stream they are recorded on,
// and a collective starts when every rank's stream has reached it.
type fakeGPU struct {
	devs []devInfo
	free int64
	// allocs counts device and host allocations.
	allocs   int
	bufs     map[bufID]*fakeBuf
	streams  map[streamID]*fakeStream
	events   map[eventID]*fakeEvent
	next     int
	log      []string
	gemmNs   int64
	streamNs int64
	commNs   int64
	corrupt  bool // collectives write a wrong element
	hang     bool // collectives never finish
	aborted  int
	closed   bool
	gemms    int
	colls    int
	copies   int
	reduces  int
	// stallGEMMs GEMM calls sleep for stall first (a host stall while
	// enqueuing, as lazy module loading causes). With stallUntilOpen the
	// stall ends early when the start gate armed last opens: a library
	// waiting on the device the gate holds, which only the gate's watchdog
	// frees.
	stallGEMMs     int
	stall          time.Duration
	stallUntilOpen bool
	mu             sync.Mutex // guards log and gate: the gate watchdog writes from its own goroutine
	gate           uint32
	gateArmed      uint32 // the value the last GateWait waits for
	// flagAt is when a stream last wrote a flag word (the fake runs every
	// call at once, in order, so a flag not yet written when something
	// waits on it would wait forever: an error).
	flagAt map[bufRef]int64
	// pipeReduces counts pipelined reductions; pipeGrids their grids.
	pipeReduces int
	pipeGrids   []int
	// loads counts p2p-load reductions, loadGrids their CTA caps and
	// peerLoads the sources they read from another GPU's memory.
	loads     int
	loadGrids []int
	peerLoads int
	// copyNsOn[dev] and reduceNsOn[dev] are extra time every copy and
	// every reduction on GPU dev's streams take.
	copyNsOn   map[int]int64
	reduceNsOn map[int]int64
	// copyNsPair[{q, r}] is extra time every copy from a stream of GPU q
	// into GPU r's memory takes.
	copyNsPair map[[2]int]int64
	// corruptCopies makes every copy between GPUs flip a bit of its first
	// byte; copyLog records every copy.
	corruptCopies bool
	copyLog       []fakeCopy
	// One process per GPU (proc_test.go): fabric rendezvouses this
	// rank's collectives with the other ranks' fakes; commIDs are the
	// shared ids by config; stamps counts start stamps; asyncAborts
	// counts AbortAsync calls.
	fabric      *fakeFabric
	rank        int
	commIDs     map[commSpec]string
	commSeq     map[commSpec]int
	stamps      int
	asyncAborts int
	sharedGate  []byte
	// CUDA IPC (procfake_test.go): ipcOpens counts mappings opened;
	// flagBufs are the buffers ReleaseFlags raises (guarded by mu), and
	// releases counts its calls.
	ipcOpens int
	flagBufs []*fakeBuf
	releases int
}

// fakeCopy is one copy: the stream (of GPU dev) that carried
// it, its places and size, and its stream's clock when it ended.
type fakeCopy struct {
	stream   streamID
	dev      int
	src, dst bufRef
	n, end   int64
}

type fakeBuf struct {
	dev  int
	data []byte
	host bool // pinned host memory (AllocHost)
	// peer is rank+1 of the rank whose buffer this maps (CUDA IPC); 0
	// for this GPU's own.
	peer int
}

type fakeStream struct {
	dev   int
	spec  streamSpec
	clock int64
}

type fakeEvent struct {
	dev      int
	t        int64
	recorded bool
	never    bool
}

// where names the buffer's place in the fake's log: "dev0" or "host0".
func (b *fakeBuf) where() string {
	if b.host {
		return fmt.Sprintf("host%d", b.dev)
	}
	return fmt.Sprintf("dev%d", b.dev)
}

func newFakeGPU(n int) *fakeGPU {
	f := &fakeGPU{free: 8 << 30, bufs: map[bufID]*fakeBuf{}, streams: map[streamID]*fakeStream{}, events: map[eventID]*fakeEvent{},
		gemmNs: 100_000, streamNs: 60_000, commNs: 80_000}
	for i := range n {
		var peers []int
		for j := range n {
			if j != i {
				peers = append(peers, j)
			}
		}
		f.devs = append(f.devs, devInfo{Name: "Fake H200", SMs: 132, MemoryBytes: 8 << 30, CopyEngines: 3, CCMajor: 9,
			PriorityLeast: 0, PriorityGreatest: -5, Green: true, SMStep: 8, Peers: peers})
	}
	return f
}

func (f *fakeGPU) id() int { f.next++; return f.next }

func (f *fakeGPU) logf(format string, a ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = append(f.log, fmt.Sprintf(format, a...))
}

func (f *fakeGPU) Devices() []devInfo                { return f.devs }
func (f *fakeGPU) FreeMemory(dev int) (int64, error) { return f.free, nil }

func (f *fakeGPU) Alloc(dev int, bytes int64) (bufID, error) {
	f.allocs++
	id := bufID(f.id())
	f.bufs[id] = &fakeBuf{dev: dev, data: make([]byte, bytes)}
	return id, nil
}

func (f *fakeGPU) AllocHost(dev int, bytes int64) (bufID, error) {
	f.logf("alloc-host dev%d %d", dev, bytes)
	f.allocs++
	id := bufID(f.id())
	f.bufs[id] = &fakeBuf{dev: dev, data: make([]byte, bytes), host: true}
	return id, nil
}

// fakeKernelCopyBytesPerCTANs is the fake SM copy kernel's speed per CTA
// (1 GB/s).
const fakeKernelCopyBytesPerCTANs = 1

func (f *fakeGPU) CopyKernel(s streamID, segs []copySeg, ctas int) error {
	st := f.streams[s]
	var total int64
	for _, sg := range segs {
		d, src := f.bufs[sg.dst.b], f.bufs[sg.src.b]
		copy(d.data[sg.dst.off:sg.dst.off+sg.bytes], src.data[sg.src.off:sg.src.off+sg.bytes])
		f.logf("copy-kernel dev%d host->%v %d ctas=%d", st.dev, !src.host, sg.bytes, ctas)
		total += sg.bytes
	}
	st.clock += total / int64(ctas*fakeKernelCopyBytesPerCTANs)
	return nil
}

func (f *fakeGPU) AllocSymmetric(dev int, bytes int64) (bufID, error) {
	f.logf("alloc-symmetric dev%d %d", dev, bytes)
	return f.Alloc(dev, bytes)
}

func (f *fakeGPU) RegisterWindows(spec commSpec, bufs []bufID) error {
	f.logf("windows policy=%d ranks=%d", spec.CTAPolicy, len(bufs))
	return nil
}

func (f *fakeGPU) Free(b bufID) error {
	buf, ok := f.bufs[b]
	if !ok {
		return fmt.Errorf("double free of %d", b)
	}
	delete(f.bufs, b)
	if buf.peer > 0 {
		f.closeMapping()
	}
	return nil
}

func (f *fakeGPU) Upload(b bufID, data []byte) error  { copy(f.bufs[b].data, data); return nil }
func (f *fakeGPU) Download(b bufID, out []byte) error { copy(out, f.bufs[b].data); return nil }

func (f *fakeGPU) Stream(dev int, spec streamSpec) (streamID, error) {
	id := streamID(f.id())
	f.streams[id] = &fakeStream{dev: dev, spec: spec}
	f.logf("stream %d dev%d prio=%d part=%+v", id, dev, spec.Priority, spec.Partition)
	return id, nil
}

func (f *fakeGPU) Event(dev int) (eventID, error) {
	id := eventID(f.id())
	f.events[id] = &fakeEvent{dev: dev}
	return id, nil
}

func (f *fakeGPU) Record(e eventID, s streamID) error {
	ev, st := f.events[e], f.streams[s]
	ev.t, ev.recorded, ev.never = st.clock, true, false
	if st.clock < 0 {
		ev.never = true
	}
	return nil
}

func (f *fakeGPU) Wait(s streamID, e eventID) error {
	st := f.streams[s]
	st.clock = max(st.clock, f.events[e].t)
	if f.events[e].never {
		st.clock = -1 // a dependency that never fires holds the stream for good
	}
	f.logf("wait dev%d for dev%d", st.dev, f.events[e].dev)
	return nil
}

func (f *fakeGPU) Done(e eventID) (bool, error) { return !f.events[e].never, nil }

func (f *fakeGPU) Elapsed(from, to eventID) (int64, error) {
	return f.events[to].t - f.events[from].t, nil
}

func (f *fakeGPU) GateWait(s streamID, v uint32) error {
	f.logf("gate-wait dev%d %d", f.streams[s].dev, v)
	f.mu.Lock()
	f.gateArmed = v
	f.mu.Unlock()
	return nil
}

// waitGateOpen blocks until the gate reaches the value the last GateWait
// waits for, or for limit at most.
func (f *fakeGPU) waitGateOpen(limit time.Duration) {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(time.Millisecond) {
		f.mu.Lock()
		open := int32(f.gate-f.gateArmed) >= 0
		f.mu.Unlock()
		if open {
			return
		}
	}
}

// OpenGate raises the gate to v and logs it in the same critical section:
// logged after the unlock, a stalled GEMM that sees the gate open could log
// before the watchdog's goroutine got to its line, and the log would put
// the opening in a later repetition (TestGateWatchdog failed so in CI).
func (f *fakeGPU) OpenGate(v uint32) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if int32(f.gate-v) < 0 {
		f.gate = v
		f.log = append(f.log, fmt.Sprintf("gate-open %d", v))
	}
}

func (f *fakeGPU) Reduce(s streamID, out bufID, outOff int64, srcs []bufRef, n int64) error {
	st := f.streams[s]
	f.reduces++
	f.logf("reduce dev%d %d sources", st.dev, len(srcs))
	for i := range n {
		// In floats, so that GEMM outputs (a graph's reduce-scatter input)
		// sum as well as the test data's whole numbers.
		sum := 0.0
		for _, src := range srcs {
			if f.bufs[src.b].dev != st.dev {
				return fmt.Errorf("fake: the reduction on GPU %d reads a buffer of GPU %d", st.dev, f.bufs[src.b].dev)
			}
			sum += decodeAny(scenarios.BF16, f.bufs[src.b].data[src.off+2*i:])
		}
		encodeRounded(scenarios.BF16, sum, f.bufs[out].data[outOff+2*i:])
	}
	st.clock += n/100 + f.reduceNsOn[st.dev]
	return nil
}

// ReduceLoad sums like Reduce, reading each source where it lives: on
// the stream's GPU, on a GPU it has peer access to, or (one process per
// GPU) through a CUDA IPC mapping of a peer's buffer.
func (f *fakeGPU) ReduceLoad(s streamID, out bufRef, srcs []bufRef, n int64, ctas int) error {
	st := f.streams[s]
	if ctas < 1 || len(srcs) < 1 || len(srcs) > 8 {
		return fmt.Errorf("fake: a p2p-load reduction of %d sources on %d CTAs", len(srcs), ctas)
	}
	f.loads++
	f.loadGrids = append(f.loadGrids, ctas)
	f.logf("reduce-load dev%d %d sources ctas %d", st.dev, len(srcs), ctas)
	if o := f.bufs[out.b]; o.dev != st.dev || o.peer != 0 || out.off+2*n > int64(len(o.data)) {
		return fmt.Errorf("fake: the p2p-load reduction on GPU %d writes a buffer that is not its own or runs past it", st.dev)
	}
	for _, src := range srcs {
		b := f.bufs[src.b]
		switch {
		case src.off+2*n > int64(len(b.data)):
			return fmt.Errorf("fake: the p2p-load reduction reads past a buffer")
		case b.peer != 0:
			f.peerLoads++ // a CUDA IPC mapping
		case b.dev != st.dev && !slices.Contains(f.devs[st.dev].Peers, b.dev):
			return fmt.Errorf("fake: the p2p-load reduction on GPU %d loads GPU %d's memory without peer access", st.dev, b.dev)
		case b.dev != st.dev:
			f.peerLoads++
		}
	}
	for i := range n {
		sum := 0.0
		for _, src := range srcs {
			sum += decodeAny(scenarios.BF16, f.bufs[src.b].data[src.off+2*i:])
		}
		encodeRounded(scenarios.BF16, sum, f.bufs[out.b].data[out.off+2*i:])
	}
	st.clock += n/100 + f.reduceNsOn[st.dev]
	return nil
}

func (f *fakeGPU) word(w bufRef) uint32 {
	return binary.LittleEndian.Uint32(f.bufs[w.b].data[w.off:])
}

func (f *fakeGPU) WriteFlag(s streamID, w bufRef, v uint32) error {
	st := f.streams[s]
	if f.fabric != nil {
		return f.fabricWriteFlag(st, w, v)
	}
	if d := f.bufs[w.b].dev; d != st.dev && !slices.Contains(f.devs[st.dev].Peers, d) {
		return fmt.Errorf("fake: stream on GPU %d writes a flag on GPU %d without peer access", st.dev, d)
	}
	binary.LittleEndian.PutUint32(f.bufs[w.b].data[w.off:], v)
	if f.flagAt == nil {
		f.flagAt = map[bufRef]int64{}
	}
	f.flagAt[w] = st.clock
	return nil
}

func (f *fakeGPU) WaitFlag(s streamID, w bufRef, v uint32) error {
	st := f.streams[s]
	if f.fabric != nil {
		f.logf("wait-flag dev%d", st.dev)
		return f.fabricWaitFlag(st, w, v)
	}
	if got := f.word(w); int32(got-v) < 0 {
		return fmt.Errorf("fake: stream on GPU %d would wait forever: word at %d+%d is %d, wants %d", st.dev, w.b, w.off, got, v)
	}
	st.clock = max(st.clock, f.flagAt[w])
	f.logf("wait-flag dev%d", st.dev)
	return nil
}

func (f *fakeGPU) ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error {
	st := f.streams[s]
	f.pipeReduces++
	f.pipeGrids = append(f.pipeGrids, ps.grid)
	f.logf("reduce-pipelined dev%d %d sources grid %d", st.dev, len(srcs), ps.grid)
	chunks := ps.chunks(n)
	if 4*syncWords(len(srcs), chunks) > int64(len(f.bufs[ps.sync].data)) {
		return fmt.Errorf("fake: %d chunks overflow the sync buffer", chunks)
	}
	for c := range chunks {
		for k := 1; k < len(srcs); k++ {
			w := bufRef{ps.sync, 4 * flagWord(k, c, chunks)}
			if got := f.word(w); int32(got-ps.seq) < 0 {
				return fmt.Errorf("fake: the pipelined reduction on GPU %d would spin: source %d's flag for chunk %d is %d, wants %d", st.dev, k, c, got, ps.seq)
			}
			st.clock = max(st.clock, f.flagAt[w])
		}
		lo, hi := c*ps.chunk, min((c+1)*ps.chunk, n)
		for i := lo; i < hi; i++ {
			sum := 0.0 // in floats, as Reduce
			for _, src := range srcs {
				sum += decodeAny(scenarios.BF16, f.bufs[src.b].data[src.off+2*i:])
			}
			encodeRounded(scenarios.BF16, sum, f.bufs[out.b].data[out.off+2*i:])
		}
		st.clock += (hi-lo)/100 + f.reduceNsOn[st.dev]
		if !ps.countDone {
			continue
		}
		done := bufRef{ps.sync, 4 * doneWord(len(srcs), c, chunks)}
		binary.LittleEndian.PutUint32(f.bufs[done.b].data[done.off:], f.word(done)+uint32(ps.grid))
		if f.flagAt == nil {
			f.flagAt = map[bufRef]int64{}
		}
		f.flagAt[done] = st.clock
	}
	return nil
}

// fakeCopyBytesPerNs is the fake copy engines' speed (400 GB/s).
const fakeCopyBytesPerNs = 400

func (f *fakeGPU) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	st := f.streams[s]
	f.copies++
	f.logf("copy %s->%s %d", f.bufs[src].where(), f.bufs[dst].where(), n)
	if dstOff+n > int64(len(f.bufs[dst].data)) || srcOff+n > int64(len(f.bufs[src].data)) {
		return fmt.Errorf("fake: a copy of %d bytes at %d of %d bytes to %d of %d bytes runs past a buffer", n, srcOff, len(f.bufs[src].data), dstOff, len(f.bufs[dst].data))
	}
	copy(f.bufs[dst].data[dstOff:dstOff+n], f.bufs[src].data[srcOff:srcOff+n])
	if f.corruptCopies && (f.bufs[src].dev != f.bufs[dst].dev || f.bufs[src].peer != f.bufs[dst].peer) {
		f.bufs[dst].data[dstOff] ^= 0x40
	}
	st.clock += n/fakeCopyBytesPerNs + f.copyNsOn[st.dev]
	if !f.bufs[dst].host {
		st.clock += f.copyNsPair[[2]int{st.dev, f.bufs[dst].dev}]
	}
	f.copyLog = append(f.copyLog, fakeCopy{stream: s, dev: st.dev, src: bufRef{src, srcOff}, dst: bufRef{dst, dstOff}, n: n, end: st.clock})
	return nil
}

func (f *fakeGPU) GEMM(s streamID, g gemmSpec, a, b, d bufID) error {
	return f.GEMMAt(s, g, bufRef{a, 0}, bufRef{b, 0}, bufRef{d, 0})
}

func (f *fakeGPU) GEMMAt(s streamID, g gemmSpec, a, b, d bufRef) error {
	st := f.streams[s]
	f.gemms++
	if f.stallGEMMs > 0 {
		f.stallGEMMs--
		if f.stallUntilOpen {
			f.waitGateOpen(f.stall)
		} else {
			time.Sleep(f.stall)
		}
	}
	f.logf("gemm dev%d %dx%dx%d target=%d", st.dev, g.M, g.N, g.K, g.SMTarget)
	if a.off != 0 || d.off != 0 {
		f.logf("gemm-at dev%d a+%d d+%d", st.dev, a.off, d.off)
	}
	A, B, D := f.bufs[a.b].data[a.off:], f.bufs[b.b].data[b.off:], f.bufs[d.b].data[d.off:]
	in, out := g.DType.Size(), outputType(g.DType).Size()
	for j := range g.N {
		for i := range g.M {
			var sum float64
			for k := range g.K {
				sum += decodeAny(g.DType, A[(k+i*g.K)*int(in):]) * decodeAny(g.DType, B[(k+j*g.K)*int(in):])
			}
			encodeRounded(outputType(g.DType), sum, D[(i+j*g.M)*int(out):])
		}
	}
	st.clock += f.gemmNs
	return nil
}

func (f *fakeGPU) StreamOp(s streamID, in, out bufID, bytes int64) error {
	st := f.streams[s]
	f.logf("stream-op dev%d %d", st.dev, bytes)
	copy(f.bufs[out].data, f.bufs[in].data[:bytes])
	st.clock += f.streamNs
	return nil
}

func (f *fakeGPU) Collective(c collective, send, recv []bufID, streams []streamID) error {
	at := func(ids []bufID) []bufRef {
		out := make([]bufRef, len(ids))
		for i, id := range ids {
			out[i] = bufRef{id, 0}
		}
		return out
	}
	return f.CollectiveAt(c, at(send), at(recv), streams)
}

func (f *fakeGPU) CollectiveAt(c collective, send, recv []bufRef, streams []streamID) error {
	if f.fabric != nil {
		return f.fabricCollective(c, send, recv, streams)
	}
	f.colls++
	f.logf("collective %s count=%d ctas=%d ranks=%d policy=%d", c.Kind, c.Count, c.Comm.MaxCTAs, len(send), c.Comm.CTAPolicy)
	if send[0].off != 0 || recv[0].off != 0 {
		f.logf("collective-at send+%d recv+%d", send[0].off, recv[0].off)
	}
	ranks := len(send)
	var start int64
	never := false
	for _, s := range streams {
		start = max(start, f.streams[s].clock)
		never = never || f.streams[s].clock < 0
	}
	for r := range ranks {
		out := f.bufs[recv[r].b].data[recv[r].off:]
		for e := range recvElems(c, ranks) {
			// In halves, so that GEMM outputs (a graph's reduce-scatter
			// input) sum as well as the test data's whole numbers.
			v := fakeCollectiveValue(c, ranks, r, e, func(q int, i int64) int {
				return int(math.Round(1024 * decodeAny(scenarios.BF16, f.bufs[send[q].b].data[send[q].off+2*i:])))
			})
			encodeRounded(scenarios.BF16, float64(v)/1024, out[2*e:])
		}
		if f.corrupt && r == ranks-1 {
			binary.LittleEndian.PutUint16(out[2:], bf16Int(99))
		}
	}
	for _, s := range streams {
		f.streams[s].clock = start + f.commNs
		if f.hang || never {
			f.streams[s].clock = -1
		}
	}
	return nil
}

// fakeCollectiveValue computes a collective's result from the send buffers.
func fakeCollectiveValue(c collective, ranks, r int, e int64, send func(q int, i int64) int) int {
	switch c.Kind {
	case scenarios.AllGather:
		return send(int(e/c.Count), e%c.Count)
	case scenarios.ReduceScatter:
		sum := 0
		for q := range ranks {
			sum += send(q, int64(r)*c.Count+e)
		}
		return sum
	case scenarios.AllReduce:
		sum := 0
		for q := range ranks {
			sum += send(q, e)
		}
		return sum
	case scenarios.AllToAll:
		return send(int(e/c.Count), int64(r)*c.Count+e%c.Count)
	}
	return 0
}

func (f *fakeGPU) Abort() error {
	f.aborted++
	f.hang = false
	for _, s := range f.streams {
		s.clock = max(s.clock, 0)
	}
	return nil
}

func (f *fakeGPU) Synchronize(dev int) error { return nil }

func (f *fakeGPU) Close() error {
	for _, b := range f.bufs {
		if b.peer > 0 {
			f.closeMapping()
		}
	}
	f.closed = true
	f.bufs = map[bufID]*fakeBuf{}
	return nil
}

func (f *fakeGPU) logHas(fragment string) bool {
	for _, l := range f.log {
		if strings.Contains(l, fragment) {
			return true
		}
	}
	return false
}

// decodeAny reads one element of any type, fp8 included.
func decodeAny(d scenarios.DType, b []byte) float64 {
	if d == scenarios.FP8 {
		v := b[0]
		sign := 1.0
		if v&0x80 != 0 {
			sign = -1
		}
		exp := int(v >> 3 & 0xf)
		return sign * (1 + float64(v&7)/8) * math.Pow(2, float64(exp-7))
	}
	return decode(d, b)
}

// encodeRounded writes v rounded to the nearest value of type d.
func encodeRounded(d scenarios.DType, v float64, out []byte) {
	switch d {
	case scenarios.FP32:
		binary.LittleEndian.PutUint32(out, math.Float32bits(float32(v)))
	case scenarios.FP16:
		binary.LittleEndian.PutUint16(out, fp16Bits(roundTo(v, 10)))
	default:
		binary.LittleEndian.PutUint16(out, uint16(math.Float32bits(float32(roundTo(v, 7)))>>16))
	}
}

// roundTo rounds v to a binary mantissa of `bits` fraction bits.
func roundTo(v float64, bits int) float64 {
	if v == 0 {
		return 0
	}
	e := math.Floor(math.Log2(math.Abs(v)))
	q := math.Pow(2, e-float64(bits))
	return math.Round(v/q) * q
}
