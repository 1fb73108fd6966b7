package cuda

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// dmaPlan runs a collective on the copy engines (the paper's ConCCL): every
// transfer is a peer copy, spread over one stream per engine in use on each
// GPU, ordered across GPUs with events. All-gather and all-to-all run no
// kernel at all. Reduce-scatter and all-reduce (beyond the paper) copy the
// peers' blocks into a staging buffer and add them with a small kernel on
// the comm stream; all-reduce then all-gathers the reduced blocks on the
// copy engines. Without a comm partition the kernel runs after the copies,
// on whatever SMs are free; in a comm partition it owns its SMs, so it is
// pipelined with the copies instead (see pipePlan).
type dmaPlan struct {
	engines int
	chunk   int64 // bytes per copy; 0 = one piece per engine
	// copyStreams[rank][engine]: the streams that carry the collective's
	// (first) copies. started[rank][i] and done[rank][i]: when copy stream
	// i could start and its completion (the copy-engine timeline's spans),
	// for the copy streams and then a pipelined all-reduce's gather
	// streams.
	copyStreams [][]streamID
	started     [][]eventID
	done        [][]eventID
	// pipe is set for a reduction pipelined with its copies.
	pipe *pipePlan
}

// pipePlan is a reduction pipelined with its copies: each rank's copy
// streams push its blocks to the peers chunk by chunk and raise a flag on
// the receiver per chunk; a reduction kernel that owns the comm partition's SMs adds each
// chunk as soon as its flags are up, so the add overlaps the copies instead
// of following them, and it never competes with the GEMM for SMs. An
// all-reduce's gather streams forward each reduced chunk to the peers as
// soon as its done counter is full.
type pipePlan struct {
	chunk int64 // elements per chunk
	grid  int   // the kernel's CTAs
	// gather[rank][engine] are an all-reduce's forwarding streams.
	gather [][]streamID
}

// splitMinBytes is the transfer size from which an unchunked copy-engine
// collective cuts each transfer so every engine gets a piece. Measured on
// 2 x H200 (FINDINGS.md section 1): alone, one engine drives NVLink to one
// peer as fast as three (376 against 365 GB/s at 256 MiB), and every extra
// stream adds a wait and events to a small collective's fixed cost (45
// against 31 µs at 64 KiB); next to a GEMM, transfers of 96 MiB and more
// kept their speed better split over three engines (up to 10 points of
// ideal), those of 48 MiB and less better whole.
const splitMinBytes = 64 << 20

// transferBytes is the size of each transfer of a copy-engine collective:
// a shard (all-gather), a block (all-to-all, reductions).
func transferBytes(c collective, ranks int) int64 {
	if c.Kind.IsPureCopy() {
		return 2 * c.Count
	}
	return 2 * reduceBlock(c, ranks)
}

// pipeCTAsPerSM is how many CTAs of the pipelined reduction share one SM
// of the comm partition: enough warps to keep HBM requests in flight.
const pipeCTAsPerSM = 4

// pipeMinChunkBytes and pipeMaxChunks size the pipeline's chunks: at least
// 8 MiB (a copy of that size runs at full NVLink speed, and the kernel's
// per-chunk wait is paid rarely), at most 64 chunks.
const (
	pipeMinChunkBytes = 8 << 20
	pipeMaxChunks     = 64
)

// pipeChunk is the pipeline's chunk, in elements, for blocks of n elements:
// chunkBytes when set, at least pipeMinChunkBytes otherwise; never more
// than pipeMaxChunks chunks; a multiple of 8 elements (16 bytes).
func pipeChunk(n, chunkBytes int64) int64 {
	c := chunkBytes / 2
	if c <= 0 {
		c = pipeMinChunkBytes / 2
	}
	c = max(c, (n+pipeMaxChunks-1)/pipeMaxChunks)
	c = (c + 7) / 8 * 8
	return min(c, max((n+7)/8*8, 8))
}

// key identifies the plan for the verification cache.
func (d *dmaPlan) key() string {
	if d == nil {
		return "off"
	}
	if d.pipe != nil {
		return fmt.Sprintf("%d engines, pipelined, chunk %d elements, %d CTAs", d.engines, d.pipe.chunk, d.pipe.grid)
	}
	return fmt.Sprintf("%d engines, chunk %d", d.engines, d.chunk)
}

// dmaSetup creates (once) the copy streams and events a strategy needs.
func (b *Backend) dmaSetup(p *prepared, st scenarios.Strategy) (*dmaPlan, error) {
	engines := b.devs[0].CopyEngines
	if st.CopyEngines > 0 {
		engines = min(st.CopyEngines, engines)
	}
	if engines < 1 {
		return nil, fmt.Errorf("GPU 0 reports %d copy engines; copy-engine collectives need at least one", b.devs[0].CopyEngines)
	}
	d := &dmaPlan{engines: engines, chunk: int64(st.ChunkBytes)}
	if p.hostOp.Collective != "" {
		d.engines = hostCopyEngines(p.hostOp, engines, d.chunk)
		return d, b.copyStreamsSetup(p, d)
	}
	if err := checkPeers(b.devs[:p.gpus]); err != nil {
		return nil, err
	}
	pipelined := !p.coll.Kind.IsPureCopy() && st.CommSMs > 0
	if st.ChunkBytes == 0 && !pipelined {
		d.engines, d.chunk = ceSplit(p.coll, p.gpus, engines)
	}
	if !p.coll.Kind.IsPureCopy() {
		if p.gpus > 8 {
			return nil, fmt.Errorf("a copy-engine %s adds at most 8 blocks per rank; %d GPUs need %d", p.coll.Kind, p.gpus, p.gpus)
		}
		if p.coll.Kind == scenarios.AllReduce && p.coll.Count%int64(p.gpus) != 0 {
			return nil, fmt.Errorf("a copy-engine all-reduce splits the buffer into %d blocks; %d bf16 elements do not split evenly", p.gpus, p.coll.Count)
		}
		if err := b.reductionSetup(p); err != nil {
			return nil, err
		}
		if pipelined {
			if err := b.pipeSetup(p, d, st); err != nil {
				return nil, err
			}
		}
	}
	if err := b.copyStreamsSetup(p, d); err != nil {
		return nil, err
	}
	if b.proc != nil {
		// One process per GPU: the flags that order the ranks' copies
		// (proc_ipc.go).
		if err := b.ipcFlagsSetup(p, d); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// ceSplit picks, for a copy-engine collective whose strategy sets no
// chunk_bytes, how many of the engines copy streams work and the size of
// each copy (0: one copy per transfer): from splitMinBytes on, each
// transfer is cut so every engine gets a piece; below it one copy per
// transfer, so no more engines than peers work.
func ceSplit(c collective, ranks, engines int) (streams int, chunk int64) {
	peers := ranks - 1
	if transferBytes(c, ranks) >= splitMinBytes && peers > 0 {
		pieces := (engines + peers - 1) / peers
		return engines, (transferBytes(c, ranks)/int64(pieces) + 15) / 16 * 16
	}
	return min(engines, peers), 0
}

// copyStreamsSetup creates (once) the copy streams of a plan on every GPU,
// the gather streams of a pipelined all-reduce, and the events that time
// them.
func (b *Backend) copyStreamsSetup(p *prepared, d *dmaPlan) error {
	engines := d.engines
	for dev := range p.gpus {
		var ss []streamID
		for e := range engines {
			s, err := b.stream(dev, "copy", streamSpec{Priority: e}) // the spec only keys the cache: copies ignore priority
			if err != nil {
				return fmt.Errorf("copy stream %d on GPU %d: %w", e, dev, err)
			}
			ss = append(ss, s)
		}
		d.copyStreams = append(d.copyStreams, ss)
		for len(p.copyDone) <= dev {
			p.copyDone = append(p.copyDone, nil)
			p.copyStart = append(p.copyStart, nil)
		}
		streams := engines
		if d.pipe != nil && p.coll.Kind == scenarios.AllReduce {
			var gs []streamID
			for e := range engines {
				s, err := b.stream(dev, "gather", streamSpec{Priority: e})
				if err != nil {
					return fmt.Errorf("gather stream %d on GPU %d: %w", e, dev, err)
				}
				gs = append(gs, s)
			}
			d.pipe.gather = append(d.pipe.gather, gs)
			streams += engines
		}
		for len(p.copyDone[dev]) < streams {
			var evs [2]eventID
			for i := range evs {
				ev, err := b.g.Event(dev)
				if err != nil {
					return err
				}
				evs[i] = ev
			}
			p.copyStart[dev] = append(p.copyStart[dev], evs[0])
			p.copyDone[dev] = append(p.copyDone[dev], evs[1])
		}
		d.started = append(d.started, p.copyStart[dev][:streams])
		d.done = append(d.done, p.copyDone[dev][:streams])
	}
	return nil
}

// checkPeers refuses copy-engine collectives unless every GPU maps every
// other's memory: without peer access a "peer" copy is staged through host
// memory, which would time PCIe and the host, not the copy engines.
func checkPeers(devs []devInfo) error {
	for i, d := range devs {
		for j := range devs {
			if i != j && !slices.Contains(d.Peers, j) {
				return fmt.Errorf("copy-engine collectives need peer access between every pair of GPUs, and GPU %d cannot map GPU %d's memory (no P2P path); use comm_engine sm (NCCL)", i, j)
			}
		}
	}
	return nil
}

// reductionSetup allocates (once per prepared scenario) each rank's staging
// buffer for the peers' blocks, its sync words and its reduction-done
// event. A failure frees the buffers this call allocated, so the next call
// starts over rather than appending to half a set.
func (b *Backend) reductionSetup(p *prepared) error {
	if len(p.staging) == p.gpus {
		return nil
	}
	var staging, sync []bufID
	var done []eventID
	fail := func(err error) error {
		for _, id := range append(staging, sync...) {
			b.g.Free(id)
		}
		return err
	}
	block := 2 * reduceBlock(p.coll, p.gpus)
	for dev := range p.gpus {
		s, err := b.g.Alloc(dev, int64(p.gpus-1)*block)
		if err != nil {
			return fail(fmt.Errorf("allocating the staging buffer on GPU %d: %w", dev, err))
		}
		staging = append(staging, s)
		w, err := b.g.Alloc(dev, pipeSyncBytes)
		if err != nil {
			return fail(fmt.Errorf("allocating the reduction's sync words on GPU %d: %w", dev, err))
		}
		sync = append(sync, w)
		ev, err := b.g.Event(dev)
		if err != nil {
			return fail(err)
		}
		done = append(done, ev)
	}
	p.staging, p.pipeSync, p.reduceDone = staging, sync, done
	return nil
}

// reduceBlock is the element count of one rank's block of a reduction: the
// reduce-scatter's result, or 1/N of the all-reduce's buffer.
func reduceBlock(c collective, ranks int) int64 {
	if c.Kind == scenarios.AllReduce {
		return c.Count / int64(ranks)
	}
	return c.Count
}

// stagingSlot is where rank q's block lands in rank r's staging buffer.
func stagingSlot(q, r int) int {
	if q > r {
		return q - 1
	}
	return q
}

// transfer is one rank's copy into a peer's buffer.
type transfer struct {
	dst, src       bufID
	dstOff, srcOff int64
	bytes          int64
}

// dmaTransfers lists what rank q sends: for an in-place all-gather its shard
// to every peer's output; for an all-to-all block p of its input to rank
// p's output (peers only: the own block is placed once, before timing,
// because a same-device copy runs on the SMs, where a GEMM holding every
// SM delays it; see NOTES.md); for a reduction block r of its input to its
// slot in rank r's staging buffer.
//
// The peers come in rotated order, q+1, q+2, ... (mod N), and copyPhase
// deals them to the engines in that order. So in every round each engine
// of every rank writes to a different GPU: no GPU receives from all its
// peers at once while others idle (see peerOrder).
func dmaTransfers(c collective, p *prepared, q int) []transfer {
	return ceTransfers(c, p.gpus, refs(p.send), refs(p.recv), refs(p.staging), q)
}

// refs places each buffer at offset 0.
func refs(ids []bufID) []bufRef {
	out := make([]bufRef, len(ids))
	for i, id := range ids {
		out[i] = bufRef{id, 0}
	}
	return out
}

// ceTransfers is dmaTransfers on places in buffers: send[r], recv[r] and
// (for a reduction) staging[r] are rank r's buffers at the offset this
// call of the collective uses (a graph's chunk of a decomposed one).
func ceTransfers(c collective, ranks int, send, recv, staging []bufRef, q int) []transfer {
	n := 2 * c.Count
	var out []transfer
	for _, r := range peerOrder(q, ranks) {
		if r == q {
			continue
		}
		switch c.Kind {
		case scenarios.AllGather:
			out = append(out, transfer{dst: recv[r].b, dstOff: recv[r].off + int64(q)*n, src: send[q].b, srcOff: send[q].off, bytes: n})
		case scenarios.AllToAll:
			out = append(out, transfer{dst: recv[r].b, dstOff: recv[r].off + int64(q)*n, src: send[q].b, srcOff: send[q].off + int64(r)*n, bytes: n})
		case scenarios.ReduceScatter, scenarios.AllReduce:
			blk := 2 * reduceBlock(c, ranks)
			out = append(out, transfer{dst: staging[r].b, dstOff: staging[r].off + int64(stagingSlot(q, r))*blk, src: send[q].b, srcOff: send[q].off + int64(r)*blk, bytes: blk})
		}
	}
	return out
}

// gatherReduced lists rank q's copies of its reduced block of an
// all-reduce to every peer.
func gatherReduced(c collective, p *prepared, q int) []transfer {
	return ceGatherReduced(c, p.gpus, refs(p.recv), q)
}

// ceGatherReduced is gatherReduced on places in buffers.
func ceGatherReduced(c collective, ranks int, recv []bufRef, q int) []transfer {
	blk := 2 * reduceBlock(c, ranks)
	var out []transfer
	for _, r := range peerOrder(q, ranks) {
		if r != q {
			out = append(out, transfer{dst: recv[r].b, dstOff: recv[r].off + int64(q)*blk, src: recv[q].b, srcOff: recv[q].off + int64(q)*blk, bytes: blk})
		}
	}
	return out
}

// peerOrder is the order in which rank q of n sends: itself last, the
// others from q+1 on, wrapping. Round j of the copies (the j-th transfer of
// every rank) then goes from each rank q to rank q+j+1: a permutation, so
// every GPU receives from exactly one peer per round, and the engines
// share NVSwitch bandwidth evenly. Sending in plain rank order would have
// every rank write to GPU 0 (or 1) first.
func peerOrder(q, n int) []int {
	out := make([]int, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, (q+i)%n)
	}
	return out
}

// collective enqueues the plan's collective: NCCL on the SMs, or copies
// (and, for reductions, the reduction kernel).
func (b *Backend) collective(p *prepared, pl plan) error {
	if p.hostOp.Collective != "" {
		return b.hostCopy(p, pl)
	}
	if pl.peer != nil {
		return b.peerLoadReduction(p, pl)
	}
	if pl.dma == nil {
		return b.g.Collective(pl.coll, pl.send, pl.recv, pl.commStreams)
	}
	d := pl.dma
	start := make([]eventID, p.gpus)
	for q := range p.gpus {
		start[q] = p.ev[q][evCommStart]
	}
	if d.pipe != nil {
		return b.pipelinedReduction(p, pl)
	}
	if err := b.copyPhase(p, d, start, true, func(q int) []transfer { return dmaTransfers(pl.coll, p, q) }); err != nil {
		return err
	}
	if err := b.joinCopies(p, pl); err != nil {
		return err
	}
	if pl.coll.Kind.IsPureCopy() {
		return nil
	}
	// Each rank adds its own block and the peers' staged ones.
	n := reduceBlock(pl.coll, p.gpus)
	for r := range p.gpus {
		srcs := []bufRef{{p.send[r], int64(r) * 2 * n}}
		for q := range p.gpus {
			if q != r {
				srcs = append(srcs, bufRef{p.staging[r], int64(stagingSlot(q, r)) * 2 * n})
			}
		}
		outOff := int64(0)
		if pl.coll.Kind == scenarios.AllReduce {
			outOff = int64(r) * 2 * n
		}
		if err := b.g.Reduce(pl.commStreams[r], p.recv[r], outOff, srcs, n); err != nil {
			return err
		}
		if err := b.g.Record(p.reduceDone[r], pl.commStreams[r]); err != nil {
			return err
		}
	}
	if pl.coll.Kind != scenarios.AllReduce {
		return nil
	}
	// All-reduce: all-gather the reduced blocks on the copy engines.
	if err := b.copyPhase(p, d, p.reduceDone, false, func(q int) []transfer { return gatherReduced(pl.coll, p, q) }); err != nil {
		return err
	}
	return b.joinCopies(p, pl)
}

// openStreams makes streams wait for event after and, when started is not
// nil, records started[i] on stream i (the copy-engine timeline's span
// starts).
func (b *Backend) openStreams(ss []streamID, after eventID, started []eventID) error {
	for i, s := range ss {
		if err := b.g.Wait(s, after); err != nil {
			return err
		}
		if started != nil {
			if err := b.g.Record(started[i], s); err != nil {
				return err
			}
		}
	}
	return nil
}

// closeStreams records done[i] on stream i.
func (b *Backend) closeStreams(ss []streamID, done []eventID) error {
	for i, s := range ss {
		if err := b.g.Record(done[i], s); err != nil {
			return err
		}
	}
	return nil
}

// copyPhase enqueues every rank's transfers on its copy streams, after its
// event `after`, one copy per transfer (or cut into chunk_bytes), dealt to
// the streams in turn, and records each copy stream's done event (and, for
// the first phase of a collective, its start event).
func (b *Backend) copyPhase(p *prepared, d *dmaPlan, after []eventID, first bool, transfers func(q int) []transfer) error {
	for q := range p.gpus {
		var started []eventID
		if first {
			started = d.started[q]
		}
		if err := b.openStreams(d.copyStreams[q], after[q], started); err != nil {
			return err
		}
		if err := b.dealCopies(transfers(q), d.copyStreams[q][:d.engines], d.chunk); err != nil {
			return err
		}
		if err := b.closeStreams(d.copyStreams[q], d.done[q]); err != nil {
			return err
		}
	}
	return nil
}

// dealCopies enqueues transfers on streams ss, each one copy or, when
// chunk is set, cut into copies of chunk bytes, dealt to the streams in
// turn.
func (b *Backend) dealCopies(ts []transfer, ss []streamID, chunk int64) error {
	k := 0
	for _, t := range ts {
		piece := chunk
		if piece <= 0 {
			piece = t.bytes // one copy per transfer
		}
		for off := int64(0); off < t.bytes; off += piece {
			if err := b.g.CopyPeer(t.dst, t.dstOff+off, t.src, t.srcOff+off, min(piece, t.bytes-off), ss[k%len(ss)]); err != nil {
				return err
			}
			k++
		}
	}
	return nil
}

// joinCopies makes every rank's comm stream wait for every rank's copies
// (cross-GPU event waits, no SM): a rank's part is complete when all data
// bound for it has landed.
func (b *Backend) joinCopies(p *prepared, pl plan) error {
	if b.proc != nil {
		return b.joinCopiesIPC(p, pl)
	}
	for r := range p.gpus {
		for q := range p.gpus {
			for _, ev := range pl.dma.done[q] {
				if err := b.g.Wait(pl.commStreams[r], ev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// copyEngineSamples turns the copy streams' spans of one repetition into
// busy copy streams (backends.MetricCopyStreamsBusy) per device: the
// number of c3lab's copy streams with a copy in flight over the device's
// engine count (c3lab opens one stream per engine it uses), piecewise
// constant, one sample where it changes and a zero at the last span's end.
// NVML cannot see copy engines; these come from c3lab's own events.
func copyEngineSamples(spans []backends.Span, engines, rep int) []backends.Sample {
	if engines < 1 {
		return nil
	}
	type edge struct {
		t     int64
		delta int
	}
	byDev := map[int][]edge{}
	for _, s := range spans {
		if s.Kind != "copy" || !strings.HasPrefix(s.Track, "ce") || s.End <= s.Start {
			continue
		}
		byDev[s.Device] = append(byDev[s.Device], edge{s.Start, 1}, edge{s.End, -1})
	}
	devs := make([]int, 0, len(byDev))
	for d := range byDev {
		devs = append(devs, d)
	}
	slices.Sort(devs)
	var out []backends.Sample
	for _, dev := range devs {
		edges := byDev[dev]
		slices.SortFunc(edges, func(a, b edge) int { return cmp.Compare(a.t, b.t) })
		busy, last := 0, -1.0
		for i, e := range edges {
			busy += e.delta
			if i+1 < len(edges) && edges[i+1].t == e.t {
				continue // apply every edge at one instant before sampling
			}
			v := min(float64(busy)/float64(engines), 1)
			if v != last {
				out = append(out, backends.Sample{Rep: rep, Metric: backends.MetricCopyStreamsBusy, Device: dev, Time: e.t, Value: v})
				last = v
			}
		}
	}
	return out
}
