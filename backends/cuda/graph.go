package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// A format-2 scenario runs as its graph (scenarios.Scenario.Graph under the
// experiment's strategy), with the semantics written on backends.Rep:
//
//   - ModeConcurrent: each graph stream has a CUDA stream per GPU (compute
//     streams and comm streams take the strategy's priority and SM
//     partition by role, as the pair's do); the host enqueues the
//     instances in Graph.EnqueueOrder(launch), records an end event after
//     each one, and makes an instance's stream wait (cuStreamWaitEvent) on
//     the end event of every dependency; stream order covers Prev.
//   - ModeCompute, ModeComm: every instance of the role alone, one after
//     another in the same enqueue order, on one stream per GPU;
//     dependencies on the other role are dropped.
//
// Every instance is timed by its own start and end events.
//
// Buffers: each op has one buffer set per GPU, which all its instances
// reuse. A decomposed op's buffers hold every chunk, and chunk i uses the
// byte range i*chunk of them. When op j feeds op i (GraphOp.Feeds), j's
// output buffer is i's input buffer, allocated once: an all-gather's
// receive buffer is the GEMM's A operand, a GEMM's output the
// reduce-scatter's send buffer. GEMMs are column-major D = A^T B with A
// stored K x M, so the K values of one output row are contiguous and a
// chunk of M/n rows of A is one contiguous range. A chunked GEMM's output
// is stored chunk by chunk: chunk i's (M/n) x N block, column-major, at
// offset i*(M/n)*N*size, so the collective that consumes it reads one
// contiguous range; the verification maps it back to the whole result.

// graphPrep is a format-2 scenario's graph with its buffers and events.
type graphPrep struct {
	g    *scenarios.Graph
	gpus int
	ops  []opBufs
	// owned lists every buffer allocated (a fed input is its producer's
	// output, and is listed once).
	owned []bufID
	// start[dev] is the repetition's common start; ev[instance][dev] the
	// instance's start and end.
	start []eventID
	ev    [][][2]eventID
	// ceEv[instance][dev] are a collective instance's copy-engine events
	// (ceCopies, ceReduce, ceGather; graph_dma.go); join holds each copy
	// stream's join event.
	ceEv [][][ceEvents]eventID
	join map[streamID]devEvent
	// staging[op][dev] is a reduction op's copy-engine staging, allocated
	// at its first copy-engine run; placed names the layout whose own
	// shards sit in the pure-copy collectives' receive buffers ("" none).
	staging [][]bufID
	placed  string
	// pipeSync[op][dev] are a reduction op's sync words for pipelined
	// copy-engine reductions, pipeSeq[op] its calls since they were
	// cleared.
	pipeSync [][]bufID
	pipeSeq  []uint32
}

// opBufs is one graph op's buffer set, per GPU. For a GEMM in is A, w is
// B and out D; for a stream op in and out; for a collective in is the send
// buffer and out the receive buffer; for a host copy in is the source and
// out the destination (pinned host memory on the host side), and a swap's
// second direction is in2 -> out2.
type opBufs struct {
	in, out, in2, out2, w []bufID
	// inChunk, outChunk are the bytes one instance reads and writes; a
	// decomposed op's instance k uses offset k*chunk, others offset 0.
	inChunk, outChunk, in2Chunk int64
	gemm                        gemmSpec
	coll                        collective
}

// graphKey identifies the buffers a graph needs. The decomposition is not
// part of it: a decomposed op's chunks are slices of the whole op's
// buffers, so the whole pair and any decomposition of it share them and a
// measurement that alternates between them (a decomposed strategy next to
// its serial default) allocates and fills them once.
func graphKey(sc scenarios.Scenario) string {
	return fmt.Sprintf("graph|%d|%+v", sc.GPUs, sc.Streams)
}

// chunking names a graph's decomposition: each op's chunk count.
func chunking(g *scenarios.Graph) string {
	var sb strings.Builder
	for _, o := range g.Ops {
		fmt.Fprintf(&sb, "%d,", o.Chunks)
	}
	return sb.String()
}

// opBytes returns what one instance of op o reads (in, and a swap's second
// direction in2) and writes (out), and B's bytes for a GEMM.
func opBytes(o scenarios.GraphOp, gpus int) (in, out, in2, w int64, coll collective, err error) {
	if o.Role == scenarios.RoleCompute {
		c := o.Compute
		switch c.Kind {
		case scenarios.GEMM:
			sz := c.DType.Size()
			return int64(c.M) * int64(c.K) * sz, int64(c.M) * int64(c.N) * outputType(c.DType).Size(), 0, int64(c.K) * int64(c.N) * sz, collective{}, nil
		case scenarios.Stream:
			if c.Bytes%16 != 0 {
				return 0, 0, 0, 0, collective{}, fmt.Errorf("op %s: a stream op of %d bytes; the kernel moves 16-byte words, use a multiple of 16", o.Name, int64(c.Bytes))
			}
			return int64(c.Bytes), int64(c.Bytes), 0, 0, collective{}, nil
		}
		return 0, 0, 0, 0, collective{}, fmt.Errorf("op %s: compute kind %q is not supported", o.Name, c.Kind)
	}
	c := o.Comm
	if c.Collective.IsHostCopy() {
		if err := hostCopyCheck(c); err != nil {
			return 0, 0, 0, 0, collective{}, fmt.Errorf("op %s: %w", o.Name, err)
		}
		toHost, fromHost := c.HostBytes()
		if c.Collective == scenarios.HostSwap {
			return fromHost, fromHost, toHost, 0, collective{Kind: c.Collective}, nil
		}
		n := max(toHost, fromHost)
		return n, n, 0, 0, collective{Kind: c.Collective}, nil
	}
	count, err := commCount(c, gpus)
	if err != nil {
		return 0, 0, 0, 0, collective{}, fmt.Errorf("op %s: %w", o.Name, err)
	}
	coll = collective{Kind: c.Collective, Count: count}
	return 2 * sendElems(coll, gpus), 2 * recvElems(coll, gpus), 0, 0, coll, nil
}

// prepareGraph expands the scenario for the strategy and allocates (once
// per graph) and fills its buffers, checking first that they fit in every
// GPU's free memory. A graph that fails part way is released at once.
func (b *Backend) prepareGraph(sc scenarios.Scenario, st scenarios.Strategy) (_ *graphPrep, err error) {
	key := graphKey(sc)
	g, err := sc.Graph(st)
	if err != nil {
		return nil, err
	}
	if b.prepared != nil && b.prepared.key == key && b.prepared.graph != nil {
		gp := b.prepared.graph
		if chunking(gp.g) == chunking(g) {
			return gp, nil
		}
		// Another decomposition of the same ops: same buffers, new layout.
		if err := b.layoutGraph(gp, g); err != nil {
			b.release()
			return nil, err
		}
		return gp, nil
	}
	if err := b.release(); err != nil {
		return nil, err
	}
	if sc.GPUs > len(b.devs) {
		return nil, fmt.Errorf("scenario %s needs %d GPUs; this node has %d", sc.Name, sc.GPUs, len(b.devs))
	}
	gp := &graphPrep{gpus: sc.GPUs, ops: make([]opBufs, len(g.Ops))}
	var perDev int64
	for i, o := range g.Ops {
		in, out, in2, w, coll, err := opBytes(o, sc.GPUs)
		if err != nil {
			return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
		}
		ob := &gp.ops[i]
		ob.inChunk, ob.outChunk, ob.in2Chunk, ob.coll = in, out, in2, coll
		if o.Role == scenarios.RoleCompute && o.Compute.Kind == scenarios.GEMM {
			ob.gemm = gemmSpec{M: o.Compute.M, N: o.Compute.N, K: o.Compute.K, DType: o.Compute.DType}
			perDev += maxGEMMWorkspace
		}
		n := int64(o.Chunks)
		if o.FedBy < 0 {
			perDev += in * n
		}
		perDev += out*n + 2*in2*n + w
	}
	for dev := range sc.GPUs {
		free, err := b.g.FreeMemory(dev)
		if err != nil {
			return nil, err
		}
		if need := perDev + 1<<30; need > free {
			return nil, fmt.Errorf("scenario %s needs %.1f GiB on GPU %d but %.1f GiB is free; pick smaller sizes or counts", sc.Name, float64(need)/(1<<30), dev, float64(free)/(1<<30))
		}
	}
	b.prepared = &prepared{key: key, gpus: sc.GPUs, graph: gp} // release frees what was allocated, even on failure
	defer func() {
		if err != nil {
			b.release()
		}
	}()
	alloc := func(dev int, bytes int64, host bool, data []byte) (bufID, error) {
		a := b.g.Alloc
		if host {
			a = b.g.AllocHost
		}
		id, err := a(dev, bytes)
		if err != nil {
			return 0, fmt.Errorf("allocating %d bytes for GPU %d: %w", bytes, dev, err)
		}
		gp.owned = append(gp.owned, id)
		if data != nil {
			if err := b.g.Upload(id, data); err != nil {
				return 0, err
			}
		}
		return id, nil
	}
	for i, o := range g.Ops {
		ob := &gp.ops[i]
		n := int64(o.Chunks)
		hostIn, hostOut := false, false
		if o.Role == scenarios.RoleComm {
			switch o.Comm.Collective {
			case scenarios.HostToDevice, scenarios.HostSwap:
				hostIn = true
			case scenarios.DeviceToHost:
				hostOut = true
			}
		}
		for dev := range sc.GPUs {
			if o.FedBy < 0 {
				id, err := alloc(dev, ob.inChunk*n, hostIn, graphInput(g, i, dev, ob.inChunk*n, false))
				if err != nil {
					return nil, fmt.Errorf("op %s: %w", o.Name, err)
				}
				ob.in = append(ob.in, id)
			}
			id, err := alloc(dev, ob.outChunk*n, hostOut, nil)
			if err != nil {
				return nil, fmt.Errorf("op %s: %w", o.Name, err)
			}
			ob.out = append(ob.out, id)
			if ob.in2Chunk > 0 {
				if id, err = alloc(dev, ob.in2Chunk*n, false, hostPattern(dev, true, ob.in2Chunk*n)); err != nil {
					return nil, fmt.Errorf("op %s: %w", o.Name, err)
				}
				ob.in2 = append(ob.in2, id)
				if id, err = alloc(dev, ob.in2Chunk*n, true, nil); err != nil {
					return nil, fmt.Errorf("op %s: %w", o.Name, err)
				}
				ob.out2 = append(ob.out2, id)
			}
			if ob.gemm.M > 0 {
				w := int64(ob.gemm.K) * int64(ob.gemm.N)
				if id, err = alloc(dev, w*ob.gemm.DType.Size(), false, timingOperandBytes(ob.gemm.DType, dev, 1, w)); err != nil {
					return nil, fmt.Errorf("op %s: %w", o.Name, err)
				}
				ob.w = append(ob.w, id)
			}
		}
	}
	for i, o := range g.Ops {
		if o.FedBy >= 0 {
			gp.ops[i].in = gp.ops[o.FedBy].out
		}
	}
	if err := b.layoutGraph(gp, g); err != nil {
		return nil, err
	}
	return gp, nil
}

// layoutGraph lays graph g, one decomposition of the ops whose buffers gp
// holds, over them: each op's per-instance sizes and GEMM shape, and an
// event pair per instance (the previous layout's events go back to the
// spares). The ops, their order and which op feeds which are the same in
// every decomposition (Scenario.Graph), so the buffers are.
func (b *Backend) layoutGraph(gp *graphPrep, g *scenarios.Graph) (err error) {
	if gp.g != nil && len(gp.g.Ops) != len(g.Ops) {
		return fmt.Errorf("a decomposition of the graph has %d ops, the graph %d; this is a c3lab bug", len(g.Ops), len(gp.g.Ops))
	}
	for i, o := range g.Ops {
		in, out, in2, _, coll, err := opBytes(o, gp.gpus)
		if err != nil {
			return err
		}
		if gp.g != nil && (o.FedBy != gp.g.Ops[i].FedBy || int64(o.Chunks)*in != int64(gp.g.Ops[i].Chunks)*gp.ops[i].inChunk) {
			return fmt.Errorf("op %s: a decomposition changed its buffers; this is a c3lab bug", o.Name)
		}
		ob := &gp.ops[i]
		ob.inChunk, ob.outChunk, ob.in2Chunk, ob.coll = in, out, in2, coll
		if ob.gemm.M > 0 {
			ob.gemm.M = o.Compute.M
		}
	}
	b.giveEvents(gp)
	gp.g = g
	gp.start = make([]eventID, gp.gpus)
	for dev := range gp.gpus {
		if gp.start[dev], err = b.event(dev); err != nil {
			return err
		}
	}
	gp.ev = make([][][2]eventID, len(g.Instances))
	gp.ceEv = make([][][ceEvents]eventID, len(g.Instances))
	for k, in := range g.Instances {
		gp.ev[k] = make([][2]eventID, gp.gpus)
		for dev := range gp.gpus {
			for j := range 2 {
				if gp.ev[k][dev][j], err = b.event(dev); err != nil {
					return err
				}
			}
		}
		if o := g.Ops[in.Op]; o.Role != scenarios.RoleComm || o.Comm.Collective.IsHostCopy() {
			continue
		}
		gp.ceEv[k] = make([][ceEvents]eventID, gp.gpus)
		for dev := range gp.gpus {
			for j := range ceEvents {
				if gp.ceEv[k][dev][j], err = b.event(dev); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// graphInput is what op i of g holds in its input buffer: for the timed
// runs (check false), random full-mantissa operands for a GEMM's A and for
// the input of a copy or collective whose output a GEMM reads, the
// collectives' test data for any other send buffer and the host pattern for
// any other host copy's source; for the verification run (check true), the
// checkable values. nil for a stream op. A GEMM that multiplies the small
// integers of the test data draws less power and, under the power cap, ran
// 9 % faster (4096x28672x4096 bf16 on one H200, 1161 against 1279-1286 µs:
// backends/cuda/results/2026-12-03-h200x1-s16), so a copy or collective that
// feeds a GEMM carries data like the activations it stands for.
func graphInput(g *scenarios.Graph, i, dev int, bytes int64, check bool) []byte {
	o := g.Ops[i]
	if o.Role == scenarios.RoleCompute {
		if o.Compute.Kind != scenarios.GEMM {
			return nil
		}
		sz := o.Compute.DType.Size()
		if check {
			return operandBytes(o.Compute.DType, dev, 0, bytes/sz)
		}
		return timingOperandBytes(o.Compute.DType, dev, 0, bytes/sz)
	}
	if d, ok := feedsGEMM(g, i); ok && !check {
		sz := d.Size()
		return timingOperandBytes(d, dev, 2, (bytes+sz-1)/sz)[:bytes]
	}
	if o.Comm.Collective.IsHostCopy() {
		return hostPattern(dev, o.Comm.Collective == scenarios.DeviceToHost, bytes)
	}
	return sendBytes(dev, bytes/2)
}

// feedsGEMM reports whether op i of g is a copy or collective whose output
// a GEMM reads, and that GEMM's element type.
func feedsGEMM(g *scenarios.Graph, i int) (scenarios.DType, bool) {
	o := g.Ops[i]
	if o.Role != scenarios.RoleComm || o.Feeds < 0 || o.Feeds >= len(g.Ops) {
		return "", false
	}
	c := g.Ops[o.Feeds]
	if c.Role != scenarios.RoleCompute || c.Compute.Kind != scenarios.GEMM {
		return "", false
	}
	return c.Compute.DType, true
}

// ownInput reports whether op i of g has an input buffer the verification
// run fills with checkable values and the timed runs with timing data: a
// GEMM's A, or a copy or collective that feeds a GEMM, not fed by another
// op itself.
func ownInput(g *scenarios.Graph, i int) bool {
	o := g.Ops[i]
	if o.FedBy >= 0 {
		return false
	}
	if o.Role == scenarios.RoleCompute {
		return o.Compute.Kind == scenarios.GEMM
	}
	_, ok := feedsGEMM(g, i)
	return ok
}

// event hands out an event of GPU dev, from the spares released graphs
// left, else a new one (events live until Close).
func (b *Backend) event(dev int) (eventID, error) {
	if n := len(b.spareEvents[dev]); n > 0 {
		e := b.spareEvents[dev][n-1]
		b.spareEvents[dev] = b.spareEvents[dev][:n-1]
		return e, nil
	}
	return b.g.Event(dev)
}

// releaseGraph frees a graph's buffers and keeps its events for the next.
func (b *Backend) releaseGraph(gp *graphPrep) error {
	var errs []error
	for _, id := range gp.owned {
		errs = append(errs, b.g.Free(id))
	}
	gp.owned = nil
	b.giveEvents(gp)
	return errors.Join(errs...)
}

// giveEvents hands a graph layout's events back to the spares.
func (b *Backend) giveEvents(gp *graphPrep) {
	give := func(dev int, e eventID) {
		if e != 0 {
			b.spareEvents[dev] = append(b.spareEvents[dev], e)
		}
	}
	for dev, e := range gp.start {
		give(dev, e)
	}
	for _, per := range gp.ev {
		for dev, ee := range per {
			give(dev, ee[0])
			give(dev, ee[1])
		}
	}
	for _, per := range gp.ceEv {
		for dev, ee := range per {
			for _, e := range ee {
				give(dev, e)
			}
		}
	}
	for _, j := range gp.join {
		give(j.dev, j.ev)
	}
	gp.start, gp.ev, gp.ceEv, gp.join = nil, nil, nil, nil
}

// graphPlan is how one experiment maps a graph onto streams and settings.
type graphPlan struct {
	// streams[graph stream][dev] in the concurrent mode; serial[role][dev]
	// in an isolated one.
	streams  [][]streamID
	serial   map[scenarios.Role][]streamID
	smTarget int
	comm     commSpec
	// hostDMA runs host copies on the copy engines (cuMemcpyAsync, in
	// chunks of chunk bytes when set: on the op's stream when one copy
	// stream does, else spread over dma's copy streams as for pairs);
	// otherwise c3lab's copy kernel of hostCTAs CTAs runs them on the SMs.
	hostDMA  bool
	chunk    int64
	hostCTAs int
	// dma is set under comm_engine dma: the copy streams of every comm
	// stream, for collectives and host copies (graph_dma.go).
	dma *graphDMA
}

// graphStrategy applies a strategy to a graph: the streams and settings
// of every role. A knob graphs do not honour yet is refused, naming it.
func (b *Backend) graphStrategy(gp *graphPrep, st scenarios.Strategy, mode backends.Mode) (graphPlan, error) {
	st = st.Normalize()
	sms := b.devs[0].SMs
	compPart, commPart, err := b.partitions(st)
	if err != nil {
		return graphPlan{}, err
	}
	pl := graphPlan{smTarget: gemmSMTarget(sms, st, compPart), comm: commSpec{MaxCTAs: st.CommCTAs, Ranks: gp.gpus},
		hostDMA: st.CommEngine == scenarios.EngineDMA, chunk: int64(st.ChunkBytes), hostCTAs: hostCopyCTAs(st)}
	for _, o := range gp.g.Ops {
		if o.Role == scenarios.RoleComm && !o.Comm.Collective.IsHostCopy() && st.CommEngine == scenarios.EngineNCCLCE {
			return graphPlan{}, fmt.Errorf("comm_engine %s: the cuda backend runs the collectives of a format-2 scenario (op %s) on NCCL's kernels or on c3lab's copy engines (comm_engine dma), not on NCCL's copy-engine path, which needs every buffer in symmetric memory", st.CommEngine, o.Name)
		}
	}
	spec := map[scenarios.Role]streamSpec{
		scenarios.RoleCompute: {Priority: 0, Partition: compPart},
		scenarios.RoleComm:    {Priority: st.CommPriority, Partition: commPart},
	}
	if mode == backends.ModeConcurrent {
		for si, gs := range gp.g.Streams {
			var per []streamID
			for dev := range gp.gpus {
				s, err := b.stream(dev, backends.Op(fmt.Sprintf("graph stream %d", si)), spec[gs.Role])
				if err != nil {
					return graphPlan{}, fmt.Errorf("stream %s on GPU %d: %w", gs.Name, dev, err)
				}
				per = append(per, s)
			}
			pl.streams = append(pl.streams, per)
		}
		return pl, b.dmaOf(gp, &pl, st)
	}
	pl.serial = map[scenarios.Role][]streamID{}
	for _, r := range []scenarios.Role{scenarios.RoleCompute, scenarios.RoleComm} {
		for dev := range gp.gpus {
			s, err := b.stream(dev, backends.Op("graph serial "+string(r)), spec[r])
			if err != nil {
				return graphPlan{}, fmt.Errorf("%s stream on GPU %d: %w", r, dev, err)
			}
			pl.serial[r] = append(pl.serial[r], s)
		}
	}
	return pl, b.dmaOf(gp, &pl, st)
}

// dmaOf sets up the copy engines of a plan under comm_engine dma.
func (b *Backend) dmaOf(gp *graphPrep, pl *graphPlan, st scenarios.Strategy) error {
	if st.CommEngine != scenarios.EngineDMA {
		return nil
	}
	return b.graphDMASetup(gp, pl, st)
}

// roleOf says which side of C3 a mode runs ("" for both).
func roleOf(mode backends.Mode) scenarios.Role {
	switch mode {
	case backends.ModeCompute:
		return scenarios.RoleCompute
	case backends.ModeComm:
		return scenarios.RoleComm
	}
	return ""
}

// graphOrder is the instances a mode runs, in the order the host enqueues
// them, and per instance what it waits for: its stream predecessor in this
// run, then its dependencies that run too (-1 entries never appear).
func graphOrder(g *scenarios.Graph, mode backends.Mode, launch scenarios.LaunchOrder) (order []int, waits [][]int) {
	role := roleOf(mode)
	waits = make([][]int, len(g.Instances))
	prevSerial := -1
	for _, k := range g.EnqueueOrder(launch) {
		in := g.Instances[k]
		if role != "" && g.Ops[in.Op].Role != role {
			continue
		}
		order = append(order, k)
		if role != "" {
			// One stream: the previous instance is the only wait.
			if prevSerial >= 0 {
				waits[k] = []int{prevSerial}
			}
			prevSerial = k
			continue
		}
		if in.Prev >= 0 {
			waits[k] = append(waits[k], in.Prev)
		}
		waits[k] = append(waits[k], in.Deps...)
	}
	return order, waits
}

// instStreams is the stream of every GPU an instance runs on.
func (gp *graphPrep) instStreams(pl graphPlan, k int) []streamID {
	o := gp.g.Ops[gp.g.Instances[k].Op]
	if pl.serial != nil {
		return pl.serial[o.Role]
	}
	return pl.streams[o.Stream]
}

// enqueueInstance enqueues instance k on every GPU: waits on the end event
// of each dependency (not on its stream predecessor, which stream order
// covers), its start event, the op, its end event.
func (b *Backend) enqueueInstance(gp *graphPrep, pl graphPlan, k int, waits []int) error {
	g := b.g
	in := gp.g.Instances[k]
	o, ob := gp.g.Ops[in.Op], gp.ops[in.Op]
	ss := gp.instStreams(pl, k)
	for dev := range gp.gpus {
		for _, d := range waits {
			if pl.serial != nil || d == in.Prev {
				continue // the same stream: its order is the wait
			}
			if err := g.Wait(ss[dev], gp.ev[d][dev][1]); err != nil {
				return err
			}
		}
		if err := g.Record(gp.ev[k][dev][0], ss[dev]); err != nil {
			return err
		}
	}
	at := func(chunk int64) int64 {
		if o.Chunks > 1 {
			return int64(in.Index) * chunk
		}
		return 0
	}
	inOff, outOff := at(ob.inChunk), at(ob.outChunk)
	switch {
	case o.Role == scenarios.RoleCompute && ob.gemm.M > 0:
		spec := ob.gemm
		spec.SMTarget = pl.smTarget
		for dev := range gp.gpus {
			if err := g.GEMMAt(ss[dev], spec, bufRef{ob.in[dev], inOff}, bufRef{ob.w[dev], 0}, bufRef{ob.out[dev], outOff}); err != nil {
				return fmt.Errorf("op %s: %w", o.Name, err)
			}
		}
	case o.Role == scenarios.RoleCompute:
		for dev := range gp.gpus {
			if err := g.StreamOp(ss[dev], ob.in[dev], ob.out[dev], ob.inChunk); err != nil {
				return fmt.Errorf("op %s: %w", o.Name, err)
			}
		}
	case o.Comm.Collective.IsHostCopy():
		for dev := range gp.gpus {
			segs := []copySeg{{dst: bufRef{ob.out[dev], outOff}, src: bufRef{ob.in[dev], inOff}, bytes: ob.inChunk}}
			if ob.in2Chunk > 0 {
				off := at(ob.in2Chunk)
				segs = append(segs, copySeg{dst: bufRef{ob.out2[dev], off}, src: bufRef{ob.in2[dev], off}, bytes: ob.in2Chunk})
			}
			var err error
			if pl.dma != nil && hostCopyEngines(o.Comm, pl.dma.engines, pl.dma.chunk) > 1 {
				err = b.graphHostCopyCE(gp, pl, dev, ss[dev], gp.ev[k][dev][0], o.Comm, segs)
			} else {
				err = b.graphHostCopy(pl, ss[dev], segs)
			}
			if err != nil {
				return fmt.Errorf("op %s: %w", o.Name, err)
			}
		}
	case pl.dma != nil:
		if err := b.enqueueCECollective(gp, pl, k, ss, inOff, outOff); err != nil {
			return fmt.Errorf("op %s: %w", o.Name, err)
		}
	default:
		c := ob.coll
		c.Comm = pl.comm
		send, recv := make([]bufRef, gp.gpus), make([]bufRef, gp.gpus)
		for dev := range gp.gpus {
			send[dev], recv[dev] = bufRef{ob.in[dev], inOff}, bufRef{ob.out[dev], outOff}
		}
		if err := g.CollectiveAt(c, send, recv, ss); err != nil {
			return fmt.Errorf("op %s: %w", o.Name, err)
		}
	}
	for dev := range gp.gpus {
		if err := g.Record(gp.ev[k][dev][1], ss[dev]); err != nil {
			return err
		}
	}
	return nil
}

// graphHostCopy enqueues one GPU's host copy on stream s: on a copy engine
// (in chunks when the strategy sets them) or as c3lab's copy kernel.
func (b *Backend) graphHostCopy(pl graphPlan, s streamID, segs []copySeg) error {
	if !pl.hostDMA {
		return b.g.CopyKernel(s, segs, pl.hostCTAs)
	}
	for _, sg := range segs {
		chunk := pl.chunk
		if chunk <= 0 {
			chunk = sg.bytes
		}
		for off := int64(0); off < sg.bytes; off += chunk {
			if err := b.g.CopyPeer(sg.dst.b, sg.dst.off+off, sg.src.b, sg.src.off+off, min(chunk, sg.bytes-off), s); err != nil {
				return err
			}
		}
	}
	return nil
}

// runGraph is one experiment on a format-2 scenario, on the worker.
func (b *Backend) runGraph(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	gp, err := b.prepareGraph(ex.Scenario, ex.Strategy)
	var pl graphPlan
	if err == nil {
		pl, err = b.graphStrategy(gp, ex.Strategy, ex.Mode)
	}
	if err := b.agree(ctx, "setup", err); err != nil {
		return backends.RunResult{}, err
	}
	if err := b.agree(ctx, "verification", b.verifyGraph(ctx, gp, ex.Strategy)); err != nil {
		return backends.RunResult{}, err
	}
	if err := b.placeOwnShards(gp, pl); err != nil {
		return backends.RunResult{}, err
	}
	order, waits := graphOrder(gp.g, ex.Mode, ex.Strategy.Normalize().Launch)
	res := backends.RunResult{Mode: ex.Mode}
	gaps := make([]int64, len(gp.g.Ops))
	err = b.repeat(ctx, ex.Warmup, ex.Reps, func(gated bool) (func(i int), error) {
		rep, spans, gap, err := b.graphRep(ctx, gp, pl, order, waits, gated)
		skew := b.startSkew()
		return func(i int) {
			if skew >= 0 {
				res.StartSkews = append(res.StartSkews, skew)
			}
			for op := range gaps {
				gaps[op] += gap[op]
			}
			res.Reps = append(res.Reps, rep)
			if sink != nil {
				for k := range spans {
					spans[k].Rep = i
				}
				sink.Spans(spans)
			}
		}, err
	})
	if err != nil {
		return backends.RunResult{}, err
	}
	if err := b.graphPipeStatus(gp, pl); err != nil {
		return backends.RunResult{}, err
	}
	res.Explain = launchExplain(gp.g, gaps, len(res.Reps))
	return res, nil
}

// launchExplain reports, per op that ran, the launch gap: the mean over
// repetitions of the time from the end of what each instance waited for
// (its stream predecessor or a dependency) to the instance's start, summed
// over its instances, on the GPU where it was longest. It is what the
// host's enqueueing and the GPU's start of a dependent kernel cost between
// kernels: time no op of the stream runs.
func launchExplain(g *scenarios.Graph, gaps []int64, reps int) []backends.OpExplanation {
	if reps == 0 {
		return nil
	}
	var out []backends.OpExplanation
	for i, o := range g.Ops {
		if gaps[i] <= 0 {
			continue
		}
		op := backends.OpCompute
		if o.Role == scenarios.RoleComm {
			op = backends.OpComm
		}
		out = append(out, backends.OpExplanation{Op: op, Label: o.Label(), Bounds: []backends.Bound{{Resource: backends.ResLaunch, Nanos: gaps[i] / int64(reps),
			Detail: fmt.Sprintf("launch gaps of %s: from the end of what each of its %d instances waited for to its start", o.Name, o.Count)}}})
	}
	return out
}

// graphRep enqueues one repetition of the graph on every GPU, waits for it
// and reads every instance's times. Gated (see Options.Ungated), the
// first stream of every GPU waits on the start gate before the common
// start event, every other stream waits on that event, and the gate opens
// once every instance is enqueued.
func (b *Backend) graphRep(ctx context.Context, gp *graphPrep, pl graphPlan, order []int, waits [][]int, gated bool) (backends.Rep, []backends.Span, []int64, error) {
	g := b.g
	// The streams this repetition uses, per GPU, first-used first.
	var used []int
	seen := map[streamID]bool{}
	for _, k := range order {
		s := gp.instStreams(pl, k)[0]
		if !seen[s] {
			seen[s] = true
			used = append(used, k)
		}
	}
	gate := b.startRep(ctx, gated)
	defer gate.close()
	for dev := range gp.gpus {
		// The first stream joins the others before the start: on a GPU
		// whose last repetition has ended these waits cost nothing, and no
		// stream's work can fall before the common start.
		first := gp.instStreams(pl, used[0])[dev]
		for _, k := range used[1:] {
			if err := g.Record(gp.start[dev], gp.instStreams(pl, k)[dev]); err != nil {
				return backends.Rep{}, nil, nil, err
			}
			if err := g.Wait(first, gp.start[dev]); err != nil {
				return backends.Rep{}, nil, nil, err
			}
		}
		for j, k := range used {
			s := gp.instStreams(pl, k)[dev]
			if j == 0 {
				if gated {
					if err := g.GateWait(s, b.gateVal); err != nil {
						return backends.Rep{}, nil, nil, err
					}
				}
				if err := g.Record(gp.start[dev], s); err != nil {
					return backends.Rep{}, nil, nil, err
				}
				continue
			}
			if err := g.Wait(s, gp.start[dev]); err != nil {
				return backends.Rep{}, nil, nil, err
			}
		}
	}
	for _, k := range order {
		if err := b.enqueueInstance(gp, pl, k, waits[k]); err != nil {
			return backends.Rep{}, nil, nil, err
		}
	}
	stalled := gate.release()
	werr := b.waitGraph(ctx, gp, order)
	if b.proc != nil {
		// Every rank's times, start stamp and gate verdict (or failure).
		stalled, werr = b.proc.settle(ctx, gate, werr)
	}
	if werr != nil {
		return backends.Rep{}, nil, nil, werr
	}
	if stalled {
		return backends.Rep{}, nil, nil, errGateStalled
	}
	rep := backends.Rep{Ops: make([]int64, len(gp.g.Ops))}
	var spans []backends.Span
	start := make([][]int64, len(gp.g.Instances)) // per instance, per GPU
	end := make([][]int64, len(gp.g.Instances))
	gap := make([]int64, len(gp.g.Ops))
	for _, k := range order {
		in := gp.g.Instances[k]
		o := gp.g.Ops[in.Op]
		start[k], end[k] = make([]int64, gp.gpus), make([]int64, gp.gpus)
		first, last := int64(math.MaxInt64), int64(0)
		for dev := range gp.gpus {
			s, e, err := b.span(gp.start[dev], gp.ev[k][dev][0], gp.ev[k][dev][1])
			if err != nil {
				return backends.Rep{}, nil, nil, err
			}
			start[k][dev], end[k][dev] = s, e
			first, last = min(first, s), max(last, e)
			sp := graphSpan(gp, pl, k, dev, s, e)
			spans = append(spans, sp)
			if pl.dma != nil && gp.ceEv[k] != nil {
				ce, err := b.ceSpans(gp, pl, k, dev, sp.Track)
				if err != nil {
					return backends.Rep{}, nil, nil, err
				}
				spans = append(spans, ce...)
			}
		}
		rep.Ops[in.Op] += last - first
		rep.Wall = max(rep.Wall, last)
		if o.Role == scenarios.RoleCompute {
			rep.Compute = max(rep.Compute, last)
		} else {
			rep.Comm = max(rep.Comm, last)
		}
	}
	if b.tracer != nil {
		spans = append(spans, b.cuptiTimeline(gate.t0, gp.gpus)...)
	}
	// Launch gaps, from the times: per op, on its GPU with the most.
	for op := range gp.g.Ops {
		for dev := range gp.gpus {
			var sum int64
			for _, k := range order {
				if gp.g.Instances[k].Op != op || len(waits[k]) == 0 {
					continue
				}
				ready := int64(0)
				for _, w := range waits[k] {
					ready = max(ready, end[w][dev])
				}
				sum += max(start[k][dev]-ready, 0)
			}
			gap[op] = max(gap[op], sum)
		}
	}
	return rep, spans, gap, nil
}

// graphSpan is instance k's span on GPU dev.
func graphSpan(gp *graphPrep, pl graphPlan, k, dev int, s, e int64) backends.Span {
	in := gp.g.Instances[k]
	o := gp.g.Ops[in.Op]
	sp := backends.Span{GraphOp: o.Name, Instance: in.Index, Device: dev, Kind: "kernel", Start: s, End: e, Op: backends.OpCompute}
	if pl.serial != nil {
		sp.Track = string(o.Role)
	} else {
		sp.Track = gp.g.Streams[o.Stream].Name
	}
	if o.Role == scenarios.RoleCompute {
		sp.Name = o.Compute.String()
	} else {
		sp.Op = backends.OpComm
		sp.Name = "nccl " + o.Comm.String()
		if pl.dma != nil {
			sp.Name, sp.Kind = "copy-engine "+o.Comm.String(), "copy"
		}
		if o.Comm.Collective.IsHostCopy() {
			sp.Name, sp.Kind = fmt.Sprintf("copy kernel %s (%d CTAs)", o.Comm, pl.hostCTAs), "kernel"
			if pl.hostDMA {
				sp.Name, sp.Kind = "copy-engine "+o.Comm.String(), "copy"
			}
		}
	}
	if o.Chunks > 1 {
		sp.Name += fmt.Sprintf(" [chunk %d/%d]", in.Index+1, o.Chunks)
	}
	return sp
}

// waitGraph polls every instance's end event until the repetition is done.
// Past the repetition timeout the instance still pending is named (a
// dependency that never fired, a hung collective), every communicator is
// aborted and an error comes back; the backend stays usable.
func (b *Backend) waitGraph(ctx context.Context, gp *graphPrep, order []int) error {
	deadline := time.Now().Add(time.Duration(b.opts.RepTimeoutNanos))
	for _, k := range order {
		for dev := range gp.gpus {
			for {
				done, err := b.g.Done(gp.ev[k][dev][1])
				if err != nil {
					return err
				}
				if done {
					break
				}
				if time.Now().After(deadline) {
					in := gp.g.Instances[k]
					abortErr := b.g.Abort()
					return errors.Join(fmt.Errorf("a repetition did not finish within %v: op %s instance %d on GPU %d never ended (a dependency that never fired or a hung collective); the communicators were aborted",
						time.Duration(b.opts.RepTimeoutNanos), gp.g.Ops[in.Op].Name, in.Index, dev), abortErr)
				}
				time.Sleep(20 * time.Microsecond)
			}
		}
	}
	return ctx.Err()
}

// verifyGraph runs the whole graph once, untimed, on check data and checks
// every op's output before anything is timed (once per graph and
// communication setting):
//   - a GEMM whose A is its own: every output row against the host
//     reference (checkGEMMRows), chunk by chunk for a decomposed one;
//   - a GEMM fed by a collective or a host copy, decomposed: its chunked
//     output against one whole GEMM run on the whole gathered A;
//   - a collective: every rank's output against the result computed on
//     the host from the inputs every rank held (a GEMM's output for a
//     consumer of one), chunk by chunk;
//   - a host copy: the destination byte for byte against the source.
func (b *Backend) verifyGraph(ctx context.Context, gp *graphPrep, st scenarios.Strategy) error {
	st = st.Normalize()
	// comm_sms picks a copy-engine reduction's path (pipelined or not).
	key := fmt.Sprintf("%s chunks %s ctas %d engine %s chunk %d engines %d comm sms %d", b.prepared.key, chunking(gp.g), st.CommCTAs, st.CommEngine, st.ChunkBytes, st.CopyEngines, st.CommSMs)
	if b.verified[key] {
		return nil
	}
	pl, err := b.graphStrategy(gp, st, backends.ModeConcurrent)
	if err != nil {
		return err
	}
	g := gp.g
	// Checkable values in the GEMMs' own A buffers and in the inputs of
	// the ops that feed GEMMs; a copy-engine collective's own shards are
	// placed from them.
	if err := b.uploadInputs(gp, true); err != nil {
		return err
	}
	gp.placed = ""
	if err := b.placeOwnShards(gp, pl); err != nil {
		return err
	}
	order, waits := graphOrder(g, backends.ModeConcurrent, st.Launch)
	if _, _, _, err := b.graphRep(ctx, gp, pl, order, waits, false); err != nil {
		return err
	}
	for dev := range gp.gpus {
		if err := b.g.Synchronize(dev); err != nil {
			return err
		}
	}
	// A pipelined reduction that gave up waiting for its copies is a
	// clearer reason than the wrong result it leaves.
	if err := b.graphPipeStatus(gp, pl); err != nil {
		return err
	}
	for i, o := range g.Ops {
		if err := b.checkGraphOp(gp, pl, i); err != nil {
			return fmt.Errorf("op %s gave a wrong result, so the scenario is not timed: %w", o.Name, err)
		}
	}
	// Timing operands back in place.
	if err := b.uploadInputs(gp, false); err != nil {
		return err
	}
	// The timed runs place the own shards again, from the timing data.
	gp.placed = ""
	b.verified[key] = true
	return nil
}

// uploadInputs fills the input buffers that differ between the
// verification run and the timed runs (ownInput: a GEMM's A and B, and the
// input of a copy or collective that feeds a GEMM) with the checkable
// values (check) or the timing data.
func (b *Backend) uploadInputs(gp *graphPrep, check bool) error {
	g := gp.g
	for i, o := range g.Ops {
		if !ownInput(g, i) {
			continue
		}
		ob := gp.ops[i]
		for dev := range gp.gpus {
			if err := b.g.Upload(ob.in[dev], graphInput(g, i, dev, ob.inChunk*int64(o.Chunks), check)); err != nil {
				return err
			}
			if ob.gemm.M == 0 {
				continue
			}
			w := int64(ob.gemm.K) * int64(ob.gemm.N)
			var weights []byte
			if check {
				weights = operandBytes(ob.gemm.DType, dev, 1, w)
			} else {
				weights = timingOperandBytes(ob.gemm.DType, dev, 1, w)
			}
			if err := b.g.Upload(ob.w[dev], weights); err != nil {
				return err
			}
		}
	}
	return nil
}

// download reads a whole buffer of n bytes.
func (b *Backend) download(id bufID, n int64) ([]byte, error) {
	out := make([]byte, n)
	return out, b.g.Download(id, out)
}

// checkGraphOp checks op i's output after the verification run.
func (b *Backend) checkGraphOp(gp *graphPrep, pl graphPlan, i int) error {
	o, ob := gp.g.Ops[i], gp.ops[i]
	n := int64(o.Chunks)
	switch {
	case ob.gemm.M > 0 && o.FedBy < 0:
		for dev := range gp.gpus {
			if !b.mine(dev) {
				continue // that rank checks its own
			}
			d, err := b.download(ob.out[dev], ob.outChunk*n)
			if err != nil {
				return err
			}
			for c := range n {
				if err := checkGEMMRows(ob.gemm, dev, int64(ob.gemm.M)*c, d[c*ob.outChunk:]); err != nil {
					return err
				}
			}
		}
	case ob.gemm.M > 0 && o.Chunks > 1:
		return b.checkChunkedGEMM(gp, pl, i)
	case o.Role == scenarios.RoleComm && o.Comm.Collective.IsHostCopy():
		for dev := range gp.gpus {
			if !b.mine(dev) {
				continue // that rank checks its own
			}
			pairs := [][2]bufID{{ob.in[dev], ob.out[dev]}}
			if ob.in2Chunk > 0 {
				pairs = append(pairs, [2]bufID{ob.in2[dev], ob.out2[dev]})
			}
			for _, p := range pairs {
				size := ob.inChunk * n
				if p[0] != ob.in[dev] {
					size = ob.in2Chunk * n
				}
				src, err := b.download(p[0], size)
				if err != nil {
					return err
				}
				dst, err := b.download(p[1], size)
				if err != nil {
					return err
				}
				if !slices.Equal(src, dst) {
					return fmt.Errorf("the %s on GPU %d delivered wrong data", o.Comm.Collective, dev)
				}
			}
		}
	case o.Role == scenarios.RoleComm:
		ins, outs := make([][]byte, gp.gpus), make([][]byte, gp.gpus)
		for dev := range gp.gpus {
			var err error
			if !b.mine(dev) {
				// That rank checks its output; its input is the test data
				// every rank knows, unless a GEMM of its GPU made it.
				if o.FedBy >= 0 {
					return fmt.Errorf("the input of %s on GPU %d is a GEMM's output in another process, which this rank cannot read to check its own result; run the scenario in one process (no launcher, or one rank per node)", o.Name, dev)
				}
				ins[dev] = graphInput(gp.g, i, dev, ob.inChunk*n, true)
				continue
			}
			if ins[dev], err = b.download(ob.in[dev], ob.inChunk*n); err != nil {
				return err
			}
			if outs[dev], err = b.download(ob.out[dev], ob.outChunk*n); err != nil {
				return err
			}
		}
		ownInPlace := pl.dma != nil && ownBlockInPlace(o, ob.coll)
		for c := range n {
			if err := checkCollectiveFrom(ob.coll, gp.gpus, c, ins, outs, ownInPlace); err != nil {
				return err
			}
		}
	}
	return nil
}

// checkChunkedGEMM runs one whole GEMM on the whole A the chunks read and
// compares the chunked output (chunk c's rows as a block at c*outChunk)
// with it.
func (b *Backend) checkChunkedGEMM(gp *graphPrep, pl graphPlan, i int) error {
	o, ob := gp.g.Ops[i], gp.ops[i]
	n := int64(o.Chunks)
	whole := ob.gemm
	whole.M *= o.Chunks
	outSz := outputType(whole.DType).Size()
	for dev := range gp.gpus {
		if !b.mine(dev) {
			continue // that rank checks its own
		}
		ref, err := b.g.Alloc(dev, int64(whole.M)*int64(whole.N)*outSz)
		if err != nil {
			return fmt.Errorf("allocating the unchunked reference on GPU %d: %w", dev, err)
		}
		err = func() error {
			defer b.g.Free(ref)
			s := pl.streams[o.Stream][dev]
			if err := b.g.GEMMAt(s, whole, bufRef{ob.in[dev], 0}, bufRef{ob.w[dev], 0}, bufRef{ref, 0}); err != nil {
				return err
			}
			if err := b.g.Synchronize(dev); err != nil {
				return err
			}
			want, err := b.download(ref, int64(whole.M)*int64(whole.N)*outSz)
			if err != nil {
				return err
			}
			got, err := b.download(ob.out[dev], ob.outChunk*n)
			if err != nil {
				return err
			}
			return compareChunkedGEMM(whole, o.Chunks, dev, got, want)
		}()
		if err != nil {
			return err
		}
	}
	return nil
}

// compareChunkedGEMM compares a GEMM's output stored chunk by chunk (chunk
// c's (M/n) x N rows as a column-major block) with the whole GEMM's M x N
// column-major output. The two may sum in another order (the library
// picks its kernel by shape): an element passes within two roundings of
// the output type of its value, plus 1e-3 of the largest magnitude.
func compareChunkedGEMM(whole gemmSpec, chunks, dev int, got, want []byte) error {
	out := outputType(whole.DType)
	size := int(out.Size())
	ulp := map[scenarios.DType]float64{scenarios.BF16: 1.0 / 128, scenarios.FP16: 1.0 / 1024, scenarios.FP32: 1e-6}[out]
	peak := 0.0
	for e := 0; e < len(want)/size; e++ {
		peak = math.Max(peak, math.Abs(decode(out, want[e*size:])))
	}
	mc := whole.M / chunks
	for c := range chunks {
		for j := range whole.N {
			for i := range mc {
				g := decode(out, got[(c*mc*whole.N+i+j*mc)*size:])
				w := decode(out, want[(c*mc+i+j*whole.M)*size:])
				if math.Abs(g-w) > 2*ulp*math.Abs(w)+1e-3*peak || math.IsNaN(g) != math.IsNaN(w) {
					return fmt.Errorf("GEMM %dx%dx%d %s in %d chunks on GPU %d: row %d column %d is %g, the unchunked GEMM gives %g", whole.M, whole.N, whole.K, whole.DType, chunks, dev, c*mc+i, j, g, w)
				}
			}
		}
	}
	return nil
}

// checkCollectiveFrom checks chunk c of a collective on every rank: the
// output rank r received against the result computed from every rank's
// input (bf16), exactly for copies and within the rounding of the sums'
// terms for reductions; with ownInPlace, an all-to-all's blocks from the
// peers only (each rank's own stays in its input).
func checkCollectiveFrom(c collective, ranks int, chunk int64, ins, outs [][]byte, ownInPlace bool) error {
	sendN, recvN := sendElems(c, ranks), recvElems(c, ranks)
	val := func(buf []byte, e int64) float64 { return decode(scenarios.BF16, buf[2*e:]) }
	for r := range ranks {
		if outs[r] == nil {
			continue // another process's GPU: that rank checks it
		}
		for e := range recvN {
			if ownInPlace && e/c.Count == int64(r) {
				continue // rank r's own block, used in its send buffer
			}
			var want, mag float64
			switch c.Kind {
			case scenarios.AllGather:
				want = val(ins[e/c.Count], chunk*sendN+e%c.Count)
			case scenarios.AllToAll:
				want = val(ins[e/c.Count], chunk*sendN+int64(r)*c.Count+e%c.Count)
			case scenarios.ReduceScatter, scenarios.AllReduce:
				at := chunk*sendN + e
				if c.Kind == scenarios.ReduceScatter {
					at += int64(r) * c.Count
				}
				for q := range ranks {
					v := val(ins[q], at)
					want += v
					mag += math.Abs(v)
				}
			}
			got := val(outs[r], chunk*recvN+e)
			if math.Abs(got-want) > float64(ranks)*mag/256 || math.IsNaN(got) {
				return fmt.Errorf("%s chunk %d on %d GPUs: rank %d element %d is %g, want %g", c.Kind, chunk, ranks, r, e, got, want)
			}
		}
	}
	return nil
}
