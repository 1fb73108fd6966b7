package sim

import (
	"fmt"
	"math"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// unlimited stands for "no cap" on resident CTAs.
const unlimited = math.MaxInt32

// streamWaves and memBoundWaves are how many waves of CTAs a streaming op
// and a memory-bound GEMM (split-K) launch: many short CTAs, as libraries
// size them, so a partial last wave costs little.
const (
	streamWaves   = 8
	memBoundWaves = 8
)

// plan is an experiment turned into engine jobs.
type plan struct {
	eng *engine
	// opJobs lists the jobs of each op; opLaunch is when each op was enqueued.
	opJobs   map[backends.Op][]*job
	opLaunch map[backends.Op]float64
	// peakTensor is the tensor peak used for tensor utilization.
	peakTensor float64
}

// build turns an experiment into a plan for one representative GPU.
func build(p Profile, ex backends.Experiment) (*plan, error) {
	sc, st := ex.Scenario, ex.Strategy.Normalize()
	pl := &plan{
		opJobs:   map[backends.Op][]*job{},
		opLaunch: map[backends.Op]float64{},
	}
	eng := &engine{p: p, flopsPerUnit: map[*job]float64{}}
	pl.eng = eng
	computeDom, commDom := partition(p, st, eng)

	runCompute := ex.Mode != backends.ModeComm
	runComm := ex.Mode != backends.ModeCompute
	first, second := 0.0, 0.0
	if runCompute && runComm {
		second = p.LaunchGap
	}
	computeAt, commAt := first, second
	computeOrder, commOrder := 0, 1
	if st.Launch == scenarios.CommFirst {
		computeAt, commAt = second, first
		computeOrder, commOrder = 1, 0
	}
	pl.peakTensor = p.PeakFLOPs[scenarios.BF16]

	if runCompute {
		j, flopsPerCTA, err := computeJob(p, sc.Compute, st, computeDom, eng)
		if err != nil {
			return nil, err
		}
		// Like every compute kernel (a graph's too), it pays its fixed
		// cost between its launch and its first CTA, holding no SM.
		j.enqueued, j.launch, j.order = computeAt, computeAt+p.KernelFixedCost, computeOrder
		eng.jobs = append(eng.jobs, j)
		eng.flopsPerUnit[j] = flopsPerCTA
		pl.opJobs[backends.OpCompute] = []*job{j}
		pl.opLaunch[backends.OpCompute] = computeAt
		if sc.Compute.Kind == scenarios.GEMM {
			pl.peakTensor = p.PeakFLOPs[sc.Compute.DType]
		}
	}
	if runComm {
		jobs := commJobs(p, sc, st, commDom, eng, commAt, commOrder)
		if comp := pl.opJobs[backends.OpCompute]; st.CommEngine == scenarios.EngineNCCLCE && computeOrder < commOrder {
			ncclCEWaitsFor(jobs, comp)
		}
		eng.jobs = append(eng.jobs, jobs...)
		pl.opJobs[backends.OpComm] = jobs
		pl.opLaunch[backends.OpComm] = commAt
	}
	return pl, nil
}

// partition creates the SM pools and returns the compute and comm domains.
func partition(p Profile, st scenarios.Strategy, eng *engine) (computeDom, commDom []int) {
	add := func(name string, n int) int {
		eng.pools = append(eng.pools, pool{name: name, size: n, free: n})
		return len(eng.pools) - 1
	}
	switch {
	case st.CommSMs > 0:
		comm := add("comm partition", st.CommSMs)
		computeSize := p.SMs - st.CommSMs
		if st.ComputeSMs > 0 {
			computeSize = st.ComputeSMs
			if rest := p.SMs - st.CommSMs - st.ComputeSMs; rest > 0 {
				add("unassigned", rest)
			}
		}
		compute := add("compute partition", computeSize)
		return []int{compute}, []int{comm}
	case st.ComputeSMs > 0:
		compute := add("compute partition", st.ComputeSMs)
		rest := add("rest", p.SMs-st.ComputeSMs)
		return []int{compute}, []int{rest, compute}
	}
	all := add("all SMs", p.SMs)
	return []int{all}, []int{all}
}

// domainSize counts the SMs in a domain.
func domainSize(eng *engine, dom []int) int {
	n := 0
	for _, i := range dom {
		n += eng.pools[i].size
	}
	return n
}

// computeJob models the compute op as a kernel of CTAs. A GEMM runs as
// its launch (Profile.GEMMLaunches, or the tile rule for a shape the table
// lacks): a persistent launch pulls tiles (or split-K slices) from a pool
// with at most one group of CTAs per SM and frees no SM before it ends;
// any other launch runs in waves of CTAs, CTAsPerSM of them to an SM, each
// group leaving its SM when its tiles are done, so that the block
// scheduler hands the SM to the most urgent, earliest pending CTA.
func computeJob(p Profile, c scenarios.ComputeOp, st scenarios.Strategy, dom []int, eng *engine) (*job, float64, error) {
	smsAvail := domainSize(eng, dom)
	maxRes := unlimited
	if st.GEMMSMTarget > 0 {
		maxRes = st.GEMMSMTarget
		smsAvail = min(smsAvail, st.GEMMSMTarget)
	}
	j := &job{
		name: c.String(), op: backends.OpCompute, track: "compute",
		domain: dom, maxResident: maxRes,
	}
	switch c.Kind {
	case scenarios.GEMM:
		l := p.gemmLaunch(c, smsAvail)
		j.tilesPerCTA = float64(l.Tiles()) / float64(max(l.GridCTAs, 1))
		if p.GEMMTiles {
			return tiledGEMMJob(p, c, st, l, smsAvail, j)
		}
		g := gemmModel(p, c, l, smsAvail)
		tiles := float64(l.Tiles())
		// The engine's CTA is one SM's worth of the kernel's CTAs (the
		// CTAsPerSM a wave puts on one SM start and end together).
		units := ceilDiv(l.GridCTAs, l.CTAsPerSM)
		perUnit := 1.0 // tiles one engine CTA does, a pooled one at a time
		if l.Persistent {
			// A persistent kernel: its CTAs pull tiles from a shared pool
			// until none is left, so it frees no SM before its end
			// (measured: a collective launched after a GEMM waits for all
			// of it; backends/cuda/NOTES.md).
			j.pooled = true
			j.ctas = min(units, max(smsAvail, 1))
			j.remaining = tiles
		} else {
			j.ctas = units
			perUnit = tiles / float64(units)
			j.jitter = true
		}
		flopsPerUnit := c.FLOPs() / tiles * perUnit
		bytesPerUnit := g.traffic / tiles * perUnit
		tensorRate := p.PeakFLOPs[c.DType] * p.gemmEfficiency(c.DType) / float64(p.SMs) / flopsPerUnit
		if st.CommSMs > 0 && st.ComputeSMs == 0 {
			// The rest side of a comm partition suits the GEMM's tiles
			// worse than an aligned group does (Profile docs).
			tensorRate *= 1 - p.RestPartitionGEMMLoss
		}
		memRate := p.SMHBMBandwidth / bytesPerUnit
		j.hbm = bytesPerUnit
		j.power = math.Min(1, memRate/tensorRate)
		if tensorRate <= memRate {
			j.ctaRate, j.privRes, j.stall = tensorRate, backends.ResTensor, p.GEMMMemoryStall
		} else {
			j.ctaRate, j.privRes = memRate, backends.ResSMs
		}
		j.l2Sensitive = g.traffic > g.ideal
		j.hbmIdeal = g.ideal / tiles * perUnit
		j.carveout = gemmCarveout(p, l)
		return j, flopsPerUnit, nil
	case scenarios.Stream:
		// An elementwise kernel of many short CTAs (streamWaves waves on the
		// SMs it may use), so it shares SMs gracefully as they free up.
		j.ctas = streamWaves * max(smsAvail, 1)
		bytesPerCTA := 2 * float64(c.Bytes) / float64(j.ctas)
		j.ctaRate = p.SMHBMBandwidth / bytesPerCTA
		j.privRes = backends.ResSMs
		j.hbm = bytesPerCTA
		// c3lab's stream kernel uses no shared memory: it leaves the SMs'
		// carveout as it finds it.
		j.carveout = carveoutKeep
		j.fillsCopySMs = true
		// It does no tensor work: its elementwise arithmetic does not
		// count towards tensor utilization.
		return j, 0, nil
	}
	return nil, 0, fmt.Errorf("compute kind %q is not modelled", c.Kind)
}

// gemmTiling is a GEMM launch's work in tiles (Profile.GEMMTiles).
type gemmTiling struct {
	// Launch is the launch, its tile the one its kernel's name gives.
	Launch GEMMLaunch
	// Parsed says the tile and K step come from the kernel's name; false:
	// the table's (or the tile rule's) tile and a K step of 64 (128 for
	// fp8), the name being absent or unreadable.
	Parsed bool
	// KStep is the K of one main-loop iteration.
	KStep int
	// CTAs is how many CTAs share the tiles at once, Rounds the tiles the
	// busiest of them computes: ceil(tiles / CTAs).
	CTAs, Rounds int
	// Main is one tile's main loop at one SM's tensor rate (ceil(K slice /
	// K step) iterations of a full tile), Mem its bytes at one SM's HBM
	// bandwidth, Epilogue the time outside the main loop.
	Main, Mem, Epilogue float64
}

// Tile is one tile's time: its main loop, bound by the tensor cores or
// by its bytes, then its epilogue.
func (t gemmTiling) Tile() float64 { return math.Max(t.Main, t.Mem) + t.Epilogue }

// tileGEMM works out a launch's tiling on sms SMs (Profile.GEMMTiles).
// tensorScale scales the tensor rate (a comm partition's rest side).
func tileGEMM(p Profile, c scenarios.ComputeOp, l GEMMLaunch, sms int, tensorScale float64) (gemmTiling, gemmShape) {
	t := gemmTiling{KStep: 64}
	if c.DType == scenarios.FP8 {
		t.KStep = 128
	}
	if kt, ok := ParseKernelName(l.Kernel); ok {
		t.Parsed, t.KStep = true, kt.KStep
		if kt.TileM != l.TileM || kt.TileN != l.TileN {
			out := ceilDiv(l.M, l.TileM) * ceilDiv(l.N, l.TileN)
			l.TileM, l.TileN = kt.TileM, kt.TileN
			if l.SplitK > 1 {
				// The table's split-K is the grid over its output tiles.
				l.SplitK = max(2, ceilDiv(l.SplitK*out, ceilDiv(l.M, l.TileM)*ceilDiv(l.N, l.TileN)))
			}
		}
	}
	t.Launch = l
	g := gemmModel(p, c, l, sms)
	tiles := l.Tiles()
	units := ceilDiv(l.GridCTAs, l.CTAsPerSM)
	if l.Persistent {
		t.CTAs = max(1, min(units, sms))
	} else {
		t.CTAs = max(1, units)
	}
	t.Rounds = ceilDiv(tiles, t.CTAs)
	steps := ceilDiv(ceilDiv(c.K, l.SplitK), t.KStep)
	perSM := p.PeakFLOPs[c.DType] * p.gemmEfficiency(c.DType) / float64(p.SMs) * tensorScale
	t.Main = float64(steps) * 2 * float64(l.TileM*l.TileN*t.KStep) / perSM
	t.Mem = g.traffic / float64(tiles) / p.SMHBMBandwidth
	t.Epilogue = p.GEMMTileEpilogue
	return t, g
}

// tiledGEMMJob fills j, a GEMM of launch l on smsAvail SMs, from its
// tiles (Profile.GEMMTiles). A persistent launch's CTAs share
// Rounds x CTAs tile slots, so that the busiest CTA's tile count sets the
// time; each slot carries an equal share of the GEMM's FLOPs and bytes.
// In a partial last round the CTAs left without a tile end and free their
// SMs (engine.tail). A launch in waves gives each CTA its tiles. Every
// CTA first spends GEMMPrologue.
func tiledGEMMJob(p Profile, c scenarios.ComputeOp, st scenarios.Strategy, l GEMMLaunch, smsAvail int, j *job) (*job, float64, error) {
	scale := 1.0
	if st.CommSMs > 0 && st.ComputeSMs == 0 {
		// The rest side of a comm partition suits the GEMM's tiles
		// worse than an aligned group does, the more so the larger its
		// kernel's clusters (Profile docs).
		scale = (1 - p.RestPartitionGEMMLoss) * restClusterScale(p, l)
	}
	t, g := tileGEMM(p, c, l, smsAvail, scale)
	tiles := float64(t.Launch.Tiles())
	var slots, perSlot float64 // work units and tiles per unit
	if t.Launch.Persistent {
		j.pooled = true
		j.ctas = t.CTAs
		slots = float64(t.Rounds * t.CTAs)
		j.remaining = slots
		perSlot = 1
		// The last round holds the tiles the full rounds leave; the CTAs
		// it leaves without one end as it starts and free their SMs (a
		// copy queued behind the GEMM ends in its tail:
		// backends/cuda/results/2026-12-03-h200x1-s15).
		if tail := t.Launch.Tiles() - (t.Rounds-1)*t.CTAs; tail < t.CTAs {
			j.tailCTAs = tail
		}
	} else {
		j.ctas = t.CTAs
		slots = float64(t.CTAs)
		perSlot = tiles / slots
		j.jitter = true
	}
	j.setup, j.firstSetup = p.GEMMPrologue, p.gemmStartDelay
	j.ctaRate = 1 / (perSlot * t.Tile())
	// A measured shape takes its measured time alone: its ratio of its
	// whole-device time where st puts it (Profile.GEMMPlacements), that
	// time its deviation from the model (Profile.GEMMWholeTimes).
	j.ctaRate *= gemmRateScale(p, c, st, t, smsAvail)
	j.power = t.Main / t.Tile()
	j.hbm = g.traffic / slots
	if t.Main >= t.Mem {
		j.privRes, j.stall = backends.ResTensor, p.GEMMMemoryStall
	} else {
		j.privRes = backends.ResSMs
	}
	j.l2Sensitive = g.traffic > g.ideal
	j.hbmIdeal = g.ideal / slots
	j.carveout = gemmCarveout(p, l)
	return j, c.FLOPs() / slots, nil
}

// gemmCarveout is what launch l's kernel leaves its SMs configured for:
// the GEMM carveout that slows the copy kernel's CTAs behind it, when its
// CTA's shared memory is above Profile.HostCopyInheritedAbove or not
// known; otherwise a configuration with room for the copy's loads in
// flight, as any other kernel's (carveoutReset).
func gemmCarveout(p Profile, l GEMMLaunch) carveoutUse {
	if p.HostCopyInheritedAbove > 0 && l.SharedBytes > 0 && l.SharedBytes <= p.HostCopyInheritedAbove {
		return carveoutReset
	}
	return carveoutGEMM
}

// restClusterScale is the tensor-rate scale of launch l's clusters on the
// rest side of a comm partition (Profile.RestClusterLoss): 1 for clusters
// of 4 CTAs or a launch whose kernel name does not give its cluster,
// (1 - RestClusterLoss) per doubling beyond 4, the inverse below.
func restClusterScale(p Profile, l GEMMLaunch) float64 {
	kt, ok := ParseKernelName(l.Kernel)
	if !ok || p.RestClusterLoss <= 0 || p.RestClusterLoss >= 1 {
		return 1
	}
	c := max(kt.ClusterM*kt.ClusterN, 2)
	return math.Pow(1-p.RestClusterLoss, math.Log2(float64(c))-2)
}

// gemmShape is the traffic model of one GEMM.
type gemmShape struct {
	traffic float64 // HBM bytes the GEMM moves
	ideal   float64 // A, B and C read or written once
	// reads and readsOnce are the A and B part of traffic and of ideal:
	// what the DRAM counters' reads are checked against
	// (TestGEMMReadsMatchDRAMCounters).
	reads, readsOnce float64
}

// gemmModel estimates a launch's HBM traffic with a wave-panel model: each
// wave of CTAs covers a near-square block of output tiles and reads the A
// row panel and B column panel of that block once; everything fits in L2
// when A and B together fit in half of it. Split-K slices write and read
// back fp32 partial sums once.
func gemmModel(p Profile, c scenarios.ComputeOp, l GEMMLaunch, sms int) gemmShape {
	b := float64(c.DType.Size())
	out := math.Max(b, 2) // fp8 GEMMs write bf16
	tm, tn, splitK := l.TileM, l.TileN, l.SplitK
	gm := ceilDiv(c.M, tm)
	gn := ceilDiv(c.N, tn)
	tiles := gm * gn
	M, N, K := float64(c.M), float64(c.N), float64(c.K)
	idealAB := (M*K + K*N) * b
	g := gemmShape{ideal: idealAB + M*N*out, readsOnce: idealAB}
	traffic := idealAB
	if idealAB > float64(p.L2Bytes)/2 {
		conc := min(tiles, sms)
		rt := min(gm, int(math.Ceil(math.Sqrt(float64(conc)))))
		ct := min(gn, ceilDiv(conc, rt))
		blocks := float64(tiles) / float64(rt*ct)
		traffic = math.Max(idealAB, blocks*float64(rt*tm+ct*tn)*K*b)
	}
	g.reads, g.traffic = traffic, traffic+M*N*out
	if splitK > 1 {
		// Partial sums in fp32 are written and read back once.
		g.traffic += M * N * 4 * 2 * float64(splitK-1) / float64(splitK)
	}
	return g
}

// commJobs models the collective: a kernel of CTAs on the SMs, or copies on
// the copy engines (plus a reduction kernel for reduce-scatter/all-reduce,
// or NCCL's own kernel ahead of its copies).
func commJobs(p Profile, sc scenarios.Scenario, st scenarios.Strategy, dom []int, eng *engine, at float64, order int) []*job {
	coll := sc.Comm.Collective
	if coll.IsHostCopy() {
		return []*job{hostCopyJob(p, sc, st, dom, at, order)}
	}
	n := sc.GPUs
	payload := sc.Comm.LinkBytes(n)
	switch st.CommEngine {
	case scenarios.EngineDMA:
		return dmaJobs(p, sc, st, dom, eng, at, order, payload)
	case scenarios.EngineNCCLCE:
		return ncclCEJobs(p, sc, st, dom, at, order, payload)
	case scenarios.EngineP2PLoad:
		return peerLoadJobs(p, sc, st, dom, eng, at, order, payload)
	}
	ctas := p.CommCTAs[coll]
	if st.CommCTAs > 0 {
		ctas = st.CommCTAs
	}
	rate, perSM, stall := CTABandwidth(p, coll, ctas), false, p.CommLatencySensitivity
	// Under the partition model (PartitionSMLinkBandwidth) a collective in
	// an SM partition of its own shares no SM, so it pays only the share
	// of the latency stall its loads queueing in HBM cost
	// (PartitionLatencyShare; the rest is paid beside other kernels' CTAs);
	// confined to fewer SMs than its CTAs it moves as one unit per SM at
	// the per-SM bandwidth.
	if bw := p.PartitionSMLinkBandwidth[coll]; bw > 0 {
		if st.CommSMs > 0 {
			stall *= p.PartitionLatencyShare[coll]
		}
		if sms := domainSize(eng, dom); sms > 0 && sms < ctas {
			ctas, rate, perSM = sms, bw, true
		}
	}
	perCTA := payload / float64(ctas)
	hbm := perCTA * p.CommHBMPerLinkByte[coll]
	if coll == scenarios.AllGather && p.CommLocalCopy {
		hbm += 2 * float64(sc.Comm.Bytes) / float64(ctas)
	}
	// The kernel's CTAs are launched at once. Its fixed cost is its
	// launch (KernelFixedCost, holding no SM, as every kernel's), then the
	// rest of CommSetup (handshakes with the peers) holding their SMs.
	j := &job{
		name: "nccl " + sc.Comm.String(), op: backends.OpComm, track: "comm", coll: coll,
		enqueued: at, launch: at + p.KernelFixedCost, setup: inKernel(p, p.CommSetup[coll]),
		ctas: ctas, maxResident: unlimited, priority: st.CommPriority, order: order,
		domain:  dom,
		ctaRate: rate / perCTA, privRes: backends.ResCTA, perSM: perSM,
		stall: stall,
		hbm:   hbm, link: perCTA / p.LinkEfficiencySM[coll],
		// It slows beside compute kernels' CTAs (Profile.CommComputeStall),
		// and does not start on the SMs a GEMM's last round frees (an
		// empirical rule: job.skipsTails).
		computeStall: true,
		skipsTails:   true,
	}
	return []*job{j}
}

// copyPhase is how a copy-engine phase of bytes (per rank) is cut: each
// rank pushes one transfer per peer, dealt to the engines in use;
// chunking lets one transfer use several engines at the cost of a gap
// per chunk. chunks is the copies per transfer, streams the copy streams
// (engines) that carry them.
func copyPhase(p Profile, sc scenarios.Scenario, st scenarios.Strategy, bytes float64) (chunk float64, chunks, streams int) {
	peers := max(sc.GPUs-1, 1)
	engines := p.CopyEngines
	if st.CopyEngines > 0 {
		engines = st.CopyEngines
	}
	perTransfer := bytes / float64(peers)
	chunk = float64(st.ChunkBytes)
	if chunk <= 0 {
		// Unchunked, as backends/cuda does it: transfers of 64 MiB and up
		// are cut so every engine gets a piece, smaller ones go whole, one
		// engine per peer.
		chunk = perTransfer
		if perTransfer >= copySplitMinBytes {
			chunk = perTransfer / float64(max(1, ceilDiv(engines, peers)))
		}
	}
	chunk = math.Min(chunk, perTransfer)
	chunks = int(math.Ceil(perTransfer / chunk))
	return chunk, chunks, max(1, min(engines, peers*chunks))
}

// CopyPhaseStreams is how many copy streams (engines) a copy-engine phase
// that moves bytes per rank in sc under st uses.
func CopyPhaseStreams(p Profile, sc scenarios.Scenario, st scenarios.Strategy, bytes float64) int {
	_, _, streams := copyPhase(p, sc, st, bytes)
	return streams
}

// CopyPhaseSync is the fixed cost of one copy-engine phase that moves
// bytes per rank in sc under st, before its copies start:
// CopySyncOverhead, plus CopyStreamSyncOverhead for every copy stream it
// uses beyond the first. The enqueue of its first copy
// (CopyLaunchOverhead) is not in it.
func CopyPhaseSync(p Profile, sc scenarios.Scenario, st scenarios.Strategy, bytes float64) float64 {
	return p.CopySyncOverhead + float64(CopyPhaseStreams(p, sc, st, bytes)-1)*p.CopyStreamSyncOverhead
}

// CopyChainedSync is the fixed cost, from the end of the kernel it
// follows, of a copy phase that moves bytes per rank after its
// collective's own reduction kernel: CopyChainSyncOverhead, plus
// CopyStreamSyncOverhead for every copy stream beyond the first.
func CopyChainedSync(p Profile, sc scenarios.Scenario, st scenarios.Strategy, bytes float64) float64 {
	return p.CopyChainSyncOverhead + float64(CopyPhaseStreams(p, sc, st, bytes)-1)*p.CopyStreamSyncOverhead
}

// copyJob is a copy-engine phase (copyPhase says how it is cut).
func copyJob(p Profile, sc scenarios.Scenario, st scenarios.Strategy, at float64, order int, bytes float64) *job {
	peers := sc.GPUs - 1
	chunk, chunks, active := copyPhase(p, sc, st, bytes)
	chunkTime := chunk / p.CopyEngineBandwidth
	perEngine := p.CopyEngineBandwidth * chunkTime / (chunkTime + p.CopyChunkGap)
	rate := float64(active) * perEngine
	privRes := backends.ResCopyEngines
	// The host enqueues every copy; when that is slower than the copies
	// themselves, enqueueing bounds the collective.
	if enq := bytes / (float64(peers*chunks) * p.CopyLaunchOverhead); enq < rate {
		rate, privRes = enq, backends.ResLaunch
	}
	// Each stream beyond the first adds its own waits and events.
	sync := CopyPhaseSync(p, sc, st, bytes)
	return &job{
		name: "copy " + sc.Comm.String(), op: backends.OpComm, track: "ce",
		copy: true, enqueued: at, launch: at + sync + p.CopyLaunchOverhead, order: order,
		remaining: bytes, copyRate: rate, engines: active, privRes: privRes,
		hbm: p.DMAHBMPerLinkByte[sc.Comm.Collective], link: 1 / p.LinkEfficiencyCE,
	}
}

// dmaJobs models c3lab's copy-engine collective. All-gather and all-to-all
// are one copy phase that moves peer data only (each rank's own shard or
// block is placed before timing). Reduce-scatter and all-reduce copy the
// peers' blocks into staging buffers, then a reduction kernel on the comm
// stream adds them once every copy has landed (pipelined with the copies
// in a comm partition); all-reduce then copies the reduced blocks to the
// peers in a second copy phase.
func dmaJobs(p Profile, sc scenarios.Scenario, st scenarios.Strategy, dom []int, eng *engine, at float64, order int, payload float64) []*job {
	coll := sc.Comm.Collective
	if coll.IsPureCopy() {
		return []*job{copyJob(p, sc, st, at, order, payload)}
	}
	phase := payload
	if coll == scenarios.AllReduce {
		phase = payload / 2 // a reduce-scatter, then an all-gather
	}
	// The kernel reads the rank's own block and N-1 staged ones and writes
	// one: N+1 block-sized HBM streams, a block being 1/(N-1) of the phase.
	n := float64(sc.GPUs)
	bytes := (n + 1) * phase / (n - 1)
	ctas := p.ReductionCTAsPerSM * max(domainSize(eng, dom), 1)
	reduction := func(name string, share float64) *job {
		perCTA := bytes * share / float64(ctas)
		return &job{
			name: name, op: backends.OpComm, track: "comm",
			enqueued: at, launch: at + p.KernelFixedCost, afterDelay: p.KernelFixedCost,
			ctas: ctas, maxResident: unlimited, priority: st.CommPriority, order: order,
			domain:  dom,
			ctaRate: p.ReductionSMBandwidth / perCTA, maxRate: p.ReductionBandwidth / perCTA,
			privRes: backends.ResSMs, hbm: perCTA,
			// Latency-bound like NCCL's CTAs: it slows while another op loads HBM.
			stall: p.CommLatencySensitivity,
			// And next to a GEMM it gets only its SMs' share of L2.
			contended: true,
		}
	}
	if st.CommSMs > 0 {
		// In a comm partition the add is pipelined with the copies, chunk
		// by chunk (backends/cuda: pipelinedReduction). Modelled as the
		// kernel adding all chunks but the last from the start (it cannot
		// outrun the copies by more than the model's fluid rates allow),
		// and the last chunk once every copy has landed; an all-reduce
		// forwards reduced chunks while the copies still run, and the last
		// chunk after its add.
		chunks := float64(pipelineChunks(phase/(n-1), float64(st.ChunkBytes)))
		head, tail := 1-1/chunks, 1/chunks
		// Its copies go chunk by chunk over every engine.
		st.ChunkBytes = scenarios.ByteSize(math.Ceil(phase / (n - 1) / chunks))
		cp := copyJob(p, sc, st, at, order, phase)
		last := reduction("reduce (last chunk) "+sc.Comm.String(), tail)
		last.after = cp
		jobs := []*job{cp, last}
		if chunks > 1 {
			jobs = append(jobs, reduction("reduce "+sc.Comm.String(), head))
		}
		if coll == scenarios.AllReduce {
			agLast := copyJob(p, sc, st, at, order, phase*tail)
			agLast.after, agLast.afterDelay = last, CopyChainedSync(p, sc, st, phase*tail)
			jobs = append(jobs, agLast)
			if chunks > 1 {
				jobs = append(jobs, copyJob(p, sc, st, at, order, phase*head))
			}
		}
		return jobs
	}
	cp := copyJob(p, sc, st, at, order, phase)
	red := reduction("reduce "+sc.Comm.String(), 1)
	red.after = cp
	jobs := []*job{cp, red}
	if coll == scenarios.AllReduce {
		ag := copyJob(p, sc, st, at, order, phase)
		ag.after, ag.afterDelay = red, CopyChainedSync(p, sc, st, phase)
		jobs = append(jobs, ag)
	}
	return jobs
}

// peerLoadCTAs is backends/cuda's p2p-load grid without comm_ctas or
// comm_sms (its peerLoadCTAs).
const peerLoadCTAs = 32

// peerLoadJobs models c3lab's p2p-load reduction (backends/cuda
// peerload.go): one SM kernel per rank that loads its block of every
// peer's input over NVLink, adds its own and stores the sum, with no
// staging copy. Its CTAs (comm_ctas; else ReductionCTAsPerSM per SM of a
// comm partition; else peerLoadCTAs) each move PeerLoadCTABandwidth over
// the link, which caps them all at the copy engines' share of it; like
// NCCL's CTAs they are latency-bound (CommLatencySensitivity). Each rank's
// HBM reads its own block, writes the result and serves its peers' loads
// of its blocks: N+1 blocks per N-1 over the link. An all-reduce then
// gathers the reduced blocks on the copy engines, as the copy-engine
// all-reduce does.
func peerLoadJobs(p Profile, sc scenarios.Scenario, st scenarios.Strategy, dom []int, eng *engine, at float64, order int, payload float64) []*job {
	coll := sc.Comm.Collective
	phase := payload
	if coll == scenarios.AllReduce {
		phase = payload / 2
	}
	n := float64(sc.GPUs)
	ctas := peerLoadCTAs
	switch {
	case st.CommCTAs > 0:
		ctas = st.CommCTAs
	case st.CommSMs > 0:
		ctas = p.ReductionCTAsPerSM * max(domainSize(eng, dom), 1)
	}
	perCTA := phase / float64(ctas)
	red := &job{
		name: "p2p-load " + sc.Comm.String(), op: backends.OpComm, track: "comm", coll: coll,
		enqueued: at, launch: at + p.KernelFixedCost,
		ctas: ctas, maxResident: unlimited, priority: st.CommPriority, order: order,
		domain:  dom,
		ctaRate: p.peerLoadCTABandwidth() / perCTA, privRes: backends.ResCTA,
		stall: p.CommLatencySensitivity, peerLoad: true,
		hbm: perCTA * (n + 1) / (n - 1), link: perCTA / p.LinkEfficiencyCE,
	}
	if coll != scenarios.AllReduce {
		return []*job{red}
	}
	ag := copyJob(p, sc, st, at, order, phase)
	ag.after, ag.afterDelay = red, ag.launch-at
	return []*job{red, ag}
}

// backends/cuda's copy schedule, which the model follows (its dma.go
// says why): transfers from copySplitMinBytes up are cut over every
// engine; a pipelined reduction's chunks are at least pipeMinChunkBytes,
// at most pipeMaxChunks to a block.
const (
	copySplitMinBytes = 64 << 20
	pipeMinChunkBytes = 8 << 20
	pipeMaxChunks     = 64
)

// pipelineChunks is how many chunks a pipelined copy-engine reduction cuts
// a block of blockBytes into, as backends/cuda does: chunks of chunkBytes
// when set, else of at least pipeMinChunkBytes, and never more than
// pipeMaxChunks.
func pipelineChunks(blockBytes, chunkBytes float64) int {
	c := chunkBytes
	if c <= 0 {
		c = pipeMinChunkBytes
	}
	c = math.Max(c, blockBytes/pipeMaxChunks)
	return max(1, int(math.Ceil(blockBytes/c)))
}

// ncclCEJobs models NCCL's own copy-engine collectives (all-gather and
// all-to-all): a small kernel on the SMs that must run first (measured: next
// to a GEMM holding every SM the collective waits for the GEMM, FINDINGS.md),
// then the copies on every engine. An out-of-place all-gather also copies
// the rank's own shard locally.
func ncclCEJobs(p Profile, sc scenarios.Scenario, st scenarios.Strategy, dom []int, at float64, order int, payload float64) []*job {
	coll := sc.Comm.Collective
	hbm := p.DMAHBMPerLinkByte[coll]
	if coll == scenarios.AllGather {
		hbm += 2 * float64(sc.Comm.Bytes) / payload
	}
	// Its setup holds no SM: next to a GEMM that holds every SM it still
	// ends before the GEMM does (ncclCEWaitsFor).
	k := &job{
		name: "nccl-ce kernel " + sc.Comm.String(), op: backends.OpComm, track: "comm",
		enqueued: at, launch: at + math.Max(p.KernelFixedCost, p.NCCLCESetup),
		ctas: p.NCCLCECTAs, maxResident: unlimited, priority: st.CommPriority, order: order,
		domain: dom, ctaRate: 1e9, privRes: backends.ResLaunch,
	}
	engines := min(p.CopyEngines, max(1, sc.GPUs-1)*p.CopyEngines)
	cp := &job{
		name: "nccl-ce " + sc.Comm.String(), op: backends.OpComm, track: "ce",
		copy: true, enqueued: at, after: k, order: order,
		remaining: payload, copyRate: float64(engines) * p.CopyEngineBandwidth, engines: engines,
		privRes: backends.ResCopyEngines, hbm: hbm, link: 1 / p.LinkEfficiencyNCCLCE,
	}
	return []*job{k, cp}
}

// ncclCEWaitsFor makes the copies of an nccl-ce collective (jobs, from
// ncclCEJobs) wait for the compute kernels enqueued before it (earlier)
// to end. Measured (2 x H200, NCCL 2.28.3, sweep-copies.json): in all 24
// pairs with the GEMM launched first, the collective's copies began only
// when the GEMM had ended, even beside decode GEMMs that leave SMs free;
// T_c3 came to T_comp + T_comm less 15-87 µs (28 µs at the median, about
// the kernel's setup, NCCLCESetup, which does run beside the GEMM).
func ncclCEWaitsFor(jobs, earlier []*job) {
	for _, j := range jobs {
		if j.copy && j.after != nil {
			j.afterAlso = append(j.afterAlso, earlier...)
		}
	}
}

// hostCopyJob models one GPU's host copy over PCIe: on the copy engines
// (one per direction unless chunked, as backends/cuda does it; a single
// engine alternates a swap's two directions), or as c3lab's copy kernel,
// whose CTAs hold SMs and move HostCopyCTABandwidth each. PCIe caps each
// direction and both together; the device side reads or writes each byte
// in HBM once. Every GPU has its own link to the host, so one GPU stands
// for all.
func hostCopyJob(p Profile, sc scenarios.Scenario, st scenarios.Strategy, dom []int, at float64, order int) *job {
	toHost, fromHost := sc.Comm.HostBytes()
	total := float64(toHost + fromHost)
	j := &job{
		name: sc.Comm.String(), op: backends.OpComm, coll: sc.Comm.Collective, order: order,
		enqueued: at, hbm: 1, toHost: float64(toHost) / total, fromHost: float64(fromHost) / total,
	}
	if st.CommEngine == scenarios.EngineDMA {
		dirs := 1
		if toHost > 0 && fromHost > 0 {
			dirs = 2
		}
		engines := p.CopyEngines
		if st.CopyEngines > 0 {
			engines = st.CopyEngines
		}
		if st.ChunkBytes == 0 {
			engines = min(engines, dirs)
		}
		j.name, j.track, j.copy = "copy-engine "+j.name, "ce", true
		j.launch, j.remaining = at+p.HostCopySetup, total
		// An engine keeps up with PCIe: the link, not the engine, bounds it.
		j.engines, j.copyRate, j.privRes = engines, float64(engines)*p.PCIeBandwidth, backends.ResPCIe
		if engines == 1 && dirs == 2 {
			// One engine moves one direction at a time.
			j.copyRate = p.PCIeBandwidth
		}
		return j
	}
	ctas := p.HostCopyCTAs
	if st.CommCTAs > 0 {
		ctas = max(st.CommCTAs, 2)
	}
	perCTA := total / float64(ctas)
	j.name, j.track = fmt.Sprintf("copy kernel %s (%d CTAs)", sc.Comm, ctas), "comm"
	j.launch, j.setup = at+p.KernelFixedCost, inKernel(p, p.HostCopyKernelSetup)
	j.ctas, j.maxResident, j.priority, j.domain = ctas, unlimited, st.CommPriority, dom
	j.ctaRate, j.privRes = p.HostCopyCTABandwidth/perCTA, backends.ResCTA
	// It uses no shared memory: behind a GEMM its CTAs run under the
	// GEMM's carveout, which leaves little L1 for loads in flight. That
	// slows its reads from host memory (Profile.HostCopyInheritedCTABandwidth,
	// measured for h2d), and a swap's as a whole: 8 CTAs raced with a
	// 2048x8192x8192 GEMM moved 128 MiB each way at 30 GB/s in all, about
	// what an 8-CTA h2d copy raced there moved one way (31;
	// results/2026-12-04-h200x1-s25, call 3). A d2h copy, which reads HBM,
	// ran at its isolated speed behind the same GEMMs.
	j.carveout = carveoutKeep
	if fromHost > 0 {
		j.inheritedRate = p.HostCopyInheritedCTABandwidth / perCTA
	}
	// The kernel's own caps: each direction, and both together.
	kernel := p.HostCopyKernelDuplexBandwidth
	if toHost > 0 && fromHost > 0 {
		kernel = p.hostCopyDuplex(ctas)
	}
	if share := math.Max(j.toHost, j.fromHost); share > 0 {
		kernel = math.Min(kernel, p.HostCopyKernelBandwidth/share)
	}
	j.maxRate = kernel / perCTA
	if float64(ctas)*p.HostCopyCTABandwidth >= kernel {
		j.privRes = backends.ResPCIe // enough CTAs: the kernel's PCIe traffic bounds it
	}
	j.hostWrite, j.hostRead = j.toHost, j.fromHost
	// The writes' stall follows how many CTAs write (results/2026-12-03-
	// h200x1-s18, call 3): relative to the default count, at which the
	// stalls were measured and fitted.
	j.hostWrite *= float64(ctas) / float64(max(p.HostCopyCTAs, 1))
	j.copyKernel = true
	j.hbm, j.toHost, j.fromHost = perCTA, j.toHost*perCTA, j.fromHost*perCTA
	return j
}

// inKernel is the part of a kernel's whole fixed cost (fitted or measured
// as the intercept of its times, launch included) it spends holding its
// SMs: what its launch (KernelFixedCost, holding none) leaves.
func inKernel(p Profile, fixed float64) float64 { return math.Max(0, fixed-p.KernelFixedCost) }

func ceilDiv(a, b int) int { return (a + b - 1) / b }
