package cuda

import (
	"fmt"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// Copy engines in graphs (comm_engine dma). Every op stream that carries
// communication gets copy streams of its own on every GPU (copy_engines of
// them, at most the GPU's engines), so two comm streams never queue behind
// each other's copies. A collective instance runs as the pair path's
// copy-engine collective on its slices (dma.go): chunk i of the send and
// receive buffers at the offsets the NCCL graph path uses.
//
//  1. Every rank's copy streams wait for the instance's start event on
//     their GPU, then carry the rank's transfers (peers in rotated order,
//     cut and dealt as the pair path does: chunk_bytes, or ceSplit), and
//     join into one event per GPU: the rank's copies of this instance.
//  2. Every GPU's op stream waits for the copies of every rank: the data
//     bound for it has landed (cross-GPU event waits, no SM).
//  3. A reduction adds the own block and the staged peers' blocks with
//     c3lab's reduction kernel on the op stream (so in the comm partition
//     when there is one); an all-reduce then forwards each rank's reduced
//     block to the peers on the copy streams and the op streams join
//     again.
//
// The instance's end event follows all of it, so a consumer that waits
// for it (a GEMM chunk) starts only when every copy and the add of its
// collective chunk are done on every GPU.
//
// Staging: a reduction op has one staging buffer per GPU holding every
// chunk's peers' blocks (chunk i at i*(ranks-1)*block), so chunks never
// share staging. Instances of an undecomposed op of count > 1 share it:
// the copies of instance k wait for the end of instance k-1 on every GPU
// (its adds are done there), so no copy overwrites a block a previous add
// still reads.
//
// All-gathers and all-to-alls place each rank's own shard (block) in its
// receive buffer once per layout, before timing, as the pair path does:
// the timed copies move peer data only.

// graphDMA is how a graph's copies use the copy engines under a strategy.
type graphDMA struct {
	// engines is how many copy streams an op stream has per GPU.
	engines int
	// chunk is chunk_bytes; 0 leaves each collective to ceSplit and each
	// host copy whole.
	chunk int64
	// ce[s] are op stream s's copy streams (on s's GPU).
	ce map[streamID][]streamID
	// pipeGrid is set (the reduction kernel's CTAs) when reductions are
	// pipelined with their copies, as the pair path does in a comm
	// partition (comm_sms); gather[s] are then op stream s's streams that
	// forward an all-reduce's reduced chunks.
	pipeGrid int
	gather   map[streamID][]streamID
}

// graphDMASetup applies comm_engine dma to a graph: checks the collectives
// can run on the copy engines, allocates (once per graph) the reductions'
// staging and creates (once) every comm stream's copy streams.
func (b *Backend) graphDMASetup(gp *graphPrep, pl *graphPlan, st scenarios.Strategy) error {
	engines := b.devs[0].CopyEngines
	if st.CopyEngines > 0 {
		engines = min(st.CopyEngines, engines)
	}
	if engines < 1 {
		return fmt.Errorf("GPU 0 reports %d copy engines; comm_engine dma needs at least one", b.devs[0].CopyEngines)
	}
	d := &graphDMA{engines: engines, chunk: int64(st.ChunkBytes), ce: map[streamID][]streamID{}, gather: map[streamID][]streamID{}}
	colls, reductions, allReduce := false, false, false
	for i, o := range gp.g.Ops {
		if o.Role != scenarios.RoleComm || o.Comm.Collective.IsHostCopy() {
			continue
		}
		colls = true
		c := gp.ops[i].coll
		if c.Kind.IsPureCopy() {
			continue
		}
		reductions = true
		allReduce = allReduce || c.Kind == scenarios.AllReduce
		if gp.gpus > 8 {
			return fmt.Errorf("op %s: a copy-engine %s adds at most 8 blocks per rank; %d GPUs need %d", o.Name, c.Kind, gp.gpus, gp.gpus)
		}
		if c.Kind == scenarios.AllReduce && c.Count%int64(gp.gpus) != 0 {
			return fmt.Errorf("op %s: a copy-engine all-reduce splits each call's buffer into %d blocks; %d bf16 elements do not split evenly", o.Name, gp.gpus, c.Count)
		}
	}
	if colls {
		if err := checkPeers(b.devs[:gp.gpus]); err != nil {
			return err
		}
		if err := b.graphStaging(gp); err != nil {
			return err
		}
	}
	if reductions && st.CommSMs > 0 && gp.gpus > 1 {
		d.pipeGrid = pipeCTAsPerSM * st.CommSMs
		if err := b.graphPipeSetup(gp, st); err != nil {
			return err
		}
	}
	var commStreams [][]streamID
	if pl.serial != nil {
		commStreams = append(commStreams, pl.serial[scenarios.RoleComm])
	} else {
		for si, gs := range gp.g.Streams {
			if gs.Role == scenarios.RoleComm {
				commStreams = append(commStreams, pl.streams[si])
			}
		}
	}
	for _, per := range commStreams {
		for dev, s := range per {
			var ce []streamID
			for e := range engines {
				// The spec only keys the cache: copies ignore priority.
				c, err := b.stream(dev, backends.Op(fmt.Sprintf("graph copy %d", s)), streamSpec{Priority: e})
				if err != nil {
					return fmt.Errorf("copy stream %d on GPU %d: %w", e, dev, err)
				}
				ce = append(ce, c)
			}
			d.ce[s] = ce
			if d.pipeGrid == 0 || !allReduce {
				continue
			}
			var gs []streamID
			for e := range engines {
				c, err := b.stream(dev, backends.Op(fmt.Sprintf("graph gather %d", s)), streamSpec{Priority: e})
				if err != nil {
					return fmt.Errorf("gather stream %d on GPU %d: %w", e, dev, err)
				}
				gs = append(gs, c)
			}
			d.gather[s] = gs
		}
	}
	pl.dma = d
	return nil
}

// graphPipeSetup allocates (once per graph) every reduction op's sync
// words on every GPU, checks each call's chunks fit them, and clears them
// with the ops' sequence numbers, so the experiment's calls count from 1
// (as pipeSetup does for a pair).
func (b *Backend) graphPipeSetup(gp *graphPrep, st scenarios.Strategy) error {
	if gp.pipeSync == nil {
		gp.pipeSync = make([][]bufID, len(gp.g.Ops))
		gp.pipeSeq = make([]uint32, len(gp.g.Ops))
	}
	zero := make([]byte, pipeSyncBytes)
	for i, o := range gp.g.Ops {
		c := gp.ops[i].coll
		if o.Role != scenarios.RoleComm || o.Comm.Collective.IsHostCopy() || c.Kind.IsPureCopy() {
			continue
		}
		n := reduceBlock(c, gp.gpus)
		chunks := (n + pipeChunk(n, int64(st.ChunkBytes)) - 1) / pipeChunk(n, int64(st.ChunkBytes))
		if w := syncWords(gp.gpus, chunks); 4*w > pipeSyncBytes {
			return fmt.Errorf("op %s: a pipelined reduction of %d chunks on %d GPUs needs %d sync bytes; %d are allocated", o.Name, chunks, gp.gpus, 4*w, pipeSyncBytes)
		}
		for dev := len(gp.pipeSync[i]); dev < gp.gpus; dev++ {
			id, err := b.g.Alloc(dev, pipeSyncBytes)
			if err != nil {
				return fmt.Errorf("op %s: allocating the reduction's sync words on GPU %d: %w", o.Name, dev, err)
			}
			gp.owned = append(gp.owned, id)
			gp.pipeSync[i] = append(gp.pipeSync[i], id)
		}
		for dev := range gp.gpus {
			if err := b.g.Upload(gp.pipeSync[i][dev], zero); err != nil {
				return fmt.Errorf("op %s: clearing the reduction's sync words on GPU %d: %w", o.Name, dev, err)
			}
		}
		gp.pipeSeq[i] = 0
	}
	return nil
}

// graphPipeStatus reports a pipelined reduction of the graph whose kernel
// gave up waiting for its copies (pipeStatus for a graph).
func (b *Backend) graphPipeStatus(gp *graphPrep, pl graphPlan) error {
	if pl.dma == nil || pl.dma.pipeGrid == 0 {
		return nil
	}
	word := make([]byte, 4)
	for i, per := range gp.pipeSync {
		for dev, w := range per {
			if err := b.g.Download(w, word); err != nil {
				return err
			}
			if word[0]&native.ReduceSyncStatusTimeout != 0 {
				return fmt.Errorf("op %s: the copy-engine reduction on GPU %d waited more than %v for its copies and gave up, so the results are discarded; run c3lab doctor and retry", gp.g.Ops[i].Name, dev, time.Duration(b.opts.RepTimeoutNanos))
			}
		}
	}
	return nil
}

// stagingBytes is the staging a copy-engine reduction op needs per GPU:
// the peers' blocks of every chunk (a layout's chunks cover the whole op,
// so every decomposition needs the same).
func stagingBytes(ob opBufs, chunks, ranks int) int64 {
	if ob.coll.Kind == scenarios.AllReduce {
		return int64(ranks-1) * ob.inChunk * int64(chunks) / int64(ranks)
	}
	return int64(ranks-1) * ob.outChunk * int64(chunks)
}

// graphStaging allocates (once per graph) every reduction op's staging
// buffer on every GPU; they are the graph's own, freed with it.
func (b *Backend) graphStaging(gp *graphPrep) error {
	if gp.staging == nil {
		gp.staging = make([][]bufID, len(gp.g.Ops))
	}
	for i, o := range gp.g.Ops {
		c := gp.ops[i].coll
		if o.Role != scenarios.RoleComm || o.Comm.Collective.IsHostCopy() || c.Kind.IsPureCopy() || len(gp.staging[i]) == gp.gpus || gp.gpus < 2 {
			continue
		}
		n := stagingBytes(gp.ops[i], o.Chunks, gp.gpus)
		for dev := len(gp.staging[i]); dev < gp.gpus; dev++ {
			id, err := b.g.Alloc(dev, n)
			if err != nil {
				return fmt.Errorf("op %s: allocating the copy-engine staging buffer (%d bytes) on GPU %d: %w", o.Name, n, dev, err)
			}
			gp.owned = append(gp.owned, id)
			gp.staging[i] = append(gp.staging[i], id)
		}
	}
	return nil
}

// joinEvent is an event of the graph's for joining copy stream s into
// another stream of its GPU (recorded and waited for at once, so one per
// stream serves every instance).
func (b *Backend) joinEvent(gp *graphPrep, dev int, s streamID) (eventID, error) {
	if e, ok := gp.join[s]; ok {
		return e.ev, nil
	}
	e, err := b.event(dev)
	if err != nil {
		return 0, err
	}
	if gp.join == nil {
		gp.join = map[streamID]devEvent{}
	}
	gp.join[s] = devEvent{dev, e}
	return e, nil
}

// devEvent is an event and its GPU.
type devEvent struct {
	dev int
	ev  eventID
}

// joinInto makes stream into (of GPU dev) wait for the work enqueued so
// far on every stream of ss, through their join events.
func (b *Backend) joinInto(gp *graphPrep, dev int, into streamID, ss []streamID) error {
	for _, s := range ss {
		if s == into {
			continue
		}
		e, err := b.joinEvent(gp, dev, s)
		if err != nil {
			return err
		}
		if err := b.g.Record(e, s); err != nil {
			return err
		}
		if err := b.g.Wait(into, e); err != nil {
			return err
		}
	}
	return nil
}

// split is how many copy streams per GPU and what copy size a collective
// call uses under plan d (chunk_bytes, else the pair path's ceSplit).
func (d *graphDMA) split(c collective, ranks int) (int, int64) {
	if d.chunk > 0 {
		return d.engines, d.chunk
	}
	n, chunk := ceSplit(c, ranks, d.engines)
	return max(n, 1), chunk
}

// enqueueCECollective enqueues collective instance k on the copy engines
// of every GPU (see the comment at the top of this file); ss are its op
// streams, whose start events are already recorded, and inOff, outOff the
// byte offsets of its slices.
func (b *Backend) enqueueCECollective(gp *graphPrep, pl graphPlan, k int, ss []streamID, inOff, outOff int64) error {
	g, d := b.g, pl.dma
	in := gp.g.Instances[k]
	o, ob := gp.g.Ops[in.Op], gp.ops[in.Op]
	c, ranks := ob.coll, gp.gpus
	streams, piece := d.split(c, ranks)
	send, recv := make([]bufRef, ranks), make([]bufRef, ranks)
	var staging []bufRef
	blk := 2 * reduceBlock(c, ranks)
	reduction := !c.Kind.IsPureCopy()
	for r := range ranks {
		send[r], recv[r] = bufRef{ob.in[r], inOff}, bufRef{ob.out[r], outOff}
		if reduction && ranks > 1 {
			at := int64(0)
			if o.Chunks > 1 {
				at = int64(in.Index) * int64(ranks-1) * blk
			}
			staging = append(staging, bufRef{gp.staging[in.Op][r], at})
		}
	}
	// Instances of one undecomposed reduction share its staging: wait for
	// the previous one's adds on every GPU.
	prev := -1
	if reduction && o.Chunks == 1 && in.Index > 0 {
		prev = gp.g.InstanceOf(in.Op, in.Index-1)
	}
	phase := func(after func(q int) eventID, transfers func(q int) []transfer, done int) error {
		for q := range ranks {
			ce := d.ce[ss[q]][:streams]
			for _, s := range ce {
				if err := g.Wait(s, after(q)); err != nil {
					return err
				}
				if prev >= 0 && done == 0 {
					for r := range ranks {
						if err := g.Wait(s, gp.ev[prev][r][1]); err != nil {
							return err
						}
					}
				}
			}
			if err := b.dealCopies(transfers(q), ce, piece); err != nil {
				return err
			}
			if err := b.joinInto(gp, q, ce[0], ce); err != nil {
				return err
			}
			if err := g.Record(gp.ceEv[k][q][done], ce[0]); err != nil {
				return err
			}
		}
		// Every GPU's part is done when every rank's copies have landed.
		for r := range ranks {
			for q := range ranks {
				if err := g.Wait(ss[r], gp.ceEv[k][q][done]); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if reduction && d.pipeGrid > 0 && ranks > 1 {
		return b.enqueuePipelined(gp, pl, k, ss, send, recv, staging, prev)
	}
	start := func(q int) eventID { return gp.ev[k][q][0] }
	if err := phase(start, func(q int) []transfer { return ceTransfers(c, ranks, send, recv, staging, q) }, ceCopies); err != nil {
		return err
	}
	if !reduction {
		return nil
	}
	n := reduceBlock(c, ranks)
	for r := range ranks {
		srcs := []bufRef{{send[r].b, send[r].off + int64(r)*blk}}
		for q := range ranks {
			if q != r {
				srcs = append(srcs, bufRef{staging[r].b, staging[r].off + int64(stagingSlot(q, r))*blk})
			}
		}
		at := recv[r].off
		if c.Kind == scenarios.AllReduce {
			at += int64(r) * blk
		}
		if err := g.Reduce(ss[r], recv[r].b, at, srcs, n); err != nil {
			return err
		}
		if err := g.Record(gp.ceEv[k][r][ceReduce], ss[r]); err != nil {
			return err
		}
	}
	if c.Kind != scenarios.AllReduce {
		return nil
	}
	added := func(q int) eventID { return gp.ceEv[k][q][ceReduce] }
	return phase(added, func(q int) []transfer { return ceGatherReduced(c, ranks, recv, q) }, ceGather)
}

// The events of a copy-engine collective instance, per GPU: its rank's
// copies done, its add done, its forwarded reduced block done.
const (
	ceCopies = iota
	ceReduce
	ceGather
	ceEvents
)

// ownBlockInPlace says that c3lab's copy-engine collective for op o
// leaves each rank's own block where o's producer wrote it: an all-to-all
// fed by a GEMM's output (placeOwnShards).
func ownBlockInPlace(o scenarios.GraphOp, c collective) bool {
	return o.FedBy >= 0 && c.Kind == scenarios.AllToAll
}

// placeOwnShards puts each rank's own shard (all-gather) or own block
// (all-to-all) of every chunk where the receive buffer wants it, once per
// layout, so the timed copies move peer data only (as the pair path). An
// all-to-all fed by a GEMM's output (the one pure copy a GEMM can feed)
// gets none: its input is written during the run, so a copy placed before
// it would hold no run's data, and a copy in the op would run on the SMs
// behind the GEMMs (FINDINGS.md, "the rank's own block"). Its own block is
// used where the GEMM wrote it, as a MoE layer's local tokens are, and
// checkGraphOp checks the peers' blocks only.
func (b *Backend) placeOwnShards(gp *graphPrep, pl graphPlan) error {
	if pl.dma == nil {
		gp.placed = "" // NCCL may have laid the receive buffers out otherwise
		return nil
	}
	if gp.placed == chunking(gp.g) {
		return nil
	}
	placed := false
	for i, o := range gp.g.Ops {
		ob := gp.ops[i]
		if o.Role != scenarios.RoleComm || o.Comm.Collective.IsHostCopy() || !ob.coll.Kind.IsPureCopy() || ownBlockInPlace(o, ob.coll) {
			continue
		}
		n := 2 * ob.coll.Count
		for c := range int64(o.Chunks) {
			for q := range gp.gpus {
				src := c * ob.inChunk
				if ob.coll.Kind == scenarios.AllToAll {
					src += int64(q) * n
				}
				s := gp.instStreams(pl, gp.g.InstanceOf(i, 0))[q]
				if err := b.g.CopyPeer(ob.out[q], c*ob.outChunk+int64(q)*n, ob.in[q], src, n, s); err != nil {
					return fmt.Errorf("op %s: placing GPU %d's own shard: %w", o.Name, q, err)
				}
				placed = true
			}
		}
	}
	if placed {
		for dev := range gp.gpus {
			if err := b.g.Synchronize(dev); err != nil {
				return err
			}
		}
	}
	gp.placed = chunking(gp.g)
	return nil
}

// graphHostCopyCE enqueues one GPU's host copy on the copy streams of op
// stream s (hostCopyEngines of them: one per direction unchunked, every
// engine chunked, each direction on its own share as the pair path
// does), after the instance's start event, and makes s wait for them.
func (b *Backend) graphHostCopyCE(gp *graphPrep, pl graphPlan, dev int, s streamID, start eventID, op scenarios.CommOp, segs []copySeg) error {
	ce := pl.dma.ce[s][:hostCopyEngines(op, pl.dma.engines, pl.dma.chunk)]
	for _, c := range ce {
		if err := b.g.Wait(c, start); err != nil {
			return err
		}
	}
	for i, sg := range segs {
		t := []transfer{{dst: sg.dst.b, dstOff: sg.dst.off, src: sg.src.b, srcOff: sg.src.off, bytes: sg.bytes}}
		if err := b.dealCopies(t, hostCopyStreams(ce, i, len(segs)), pl.dma.chunk); err != nil {
			return err
		}
	}
	return b.joinInto(gp, dev, s, ce)
}

// ceSpans are collective instance k's copy-engine spans on GPU dev, on
// tracks beside its op stream's: its rank's copies (from the instance's
// start), its add and an all-reduce's forwarded block.
func (b *Backend) ceSpans(gp *graphPrep, pl graphPlan, k, dev int, track string) ([]backends.Span, error) {
	in := gp.g.Instances[k]
	o, c := gp.g.Ops[in.Op], gp.ops[in.Op].coll
	base := backends.Span{Op: backends.OpComm, GraphOp: o.Name, Instance: in.Index, Device: dev}
	type part struct {
		from, to          eventID
		name, track, kind string
	}
	ev := gp.ceEv[k][dev]
	parts := []part{{gp.ev[k][dev][0], ev[ceCopies], "copies " + o.Comm.String(), track + " ce", "copy"}}
	if !c.Kind.IsPureCopy() {
		parts = append(parts, part{gp.ev[k][dev][0], ev[ceReduce], "reduce " + o.Comm.String(), track + " reduce", "kernel"})
		if c.Kind == scenarios.AllReduce {
			parts = append(parts, part{ev[ceReduce], ev[ceGather], "forward reduced " + o.Comm.String(), track + " ce", "copy"})
		}
	}
	var out []backends.Span
	for _, p := range parts {
		s, e, err := b.span(gp.start[dev], p.from, p.to)
		if err != nil {
			return nil, err
		}
		sp := base
		sp.Name, sp.Track, sp.Kind, sp.Start, sp.End = p.name, p.track, p.kind, s, e
		if o.Chunks > 1 {
			sp.Name += fmt.Sprintf(" [chunk %d/%d]", in.Index+1, o.Chunks)
		}
		out = append(out, sp)
	}
	return out, nil
}

// enqueuePipelined enqueues reduction instance k pipelined with its
// copies, as pipelinedReduction does for a pair, on the instance's slices:
// every rank's copy streams push chunk c of its blocks into the peers'
// staging (this instance's range of it) and raise the receiver's flag for
// it to the op's next sequence number; each rank's reduction kernel, on the
// op stream (so in the comm partition), adds chunk c as soon as its flags
// are up; an all-reduce's gather streams forward each reduced chunk once
// its done counter is full. Then every op stream waits for every rank's
// copies and forwards. The flags of an op are one set that its instances
// reuse with growing numbers: a flag at a later number means the earlier
// copy behind it, on the same stream, has landed too, and an undecomposed
// instance's copies wait (prev) for the previous instance's end on every
// GPU, so none overwrites staging a previous add still reads.
func (b *Backend) enqueuePipelined(gp *graphPrep, pl graphPlan, k int, ss []streamID, send, recv, staging []bufRef, prev int) error {
	g, d := b.g, pl.dma
	in := gp.g.Instances[k]
	ob := gp.ops[in.Op]
	c, ranks := ob.coll, gp.gpus
	gp.pipeSeq[in.Op]++
	seq := gp.pipeSeq[in.Op]
	n := reduceBlock(c, ranks)
	chunk := pipeChunk(n, d.chunk)
	chunks := (n + chunk - 1) / chunk
	blk := 2 * n
	word := func(dev int, w int64) bufRef { return bufRef{gp.pipeSync[in.Op][dev], 4 * w} }
	open := func(q int, ss []streamID) error {
		for _, s := range ss {
			if err := g.Wait(s, gp.ev[k][q][0]); err != nil {
				return err
			}
			if prev >= 0 {
				for r := range ranks {
					if err := g.Wait(s, gp.ev[prev][r][1]); err != nil {
						return err
					}
				}
			}
		}
		return nil
	}
	for q := range ranks {
		ce := d.ce[ss[q]]
		if err := open(q, ce); err != nil {
			return err
		}
		i := 0
		for ch := range chunks {
			lo := ch * chunk
			bytes := 2 * min(chunk, n-lo)
			for _, to := range peerOrder(q, ranks) {
				if to == q {
					continue
				}
				slot := stagingSlot(q, to)
				s := ce[i%len(ce)]
				i++
				if err := g.CopyPeer(staging[to].b, staging[to].off+int64(slot)*blk+2*lo, send[q].b, send[q].off+int64(to)*blk+2*lo, bytes, s); err != nil {
					return err
				}
				if err := g.WriteFlag(s, word(to, flagWord(slot+1, ch, chunks)), seq); err != nil {
					return err
				}
			}
		}
		if err := b.joinInto(gp, q, ce[0], ce); err != nil {
			return err
		}
		if err := g.Record(gp.ceEv[k][q][ceCopies], ce[0]); err != nil {
			return err
		}
	}
	ps := pipeSync{chunk: chunk, seq: seq, grid: d.pipeGrid, timeoutNs: b.opts.RepTimeoutNanos, countDone: c.Kind == scenarios.AllReduce}
	outAt := func(r int) bufRef {
		if c.Kind == scenarios.AllReduce {
			return bufRef{recv[r].b, recv[r].off + int64(r)*blk}
		}
		return recv[r]
	}
	for r := range ranks {
		srcs := []bufRef{{send[r].b, send[r].off + int64(r)*blk}}
		for q := range ranks {
			if q != r {
				srcs = append(srcs, bufRef{staging[r].b, staging[r].off + int64(stagingSlot(q, r))*blk})
			}
		}
		ps.sync = gp.pipeSync[in.Op][r]
		if err := g.ReducePipelined(ss[r], outAt(r), srcs, n, ps); err != nil {
			return err
		}
		if err := g.Record(gp.ceEv[k][r][ceReduce], ss[r]); err != nil {
			return err
		}
	}
	joins := []int{ceCopies}
	if c.Kind == scenarios.AllReduce {
		joins = append(joins, ceGather)
		full := seq * uint32(d.pipeGrid) // every CTA has counted the chunk (cyclic)
		for q := range ranks {
			gs := d.gather[ss[q]]
			if err := open(q, gs); err != nil {
				return err
			}
			for ch := range chunks {
				lo := ch * chunk
				bytes := 2 * min(chunk, n-lo)
				s := gs[int(ch)%len(gs)]
				if err := g.WaitFlag(s, word(q, doneWord(ranks, ch, chunks)), full); err != nil {
					return err
				}
				for _, r := range peerOrder(q, ranks) {
					if r != q {
						if err := g.CopyPeer(recv[r].b, recv[r].off+int64(q)*blk+2*lo, recv[q].b, recv[q].off+int64(q)*blk+2*lo, bytes, s); err != nil {
							return err
						}
					}
				}
			}
			if err := b.joinInto(gp, q, gs[0], gs); err != nil {
				return err
			}
			if err := g.Record(gp.ceEv[k][q][ceGather], gs[0]); err != nil {
				return err
			}
		}
	}
	for r := range ranks {
		for q := range ranks {
			for _, j := range joins {
				if err := g.Wait(ss[r], gp.ceEv[k][q][j]); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
