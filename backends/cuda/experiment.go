package cuda

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// prepared holds one scenario's device buffers, reused across runs.
type prepared struct {
	key  string
	gpus int
	// GEMM operands and output, or stream op input and output, per device.
	a, bm, d []bufID
	// Collective buffers per device.
	send, recv []bufID
	gemm       gemmSpec
	coll       collective
	streamOp   int64 // bytes of the stream op (0 for a GEMM)
	// events per device: start, compute start/end, comm start/end.
	ev [][5]eventID
	// copyDone[dev][engine] mark copy-engine transfers done; reduceDone[dev]
	// marks a copy-engine reduction's kernel done.
	copyDone   [][]eventID
	copyStart  [][]eventID
	reduceDone []eventID
	// staging[dev] receives the peers' blocks of a copy-engine reduction;
	// pipeSync[dev] holds a pipelined reduction's flags and counters, and
	// pipeSeq numbers its calls since the experiment cleared them.
	staging  []bufID
	pipeSync []bufID
	pipeSeq  uint32
	// ceFlags[dev] are GPU dev's ordering flags of a copy-engine
	// collective between processes (proc_ipc.go); flagsDirty says they
	// must be cleared before the next run uses them.
	ceFlags    []bufID
	flagsDirty bool
	// ceSend, ceRecv are symmetric-memory copies of the collective's
	// buffers for NCCL's copy-engine path; ceWindows says for which
	// communicator configs each ([0] send, [1] receive) is registered.
	ceSend, ceRecv []bufID
	ceWindows      map[commSpec][2]bool
	// hostOp is set when the comm op is a host copy; host[dev] are its
	// buffers (hostcopy.go), and send and recv stay empty.
	hostOp scenarios.CommOp
	host   []*hostBufs
	// graph is set for a format-2 scenario (graph.go); the fields above
	// then stay empty.
	graph *graphPrep
}

const (
	evStart = iota
	evCompStart
	evCompEnd
	evCommStart
	evCommEnd
)

// preparedKey identifies the buffers a scenario needs.
func preparedKey(sc scenarios.Scenario) string {
	return fmt.Sprintf("%d|%+v|%+v", sc.GPUs, sc.Compute, sc.Comm)
}

// commCount is the element count NCCL takes for the scenario's collective.
func commCount(c scenarios.CommOp, gpus int) (int64, error) {
	b := int64(c.Bytes)
	if b%2 != 0 {
		return 0, fmt.Errorf("comm bytes %d is odd; collectives move bf16 elements (2 bytes)", b)
	}
	n := b / 2
	if c.Collective == scenarios.AllToAll {
		if n%int64(gpus) != 0 {
			return 0, fmt.Errorf("an all-to-all of %d bytes does not split into %d equal bf16 blocks", b, gpus)
		}
		n /= int64(gpus)
	}
	return n, nil
}

// prepare allocates (once per scenario shape) and fills the buffers,
// checking first that they fit in every GPU's free memory. A shape that
// fails part way is released at once, not kept half made for the next run.
func (b *Backend) prepare(sc scenarios.Scenario) (_ *prepared, err error) {
	key := preparedKey(sc)
	if b.prepared != nil && b.prepared.key == key {
		return b.prepared, nil
	}
	if err := b.release(); err != nil {
		return nil, err
	}
	if sc.GPUs > len(b.devs) {
		return nil, fmt.Errorf("scenario %s needs %d GPUs; this node has %d", sc.Name, sc.GPUs, len(b.devs))
	}
	hostCopy := sc.Comm.Collective.IsHostCopy()
	var count int64
	if hostCopy {
		err = hostCopyCheck(sc.Comm)
		count = int64(sc.Comm.Bytes) / 2
	} else {
		count, err = commCount(sc.Comm, sc.GPUs)
	}
	if err != nil {
		return nil, err
	}
	p := &prepared{key: key, gpus: sc.GPUs, coll: collective{Kind: sc.Comm.Collective, Count: count}}
	if hostCopy {
		p.hostOp = sc.Comm
	}
	compute := sc.Compute
	var perDev int64
	switch compute.Kind {
	case scenarios.GEMM:
		p.gemm = gemmSpec{M: compute.M, N: compute.N, K: compute.K, DType: compute.DType}
		sz := compute.DType.Size()
		perDev += int64(compute.K)*int64(compute.M)*sz + int64(compute.K)*int64(compute.N)*sz +
			int64(compute.M)*int64(compute.N)*outputType(compute.DType).Size() + maxGEMMWorkspace
	case scenarios.Stream:
		if compute.Bytes%16 != 0 {
			return nil, fmt.Errorf("stream op of %d bytes: the kernel moves 16-byte words; use a multiple of 16", int64(compute.Bytes))
		}
		p.streamOp = int64(compute.Bytes)
		perDev += 2 * p.streamOp
	}
	sendN, recvN := sendElems(p.coll, sc.GPUs), recvElems(p.coll, sc.GPUs)
	if hostCopy {
		perDev += hostDeviceBytes(sc.Comm)
	} else {
		perDev += 2 * (sendN + recvN)
	}
	for dev := range sc.GPUs {
		free, err := b.g.FreeMemory(dev)
		if err != nil {
			return nil, err
		}
		// Leave room for NCCL's and cuBLASLt's own allocations.
		if need := perDev + 1<<30; need > free {
			return nil, fmt.Errorf("scenario %s needs %.1f GiB on GPU %d but %.1f GiB is free; pick smaller sizes", sc.Name, float64(need)/(1<<30), dev, float64(free)/(1<<30))
		}
	}
	b.prepared = p // release frees whatever was allocated, even on failure
	defer func() {
		if err != nil {
			b.release() // the error that stopped it is the one to report
		}
	}()
	alloc := func(dev int, bytes int64, data []byte) (bufID, error) {
		id, err := b.g.Alloc(dev, bytes)
		if err != nil {
			return 0, fmt.Errorf("allocating %d bytes on GPU %d: %w", bytes, dev, err)
		}
		if data != nil {
			if err := b.g.Upload(id, data); err != nil {
				b.g.Free(id) // not in p yet: release would not see it
				return 0, err
			}
		}
		return id, nil
	}
	for dev := range sc.GPUs {
		var ids [5]bufID
		var err error
		switch compute.Kind {
		case scenarios.GEMM:
			sz := compute.DType.Size()
			aN, bN := int64(compute.K)*int64(compute.M), int64(compute.K)*int64(compute.N)
			// Random full-mantissa operands for timing; verify checks
			// the GEMM on exactly representable ones in buffers of its own.
			if ids[0], err = alloc(dev, aN*sz, timingOperandBytes(compute.DType, dev, 0, aN)); err == nil {
				p.a = append(p.a, ids[0])
				if ids[1], err = alloc(dev, bN*sz, timingOperandBytes(compute.DType, dev, 1, bN)); err == nil {
					p.bm = append(p.bm, ids[1])
					if ids[2], err = alloc(dev, int64(compute.M)*int64(compute.N)*outputType(compute.DType).Size(), nil); err == nil {
						p.d = append(p.d, ids[2])
					}
				}
			}
		case scenarios.Stream:
			if ids[0], err = alloc(dev, p.streamOp, nil); err == nil {
				p.a = append(p.a, ids[0])
				if ids[2], err = alloc(dev, p.streamOp, nil); err == nil {
					p.d = append(p.d, ids[2])
				}
			}
		}
		if err != nil {
			return nil, err
		}
		if hostCopy {
			if err := b.prepareHostCopy(p, sc.Comm, dev); err != nil {
				return nil, err
			}
		} else {
			if ids[3], err = alloc(dev, 2*sendN, sendBytes(dev, sendN)); err != nil {
				return nil, err
			}
			p.send = append(p.send, ids[3])
			if ids[4], err = alloc(dev, 2*recvN, nil); err != nil {
				return nil, err
			}
			p.recv = append(p.recv, ids[4])
		}
		var ev [5]eventID
		for i := range ev {
			if ev[i], err = b.g.Event(dev); err != nil {
				return nil, err
			}
		}
		p.ev = append(p.ev, ev)
	}
	return p, nil
}

// release frees the prepared buffers (events are kept by the gpu until Close).
func (b *Backend) release() error {
	p := b.prepared
	b.prepared = nil
	if p == nil {
		return nil
	}
	var errs []error
	for _, ids := range [][]bufID{p.a, p.bm, p.d, p.send, p.recv, p.staging, p.pipeSync, p.ceSend, p.ceRecv, p.ceFlags} {
		for _, id := range ids {
			errs = append(errs, b.g.Free(id))
		}
	}
	if p.graph != nil {
		errs = append(errs, b.releaseGraph(p.graph))
	}
	for _, hb := range p.host {
		for _, id := range []bufID{hb.fromHost, hb.toDev, hb.fromDev, hb.toHost} {
			if id != 0 {
				errs = append(errs, b.g.Free(id))
			}
		}
	}
	return errors.Join(errs...)
}

// plan is how one experiment maps onto streams and library settings.
type plan struct {
	computeStreams, commStreams []streamID
	gemm                        gemmSpec
	coll                        collective
	// dma is set when the collective runs on the copy engines, and for a
	// p2p-load all-reduce's gather.
	dma *dmaPlan
	// peer is set for a p2p-load reduction (peerload.go).
	peer *peerPlan
	// send and recv are the collective's buffers per rank (symmetric-memory
	// ones for NCCL's copy-engine path).
	send, recv []bufID
	// hostCTAs is the SM copy kernel's CTA count for a host copy on the SMs.
	hostCTAs int
}

// strategyPlan applies a strategy: stream priorities, SM partitions (green
// contexts), the GEMM's SM target and the communicator's CTA cap.
func (b *Backend) strategyPlan(p *prepared, st scenarios.Strategy) (plan, error) {
	st = st.Normalize()
	sms := b.devs[0].SMs
	compPart, commPart, err := b.partitions(st)
	if err != nil {
		return plan{}, err
	}
	pl := plan{gemm: p.gemm, coll: p.coll, send: p.send, recv: p.recv}
	pl.coll.Comm = commSpec{MaxCTAs: st.CommCTAs, Ranks: p.gpus}
	if st.CommEngine == scenarios.EngineNCCLCE {
		if !p.coll.Kind.IsPureCopy() {
			return plan{}, fmt.Errorf("NCCL's copy-engine path covers all-gather and all-to-all, not %s", p.coll.Kind)
		}
		pl.coll.Comm.CTAPolicy = 2
		if err := b.symmetricSetup(p, pl.coll.Comm); err != nil {
			return plan{}, err
		}
		pl.send, pl.recv = p.ceSend, p.ceRecv
	}
	pl.gemm.SMTarget = gemmSMTarget(sms, st, compPart)
	for dev := range p.gpus {
		cs, err := b.stream(dev, backends.OpCompute, streamSpec{Priority: 0, Partition: compPart})
		if err != nil {
			return plan{}, fmt.Errorf("compute stream on GPU %d: %w", dev, err)
		}
		ms, err := b.stream(dev, backends.OpComm, streamSpec{Priority: st.CommPriority, Partition: commPart})
		if err != nil {
			return plan{}, fmt.Errorf("comm stream on GPU %d: %w", dev, err)
		}
		pl.computeStreams = append(pl.computeStreams, cs)
		pl.commStreams = append(pl.commStreams, ms)
	}
	if st.CommEngine == scenarios.EngineDMA {
		d, err := b.dmaSetup(p, st)
		if err != nil {
			return plan{}, err
		}
		pl.dma = d
	} else if st.CommEngine == scenarios.EngineP2PLoad {
		if p.hostOp.Collective != "" {
			return plan{}, fmt.Errorf("comm_engine p2p-load runs reduce-scatter and all-reduce, not a host copy (%s); use sm or dma", p.hostOp.Collective)
		}
		pp, d, err := b.peerSetup(p, st)
		if err != nil {
			return plan{}, err
		}
		pl.peer, pl.dma = pp, d
	} else if p.hostOp.Collective != "" {
		pl.hostCTAs = hostCopyCTAs(st)
	}
	return pl, nil
}

// rolePartitions applies a strategy's SM partitions: the compute side's
// and the communication side's (partition{} for the whole GPU).
func rolePartitions(sms int, st scenarios.Strategy) (compPart, commPart partition, err error) {
	switch {
	case st.CommSMs > 0 && st.ComputeSMs > 0:
		// The compute op's partition is the aligned group, the
		// collective's the rest of the same split.
		if st.CommSMs+st.ComputeSMs != sms {
			return partition{}, partition{}, fmt.Errorf("with both comm_sms and compute_sms the cuda backend splits the GPU in two: comm_sms must be the %d SMs compute_sms %d leaves, not %d", sms-st.ComputeSMs, st.ComputeSMs, st.CommSMs)
		}
		compPart = partition{GroupSMs: st.ComputeSMs}
		commPart = partition{GroupSMs: st.ComputeSMs, Rest: true}
	case st.CommSMs > 0:
		commPart = partition{GroupSMs: st.CommSMs}
		compPart = partition{GroupSMs: st.CommSMs, Rest: true}
	case st.ComputeSMs > 0:
		compPart = partition{GroupSMs: st.ComputeSMs}
	}
	return compPart, commPart, nil
}

// partitions is rolePartitions on this backend's GPUs; with
// structuredRest (a probe) a compute op on the rest of a split runs on a
// structured group split again out of that rest: as many SMs as the
// partition granularity allows (112 of the 116 a 16-SM comm partition
// leaves on an H200).
func (b *Backend) partitions(st scenarios.Strategy) (compPart, commPart partition, err error) {
	d := b.devs[0]
	if compPart, commPart, err = rolePartitions(d.SMs, st); err != nil || !b.structuredRest {
		return compPart, commPart, err
	}
	if step := max(d.SMStep, 1); compPart.Rest && compPart.GroupSMs > 0 {
		compPart.Structured = (d.SMs - compPart.GroupSMs) / step * step
	}
	return compPart, commPart, nil
}

// gemmSMTarget is the cuBLASLt SM count target a strategy gives GEMMs:
// its own, else the SMs of the compute partition (0: the whole GPU).
func gemmSMTarget(sms int, st scenarios.Strategy, compPart partition) int {
	if st.GEMMSMTarget != 0 {
		return st.GEMMSMTarget
	}
	switch {
	case compPart.Structured > 0:
		return compPart.Structured
	case compPart.GroupSMs > 0 && compPart.Rest:
		return sms - compPart.GroupSMs
	case compPart.GroupSMs > 0:
		return compPart.GroupSMs
	}
	return 0
}

// symmetricSetup allocates (once per scenario) the symmetric-memory copies
// of the collective's buffers, fills the send side, and registers both as
// windows of the communicators of spec (once per spec and buffer list). A
// failure leaves nothing half made: the buffers of a failed allocation are
// freed, and a list whose windows were registered is not registered again.
func (b *Backend) symmetricSetup(p *prepared, spec commSpec) error {
	if len(p.ceSend) == 0 {
		var send, recv []bufID
		free := func() {
			for _, id := range append(send, recv...) {
				b.g.Free(id)
			}
		}
		sendN, recvN := sendElems(p.coll, p.gpus), recvElems(p.coll, p.gpus)
		for dev := range p.gpus {
			s, err := b.g.AllocSymmetric(dev, 2*sendN)
			if err != nil {
				free()
				return fmt.Errorf("symmetric memory on GPU %d: %w", dev, err)
			}
			send = append(send, s)
			if err := b.g.Upload(s, sendBytes(dev, sendN)); err != nil {
				free()
				return err
			}
			r, err := b.g.AllocSymmetric(dev, 2*recvN)
			if err != nil {
				free()
				return fmt.Errorf("symmetric memory on GPU %d: %w", dev, err)
			}
			recv = append(recv, r)
		}
		p.ceSend, p.ceRecv = send, recv
	}
	if p.ceWindows == nil {
		p.ceWindows = map[commSpec][2]bool{}
	}
	done := p.ceWindows[spec]
	for i, bufs := range [][]bufID{p.ceSend, p.ceRecv} {
		if done[i] {
			continue
		}
		if err := b.g.RegisterWindows(spec, bufs); err != nil {
			return err
		}
		done[i] = true
		p.ceWindows[spec] = done
	}
	return nil
}

// stream returns (creating once) a stream of a given spec.
func (b *Backend) stream(dev int, op backends.Op, spec streamSpec) (streamID, error) {
	k := streamKey{dev, op, spec}
	if s, ok := b.streams[k]; ok {
		return s, nil
	}
	s, err := b.g.Stream(dev, spec)
	if err != nil {
		return 0, err
	}
	b.streams[k] = s
	return s, nil
}

// checkGEMMOn runs the plan's GEMM once on GPU dev on check operands
// (values every element type represents exactly, in buffers allocated for
// the check and freed after it) and leaves the output in p.d[dev].
func (b *Backend) checkGEMMOn(p *prepared, pl plan, dev int) error {
	g := pl.gemm
	sz := g.DType.Size()
	var bufs []bufID
	defer func() {
		for _, id := range bufs {
			b.g.Free(id)
		}
	}()
	for which, n := range []int64{int64(g.K) * int64(g.M), int64(g.K) * int64(g.N)} {
		id, err := b.g.Alloc(dev, n*sz)
		if err != nil {
			return fmt.Errorf("allocating the GEMM check operands on GPU %d: %w", dev, err)
		}
		bufs = append(bufs, id)
		if err := b.g.Upload(id, operandBytes(g.DType, dev, which, n)); err != nil {
			return err
		}
	}
	if err := b.g.GEMM(pl.computeStreams[dev], g, bufs[0], bufs[1], p.d[dev]); err != nil {
		return err
	}
	return b.g.Synchronize(dev)
}

// verify runs each op once and checks its output before anything is timed;
// a configuration that passed is not checked again.
func (b *Backend) verify(p *prepared, pl plan, mode backends.Mode) error {
	if mode != backends.ModeComm && p.streamOp == 0 {
		// The math does not depend on the SM target; one check per shape.
		shape := pl.gemm
		shape.SMTarget = 0
		key := fmt.Sprintf("gemm %+v", shape)
		if !b.verified[key] {
			for dev := range p.gpus {
				if !b.mine(dev) {
					continue // that rank checks its own
				}
				if err := b.checkGEMMOn(p, pl, dev); err != nil {
					return err
				}
				out := make([]byte, int64(pl.gemm.M)*int64(pl.gemm.N)*outputType(pl.gemm.DType).Size())
				if err := b.g.Download(p.d[dev], out); err != nil {
					return err
				}
				if err := checkGEMM(pl.gemm, dev, out); err != nil {
					return fmt.Errorf("the GEMM gave a wrong result, so it is not timed: %w", err)
				}
			}
			b.verified[key] = true
		}
	}
	if mode != backends.ModeCompute && p.hostOp.Collective != "" {
		key := fmt.Sprintf("host %s dma %v ctas %d", p.hostOp, pl.dma.key(), pl.hostCTAs)
		if !b.verified[key] {
			if err := b.verifyHostCopy(p, pl); err != nil {
				return err
			}
			b.verified[key] = true
		}
		return nil
	}
	if mode != backends.ModeCompute {
		key := fmt.Sprintf("coll %+v dma %v peer %v", pl.coll, pl.dma.key(), pl.peer.key())
		if !b.verified[key] {
			if pl.dma != nil && pl.coll.Kind.IsPureCopy() {
				// In place: each rank's own shard (all-gather) or own block
				// (all-to-all) sits where the output wants it before the
				// timed runs, which move peer data only.
				for dev := range p.gpus {
					n := 2 * pl.coll.Count
					srcOff := int64(0)
					if pl.coll.Kind == scenarios.AllToAll {
						srcOff = int64(dev) * n
					}
					if err := b.g.CopyPeer(p.recv[dev], int64(dev)*n, p.send[dev], srcOff, n, pl.commStreams[dev]); err != nil {
						return err
					}
				}
			}
			if err := b.commOnce(p, pl); err != nil {
				return err
			}
			out := make([]byte, 2*recvElems(pl.coll, p.gpus))
			for dev := range p.gpus {
				if !b.mine(dev) {
					continue // that rank checks its own
				}
				if err := b.g.Download(pl.recv[dev], out); err != nil {
					return err
				}
				if err := checkCollective(pl.coll, p.gpus, dev, out); err != nil {
					return fmt.Errorf("the collective gave a wrong result, so it is not timed: %w", err)
				}
			}
			b.verified[key] = true
		}
	}
	return nil
}

// commOnce runs the comm op (a collective or a host copy) once, untimed,
// from its start event on every GPU, and waits for it: what verification
// checks.
func (b *Backend) commOnce(p *prepared, pl plan) error {
	for dev := range p.gpus {
		if err := b.g.Record(p.ev[dev][evCommStart], pl.commStreams[dev]); err != nil {
			return err
		}
	}
	if err := b.collective(p, pl); err != nil {
		return err
	}
	for dev := range p.gpus {
		if err := b.g.Synchronize(dev); err != nil {
			return err
		}
	}
	return nil
}

// run is one experiment on the worker goroutine.
func (b *Backend) run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if ex.Scenario.IsGraph() {
		return b.runGraph(ctx, ex, sink)
	}
	p, err := b.prepare(ex.Scenario)
	var pl plan
	if err == nil {
		pl, err = b.strategyPlan(p, ex.Strategy)
	}
	if err := b.agree(ctx, "setup", err); err != nil {
		return backends.RunResult{}, err
	}
	if b.proc != nil && (pl.dma != nil || pl.peer != nil) && p.hostOp.Collective == "" {
		// Copy engines or p2p-load between processes: map the peers'
		// buffers (for p2p-load the send buffers its kernel loads too).
		if err := b.ipcMap(ctx, p, pl.peer != nil); err != nil {
			return backends.RunResult{}, err
		}
	}
	if err := b.agree(ctx, "verification", b.verify(p, pl, ex.Mode)); err != nil {
		return backends.RunResult{}, err
	}
	// A pipelined reduction's kernel that gave up waiting for its copies
	// leaves a sticky status word: checked after verification (a clearer
	// reason than a wrong result) and after the timed repetitions.
	pipelined := pl.dma != nil && pl.dma.pipe != nil && ex.Mode != backends.ModeCompute
	if pipelined {
		if err := b.pipeStatus(p); err != nil {
			return backends.RunResult{}, err
		}
	}
	res := backends.RunResult{Mode: ex.Mode}
	err = b.repeat(ctx, ex.Warmup, ex.Reps, func(gated bool) (func(i int), error) {
		rep, spans, err := b.rep(ctx, p, pl, ex, gated)
		skew := b.startSkew()
		return func(i int) {
			res.Reps = append(res.Reps, rep)
			if skew >= 0 {
				res.StartSkews = append(res.StartSkews, skew)
			}
			if sink != nil {
				for k := range spans {
					spans[k].Rep = i
				}
				sink.Spans(spans)
				if pl.dma != nil {
					sink.Samples(copyEngineSamples(spans, b.devs[0].CopyEngines, i))
				}
			}
		}, err
	})
	if err != nil {
		return backends.RunResult{}, err
	}
	if pipelined {
		if err := b.pipeStatus(p); err != nil {
			return backends.RunResult{}, err
		}
	}
	return res, nil
}

// rep enqueues one repetition on every GPU, waits for it (aborting the
// collective if it hangs) and reads the event times.
//
// On each GPU a start event is recorded on the stream of the op launched
// first, and the other stream waits for it, so both ops share a start; the
// ops are enqueued in launch order, each between its own start and end
// events. Op times run from the shared start to the op's end (queueing
// included); the wall time is the later of the two, the slowest GPU's.
//
// Ungated, the start event fires as soon as it is enqueued, so the host's
// time to launch the first op (tens of microseconds for a cuBLASLt call)
// falls inside the times. Gated, the first stream of every GPU waits on the
// start gate before the start event, and the gate opens once all ops are
// enqueued: the launch latency leaves the times and all GPUs start
// together. A watchdog opens the gate if enqueuing stalls (see
// Options.Ungated); the repetition then fails with errGateStalled.
func (b *Backend) rep(ctx context.Context, p *prepared, pl plan, ex backends.Experiment, gated bool) (backends.Rep, []backends.Span, error) {
	runCompute := ex.Mode != backends.ModeComm
	runComm := ex.Mode != backends.ModeCompute
	commFirst := ex.Strategy.Normalize().Launch == scenarios.CommFirst || !runCompute
	g := b.g
	if b.primeCopies && runComm {
		if err := b.primeCopyStreams(p, pl); err != nil {
			return backends.Rep{}, nil, err
		}
	}
	gate := b.startRep(ctx, gated)
	defer gate.close()
	for dev := range p.gpus {
		first, second := pl.computeStreams[dev], pl.commStreams[dev]
		if commFirst {
			first, second = second, first
		}
		if gated {
			if err := g.GateWait(first, b.gateVal); err != nil {
				return backends.Rep{}, nil, err
			}
		}
		if err := g.Record(p.ev[dev][evStart], first); err != nil {
			return backends.Rep{}, nil, err
		}
		if runCompute && runComm {
			if err := g.Wait(second, p.ev[dev][evStart]); err != nil {
				return backends.Rep{}, nil, err
			}
		}
	}
	launchCompute := func() error {
		for dev := range p.gpus {
			s := pl.computeStreams[dev]
			if err := g.Record(p.ev[dev][evCompStart], s); err != nil {
				return err
			}
			var err error
			if p.streamOp > 0 {
				err = g.StreamOp(s, p.a[dev], p.d[dev], p.streamOp)
			} else {
				err = g.GEMM(s, pl.gemm, p.a[dev], p.bm[dev], p.d[dev])
			}
			if err != nil {
				return err
			}
			if err := g.Record(p.ev[dev][evCompEnd], s); err != nil {
				return err
			}
		}
		return nil
	}
	launchComm := func() error {
		for dev := range p.gpus {
			if err := g.Record(p.ev[dev][evCommStart], pl.commStreams[dev]); err != nil {
				return err
			}
		}
		if err := b.collective(p, pl); err != nil {
			return err
		}
		for dev := range p.gpus {
			if err := g.Record(p.ev[dev][evCommEnd], pl.commStreams[dev]); err != nil {
				return err
			}
		}
		return nil
	}
	steps := []func() error{}
	if commFirst {
		if runComm {
			steps = append(steps, launchComm)
		}
		if runCompute {
			steps = append(steps, launchCompute)
		}
	} else {
		steps = append(steps, launchCompute)
		if runComm {
			steps = append(steps, launchComm)
		}
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return backends.Rep{}, nil, err // the deferred OpenGate releases what was enqueued
		}
	}
	stalled := gate.release()
	werr := b.wait(ctx, p, runCompute, runComm)
	if b.proc != nil {
		// Every rank's times, start stamp and gate verdict (or failure).
		stalled, werr = b.proc.settle(ctx, gate, werr)
	}
	if werr != nil {
		return backends.Rep{}, nil, werr
	}
	if stalled {
		return backends.Rep{}, nil, errGateStalled
	}
	var rep backends.Rep
	var spans []backends.Span
	// opSpan is each op's first start and last end across GPUs (the
	// pair's graph: op 0 compute, op 1 comm).
	opSpan := [2][2]int64{{math.MaxInt64, 0}, {math.MaxInt64, 0}}
	for dev := range p.gpus {
		ev := p.ev[dev]
		if runCompute {
			s, e, err := b.span(ev[evStart], ev[evCompStart], ev[evCompEnd])
			if err != nil {
				return backends.Rep{}, nil, err
			}
			rep.Compute = max(rep.Compute, e)
			opSpan[0] = [2]int64{min(opSpan[0][0], s), max(opSpan[0][1], e)}
			spans = append(spans, backends.Span{Op: backends.OpCompute, GraphOp: string(scenarios.RoleCompute), Name: ex.Scenario.Compute.String(), Device: dev, Track: "compute", Kind: "kernel", Start: s, End: e})
		}
		if runComm {
			s, e, err := b.span(ev[evStart], ev[evCommStart], ev[evCommEnd])
			if err != nil {
				return backends.Rep{}, nil, err
			}
			rep.Comm = max(rep.Comm, e)
			opSpan[1] = [2]int64{min(opSpan[1][0], s), max(opSpan[1][1], e)}
			name, kind := "nccl "+ex.Scenario.Comm.String(), "kernel"
			switch {
			case p.hostOp.Collective != "":
				name, kind = hostCopySpanName(p.hostOp, pl)
			case pl.peer != nil:
				name, kind = "p2p-load "+ex.Scenario.Comm.String(), "kernel"
			case pl.dma != nil:
				name, kind = "copy-engine "+ex.Scenario.Comm.String(), "copy"
			case pl.coll.Comm.CTAPolicy == 2:
				name, kind = "nccl-ce "+ex.Scenario.Comm.String(), "copy"
			}
			spans = append(spans, backends.Span{Op: backends.OpComm, GraphOp: string(scenarios.RoleComm), Name: name, Device: dev, Track: "comm", Kind: kind, Start: s, End: e})
			if pl.dma != nil {
				// One span per copy stream: from when its first copy could
				// start to its last copy's end (for an all-reduce, across
				// both copy phases). Track ceN is copy stream N; the driver
				// maps streams onto the GPU's copy engines.
				for k := range pl.dma.started[dev] {
					s, e, err := b.span(ev[evStart], pl.dma.started[dev][k], pl.dma.done[dev][k])
					if err != nil {
						return backends.Rep{}, nil, err
					}
					if e <= s {
						continue // a stream that had nothing to copy
					}
					spans = append(spans, backends.Span{Op: backends.OpComm, Name: fmt.Sprintf("copies %s", ex.Scenario.Comm), Device: dev,
						Track: fmt.Sprintf("ce%d", k), Kind: "copy", Start: s, End: e})
				}
				if !pl.coll.Kind.IsPureCopy() {
					// The reduction kernel: from the collective's start,
					// so the wait for its SMs (or its copies) shows.
					s, e, err := b.span(ev[evStart], ev[evCommStart], p.reduceDone[dev])
					if err != nil {
						return backends.Rep{}, nil, err
					}
					spans = append(spans, backends.Span{Op: backends.OpComm, Name: "reduce " + ex.Scenario.Comm.String(), Device: dev,
						Track: "reduce", Kind: "kernel", Start: s, End: e})
				}
			}
		}
	}
	if b.tracer != nil {
		spans = append(spans, b.cuptiTimeline(gate.t0, p.gpus)...)
	}
	rep.Wall = max(rep.Compute, rep.Comm)
	rep.Ops = make([]int64, 2)
	for i, ran := range []bool{runCompute, runComm} {
		if ran {
			rep.Ops[i] = opSpan[i][1] - opSpan[i][0]
		}
	}
	return rep, spans, nil
}

// mine reports whether GPU dev's results are read in this process: every
// GPU's, but with one process per GPU only its rank's.
func (b *Backend) mine(dev int) bool { return b.proc == nil || dev == b.proc.peers.Rank() }

// agree makes, with one process per GPU, every rank go on or every rank
// stop with the failures of any; otherwise it is err.
func (b *Backend) agree(ctx context.Context, stage string, err error) error {
	if b.proc == nil {
		return err
	}
	return b.proc.agree(ctx, stage, err)
}

// startSkew is the last repetition's start skew between processes (ns),
// -1 when it was not measured.
func (b *Backend) startSkew() int64 {
	if b.proc == nil {
		return -1
	}
	return b.proc.lastSkew
}

// repeat runs warm untimed and then reps timed repetitions, each by one
// (gated: whether the start gate holds the GPUs while it enqueues; warm-up
// runs are not gated). A repetition that finished keeps its figures
// through the returned func, called with its index. One whose gate stalled
// (the host stalled while the gate held the GPUs, so its times hold the
// stall) is run again; after maxGateStalls stalls the rest run ungated.
func (b *Backend) repeat(ctx context.Context, warm, reps int, one func(gated bool) (func(i int), error)) error {
	gate, stalls := !b.opts.Ungated, 0
	for i := -warm; i < reps; i++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		keep, err := one(gate && i >= 0)
		if errors.Is(err, errGateStalled) {
			b.gateStalls++
			if stalls++; stalls >= maxGateStalls {
				gate = false
			}
			i--
			continue
		}
		if err != nil {
			return err
		}
		if i >= 0 {
			keep(i)
		}
	}
	return nil
}

// repGate is one repetition's start: the tracer's earlier copies dropped
// and, for a gated repetition, the start gate armed with its watchdog.
type repGate struct {
	b        *Backend
	gated    bool
	v        uint32
	watchdog *time.Timer
	// t0 is the tracer's clock when the GPUs were released (0 without a
	// tracer).
	t0 uint64
	// One process per GPU: ctx is the run's, released says this rank
	// arrived at the ranks' gate, err why arriving failed.
	ctx      context.Context
	released bool
	err      error
}

// startRep begins a repetition. close must be deferred: whatever happens,
// the gate is open when the repetition returns.
func (b *Backend) startRep(ctx context.Context, gated bool) *repGate {
	rg := &repGate{b: b, gated: gated, ctx: ctx}
	if b.tracer != nil {
		b.tracer.Take() // drop copies and kernels of earlier work (verification, say)
		b.tracer.TakeKernels()
		if !gated {
			rg.t0 = b.tracer.Now()
		}
	}
	if gated {
		b.gateVal++
		rg.v = b.gateVal
		g := b.g
		open := func() { g.OpenGate(rg.v) }
		if b.proc != nil {
			// The ranks' gate: a stall opens it for every rank, and every
			// rank runs the repetition again.
			gate := b.proc.gate
			open = func() { gate.stall(rg.v) }
		}
		rg.watchdog = time.AfterFunc(time.Duration(b.opts.GateStallNanos), open)
	}
	return rg
}

// release opens the gate once everything is enqueued and reports whether
// the watchdog had opened it first (the host stalled while it held the
// GPUs, so the repetition's times hold the stall).
func (rg *repGate) release() (stalled bool) {
	if !rg.gated {
		return false
	}
	// Stop fails once the watchdog has fired: it opened the gate while
	// the host was still enqueuing.
	stalled = !rg.watchdog.Stop()
	if rg.b.tracer != nil {
		rg.t0 = rg.b.tracer.Now()
	}
	if p := rg.b.proc; p != nil {
		// The last rank to arrive opens every rank's gate; whether any
		// stalled comes out of the repetition's exchange.
		rg.released = true
		rg.err = p.gate.arrive(rg.ctx, rg.v)
		return false
	}
	rg.b.g.OpenGate(rg.v)
	return stalled
}

// close opens the gate if it is still shut (an error before release).
func (rg *repGate) close() {
	if !rg.gated {
		return
	}
	rg.watchdog.Stop()
	if p := rg.b.proc; p != nil {
		if !rg.released {
			// Arrive all the same, so the ranks' count stays in step.
			p.gate.arrive(rg.ctx, rg.v)
			p.gate.stall(rg.v)
		}
		return
	}
	rg.b.g.OpenGate(rg.v)
}

// errGateStalled says the watchdog opened the start gate before every op
// of a gated repetition was enqueued, so its times are not clean.
var errGateStalled = errors.New("the start gate was opened by the watchdog: enqueuing stalled")

// span reads an op's start and end relative to the shared start event.
func (b *Backend) span(start, opStart, opEnd eventID) (int64, int64, error) {
	s, err := b.g.Elapsed(start, opStart)
	if err != nil {
		return 0, 0, err
	}
	e, err := b.g.Elapsed(start, opEnd)
	return max(s, 0), e, err
}

// wait polls the end events until the repetition is done. Past the
// repetition timeout the collective is declared hung: its communicators are
// aborted and an error comes back (the backend stays usable). A cancelled
// context still waits for the GPUs, so nothing is left running.
func (b *Backend) wait(ctx context.Context, p *prepared, compute, comm bool) error {
	deadline := time.Now().Add(time.Duration(b.opts.RepTimeoutNanos))
	var ends []eventID
	for dev := range p.gpus {
		if compute {
			ends = append(ends, p.ev[dev][evCompEnd])
		}
		if comm {
			ends = append(ends, p.ev[dev][evCommEnd])
		}
	}
	for _, e := range ends {
		for {
			done, err := b.g.Done(e)
			if err != nil {
				return err
			}
			if done {
				break
			}
			if time.Now().After(deadline) {
				abortErr := b.g.Abort()
				if p.ceWindows != nil {
					clear(p.ceWindows) // the aborted communicators took their windows along
				}
				return errors.Join(fmt.Errorf("a repetition did not finish within %v: the collective's communicators were aborted", time.Duration(b.opts.RepTimeoutNanos)), abortErr)
			}
			time.Sleep(20 * time.Microsecond)
		}
	}
	return ctx.Err()
}
