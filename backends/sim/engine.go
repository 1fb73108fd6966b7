package sim

import (
	"math"
	"slices"
	"sort"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// job is one schedulable piece of work: a kernel (CTAs on SMs) or a
// copy-engine transfer. A scenario op is one job, or two for a copy-engine
// reduction (copies plus a reduction kernel).
type job struct {
	name  string
	op    backends.Op
	track string
	copy  bool // a copy-engine job (no SMs)
	// coll is the collective an SM collective's kernel runs.
	coll scenarios.Collective

	// enqueued is when the host enqueued the job's op; launch is when the
	// job becomes runnable (seconds from the start). The time between the
	// two is launch and synchronization overhead.
	enqueued float64
	launch   float64

	// Kernel jobs: CTA counts and where they may run.
	ctas     int
	pending  int
	resident int
	// working is the resident CTAs past their setup: those that make
	// progress.
	working     int
	maxResident int   // at most this many CTAs at once (GEMM SM target)
	priority    int   // CUDA convention: lower is more urgent
	order       int   // launch order: lower was enqueued first
	domain      []int // SM pools it may use, in order of preference
	// ctaRate is one CTA's private rate in work units per second (a CTA's
	// whole work is one unit), before memory stalls.
	ctaRate float64
	// perSM marks an SM collective confined to a partition of fewer SMs
	// than its CTAs: its ctas are the partition's SMs, each moving at
	// Profile.PartitionSMLinkBandwidth.
	perSM bool
	// carveout is what the kernel's CTAs leave their SMs configured for
	// (carveoutReset, carveoutGEMM, carveoutKeep); see pool.gemmCarveout.
	carveout carveoutUse
	// inheritedRate, for c3lab's copy kernel, is one CTA's rate when its
	// CTAs start on SMs still configured as a GEMM left them
	// (Profile.HostCopyInheritedCTABandwidth); 0: no such slowdown.
	inheritedRate float64
	// inherited says some of the kernel's CTAs run at inheritedRate
	// (cohort.inherited).
	inherited bool
	// privRes is the resource that bounds a CTA when nothing is shared
	// (tensor cores, the SM's own bandwidth, per-CTA link throughput).
	privRes backends.Resource
	// stall divides ctaRate by 1 + stall x (other ops' HBM share).
	stall float64
	// computeStall marks an SM collective's kernel: while compute kernels'
	// CTAs hold SMs, its rate is divided by 1 + Profile.CommComputeStall x
	// the share of the device's SMs they hold (engine.computeSMShare).
	computeStall bool
	// power weighs one resident CTA of a GEMM in the busy SM count of the
	// power limit (Profile.PowerLimitSMs): its tiles' main-loop share; 0
	// for every other kernel.
	power float64
	// hostWrite is, for c3lab's copy kernel, the share of its bytes it
	// writes to host memory (1 for d2h, half for a swap, 0 for h2d) times
	// its CTAs over the default Profile.HostCopyCTAs: while it moves data,
	// every other kernel's CTAs slow by Profile.HostWriteStall (a stream
	// op's by HostWriteStreamStall) x this weight.
	hostWrite float64
	// tilesPerCTA is, for a GEMM, its output tiles (or split-K slices)
	// over its launch's CTAs: how many a CTA works through
	// (Profile.HostWriteStallTiles). 0 for other kernels.
	tilesPerCTA float64
	// hostRead is, for c3lab's copy kernel, the share of its bytes it
	// reads from host memory (1 for h2d, half for a swap, 0 for d2h):
	// times its CTAs over Profile.HostCopyCTAs it is the read weight that
	// slows the GEMMs beside it (Profile.HostReadStall) and makes kernels
	// wait to launch and end (HostReadLaunchGap, HostReadEndWait); with
	// Profile.HostCopyKernelReadStall set (off in the built-in profile),
	// kernels that rely on L2 reuse also slow by that x the share x their
	// own demand on HBM (engine.hostReadStall).
	hostRead float64
	// startedAlone marks c3lab's copy kernel whose first CTAs got SMs as
	// it launched (an idle GPU, a partition of its own, SMs a GEMM of
	// fewer CTAs left free), not once another kernel's CTAs left theirs:
	// only then do its reads make the kernels beside it wait to launch
	// and to end in proportion to its CTAs (engine.hostReadWeightFirst;
	// behind any other copy, to the SMs it holds: packedReadWeight), and
	// do its reads and writes stall them steeply
	// (Profile.HostReadStallSteep, HostWriteStallAlone). Its CTAs spread
	// one to an SM over the SMs free as it launched; a copy that waited
	// packs them (Profile.HostCopyCTAsPerSM).
	startedAlone bool
	// copyKernel marks c3lab's host copy kernel; fillsCopySMs a stream op,
	// whose CTAs may run on the SMs the copy kernel's CTAs hold
	// (Profile.StreamFillsCopySMs).
	copyKernel, fillsCopySMs bool

	// pooled kernels are persistent with a dynamic tile scheduler (cuBLAS
	// GEMMs): their CTAs, at most one per SM, pull work units from one
	// shared pool (remaining, of total units) until it is empty, and all of
	// them end then. A CTA that starts late joins the pool.
	pooled bool
	total  float64
	// tailCTAs, when above 0, is how many of a pooled kernel's CTAs have
	// a tile in its last, partial round (of ctas work units, one per CTA):
	// once no more than that round's units are left, the others end and
	// free their SMs (tailed). 0: no CTA frees its SM before the kernel
	// ends.
	tailCTAs int
	tailed   bool
	// tailFreed is what the tail freed, per pool, until the kernel ends.
	tailFreed []poolTake
	// skipsTails keeps the kernel off the SMs a GEMM's last round frees
	// while the GEMM runs (pool.tailFree): NCCL's SM kernels. An empirical
	// rule, not the block scheduler's: on one H200 a kernel launched in
	// clusters of 4 as NCCL's are started in those SMs as a lone CTA does
	// (backends/cuda/results/2026-12-04-h200x1-s24), yet the two-GPU
	// sweeps' collectives gain far less from a GEMM's last round than
	// starting there would give them (model.md, "A collective in a GEMM's
	// last round"). Why is not measured; the rule stands for it.
	skipsTails bool
	// setup is a fixed time a kernel's CTAs spend before they make
	// progress (an SM collective's handshake, a GEMM's prologue); they
	// hold their SMs meanwhile. It runs from the kernel's first dispatch
	// for every CTA dispatched before it ends (ready); CTAs dispatched
	// later start at once, or, under Profile.LateCTASetup, spend their
	// own setup first.
	setup float64
	ready float64
	// firstSetup is added to the setup of the CTAs of the kernel's first
	// dispatch only: a one-off delay (Profile.MultiGPUComputeDelay).
	firstSetup float64
	// after, when set, must finish before this job launches: launch is
	// then after's end plus afterDelay (a kernel behind its copies).
	after      *job
	afterDelay float64
	// afterAlso, with after, must have ended too: the job launches at the
	// latest of after's end plus afterDelay and their ends (NCCL's
	// copy-engine copies wait for the kernels enqueued before them).
	afterAlso []*job
	// waits, when set (a graph's op instance), must all finish before
	// this job launches: it becomes runnable at max(hostAt, their last
	// end) and launches delay later (its fixed cost). The engine then
	// sets runnableAt, and enqueued for the jobs of group (the
	// instance's jobs), from which their waiting is charged.
	waits []*job
	// waitGaps, parallel to waits, is how long after a wait's end the
	// job may run: Profile.LaunchGap for an event of another stream, 0
	// for its own stream's predecessor.
	waitGaps   []float64
	delay      float64
	hostAt     float64
	runnableAt float64
	group      []*job
	// jitter splits every dispatch of the kernel's CTAs into cohorts of
	// slightly different work (Profile.WaveJitter), so that its waves
	// drift apart and SMs free up one group at a time, not all at once.
	jitter  bool
	cohorts int // cohorts dispatched so far (for the jitter sequence)
	// dependents are the jobs whose waits include this one; blocked counts
	// the waits of a job not ended yet. A blocked job stays out of the
	// engine's live set until its last wait ends.
	dependents []*job
	blocked    int
	// maxRate, when positive, caps the whole job's rate in units per second
	// however many CTAs it holds.
	maxRate float64
	// contended marks a memory-bound kernel (the copy-engine reduction)
	// whose rate is capped at Profile.ContendedSMBandwidth per SM it holds
	// (the engine keeps one resident CTA per SM) while a tensor-bound GEMM
	// runs.
	contended bool
	// peerLoad marks c3lab's p2p-load kernel, whose CTAs each load
	// Profile.PeerLoadCTABandwidth over the link (explanations say so).
	peerLoad bool

	// Copy jobs: remaining work in units (bytes) and their private rate.
	// Pooled kernels keep their pool in remaining too.
	remaining float64
	copyRate  float64
	engines   int

	// hbm and link are the HBM bytes and raw link bytes per work unit;
	// toHost and fromHost the bytes over PCIe to and from the host.
	hbm              float64
	link             float64
	toHost, fromHost float64
	// l2Sensitive jobs rely on L2 reuse: their HBM traffic grows by the
	// profile's L2Interference while another op runs.
	l2Sensitive bool
	// hbmIdeal is, for a GEMM, the HBM bytes per work unit if A, B and C
	// moved once: its own demand on HBM as the host-copy stall sees it.
	hbmIdeal float64

	// draining marks a compute kernel whose work is done while a copy
	// kernel writes to or reads from host memory: it ends at drainUntil,
	// or as soon as no copy kernel does (Profile.HostWriteEndWait,
	// HostReadEndWait).
	draining   bool
	drainUntil float64
	// hostGap, when above 0, is the wait behind a copy kernel's writes to
	// or reads from host memory (Profile.HostWriteLaunchGap,
	// HostReadLaunchGap) added to launch; it ends as soon as no copy
	// kernel writes or reads, and the job then launches at launch -
	// hostGap or at once.
	hostGap float64
	// gapChecked says the launch gap was looked at again as the kernel
	// came to launch (engine.lateLaunchGaps).
	gapChecked bool

	// Results.
	started  bool
	start    float64
	end      float64
	done     bool
	bounds   map[backends.Resource]float64
	waitNote string
	// ctaResident is the most CTAs the job held at once while its
	// per-CTA rate bounded it, for the explanation.
	ctaResident int
}

// cohort is a group of CTAs of one kernel dispatched together: they run at
// the same rate and finish together.
type cohort struct {
	job       *job
	n         int
	remaining float64 // work units left per CTA
	taken     []poolTake
	// ready is when the cohort's setup ends; working says it has.
	ready   float64
	working bool
	// inherited marks a cohort of c3lab's copy kernel that started mostly
	// on SMs a GEMM left configured for its tiles: its CTAs move at the
	// kernel's inheritedRate (Profile.HostCopyInheritedCTABandwidth).
	inherited bool
}

// sms is how many SMs the cohort holds: one per CTA, but for c3lab's
// copy kernel, whose CTAs may pack several to an SM
// (Profile.HostCopyCTAsPerSM).
func (c *cohort) sms() int {
	n := 0
	for _, t := range c.taken {
		n += t.n
	}
	return n
}

// carvedSMs is how many of the cohort's SMs were still configured as a
// GEMM left them when it took them.
func (c *cohort) carvedSMs() int {
	n := 0
	for _, t := range c.taken {
		n += t.carved
	}
	return n
}

// poolTake is SMs a cohort took from one pool: n of them, carved of
// which were still configured as a GEMM left them, and shared of which
// a copy kernel's CTAs held too (Profile.StreamFillsCopySMs).
type poolTake struct{ pool, n, carved, shared int }

// carveoutUse is what a kernel does to the shared-memory carveout of the
// SMs its CTAs run on. A GEMM's kernel configures them for its tiles (the
// most shared memory, little L1); a kernel that uses no shared memory
// (c3lab's copy and stream kernels) runs under whatever configuration it
// finds and leaves it; any other kernel is taken to reconfigure them.
type carveoutUse int

const (
	carveoutReset carveoutUse = iota
	carveoutGEMM
	carveoutKeep
)

// pool is a set of SMs: the whole GPU, or one side of a partition.
type pool struct {
	name       string
	size, free int
	// gemmCarveout is how many of the free SMs are still configured as a
	// GEMM's kernel left them (carveoutUse).
	gemmCarveout int
	// tailFree is how many of the free SMs a GEMM's last round freed
	// while the GEMM still runs (engine.tail), which a kernel that skips
	// tails (job.skipsTails) does not take.
	tailFree int
	// copyHeld is how many SMs c3lab's copy kernel's CTAs hold; shared of
	// them a stream op's CTAs hold too; orphaned is the SMs a stream op
	// took as shared whose copy CTAs have ended since, so that they free
	// when its CTAs end (Profile.StreamFillsCopySMs).
	copyHeld, shared, orphaned int
}

// segment is an interval during which every rate was constant; the
// simulator turns segments into telemetry samples.
type segment struct {
	t0, t1              float64
	smsCompute, smsComm int
	tensorFLOPs         float64 // FLOP/s
	hbmBytes, linkBytes float64 // bytes/s (link: raw, one direction)
	toHost, fromHost    float64 // bytes/s over PCIe
	enginesBusy         int
}

// engine runs a set of jobs on one (representative) GPU until all finish.
// All GPUs of a scenario do the same work, so one GPU stands for all.
type engine struct {
	p       Profile
	pools   []pool
	jobs    []*job
	cohorts []*cohort
	now     float64
	segs    []segment
	// flopsPerUnit lets segments report tensor throughput.
	flopsPerUnit map[*job]float64
	// byArrival makes the block scheduler serve equal priorities by
	// arrival (the time a kernel reached it, after its fixed cost, then
	// its enqueue order), as a graph's streams need; a pair's two ops use
	// their launch order alone.
	byArrival bool
	// live holds the jobs not done yet (run keeps it).
	live []*job
	// clock is the SM clock of the run as a share of the maximum (0 reads
	// as 1): the power limit's (Profile.PowerLimitSMs, atPowerClock);
	// tensor-bound CTAs run at it.
	clock float64
	// busyTime integrates the power limit's busy SM count over the run
	// (powerBusySMs x seconds).
	busyTime float64
}

// allDone reports whether every job of js has ended.
func allDone(js []*job) bool {
	for _, j := range js {
		if !j.done {
			return false
		}
	}
	return true
}

// maxEvents bounds the loop so a modelling bug cannot hang the lab.
const maxEvents = 1_000_000

// run advances time until every job is done and returns the finish time.
func (e *engine) run() float64 {
	for _, j := range e.jobs {
		j.bounds = map[backends.Resource]float64{}
		if j.after != nil || len(j.waits) > 0 {
			j.launch = math.Inf(1)
		}
		if j.pooled {
			j.total = j.remaining
		}
		if j.copy {
			continue
		}
		j.pending = j.ctas
	}
	e.live = e.live[:0]
	for _, j := range e.jobs {
		for _, w := range j.waits {
			w.dependents = append(w.dependents, j)
		}
		j.blocked = len(j.waits)
		if j.blocked == 0 {
			e.live = append(e.live, j)
		}
	}
	for range maxEvents {
		if e.liveDone() {
			break
		}
		e.dispatch()
		rates := e.rates()
		dt := e.nextEvent(rates)
		if math.IsInf(dt, 1) {
			// Nothing can progress: should not happen; stop rather than spin.
			break
		}
		e.advance(dt, rates)
	}
	return e.now
}

// liveDone reports whether every job released so far is done (the run
// loop's test: a blocked job is released only when a job ends).
func (e *engine) liveDone() bool {
	for _, j := range e.live {
		if !j.done {
			return false
		}
	}
	return true
}

// allDone reports whether every job is done.
func (e *engine) allDone() bool {
	for _, j := range e.jobs {
		if !j.done {
			return false
		}
	}
	return true
}

// dispatch hands free SMs to queued CTAs: jobs by priority (lower first),
// then launch order; each takes what its partition and SM target allow.
// A running CTA is never evicted.
func (e *engine) dispatch() {
	e.lateLaunchGaps()
	var ready []*job
	for _, j := range e.live {
		if !j.copy && !j.done && j.pending > 0 && j.launch <= e.now+1e-15 {
			ready = append(ready, j)
		}
	}
	sort.SliceStable(ready, func(a, b int) bool {
		if ready[a].priority != ready[b].priority {
			return ready[a].priority < ready[b].priority
		}
		if e.byArrival && ready[a].launch != ready[b].launch {
			return ready[a].launch < ready[b].launch
		}
		return ready[a].order < ready[b].order
	})
	for _, j := range ready {
		want := min(j.pending, j.maxResident-j.resident)
		if want <= 0 {
			continue
		}
		c := &cohort{job: j, remaining: 1}
		// c3lab's copy kernel spreads its CTAs one to an SM over the SMs
		// free as it launches and packs the rest, and every CTA that
		// waited for SMs, Profile.HostCopyCTAsPerSM to an SM.
		perSM := 1
		if j.copyKernel {
			perSM = max(e.p.HostCopyCTAsPerSM, 1)
		}
		spread := !j.started && e.now-j.launch < 1e-6
		for _, pi := range j.domain {
			avail := e.pools[pi].free
			if j.skipsTails {
				avail -= e.pools[pi].tailFree
			}
			if perSM > 1 {
				left := want - c.n
				sms := min(ceilDiv(left, perSM), avail)
				if spread {
					sms = min(left, avail)
				}
				if sms <= 0 {
					continue
				}
				placed := min(left, sms*perSM)
				carved := min(sms, e.pools[pi].gemmCarveout)
				e.pools[pi].free -= sms
				e.pools[pi].gemmCarveout -= carved
				e.pools[pi].copyHeld += sms
				c.n += placed
				c.taken = append(c.taken, poolTake{pi, sms, carved, 0})
				continue
			}
			take := max(min(want-c.n, avail), 0)
			// A stream op fills the SMs the copy kernel's CTAs hold once
			// the free ones are taken.
			shared := 0
			if j.fillsCopySMs && e.p.StreamFillsCopySMs {
				shared = max(min(want-c.n-take, e.pools[pi].copyHeld-e.pools[pi].shared), 0)
			}
			if take+shared == 0 {
				continue
			}
			// Which free SMs the block scheduler picks is not known; the
			// ones a GEMM left are taken first.
			carved := min(take, e.pools[pi].gemmCarveout)
			e.pools[pi].free -= take
			e.pools[pi].gemmCarveout -= carved
			e.pools[pi].shared += shared
			if j.copyKernel {
				e.pools[pi].copyHeld += take
			}
			c.n += take + shared
			c.taken = append(c.taken, poolTake{pi, take + shared, carved, shared})
		}
		if c.n == 0 {
			continue
		}
		j.pending -= c.n
		j.resident += c.n
		if !j.started {
			j.started, j.start = true, e.now
			j.ready = e.now + j.setup + j.firstSetup
			if j.copyKernel {
				// Its first CTAs got SMs as it launched: free ones, not
				// ones another kernel's CTAs leave.
				j.startedAlone = e.now-j.launch < 1e-6
			}
		}
		// A copy kernel's CTAs that start mostly on SMs a GEMM left
		// configured run at the rate they have there.
		if j.inheritedRate > 0 && 2*c.carvedSMs() >= c.sms() && j.inheritedRate < j.ctaRate {
			c.inherited, j.inherited = true, true
		}
		c.ready = j.ready
		if e.p.LateCTASetup && e.now > j.start {
			c.ready = e.now + j.setup
		}
		if j.jitter {
			e.cohorts = append(e.cohorts, e.split(c)...)
		} else {
			e.cohorts = append(e.cohorts, c)
		}
		// A copy kernel whose CTAs, on the SMs they got, move less than
		// its cap is bound by them, not by PCIe.
		if j.copyKernel && j.maxRate > 0 && j.pending == 0 && e.laneCount(j, true)*j.ctaRate < j.maxRate*(1-1e-9) {
			j.privRes = backends.ResCTA
		}
	}
	e.endSetups()
	for _, j := range e.live {
		if j.copy && !j.started && j.launch <= e.now+1e-15 {
			j.started, j.start = true, e.now
		}
	}
}

// endSetups puts to work the cohorts whose setup has ended.
func (e *engine) endSetups() {
	for _, c := range e.cohorts {
		if !c.working && c.ready <= e.now+1e-15 {
			c.working = true
			c.job.working += c.n
		}
	}
}

// jitterGroups is how many cohorts a jittered dispatch is split into at
// most, and jitterMinCohort the fewest CTAs a split-off cohort holds (so a
// kernel keeps a few dozen cohorts, not one per SM).
const (
	jitterGroups    = 8
	jitterMinCohort = 8
)

// split cuts a dispatched cohort into up to jitterGroups cohorts and gives
// each a work factor within 1 +- WaveJitter/2, from a low-discrepancy
// sequence over the kernel's cohorts (mean 1): tiles do not all take the
// same time on a real GPU, so a kernel's waves drift apart and its SMs
// free up a group at a time. Deterministic.
func (e *engine) split(c *cohort) []*cohort {
	if e.p.WaveJitter <= 0 {
		return []*cohort{c}
	}
	g := max(1, min(jitterGroups, c.n/jitterMinCohort))
	out := make([]*cohort, 0, g)
	taken := append([]poolTake(nil), c.taken...)
	for i := range g {
		n := c.n / g
		if i < c.n%g {
			n++
		}
		k := float64(c.job.cohorts)
		c.job.cohorts++
		_, frac := math.Modf((k + 0.5) * 0.6180339887498949)
		part := &cohort{job: c.job, n: n, remaining: 1 + e.p.WaveJitter*(frac-0.5), ready: c.ready}
		for need := n; need > 0; {
			t := &taken[0]
			k := min(need, t.n)
			kc := min(k, t.carved)
			ks := min(k, t.shared)
			part.taken = append(part.taken, poolTake{t.pool, k, kc, ks})
			t.n -= k
			t.carved -= kc
			t.shared -= ks
			need -= k
			if t.n == 0 {
				taken = taken[1:]
			}
		}
		out = append(out, part)
	}
	return out
}

// flow is a job's demand in the rate allocation.
type flow struct {
	j *job
	// max is the private maximum rate (units/s over all its resident CTAs).
	max float64
	// rate is the allocated rate; bound the resource that limited it.
	rate  float64
	bound backends.Resource
	// hbm is the job's HBM bytes per unit at this moment.
	hbm float64
}

// rates allocates shared bandwidth. Every active job starts from its private
// maximum; each shared resource (HBM, link) that is oversubscribed is
// divided max-min fairly in proportion to demand (all its users get the
// same share of their private maximum), the tightest resource first.
func (e *engine) rates() []flow {
	var flows []flow
	hbmUsers, activeJobs := 0, 0
	for _, j := range e.live {
		if e.active(j) {
			activeJobs++
			if j.hbm > 0 {
				hbmUsers++
			}
		}
	}
	// Each job's HBM traffic at its private maximum, before interference:
	// how much the others stream through L2 and HBM beside it. Sums run
	// over e.live, in its order, so they do not depend on map order.
	own := make([]float64, len(e.live))
	var total, largest float64
	for i, j := range e.live {
		if e.active(j) {
			own[i] = e.privMax(j, 0) * j.hbm
			total += own[i]
			largest = math.Max(largest, own[i])
		}
	}
	// L2 interference raises an L2-sensitive job's HBM traffic while the
	// others stream through L2, in proportion to their traffic up to
	// Profile.InterferenceKnee (in full whenever another job runs when the
	// knee is 0).
	l2Factor := map[*job]float64{}
	if activeJobs > 1 && e.p.L2Interference > 0 {
		for i, j := range e.live {
			if e.active(j) && j.l2Sensitive {
				l2Factor[j] = 1 + e.p.L2Interference*e.p.interferenceExposure((total-own[i])/e.p.HBMBandwidth)
			}
		}
	}
	hbmUse := func(j *job) float64 {
		if f, ok := l2Factor[j]; ok {
			return j.hbm * f
		}
		return j.hbm
	}
	// HBM demand of each job at its private maximum, for the stall terms.
	privHBM := map[*job]float64{}
	for _, j := range e.live {
		if e.active(j) {
			privHBM[j] = e.privMax(j, 0) * hbmUse(j)
		}
	}
	var totalHBM float64
	for _, v := range privHBM {
		totalHBM += v
	}
	for _, j := range e.live {
		if !e.active(j) {
			continue
		}
		others := math.Min(1, (totalHBM-privHBM[j])/e.p.HBMBandwidth)
		bound := j.privRes
		if e.settingUp(j) {
			bound = backends.ResLaunch
		}
		flows = append(flows, flow{j: j, max: e.privMax(j, others), bound: bound})
	}
	// Bank and row conflicts cost HBM a share of its bandwidth while two
	// ops stream through it, in proportion to what all but the largest
	// stream, up to the knee; and host copies on the copy engines stall it
	// as they stall a kernel that uses all of it (hostCopyStall).
	hbmCap := e.p.HBMBandwidth
	if hbmUsers > 1 {
		hbmCap *= 1 - e.p.HBMContention*e.p.interferenceExposure((total-largest)/e.p.HBMBandwidth)
	}
	hbmCap /= 1 + e.hostCopyStallOf(nil)
	type res struct {
		name backends.Resource
		cap  float64
		use  func(*job) float64
	}
	shared := []res{
		{backends.ResHBM, hbmCap, hbmUse},
		{backends.ResLink, e.p.LinkBandwidth, func(j *job) float64 { return j.link }},
		{backends.ResPCIe, e.p.PCIeBandwidth, func(j *job) float64 { return j.toHost }},
		{backends.ResPCIe, e.p.PCIeBandwidth, func(j *job) float64 { return j.fromHost }},
		{backends.ResPCIe, e.p.PCIeDuplexBandwidth, func(j *job) float64 { return j.toHost + j.fromHost }},
	}
	// A flow's demand is what it would take alone: its private maximum,
	// capped by each shared resource's whole capacity. Shares are divided
	// in proportion to these demands (more requests in flight, more
	// bandwidth), never to a private rate the flow could not use anyway.
	for i := range flows {
		for _, r := range shared {
			if u := r.use(flows[i].j); u > 0 && r.cap/u < flows[i].max {
				flows[i].max, flows[i].bound = r.cap/u, r.name
			}
		}
	}
	// An SM collective beside compute kernels' CTAs moves less, whatever
	// bounds it (its CTAs or the link): their operands crowd L2 and the
	// crossbar its loads and stores cross (Profile.CommComputeStall).
	if e.p.CommComputeStall > 0 {
		if g := e.computeSMShare(); g > 0 {
			for i := range flows {
				if flows[i].j.computeStall {
					flows[i].max /= 1 + e.p.CommComputeStall*g
				}
			}
		}
	}
	// HBM is one pool: copy engines get no absolute priority, their
	// requests queue beside the SMs' in the same memory controllers, and
	// every user gets the same share of its demand, a copy engine's demand
	// counting Profile.CopyHBMWeight times (1 by default: no priority).
	// A compute-bound GEMM asks little of HBM and leaves the copies their
	// rate; an HBM-heavy one (low arithmetic intensity) takes most of it.
	frozen := make([]bool, len(flows))
	weight := func(i int) float64 {
		if flows[i].j.copy {
			return e.p.copyHBMWeight()
		}
		return 1
	}
	theta := 0.0
	for {
		// The next share theta at which a resource saturates, given the
		// frozen flows' use, or an open flow reaches its own maximum (a
		// flow of weight w is at theta x w of its maximum).
		next, which, open := math.Inf(1), -1, false
		for ri, r := range shared {
			var fixed, grow float64
			for i, f := range flows {
				u := r.use(f.j)
				if u == 0 {
					continue
				}
				if frozen[i] {
					fixed += f.rate * u
				} else {
					grow += weight(i) * f.max * u
				}
			}
			if grow == 0 {
				continue
			}
			if t := (r.cap - fixed) / grow; t < next {
				next, which = math.Max(t, theta), ri
			}
		}
		for i := range flows {
			if !frozen[i] {
				open = true
				if t := 1 / weight(i); t < next {
					next, which = math.Max(t, theta), -1
				}
			}
		}
		if !open {
			break
		}
		theta = next
		for i := range flows {
			if frozen[i] {
				continue
			}
			flows[i].rate = math.Min(1, theta*weight(i)) * flows[i].max
			switch {
			case which >= 0 && shared[which].use(flows[i].j) > 0:
				frozen[i] = true
				flows[i].bound = shared[which].name
			case theta*weight(i) >= 1-1e-12:
				frozen[i] = true // at its own maximum: its private bound
			}
		}
	}
	for i := range flows {
		flows[i].hbm = hbmUse(flows[i].j)
	}
	return flows
}

// active reports whether a job can progress now.
func (e *engine) active(j *job) bool {
	if j.done {
		return false
	}
	if j.copy {
		return j.started
	}
	return j.resident > 0
}

// settingUp reports whether a kernel's CTAs hold SMs but all are still in
// their fixed setup time.
func (e *engine) settingUp(j *job) bool {
	return !j.copy && j.started && j.resident > 0 && j.working == 0
}

// privMax is a job's rate with nothing shared, slowed by memory stalls when
// other ops take a share `others` of HBM bandwidth.
func (e *engine) privMax(j *job, others float64) float64 {
	if j.copy {
		return j.copyRate
	}
	if e.settingUp(j) {
		return 0
	}
	r := e.laneCount(j, false) * j.ctaRate / (1 + j.stall*others)
	if j.privRes == backends.ResTensor && e.clock > 0 && e.clock < 1 {
		r *= e.clock
	}
	if w := e.hostWriteWeight(j); w > 0 {
		r /= 1 + e.p.hostWriteStall(j.fillsCopySMs, j.tilesPerCTA, w, e.hostWriteWeightFirst(j))
	}
	if s := e.hostCopyStall(j); s > 0 {
		r /= 1 + s
	}
	if s := e.hostReadStall(j); s > 0 {
		r /= 1 + s
	}
	if j.tilesPerCTA > 0 && e.p.HostReadStall+e.p.HostReadStallSteep > 0 {
		if w := e.stallingReadWeight(j, e.readWeight); w > 0 {
			r /= 1 + e.p.hostReadStall(j.tilesPerCTA, w, e.stallingReadWeight(j, e.firstReadWeight))
		}
	}
	if j.maxRate > 0 {
		r = math.Min(r, j.maxRate*e.busyGain(j))
	}
	if j.contended && j.hbm > 0 && e.p.ContendedSMBandwidth > 0 && e.tensorBusy() {
		r = math.Min(r, float64(j.working)*e.p.ContendedSMBandwidth/j.hbm)
	}
	return r
}

// busyGain is what c3lab's copy kernel moving both ways (a swap) gains on
// its cap while another kernel's CTAs work on the GPU: 1 +
// Profile.HostCopyKernelBusyGain then, else 1.
func (e *engine) busyGain(j *job) float64 {
	if e.p.HostCopyKernelBusyGain == 0 || !j.copyKernel || j.hostWrite == 0 || j.hostRead == 0 {
		return 1
	}
	for _, k := range e.live {
		if k != j && !k.copy && !k.copyKernel && k.working > 0 {
			return 1 + e.p.HostCopyKernelBusyGain
		}
	}
	return 1
}

// largestMoving is the largest share(k) over the jobs other than j that
// are moving data now (active and past their setup); 0 for none.
func (e *engine) largestMoving(j *job, share func(*job) float64) float64 {
	return e.largestOf(j, share, func(k *job) bool { return e.active(k) && !e.settingUp(k) })
}

// largestOf is the largest share(k) over the live jobs other than j that
// counts; 0 for none.
func (e *engine) largestOf(j *job, share func(*job) float64, counts func(*job) bool) float64 {
	most := 0.0
	for _, k := range e.live {
		if k != j && counts(k) {
			most = math.Max(most, share(k))
		}
	}
	return most
}

// hostCopyStall is how much the copy engines' host copies moving data now
// slow kernel j: Profile.CopyEngineH2DStall while one writes into HBM from
// the host, CopyEngineD2HStall while one reads HBM for the host, each times
// j's own demand on HBM as a share of its bandwidth (a compute-bound GEMM
// hardly notices, a memory-bound one does). Measured on one H200: a 54 GB/s
// h2d copy slowed GEMMs that need HBM by 14-21 %, d2h by 2-3.5 %
// (results/2026-12-01-h200x1-s3, ce_hbm_probe.py).
func (e *engine) hostCopyStall(j *job) float64 {
	if j.copy {
		return 0
	}
	s := e.hostCopyStallOf(j)
	if s == 0 {
		return 0
	}
	return s * e.hbmDemandShare(j)
}

// hbmDemandShare is kernel j's own demand on HBM at its private rate, as a
// share of HBM's bandwidth (at most 1): what the host-copy stalls scale
// with (a compute-bound GEMM hardly notices them, a memory-bound one does).
func (e *engine) hbmDemandShare(j *job) float64 {
	per := j.hbm
	if j.hbmIdeal > 0 {
		per = j.hbmIdeal
	}
	return math.Min(1, float64(j.working)*j.ctaRate*per/e.p.HBMBandwidth)
}

// hostReadStall is how much c3lab's copy kernels reading host memory slow
// kernel j: Profile.HostCopyKernelReadStall times the largest read share
// (job.hostRead) of those moving data now, times j's own demand on HBM as
// a share of its bandwidth, as the copy engines' h2d stall does
// (hostCopyStall). Measured on one H200: beside an h2d copy kernel of 32
// CTAs, a 512x28672x4096 GEMM on the other 100 SMs took 329-343 µs, 1.82x
// its 181 µs alone where 132/100 SMs give 1.32x; a 4096x28672x4096 GEMM,
// lighter on HBM, 1.41x (backends/cuda/results/2026-12-03-h200x1-s16).
func (e *engine) hostReadStall(j *job) float64 {
	if e.p.HostCopyKernelReadStall == 0 || j.copy || j.hostRead > 0 || !j.l2Sensitive {
		return 0
	}
	read := e.largestMoving(j, func(k *job) float64 { return k.hostRead })
	if read == 0 {
		return 0
	}
	return e.p.HostCopyKernelReadStall * read * e.hbmDemandShare(j)
}

// hostCopyStallOf is the stall of the copy engines' host copies moving
// data now other than except (nil: all), for a user of all of HBM's
// bandwidth: what they cost HBM itself.
func (e *engine) hostCopyStallOf(except *job) float64 {
	if e.p.CopyEngineH2DStall == 0 && e.p.CopyEngineD2HStall == 0 {
		return 0
	}
	var h2d, d2h bool
	for _, k := range e.live {
		if k != except && k.copy && e.active(k) {
			h2d = h2d || k.fromHost > 0
			d2h = d2h || k.toHost > 0
		}
	}
	var s float64
	if h2d {
		s += e.p.CopyEngineH2DStall
	}
	if d2h {
		s += e.p.CopyEngineD2HStall
	}
	return s
}

// tensorBusy reports whether a tensor-bound kernel (a GEMM) is running.
func (e *engine) tensorBusy() bool {
	for _, j := range e.live {
		if j.privRes == backends.ResTensor && e.active(j) && !e.settingUp(j) {
			return true
		}
	}
	return false
}

// powerBusySMs is the busy SM count of the power limit: every resident
// CTA of a GEMM past its setup, weighed by its main-loop share.
func (e *engine) powerBusySMs() float64 {
	busy := 0.0
	for _, j := range e.live {
		if j.power > 0 && e.active(j) && !e.settingUp(j) {
			busy += float64(j.working) * j.power
		}
	}
	return busy
}

// computeSMShare is the share of the device's SMs held now by the CTAs of
// compute kernels (GEMMs and stream ops) past their setup: how much of the
// chip streams operands through L2 and the crossbar beside a collective.
func (e *engine) computeSMShare() float64 {
	n := 0
	for _, j := range e.live {
		if j.op == backends.OpCompute && !j.copy && e.active(j) && !e.settingUp(j) {
			n += j.working
		}
	}
	return math.Min(1, float64(n)/float64(max(e.p.SMs, 1)))
}

// tail ends a pooled kernel's CTAs that its last, partial round leaves
// without a tile (those still in their setup first) and frees their SMs
// for queued kernels; its queued CTAs never start. The CTAs it keeps take
// over the round's work units, each unit scaled up so that the round's
// time and its FLOPs and bytes stay as they were.
func (e *engine) tail(j *job) {
	j.tailed, j.pending = true, 0
	keep := min(j.resident, j.tailCTAs)
	if keep <= 0 || keep >= j.resident {
		return
	}
	f := j.remaining / float64(keep)
	j.remaining, j.total = float64(keep), j.total/f
	j.hbm *= f
	j.hbmIdeal *= f
	j.link *= f
	e.flopsPerUnit[j] *= f
	surplus := j.resident - keep
	for pass := 0; pass < 2 && surplus > 0; pass++ {
		for i := len(e.cohorts) - 1; i >= 0 && surplus > 0; i-- {
			c := e.cohorts[i]
			if c.job != j || c.n == 0 || c.working != (pass == 1) {
				continue
			}
			d := min(c.n, surplus)
			for _, t := range e.freeSMs(c, d) {
				e.pools[t.pool].tailFree += t.n
				j.tailFreed = append(j.tailFreed, t)
			}
			surplus -= d
		}
	}
	kept := e.cohorts[:0]
	for _, c := range e.cohorts {
		if c.n > 0 {
			kept = append(kept, c)
		}
	}
	e.cohorts = kept
}

// freeSMs ends d of cohort c's CTAs (one per SM), returns their SMs to
// their pools, configured as c's kernel left them, and says which.
func (e *engine) freeSMs(c *cohort, d int) []poolTake {
	var out []poolTake
	c.n -= d
	c.job.resident -= d
	if c.working {
		c.job.working -= d
	}
	for i := len(c.taken) - 1; i >= 0 && d > 0; i-- {
		t := &c.taken[i]
		n := min(t.n, d)
		freed := e.releaseShared(c.job, t, n)
		e.pools[t.pool].free += freed
		switch c.job.carveout {
		case carveoutGEMM:
			e.pools[t.pool].gemmCarveout += freed
		case carveoutKeep:
			carved := min(t.carved, freed)
			e.pools[t.pool].gemmCarveout += carved
			t.carved -= carved
		}
		t.n -= n
		d -= n
		out = append(out, poolTake{pool: t.pool, n: freed})
		if t.n == 0 {
			c.taken = c.taken[:i]
		}
	}
	return out
}

// releaseShared settles the SMs a copy kernel and a stream op share
// (Profile.StreamFillsCopySMs) when job j ends n CTAs of take t, and
// returns how many of those n SMs are free now. A stream op's CTA on a
// shared SM leaves it to the copy's CTA, or frees it if that has ended; a
// copy's CTA on a shared SM leaves it to the stream op's.
func (e *engine) releaseShared(j *job, t *poolTake, n int) int {
	pl := &e.pools[t.pool]
	switch {
	case j.copyKernel:
		pl.copyHeld -= n
		if over := pl.shared - pl.copyHeld; over > 0 {
			pl.shared -= over
			pl.orphaned += over
			return n - over
		}
	case t.shared > 0:
		sh := min(t.shared, n)
		t.shared -= sh
		back := min(sh, pl.orphaned)
		pl.orphaned -= back
		pl.shared -= sh - back
		return n - (sh - back)
	}
	return n
}

// nextEvent returns the time to the next change: a cohort or copy finishing,
// or a job launching.
func (e *engine) nextEvent(flows []flow) float64 {
	dt := math.Inf(1)
	rate := map[*job]float64{}
	for _, f := range flows {
		rate[f.j] = f.rate
	}
	per := e.cohortRates(rate)
	for _, c := range e.cohorts {
		if !c.working {
			dt = math.Min(dt, c.ready-e.now)
			continue
		}
		if c.job.pooled {
			if j := c.job; j.tailCTAs > 0 && !j.tailed && rate[j] > 0 && j.remaining > float64(j.ctas) {
				dt = math.Min(dt, (j.remaining-float64(j.ctas))/rate[j])
			}
			continue
		}
		if r := per[c]; r > 0 {
			dt = math.Min(dt, c.remaining/r)
		}
	}
	for _, j := range e.live {
		if j.draining {
			dt = math.Min(dt, j.drainUntil-e.now)
		}
		if (j.copy || j.pooled) && j.started && !j.done && rate[j] > 0 {
			dt = math.Min(dt, j.remaining/rate[j])
		}
		if !j.started && j.launch > e.now && !math.IsInf(j.launch, 1) {
			dt = math.Min(dt, j.launch-e.now)
		}
	}
	return dt
}

// advance moves time forward by dt at the given rates, charges each job's
// time to its bounding resource, records a segment, and retires finished
// cohorts and jobs.
func (e *engine) advance(dt float64, flows []flow) {
	if e.p.PowerLimitSMs > 0 {
		e.busyTime += e.powerBusySMs() * dt
	}
	rate := map[*job]float64{}
	seg := segment{t0: e.now, t1: e.now + dt}
	for _, f := range flows {
		rate[f.j] = f.rate
		f.j.bounds[f.bound] += dt
		if f.bound == backends.ResCTA {
			f.j.ctaResident = max(f.j.ctaResident, f.j.resident)
		}
		seg.hbmBytes += f.rate * f.hbm
		seg.tensorFLOPs += f.rate * e.flopsPerUnit[f.j]
		seg.linkBytes += f.rate * f.j.link
		seg.toHost += f.rate * f.j.toHost
		seg.fromHost += f.rate * f.j.fromHost
		if f.j.copy {
			seg.enginesBusy += f.j.engines
		}
	}
	for _, j := range e.live {
		switch {
		case j.done || e.active(j):
		case j.draining:
			// Its end waits behind a copy kernel's writes to host memory:
			// synchronization overhead.
			j.bounds[backends.ResLaunch] += dt
		case !j.started && j.launch > e.now:
			// Charge the part of this interval after the op was enqueued:
			// a job behind another waits for it, then for its own launch.
			if d := e.now + dt - math.Max(e.now, j.enqueued); d > 0 {
				res := backends.ResLaunch
				if j.after != nil && !j.after.done {
					res = backends.ResDependency
				}
				j.bounds[res] += d
			}
		case !j.copy && j.pending > 0 && j.launch <= e.now:
			j.bounds[backends.ResWaitSMs] += dt
		}
	}
	for _, c := range e.cohorts {
		if c.job.op == backends.OpCompute {
			seg.smsCompute += c.sms()
		} else {
			seg.smsComm += c.sms()
		}
	}
	e.segs = append(e.segs, seg)
	e.now += dt

	// A pooled kernel whose pool runs dry ends with all its CTAs; its
	// queued CTAs never start.
	for _, j := range e.live {
		if j.pooled && j.started && !j.done {
			j.remaining -= dt * rate[j]
			if j.remaining <= 1e-9*j.total {
				j.remaining, j.pending = 0, 0
			} else if j.tailCTAs > 0 && !j.tailed && j.remaining <= float64(j.ctas)*(1+1e-9) {
				e.tail(j)
			}
		}
	}
	// Each CTA's progress over the interval, from the residents the rates
	// were computed for (a cohort retiring below must not change it).
	perCTA := map[*cohort]float64{}
	for c, r := range e.cohortRates(rate) {
		perCTA[c] = dt * r
	}
	kept := e.cohorts[:0]
	for _, c := range e.cohorts {
		if c.job.pooled {
			if c.job.remaining > 0 {
				kept = append(kept, c)
				continue
			}
		} else {
			if c.working {
				c.remaining -= perCTA[c]
			}
			if c.remaining > 1e-9 {
				kept = append(kept, c)
				continue
			}
		}
		e.freeSMs(c, c.n)
		if c.job.resident == 0 && c.job.pending == 0 {
			c.job.done, c.job.end = true, e.now
			if wait := e.hostEndWait(c.job); wait > 0 {
				c.job.done, c.job.draining = false, true
				c.job.drainUntil = e.now + wait
			}
			// Its end ends its tail: the SMs it freed are anyone's.
			for _, t := range c.job.tailFreed {
				e.pools[t.pool].tailFree = max(0, e.pools[t.pool].tailFree-t.n)
			}
			c.job.tailFreed = nil
		}
	}
	e.cohorts = kept
	for _, j := range e.live {
		if j.copy && j.started && !j.done {
			j.remaining -= dt * rate[j]
			if j.remaining <= 1e-3 { // bytes
				j.done, j.end = true, e.now
			}
		}
	}
	// A compute kernel done while a copy kernel writes to host memory
	// ends after its wait (Profile.HostWriteEndWait), or once no copy
	// kernel writes; a launch waiting behind the writes
	// (Profile.HostWriteLaunchGap) goes once none does.
	for _, j := range e.live {
		if !j.draining && j.hostGap == 0 {
			continue
		}
		busy := e.hostCopyBusy(j)
		if j.draining && (!busy || e.now >= j.drainUntil-1e-12) {
			j.draining, j.done, j.end = false, true, e.now
		}
		if j.hostGap > 0 && !j.started && j.launch > e.now && !busy {
			j.launch = math.Max(j.launch-j.hostGap, e.now)
			j.hostGap = 0
		}
	}
	// A job waiting for another launches once that one is done.
	for _, j := range e.live {
		if j.after != nil && math.IsInf(j.launch, 1) && j.after.done && allDone(j.afterAlso) {
			j.launch = j.after.end + j.afterDelay
			for _, a := range j.afterAlso {
				j.launch = math.Max(j.launch, a.end)
			}
		}
	}
	// Jobs whose last wait just ended become runnable: at the latest of
	// their enqueue and their waits' ends, and launch after their delay.
	var released []*job
	for _, j := range e.live {
		if !j.done || j.dependents == nil {
			continue
		}
		for _, d := range j.dependents {
			if d.blocked--; d.blocked == 0 {
				released = append(released, d)
			}
		}
		j.dependents = nil
	}
	live := e.live[:0]
	for _, j := range e.live {
		if !j.done {
			live = append(live, j)
		}
	}
	for _, j := range released {
		r := j.hostAt
		for k, w := range j.waits {
			gap := 0.0
			if k < len(j.waitGaps) {
				gap = j.waitGaps[k]
			}
			r = math.Max(r, w.end+gap)
		}
		j.runnableAt, j.launch = r, r+j.delay
		if j.op == backends.OpCompute {
			j.hostGap = math.Max(e.hostWriteLaunchGap(j), e.hostReadLaunchGap(j))
			j.launch += j.hostGap
		}
		for _, g := range j.group {
			g.enqueued = r
		}
		live = append(live, j)
	}
	e.live = live
}

// laneCount is how many of kernel j's working CTAs (with all, every
// dispatched CTA, those in their setup too) move at their private rate at
// once: every one, but for c3lab's copy kernel, whose CTAs packed on one
// SM share that SM's one CTA's worth of bandwidth to host memory
// (Profile.HostCopyCTAsPerSM, cohortRates). Only reads from host memory are
// capped by the SM: a d2h copy's CTAs read HBM and post their writes,
// and ran at their isolated speed behind a GEMM
// (results/2026-12-02-h200x1-s11); a swap's read share is capped.
func (e *engine) laneCount(j *job, all bool) float64 {
	if !j.copyKernel {
		if all {
			return float64(j.resident)
		}
		return float64(j.working)
	}
	var n float64
	for _, c := range e.cohorts {
		if c.job == j && (c.working || all) {
			n += e.cohortCap(c) / j.ctaRate
		}
	}
	return n
}

// cohortCap is the most a working cohort of c3lab's copy kernel moves
// together, in the kernel's work units per second: each CTA at the
// kernel's private rate (at inheritedRate on SMs a GEMM left configured),
// and its reads from host memory at most one CTA's private rate per SM it
// holds, its CTAs packed on one SM sharing it (Profile.HostCopyCTAsPerSM).
func (e *engine) cohortCap(c *cohort) float64 {
	j := c.job
	r := j.ctaRate
	if c.inherited {
		r = j.inheritedRate
	}
	all := float64(c.n) * r
	if e.p.HostCopyCTAsPerSM <= 1 || j.hostRead == 0 {
		return all
	}
	return j.hostRead*math.Min(all, float64(c.sms())*j.ctaRate) + (1-j.hostRead)*all
}

// cohortRates is each working cohort's per-CTA rate, from its kernel's
// rate: shared evenly by the kernel's working CTAs, but for c3lab's copy
// kernel, whose cohorts take the kernel's rate in the order they started,
// each up to one CTA's private rate per SM it holds. On one H200 a 192
// MiB h2d copy of 16 CTAs beside a decode GEMM that left 4 SMs free
// started 12 CTAs on those 4 SMs and the other 4 as the GEMM ended, on 2
// SMs. The first 12 finished at 3.3 ms and the last at 5.4 ms, where the
// copy alone, or with 8, 12 or 32 CTAs, takes 3.9 ms
// (results/2026-12-04-h200x1-s22, call 3; every sweep of
// mixtral-8x22b-decode-expert-fetch-h2d-192m-1gpu at 16 CTAs: 5.3 ms).
func (e *engine) cohortRates(rate map[*job]float64) map[*cohort]float64 {
	out := map[*cohort]float64{}
	left := map[*job]float64{}
	for _, c := range e.cohorts {
		j := c.job
		if !c.working || j.pooled || j.working == 0 {
			continue
		}
		if !j.copyKernel {
			out[c] = rate[j] / float64(j.working)
			continue
		}
		l, ok := left[j]
		if !ok {
			l = rate[j]
		}
		take := math.Min(l, e.cohortCap(c))
		left[j] = l - take
		out[c] = take / float64(c.n)
	}
	// What the caps leave (none when the kernel's rate follows its lanes)
	// goes to every CTA evenly.
	for j, l := range left {
		if l > 1e-12*rate[j] {
			for _, c := range e.cohorts {
				if c.job == j && c.working {
					out[c] += l / float64(j.working)
				}
			}
		}
	}
	return out
}

// hostWriteWeight is the largest write weight (job.hostWrite) of c3lab's
// copy kernels other than j that are writing to host memory now; 0 when
// none is.
func (e *engine) hostWriteWeight(j *job) float64 {
	return e.largestMoving(j, e.writeWeight)
}

// hostWriteWeightFirst is hostWriteWeight over the copy kernels that
// started as they launched (job.startedAlone), behind
// which the write stall is the steep one (Profile.HostWriteStallAlone).
func (e *engine) hostWriteWeightFirst(j *job) float64 {
	return e.largestMoving(j, func(k *job) float64 {
		if !k.startedAlone {
			return 0
		}
		return e.writeWeight(k)
	})
}

// writeWeight is copy kernel k's write weight now (job.hostWrite): whole
// until the last Profile.HostWriteTail of its work, then falling in
// proportion to the work left, as its CTAs finish unevenly.
func (e *engine) writeWeight(k *job) float64 {
	if k.hostWrite == 0 || e.p.HostWriteTail <= 0 || k.ctas == 0 {
		return k.hostWrite
	}
	left := float64(k.pending)
	for _, c := range e.cohorts {
		if c.job == k {
			left += float64(c.n) * c.remaining
		}
	}
	return k.hostWrite * math.Min(1, left/float64(k.ctas)/e.p.HostWriteTail)
}

// hostCopyBusy reports whether a copy kernel other than j that moves host
// data has started and not ended: the waits behind its traffic
// (hostEndWait, the launch gaps) last until none has. A copy kernel
// between waves of its CTAs (in a partition smaller than its grid) still
// counts.
func (e *engine) hostCopyBusy(j *job) bool {
	for _, k := range e.live {
		if k != j && k.copyKernel && k.started && !k.done && (k.hostRead > 0 || e.writeWeight(k) > 0) {
			return true
		}
	}
	return false
}

// hostEndWait is how long compute kernel j, its work done now, waits
// before it ends behind c3lab's copy kernels' traffic to and from host
// memory: Profile.HostWriteEndWait x the write weight or
// Profile.HostReadEndWait x the read weight, the longer; 0 for any other
// kernel, or when no copy kernel moves host data. The wait ends early
// when none does (advance).
func (e *engine) hostEndWait(j *job) float64 {
	if j.op != backends.OpCompute {
		return 0
	}
	var wait float64
	if e.p.HostWriteEndWait > 0 {
		wait = e.p.HostWriteEndWait * e.hostWriteWeight(j)
	}
	if e.p.HostReadEndWait > 0 {
		wait = math.Max(wait, e.p.HostReadEndWait*e.largestMoving(j, func(k *job) float64 {
			// Only behind a copy that started before j did (one in a
			// partition of its own that started after takes
			// HostReadApartWait).
			if k.start > j.start {
				return 0
			}
			return e.firstReadWeight(k)
		}))
	}
	if e.p.HostReadApartWait > 0 {
		wait = math.Max(wait, e.p.HostReadApartWait*e.largestMoving(j, func(k *job) float64 {
			if !e.readsApart(j, k) {
				return 0
			}
			return e.readWeight(k)
		}))
	}
	return wait
}

// stallingReadWeight is the largest weight(k) over the copy kernels
// other than j that are moving data now and slow j's rate with their
// reads from host memory (Profile.HostReadStall): all but those that
// readsApart keeps apart.
func (e *engine) stallingReadWeight(j *job, weight func(*job) float64) float64 {
	return e.largestMoving(j, func(k *job) float64 {
		if e.readsApart(j, k) {
			return 0
		}
		return weight(k)
	})
}

// readsApart reports whether copy kernel k reads host memory apart from
// compute kernel j: on SMs of its own partition, having started after j
// did. Such a copy does not slow j's rate; j ends HostReadApartWait x the
// copy's read weight late instead, however long it is
// (Profile.HostReadApartWait). A kernel that starts while such a copy
// reads takes the read stall and the end wait as beside any copy: on one
// H200 twelve 4096^3 GEMMs on the rest of the GPU beside a 128 MiB h2d
// copy kernel of 32 CTAs in 16 or 32 SMs took 417-490 µs each after the
// first (262 alone there), the first, launched before the copy, 336-349
// (results/2026-12-03-h200x1-s21, call 5).
func (e *engine) readsApart(j, k *job) bool {
	return k.start > j.start && !sharesSMs(j, k)
}

// sharesSMs reports whether jobs a and b may use an SM pool in common.
func sharesSMs(a, b *job) bool {
	for _, x := range a.domain {
		if slices.Contains(b.domain, x) {
			return true
		}
	}
	return false
}

// readWeight is copy kernel k's read weight: the share of its bytes read
// from the host (job.hostRead) x its CTAs over Profile.HostCopyCTAs.
func (e *engine) readWeight(k *job) float64 {
	return k.hostRead * float64(k.ctas) / float64(max(e.p.HostCopyCTAs, 1))
}

// lateLaunchGaps gives a compute kernel that comes to launch while a copy
// kernel reads host memory the launch gap it would have had released then
// (HostReadLaunchGap; the write gap is not looked at again, no probe has
// asked for it): the gap follows the copy at the kernel's launch, not
// only at its release. A kernel released by its waits (a graph's
// dependency) reaches the GPU a few µs later than the copy queued behind
// the copy it waited for, so that copy is moving when it launches. On
// one H200 (CUPTI kernel records, results/2026-12-04-h200x1-s25, call 6)
// each GEMM chunk of a reload cut in 8 started 42-75 µs after it was
// ready, 4-20 µs before the 32-CTA copy chunk that had started beside it
// ended; the last chunk, with no copy left, 5 µs after.
func (e *engine) lateLaunchGaps() {
	for _, j := range e.live {
		if j.op != backends.OpCompute || j.started || j.done || j.gapChecked || j.hostGap > 0 ||
			len(j.waits) == 0 || j.launch > e.now+1e-15 {
			continue
		}
		j.gapChecked = true
		if e.p.HostReadLaunchGap <= 0 {
			continue
		}
		// A copy still in its setup counts: its CTAs hold their SMs, and
		// the GEMM launches behind them.
		w := e.largestOf(j, e.firstReadWeight, func(k *job) bool { return k.copyKernel && k.started && !k.done })
		if gap := e.p.HostReadLaunchGap * w; gap > 0 {
			j.hostGap, j.launch = gap, e.now+gap
		}
	}
}

// hostReadLaunchGap is how long compute kernel j waits to launch behind a
// copy kernel's reads from host memory: Profile.HostReadLaunchGap x the
// read weight. The wait ends early when no copy kernel reads or writes
// host memory (advance).
func (e *engine) hostReadLaunchGap(j *job) float64 {
	if e.p.HostReadLaunchGap <= 0 {
		return 0
	}
	return e.p.HostReadLaunchGap * e.hostReadWeightFirst(j)
}

// hostReadWeightFirst is the largest read weight (readWeight) of the copy
// kernels other than j that are moving data now and started as they
// launched (job.startedAlone; firstReadWeight): only behind those do a
// kernel's launch and end wait, and does the read stall steepen
// (Profile.HostReadStallSteep). On one H200 twelve 4096^3 GEMMs beside a
// 128 MiB h2d copy kernel of 32 CTAs took 420-505 µs each, 95-150 µs
// apart, when the copy started first, and 275-325 µs, 10-40 µs apart, when
// its CTAs waited for the first GEMM's SMs; beside such a copy of 64 CTAs
// they took 1.9-2.2x their time alone, where beside one that started
// first a short GEMM all but stops (results/2026-12-03-h200x1-s21, calls
// 2-3). Behind a copy whose CTAs waited for SMs the waits follow the
// SMs its packed CTAs hold instead (packedReadWeight).
func (e *engine) hostReadWeightFirst(j *job) float64 {
	return e.largestMoving(j, e.firstReadWeight)
}

// firstReadWeight is copy kernel k's read weight if it started as it
// launched (job.startedAlone), else 0.
func (e *engine) firstReadWeight(k *job) float64 {
	if !k.startedAlone {
		return e.packedReadWeight(k)
	}
	return e.readWeight(k)
}

// packedReadWeight is the read weight of copy kernel k that waited for
// SMs and packs its CTAs Profile.HostCopyCTAsPerSM to an SM: its share
// of bytes read from the host x the SMs its CTAs hold over
// Profile.HostCopyCTAs. Behind such a copy kernels wait less to launch
// and to end than behind one that started alone, and in proportion to
// the SMs it holds: twelve 4096^3 GEMMs enqueued first beside a 128 MiB
// h2d copy kernel of 16, 32 and 64 CTAs (on about 6, 11 and 22 SMs) stood
// 5, 9-37 and 45-80 µs apart (results/2026-12-03-h200x1-s21, calls 2-3;
// the SMs from results/2026-12-04-h200x1-s22, call 1). 0 when its CTAs
// take an SM each (HostCopyCTAsPerSM of 1).
func (e *engine) packedReadWeight(k *job) float64 {
	if e.p.HostCopyCTAsPerSM <= 1 {
		return 0
	}
	return k.hostRead * float64(e.heldSMs(k)) / float64(max(e.p.HostCopyCTAs, 1))
}

// heldSMs is how many SMs kernel k's CTAs hold now (more than one of
// c3lab's copy kernel's CTAs may share one: Profile.HostCopyCTAsPerSM).
func (e *engine) heldSMs(k *job) int {
	n := 0
	for _, c := range e.cohorts {
		if c.job == k {
			n += c.sms()
		}
	}
	return n
}

// hostWriteLaunchGap is how long compute kernel j waits to launch behind
// a copy kernel's writes to host memory (Profile.HostWriteLaunchGap): in
// full from the write weight Profile.HostWriteLaunchGapWeight, in
// proportion below it. The wait ends early when the writes do (advance).
func (e *engine) hostWriteLaunchGap(j *job) float64 {
	if e.p.HostWriteLaunchGap <= 0 {
		return 0
	}
	w := e.hostWriteWeight(j)
	if w == 0 {
		return 0
	}
	share := 1.0
	if e.p.HostWriteLaunchGapWeight > 0 {
		share = math.Min(1, w/e.p.HostWriteLaunchGapWeight)
	}
	return e.p.HostWriteLaunchGap * share
}
