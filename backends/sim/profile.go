// Package sim is c3lab's simulator backend: an event-driven fluid model of a
// GPU node that runs the same experiments as the real backend, so the lab
// works and teaches C3 interference on a machine without a GPU.
//
// The model (see model.md beside this file): kernels are made of CTAs that
// hold one SM each from dispatch to completion; a block scheduler hands free
// SMs to pending CTAs by stream priority, then launch order, within each
// kernel's SM partition; a GEMM runs as its launch (a per-shape table of
// the cuBLASLt kernels' grids): a persistent one frees no SM before it
// ends, one in waves frees SMs at its wave boundaries; collectives on copy
// engines hold no SMs, and a copy-engine reduction's kernel runs after its
// copies. While ops overlap, HBM and NVLink bandwidth are shared (one pool,
// max-min fair in proportion to demand, with a contention penalty), and every op
// progresses at the rate of its scarcest resource. Rates are recomputed whenever a CTA cohort ends, a
// kernel launches or an op finishes. Every constant is a named field of a
// Profile. The model is deterministic.
package sim

import (
	"math"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Profile is a device model: every constant the simulator uses, named and
// documented. Bandwidths are bytes per second, rates FLOP per second, times
// seconds.
//
// Values marked "datasheet" come from NVIDIA's H200 specifications, values
// marked "measured" from runs on a 2 x H200 node (c3lab's own, in
// backends/cuda/results, and shared/reference/GPU-NODE.md), values marked
// "fitted" were fitted to the gated sweeps of
// backends/cuda/results/2026-11-30-h200x2-gated (by TestFitH200, since
// replaced by c3lab calibrate, package calib), and values marked "model"
// are estimates no run has pinned down yet. H200Provenance gives each
// field's source and physical range; profile files (profilefile.go) carry
// them with a calibrated profile.
// TestCalibrationAgainstH200 and TestCalibrationCopyEnginesAgainstH200
// hold the error against those sweeps.
type Profile struct {
	// Name is the profile's key ("h200").
	Name string
	// Device is the device's marketing name.
	Device string

	// SMs is the number of streaming multiprocessors (datasheet: 132).
	SMs int
	// SMStep is the green-context partition granularity in SMs (measured: 8).
	SMStep int
	// MaxGPUs is the largest node the model covers (NVSwitch, 8 GPUs).
	MaxGPUs int
	// HighestPriority is the most urgent stream priority (measured: -5).
	HighestPriority int
	// MemoryBytes is the device memory scenarios must fit in, as the
	// driver reports it (measured: cuDeviceTotalMem gave 150109880320
	// bytes, 139.8 GiB, on each GPU of the 2 x H200 node, doctor.json in
	// backends/cuda/results; NVIDIA sells it as 141 GB of HBM3e). The
	// driver's figure, not the datasheet's, so that the simulator refuses
	// exactly the scenarios the cuda backend refuses on an H200.
	MemoryBytes int64

	// PeakFLOPs is dense tensor-core peak per element type (datasheet;
	// fp32 is the non-tensor SIMT rate).
	PeakFLOPs map[scenarios.DType]float64
	// GEMMEfficiency is the share of peak a large, well-shaped GEMM sustains
	// on the SMs it holds, per element type; a type not listed uses bf16's.
	// Fitted: the median over the tensor-bound GEMMs of the sweep and of
	// c3lab-ref.json, timed on random operands (bf16 8192^3: 1433 µs, 767
	// TFLOP/s).
	GEMMEfficiency map[scenarios.DType]float64
	// GEMMMemoryStall slows compute-bound GEMM CTAs when another op loads
	// HBM: the CTA rate is divided by 1 + GEMMMemoryStall x (the other op's
	// share of HBM bandwidth). Fitted.
	GEMMMemoryStall float64
	// GEMMLaunches is how each GEMM shape launches (grid, CTA size, CTAs
	// resident per SM, persistent or in waves, tile and split-K), per
	// element type and SM count target: the launch decides whether the
	// GEMM holds its SMs to its end (persistent) or frees them at its wave
	// boundaries. A shape not listed takes the tile rule's persistent
	// launch (GEMMLaunch.Source "rule"). Each entry carries its
	// provenance in Source: "measured" (ncu launch statistics of the
	// cuBLASLt algorithm the cuda backend picks) or "model" (the tile
	// rule, written into the table until a measurement replaces it). The
	// H200's is gemm_launches_h200.json, embedded and parsed once per
	// H200() call.
	GEMMLaunches []GEMMLaunch
	// GEMMPlacements is, per measured GEMM shape and placement (the rest
	// of a comm partition, a compute partition, a cuBLASLt SM target),
	// its time alone there over its time alone on the whole device
	// (GEMMPlacement). With GEMMTiles, a GEMM whose shape and placement
	// the table has runs at the CTA rate that gives that ratio of its
	// simulated whole-device time; the others keep the model
	// (RestPartitionGEMMLoss, RestClusterLoss), scaled by the table's
	// prior for the placement (PlacementPrior). The H200's is
	// gemm_placements_h200.json, embedded and parsed once per H200() call.
	GEMMPlacements []GEMMPlacement
	// GEMMWholeTimes is, per measured GEMM shape, its time alone on the
	// whole device (GEMMWholeTime), from the same probe as
	// GEMMPlacements. A shape's measured time over the model's, divided
	// by the median of that over the table, is its deviation from the
	// model: the simulator multiplies the shape's time by it, in every
	// placement. The H200's is in gemm_placements_h200.json.
	GEMMWholeTimes []GEMMWholeTime
	// tables indexes GEMMPlacements and GEMMWholeTimes (New builds it);
	// nil has them indexed on each use.
	tables *gemmTables

	// HBMBandwidth is achievable HBM bandwidth (measured: c3lab's stream op
	// moves 3.9-4.0 TB/s read + write; a large copy ~4.3 TB/s).
	HBMBandwidth float64
	// SMHBMBandwidth is the most HBM bandwidth one SM's CTA can pull; a
	// memory-bound kernel needs HBMBandwidth / SMHBMBandwidth SMs to
	// saturate HBM. Model.
	SMHBMBandwidth float64
	// HBMContention is the share of HBM bandwidth lost to bank and row
	// conflicts while two ops stream through it at once. Fitted.
	HBMContention float64
	// L2Bytes is the L2 cache size (datasheet: 60 MB on H200, 50 MiB usable
	// per partition pair; the model uses the whole).
	L2Bytes int64
	// L2Interference raises a GEMM's HBM traffic by this share while
	// another op streams through L2 and evicts its tiles. Fitted.
	L2Interference float64
	// InterferenceKnee is the other ops' share of HBM bandwidth at which
	// L2Interference and HBMContention apply in full; below it, in
	// proportion (a host copy at 1 % of HBM barely evicts a GEMM's tiles:
	// one H200 measured a memory-bound GEMM 3.5 % slower next to a 54 GB/s
	// d2h copy). 0 keeps the model before it: in full whenever another op
	// runs. Model (0 in the built-in); fitted from
	// profiles/h200-measured.yaml.
	InterferenceKnee float64

	// LinkBandwidth is one GPU's NVLink bandwidth per direction
	// (datasheet: 18 links x 26.56 GB/s = 478 GB/s; NVSwitch gives every GPU
	// the same total).
	LinkBandwidth float64
	// LinkEfficiencySM is the share of LinkBandwidth that NCCL's kernels
	// reach, per collective (fitted to NCCL 2.28's isolated collectives on
	// 2 x H200 behind NVSwitch with NVLS off).
	LinkEfficiencySM map[scenarios.Collective]float64
	// LinkEfficiencyCE is the share c3lab's copy engines reach (fitted to
	// its isolated copy-engine all-gathers and all-to-alls).
	LinkEfficiencyCE float64
	// LinkEfficiencyNCCLCE is the share NCCL's own copy-engine path reaches
	// (fitted to its isolated all-gathers and all-to-alls).
	LinkEfficiencyNCCLCE float64

	// CommCTAs is the CTA (channel) count of an SM collective by default,
	// per collective (NCCL's choice on NV18). Model.
	CommCTAs map[scenarios.Collective]int
	// CTALinkBandwidth is the link bandwidth one collective CTA drives in
	// a kernel of CommCTARef CTAs, per collective (CTABandwidth gives it at
	// other counts); the collective saturates the link at about
	// LinkBandwidth x LinkEfficiencySM / CTALinkBandwidth CTAs. Fitted: the
	// median per-CTA bandwidth of the sweep's runs under a CTA cap of 8 and
	// 16, where the capped collective runs alone after the GEMM, taken to
	// CommCTARef CTAs by CommCTAScaling.
	CTALinkBandwidth map[scenarios.Collective]float64
	// CommCTAScaling is how one collective CTA's link bandwidth falls as
	// the kernel has more CTAs: a kernel of n CTAs moves at most
	// CTALinkBandwidth x (n / CommCTARef)^-CommCTAScaling per CTA (see
	// CTABandwidth). On two H200s one CTA of NCCL's kernels under a cap
	// of 8 CTAs moved 11-16 % more than one under a cap of 16, for every
	// collective, while neither cap filled the link. Fitted in
	// stage 1 with CTALinkBandwidth; 0 keeps one bandwidth per CTA at
	// every count, as the built-in does.
	CommCTAScaling float64
	// PartitionSMLinkBandwidth is the link bandwidth one SM drives for an
	// SM collective confined to a partition (a green context) of fewer
	// SMs than its CTAs, per collective; the confined collective then
	// moves as many such units as the partition has SMs, at most its
	// unconfined rate. A partition is not a CTA cap: on two H200s at 16
	// SMs an all-gather of 32 CTAs ran slower than 16 of its CTAs do
	// under a CTA cap, an all-to-all of 64 CTAs faster (model.md, "What
	// the model still gets wrong"). Under this partition model a
	// collective in an SM partition of its own (any size) pays only
	// PartitionLatencyShare of the CommLatencySensitivity stall, which is
	// paid in full beside other kernels' CTAs on the same SMs. Fitted in
	// stage 1 from the runs with such a partition next to a short GEMM; 0
	// (no entry) keeps the CTA model: one CTA per SM at CTALinkBandwidth,
	// and the stall everywhere.
	PartitionSMLinkBandwidth map[scenarios.Collective]float64
	// PartitionLatencyShare is the share of the CommLatencySensitivity
	// stall an SM collective still pays in an SM partition of its own,
	// under the partition model (PartitionSMLinkBandwidth), per
	// collective: its CTAs share no SM with the other kernels', but its
	// loads still queue in HBM behind theirs. Measured on one H200 with
	// c3lab's own kernels in a green context of as many SMs as their CTAs
	// beside the 1 GiB stream op (results/2026-12-04-h200x1-s23, call 4):
	// the reduction kernel of an all-reduce's local traffic kept 0.50-0.64
	// of the stall it paid sharing the SMs, the copy kernel of an
	// all-gather's 0.16-0.40 (on another H200, call 7: 0.51-0.62 and
	// 0.17-0.40). Beside compute-bound GEMMs the same kernels stalled
	// about half what this share gives with their HBM share (calls 5 and
	// 6; model.md, "What the model still gets wrong"). No entry: no stall
	// in a partition.
	PartitionLatencyShare map[scenarios.Collective]float64
	// CommLatencySensitivity slows an SM collective's CTAs when another op
	// loads HBM (its copies are latency-bound): CTA rate divided by
	// 1 + CommLatencySensitivity x (the other op's share of HBM). Fitted;
	// the copy-engine reduction kernel shares it.
	CommLatencySensitivity float64
	// CommComputeStall slows an SM collective (NCCL's kernel) while
	// compute kernels (GEMMs, stream ops) hold SMs beside it, in a
	// partition of its own or not: its rate, whatever bounds it (its CTAs
	// or the link), is divided by 1 + CommComputeStall x the share of the
	// device's SMs their CTAs hold. Their operands stream through
	// L2 and the crossbar the collective's loads and stores also cross,
	// whatever HBM they use: on two H200s an SM collective next to a
	// compute-bound GEMM of 800-4500 flop/B, which hardly loads HBM, ran
	// 1.07-1.27x its isolated time under comm-first+prio and 1.05-1.20x in
	// a partition of 32 or 64 SMs (model.md, "Shared bandwidth").
	// Fitted; 0 turns it off (the built-in).
	CommComputeStall float64
	// CommHBMPerLinkByte is the HBM traffic per byte sent over the link
	// (read to send, write on receive, reduction reads), per collective.
	CommHBMPerLinkByte map[scenarios.Collective]float64
	// CommLocalCopy is whether an SM all-gather also copies the rank's own
	// shard into the output (NCCL's out-of-place all-gather does).
	CommLocalCopy bool
	// CommSetup is an SM collective's whole fixed cost per collective:
	// its launch (KernelFixedCost, holding no SM, as every kernel's) and
	// then, holding its SMs, the rest (peer handshakes) before data moves.
	// Fitted as the intercept of the isolated collectives' times against
	// their size (the gated protocol keeps the host's launch out); since
	// model v2 (issue 17) the part spent holding SMs is CommSetup less
	// KernelFixedCost.
	CommSetup map[scenarios.Collective]float64

	// CopyEngines is the number of async copy engines per GPU (measured: 3).
	CopyEngines int
	// CopyEngineBandwidth is the most one copy engine moves between peers.
	// Measured: ~394 GB/s for one large peer copy.
	CopyEngineBandwidth float64
	// CopyLaunchOverhead is the host's cost to enqueue one copy and the
	// engine's to start it. Model.
	CopyLaunchOverhead float64
	// CopySyncOverhead is a copy-engine phase's fixed cost on one copy
	// stream: the cross-GPU events that order it and the engine's start.
	// Fitted as the intercept of the isolated copy-engine collectives'
	// times against their size, with CopyStreamSyncOverhead.
	CopySyncOverhead float64
	// CopyStreamSyncOverhead is what each copy stream a phase uses beyond
	// the first adds to its fixed cost: every stream waits on the phase's
	// start event, records its own events, and every rank's comm stream
	// waits on it across GPUs. Measured (2 x H200, 64 KiB to 1 MiB per
	// rank): the same collectives cut over 3 engines' streams took 14-17
	// µs longer than whole on one (backends/cuda/FINDINGS.md, section 1).
	// With it CopySyncOverhead is a one-stream phase's cost.
	CopyStreamSyncOverhead float64
	// CopyChainSyncOverhead is the fixed cost of a copy phase that follows
	// its collective's own reduction kernel (an all-reduce's second phase),
	// counted from the kernel's end in place of CopySyncOverhead and
	// CopyLaunchOverhead: its copies were enqueued and its cross-GPU waits
	// set while the first phase ran, so what is left is the event's
	// latency and the engines' start. Each stream beyond the first adds
	// CopyStreamSyncOverhead, as in any phase. Fitted with
	// ReductionBandwidth to the isolated copy-engine reductions.
	CopyChainSyncOverhead float64
	// CopyChunkGap is an engine's idle gap between consecutive chunks. Model.
	CopyChunkGap float64
	// CopyHBMWeight is how many times a copy engine's HBM demand counts
	// when HBM is oversubscribed and divided among its users in
	// proportion to their demand: 1 puts copies and SM kernels on an
	// equal footing (one shared pool), a large value serves the copies
	// first (the model before issue 17); 0 means 1. Model: 1, as issue 17
	// reports copies next to a memory-bound GEMM slowing 1.4x while the
	// GEMM slowed 1.1x. The committed copy sweep
	// (2026-11-30-h200x2-session3/sweep-copies.json) shows the opposite
	// for memory-bound GEMMs (GEMM 1.07-1.26x, copies 0.99-1.10x), so it
	// is to be fitted.
	CopyHBMWeight float64
	// DMAHBMPerLinkByte is the HBM traffic per link byte of a copy-engine
	// collective, per collective (the reductions stage data through HBM).
	DMAHBMPerLinkByte map[scenarios.Collective]float64
	// ReductionCTAsPerSM is how many CTAs per SM of its domain the
	// reduction kernel of a copy-engine reduce-scatter or all-reduce
	// launches (c3lab's kernel: a grid-stride loop over 4 CTAs per SM).
	ReductionCTAsPerSM int
	// ReductionSMBandwidth is the memory traffic (reads and writes) the
	// kernel moves per SM it holds (the engine keeps one of its CTAs
	// resident per SM); ReductionBandwidth caps the kernel whatever its
	// SMs. Fitted to the vectorized kernel (16-byte words, 4 in flight per
	// thread): alone it moves about 3.7 TB/s. Next to a GEMM
	// ContendedSMBandwidth caps it.
	ReductionSMBandwidth float64
	ReductionBandwidth   float64
	// RestPartitionGEMMLoss is the share of its tensor throughput a GEMM
	// loses on the rest side of a comm partition (comm_sms without
	// compute_sms), beyond the SMs it gave up. Measured on H200: bf16
	// 8192^3 ran 1.40x slower on the 100 SMs left by a 32-SM comm partition
	// but 1.22x when cuBLASLt only targeted 100 SMs, and 3584x8192x8192 ran
	// 1.34x slower on the 124 SMs an 8-SM partition leaves against 1.09x on
	// an aligned 112-SM group. Fitted.
	RestPartitionGEMMLoss float64
	// RestClusterLoss is what the cluster of a GEMM's kernel adds to
	// RestPartitionGEMMLoss on the rest side of a comm partition: the
	// tensor rate is scaled by (1 - RestClusterLoss) per doubling of the
	// cluster beyond 4 CTAs (a cluster of 8 loses it, of 2 gains it back,
	// of 1 counts as 2). A cluster needs that many free SMs of one GPC,
	// which the rest of a green-context split has fewer of. Measured on
	// one H200 (2026-12-02): 68 SMs over the whole GPU, against the share
	// of SMs, was 0.88 / 1.07 / 1.21 for clusters of 2 / 4 / 8 on 90 grid
	// shapes and 0.93-0.98 / 1.06-1.09 / 1.10-1.18 on the suite's GEMMs
	// on the rests of 16, 32 and 64-SM partitions; on aligned groups and
	// SM targets no such order. Only a launch whose kernel name gives its
	// cluster is scaled (measured launches).
	RestClusterLoss float64
	// PowerLimitSMs is how many SMs running a GEMM's main loop bring the
	// board to its power limit at the maximum SM clock. With more busy
	// (the busy count weighs each GEMM CTA by its tiles' main-loop share),
	// the SM clock drops until the power fits, to
	// (PowerLimitSMs / busy)^(1/PowerClockExponent) of the maximum, and
	// every tensor-bound CTA slows with it; memory-bound CTAs and
	// collectives keep their rate. So a GEMM confined to fewer SMs loses
	// less than its share of them, and one beside a collective that holds
	// SMs gains back part of what it gave up. Measured on one H200
	// (TestH200PowerLimit fits both to the clock probe,
	// backends/cuda/results/2026-12-02-h200x1-s6): large bf16 GEMMs ran
	// at the 700 W limit at 1560-1680 MHz on all 132 SMs, at 1680-1785 on
	// 120, at 1965 on 68. The model is the steady state: a GEMM short
	// enough to leave the GPU idle most of a run keeps its clock (the
	// probe's 0.43 ms GEMM ran at 1980 MHz), which it does not see. 0: no
	// power limit (the model before).
	PowerLimitSMs float64
	// PowerClockExponent is how the busy SMs' power grows with the SM
	// clock (as clock^exponent: the voltage rises with the clock).
	// Measured with PowerLimitSMs.
	PowerClockExponent float64
	// RepGap is how long the GPU idles between two repetitions of a run
	// on the cuda backend (events, synchronisation, the start gate). The
	// power limit acts on the power averaged over many repetitions, so a
	// run's clock comes from its busy SMs over repetition plus gap: a short
	// GEMM keeps the maximum clock that a long one loses. Measured: about
	// 0.85 ms on one H200 (the clock probe's 0.43 ms GEMM repeated every
	// 1.29 ms).
	RepGap float64
	// ContendedSMBandwidth caps the memory traffic one SM of the reduction
	// kernel moves while a tensor-bound GEMM runs on other SMs: the GEMM's
	// operand traffic fills L2 and the crossbar, and a kernel on few SMs
	// gets about its SMs' share of them. On H200 a pipelined reduction on 8
	// and 16 SMs next to a bf16 8192^3 GEMM moved 41 and 38 GB/s per SM by
	// its spans, against at least 54 alone (FINDINGS.md, section 4). Set to
	// that measurement (40 GB/s), not fitted.
	ContendedSMBandwidth float64

	// NCCLCECTAs and NCCLCESetup are the SM kernel NCCL's copy-engine path
	// runs before its copies: its CTA count and its whole fixed time
	// (fitted), all of it before its CTAs, holding no SM. Its copies wait
	// for the compute kernels enqueued before the collective to end
	// (measured in 24 of 24 pairs on 2 x H200, model.md "Ops become jobs");
	// its setup runs beside them.
	NCCLCECTAs  int
	NCCLCESetup float64

	// PeerLoadCTABandwidth is the link bandwidth one CTA of c3lab's
	// p2p-load reduction (comm_engine p2p-load) drives while it loads the
	// peers' blocks over NVLink: 256 threads with 8 loads of 16 bytes in
	// flight each (32 KiB) per round trip of about 2 µs, so about 16 GB/s;
	// the link caps the kernel at LinkBandwidth x LinkEfficiencyCE (a load
	// moves raw data, as a copy engine does, without NCCL's protocol). 0
	// (a profile from before it) takes DefaultPeerLoadCTABandwidth.
	// Model: no run has measured it yet.
	PeerLoadCTABandwidth float64

	// PCIeBandwidth is what one GPU's copies move over PCIe in one
	// direction (host to device, or device to host) from pinned host
	// memory; PCIeDuplexBandwidth is both directions together (a swap).
	// Measured on one H200 (TestGPUHostCopies, results/2026-12-01-h200x1/
	// hostcopy.json): copy-engine copies of 64 and 256 MiB move 55.3 GB/s
	// each way after their fixed cost, a swap 99-101 GB/s in all.
	PCIeBandwidth       float64
	PCIeDuplexBandwidth float64
	// PCIeLinkBandwidth is the PCIe link's raw rate per direction, what
	// utilization is a share of, as NVML telemetry reports it (datasheet:
	// Gen 5 x16, 63 GB/s).
	PCIeLinkBandwidth float64
	// HostCopySetup is a copy-engine host copy's fixed cost: the engine's
	// start and the events around it. Measured: 15 µs (64 KiB in 16.5 µs,
	// 4 MiB in 90.5).
	HostCopySetup float64
	// HostCopyCTAs is how many CTAs c3lab's copy kernel launches for a
	// host copy by default (backends/cuda.DefaultHostCopyCTAs), and
	// HostCopyCTABandwidth what one of them moves over PCIe through
	// device-mapped host memory. Measured: 4 CTAs already reach the
	// kernel's whole bandwidth, so at least 12.8 GB/s each; 8 CTAs packed
	// on 3 SMs behind a GEMM that left them enough L1 moved 49 GB/s, so one
	// SM's reads reach at least 16.3 (results/2026-12-04-h200x1-s25, call
	// 4; the value used: 16.4).
	HostCopyCTAs         int
	HostCopyCTABandwidth float64
	// HostCopyCTAsPerSM is how many of c3lab's copy kernel's CTAs one SM
	// holds at once when the copy has to wait for SMs. On an idle GPU the
	// block scheduler spreads a copy's CTAs one to an SM; once the free
	// SMs are taken, and whenever the copy waits for another kernel's SMs,
	// each SM it gets takes this many. On one H200 a copy of 32 CTAs
	// ready with a GEMM started in the GEMM's last round on 11-15 SMs, 3
	// CTAs to an SM (64 CTAs: 24-25 SMs); beside the decode GEMM, which
	// leaves 20 SMs free, 60 of 64 CTAs started at once on 20-22 SMs and
	// the rest as the GEMM ended; a CTA so packed moved as much as one
	// alone on its SM (results/2026-12-04-h200x1-s22, call 1: the SM id
	// of every CTA). A cuBLASLt GEMM's CTA (168 registers x 384 threads)
	// leaves no room for one of the copy's, nor does a copy CTA for a
	// GEMM's. CTAs packed on one SM read host memory at one CTA's
	// bandwidth (HostCopyCTABandwidth) between them, and the CTAs that got
	// SMs first take the kernel's bandwidth first: beside a decode GEMM
	// that leaves 4 SMs free, a 192 MiB copy of 16 CTAs ran 12 on those 4
	// SMs and 4 on 2 SMs as the GEMM ended; the 12 finished at 3.3 ms, the
	// last of the 4 at 5.4, where the copy alone takes 3.9 (call 3).
	// Measured; 1 (or 0) keeps one CTA to an SM, each at its own rate.
	HostCopyCTAsPerSM int
	// HostCopyInheritedCTABandwidth is what one CTA of c3lab's copy kernel
	// moves when the kernel's first CTAs start on SMs a GEMM's kernel left
	// configured for its tiles (the most shared memory, little L1 for the
	// copy's loads in flight): behind a GEMM. Measured on one H200: 4.5
	// GB/s (4.2-4.9, 16 runs of 4 and 8 CTAs behind two GEMMs of 196 KB of
	// tiles; backends/cuda/results/2026-12-02-h200x1-s11); behind one of
	// 172 KB it moved 9.5. Since the CTAs pack (HostCopyCTAsPerSM) it
	// holds per group of CTAs that started together mostly on such SMs.
	// 0 keeps HostCopyCTABandwidth everywhere.
	HostCopyInheritedCTABandwidth float64
	// HostCopyInheritedAbove is the shared memory per CTA
	// (GEMMLaunch.SharedBytes) above which a GEMM's kernel leaves its SMs
	// configured so that the copy kernel's CTAs move only
	// HostCopyInheritedCTABandwidth: the kernels that need the largest
	// carveout. On one H200 an 8-CTA h2d copy of 128 MiB, ready with each
	// of eleven GEMMs, started on 3 SMs of the GEMM's last round and took
	// 3.77-4.03 ms behind the nine whose kernels hold 201,916-222,532 B
	// (228 KiB carveout), 2.71-2.75 ms behind the two (nvjet 320x128_64x3,
	// 189,660 B: 196 KiB carveout) whose kernels leave more L1, and 2.62
	// ms alone (results/2026-12-04-h200x1-s25, call 4). A launch whose
	// shared memory is not known (the tile rule's) counts as above, as
	// most measured kernels are. 0: every GEMM's.
	HostCopyInheritedAbove int
	// HostCopyKernelBandwidth caps the copy kernel in each direction and
	// HostCopyKernelDuplexBandwidth both together: its loads and stores
	// over PCIe reach less than the copy engines. Measured: 51.2 GB/s to
	// the GPU, 52.5 from it; a swap 63.9 GB/s at the default 32 CTAs (48.6
	// at 4 CTAs, 75.4 at 64: HostCopyKernelDuplexByCTAs follows the count).
	HostCopyKernelBandwidth       float64
	HostCopyKernelDuplexBandwidth float64
	// HostCopyKernelDuplexByCTAs, when set, gives a swap's cap on the copy
	// kernel (both directions together) by its CTA count, in place of
	// HostCopyKernelDuplexBandwidth: measured points, interpolated in the
	// logarithm of the count and held flat beyond the ends. One H200 moved
	// 48 MiB each way alone in 2088, 1672 and 1364 µs at 4, 16 and 64 CTAs
	// (48.2, 60.2 and 73.8 GB/s; results/2026-12-03-h200x1-s15), and 63.9
	// GB/s at the default 32; one direction alone does not move with the
	// count (a d2h of 112 MiB took 2249, 2246 and 2239 µs).
	HostCopyKernelDuplexByCTAs []CTACountBandwidth
	// HostCopyKernelBusyGain is how much faster the copy kernel moves
	// both ways (a swap) while another kernel works on the GPU: its cap
	// is 1 + the gain times what it moves alone. Measured on one H200
	// (results/2026-12-03-h200x1-s18, two passes): on the side of a 16-
	// or 32-SM partition the 32 MiB swap took 998-1044 µs beside a 1 MiB
	// stream op that ends at once, 933-962 beside a 256 MiB stream op
	// and 964-972 beside a bf16 8192^3 GEMM; one way, the copy kernel
	// gains nothing (1.00-1.05x its time alone beside the Adam stream).
	// Why the GPU's other SMs at work speed it up is not known. 0 turns it
	// off.
	HostCopyKernelBusyGain float64
	// HostCopyKernelSetup is the copy kernel's whole fixed cost, of which
	// KernelFixedCost is its launch, holding no SM. Measured: 64 KiB in
	// 7.3 µs to the GPU and 5.9 from it, less the transfer.
	HostCopyKernelSetup float64
	// HostWriteStall slows every other kernel while c3lab's copy kernel
	// writes to host memory: their CTA rate is divided by 1 +
	// HostWriteStall x the copy kernel's share of bytes going to the host
	// (1 for d2h, 1/2 for a swap, 0 for h2d; the copy engines write
	// without it) x its CTAs over HostCopyCTAs, as the stall follows the
	// writing CTAs (results/2026-12-03-h200x1-s18, call 3). Measured
	// (backends/cuda/HOSTCOPIES.md, section 2): a GEMM next to a 64 MiB d2h copy kernel took about the copy's time
	// plus its own in every placement, 1.81-1.93x for bf16 8192^3 and
	// 8.4-10.9x for a 119 µs decode GEMM, the copy itself not slowed; an
	// h2d copy kernel cost them 1.03-1.26x and 1.7-2.1x. Fitted to the
	// sweeps (about 4, in proportion to the weight). Long copies measure a
	// far steeper stall on short GEMMs (HostWriteStallFrom): the profile
	// file profiles/h200-hostwrite.yaml sets it as measured there (56).
	HostWriteStall float64
	// HostWriteStallFrom is the write weight below which the copy
	// kernel's writes do not slow a GEMM's CTAs: their rate is divided by
	// 1 + HostWriteStall x max(0, weight - HostWriteStallFrom). On one
	// H200 (results/2026-12-03-h200x1-s20) GEMMs of one to four tiles per
	// CTA beside a 256 MiB d2h copy kernel moved at about a fifth, a
	// sixteenth, a twenty-eighth and a fortieth of their speed at 8, 16,
	// 24 and 32 copy CTAs: the stall grows much faster than the weight,
	// from a little below 8 CTAs. Measured with HostWriteStall (0.19 and
	// 56) in profiles/h200-hostwrite.yaml. The sweeps' GEMMs beside a d2h
	// copy kernel slow less than that for their tile counts (other
	// cuBLASLt kernels), and the calibrated profiles, fitted to them, keep
	// it at 0: the stall in proportion to the weight (model.md, "What the
	// model still gets wrong").
	HostWriteStallFrom float64
	// HostWriteStallAlone, when set, is the write stall's slope behind a
	// copy kernel whose CTAs got SMs as it launched (an idle GPU, a
	// partition of its own, SMs left free), above HostWriteStallFrom;
	// HostWriteStall then applies, in proportion to the whole weight,
	// behind a copy whose CTAs waited for another kernel's SMs. On one H200 twelve 4096^3 GEMMs beside a 128 MiB d2h copy
	// kernel took 3.6-4.0x their time alone each at 8 copy CTAs and all but
	// stopped at 16 and 32 when the copy started first, and 1.7-2.5x,
	// 2.5-3.6x and 5.2-5.6x when it started among the first GEMM's CTAs
	// (results/2026-12-03-h200x1-s21, call 4). 0 keeps one stall for both
	// (the form before).
	HostWriteStallAlone float64
	// HostWriteStallTiles is the tiles per CTA up to which a GEMM takes
	// the write stall whole; a GEMM of more tiles per CTA takes it times
	// sqrt(HostWriteStallTiles / its tiles per CTA). On the same probes
	// GEMMs of 8 to 28 tiles per CTA slowed about half as much as those of
	// one to four, whichever cuBLASLt kernel ran them. Measured (2, in
	// profiles/h200-hostwrite.yaml); 0 turns it off, as the calibrated
	// profiles have it.
	HostWriteStallTiles float64
	// HostWriteTail is the share of a copy kernel's bytes over which its
	// write weight falls to nothing: its CTAs finish unevenly, and the
	// stalls its writes put on other kernels lift over its last part.
	// Measured on one H200 (results/2026-12-03-h200x1-s19 and -s20): ops
	// beside the copy sped up over its last 20-30 % (0.3 in
	// profiles/h200-hostwrite.yaml). 0 turns it off, as the calibrated
	// profiles have it: with the nineteenth session's fit it took the held-out
	// Adam swap on the rest of 32 SMs from -6.1 to -10.0 % and moved no
	// other sweep run by more than half a point.
	HostWriteTail float64
	// HostWriteStreamStall is HostWriteStall for a stream op's CTAs,
	// which stream HBM and lean on the memory system throughout. Measured
	// on one H200 (results/2026-12-03-h200x1-s18, two passes): the 1 GiB
	// Adam stream beside a 32 MiB d2h copy kernel ended at 949-972 µs on
	// the rest of a 16-SM partition, 1006-1008 on the rest of a 32-SM one
	// and 939-944 with the copy launched first (filling its SMs,
	// StreamFillsCopySMs); 4.6 gives 973, 1003 and 939, and 4.9 with the
	// stall lifting over the copy's last part (HostWriteTail 0.3, as
	// profiles/h200-hostwrite.yaml has it) 970, 1003 and 926. The stall
	// on a stream op is in proportion to the write weight from 8 CTAs up,
	// where a GEMM's is not (HostWriteStallFrom). 0 takes HostWriteStall.
	HostWriteStreamStall float64
	// HostWriteEndWait is how long a compute kernel (a GEMM, a stream
	// op) that finishes its work while c3lab's copy kernel writes to host
	// memory waits before it ends, per unit of the copy's write weight
	// (job.hostWrite: its share of bytes going to the host x its CTAs
	// over HostCopyCTAs), at most until the copy's writes end. The
	// kernel's CTAs have left their SMs; what follows it on its stream
	// waits. On one H200 (results/2026-12-03-h200x1-s19, call 1) 64 MiB
	// stream ops back to back beside one 128 MiB d2h copy kernel took
	// 132, 246, 375, 520, 760 and 875 µs at 8, 16, 24, 32, 48 and 64
	// copy CTAs (37 alone), the rate stall (HostWriteStreamStall)
	// explaining 80-377 of them; beside the same bytes cut into 8 MiB
	// copy kernels an op ended with each copy kernel. Measured; 0 turns
	// it off (a profile file written before the field).
	HostWriteEndWait float64
	// HostWriteLaunchGap is how long a compute kernel released while
	// c3lab's copy kernel writes to host memory waits before it launches,
	// at most until the copy's writes end: HostWriteLaunchGap x min(1,
	// the copy's write weight / HostWriteLaunchGapWeight). On one H200
	// (the same probes) consecutive stream ops stood 57, 104, 122, 140
	// and 134 µs apart at 8, 16, 24, 32 and 48 copy CTAs, 1-2 µs after
	// the copy. Measured; 0 turns it off.
	HostWriteLaunchGap float64
	// HostWriteLaunchGapWeight is the copy's write weight from which
	// HostWriteLaunchGap applies in full (0.6: about 19 CTAs of a d2h
	// copy). Measured with it.
	HostWriteLaunchGapWeight float64
	// HostReadLaunchGap is how long a compute kernel released while
	// c3lab's copy kernel reads host memory waits before it launches, per
	// unit of the copy's read weight (its share of bytes read from the
	// host x its CTAs over HostCopyCTAs), at most until the reads end. On
	// one H200 decode GEMMs back to back beside a 128 MiB h2d copy kernel
	// stood 18, 49 and 95 µs apart at 8, 16 and 32 copy CTAs
	// (results/2026-12-03-h200x1-s20 call 1, -s19 call 3), 1-3 µs after
	// it. Measured; 0 turns it off.
	HostReadLaunchGap float64
	// HostCopyKernelReadStall slows the kernels that rely on L2 reuse
	// (GEMMs; not stream ops, not other copies) while c3lab's copy kernel
	// reads host memory (an h2d copy, a swap's h2d half): a kernel's rate
	// is divided by 1 + HostCopyKernelReadStall x the copy's share of bytes
	// read from the host x the kernel's own demand on HBM as a share of
	// its bandwidth (engine.hostReadStall). Set on one H200 from GEMMs
	// beside an h2d copy kernel of 32 CTAs (results/2026-12-03-h200x1-s16);
	// 0, off, in the built-in profile since HostReadStall, which the
	// GEMMs of later probes follow whatever their demand on HBM. Profile
	// files that set it still get it.
	HostCopyKernelReadStall float64
	// HostReadStall slows a GEMM's CTAs while c3lab's copy kernel reads
	// host memory, in proportion to the copy's read weight (its share of
	// bytes read from the host x its CTAs over HostCopyCTAs, as the launch
	// gap): the GEMM's rate is divided by 1 + (HostReadStall x weight +
	// HostReadStallSteep x max(0, weight - HostReadStallFrom)), times
	// sqrt(HostReadStallTiles / its tiles per CTA) above that many tiles
	// per CTA (Profile.hostReadStall). On one H200 GEMMs of about four
	// tiles per CTA beside a 128 MiB h2d copy kernel took 1.3-1.6x, 1.7-1.8x
	// and 2.4x their time alone at 8, 16 and 32 copy CTAs and 12-14x at 64;
	// GEMMs of 13-16 tiles per CTA 1.1x, 1.3x, 1.4x and at least 2.7x
	// (results/2026-12-03-h200x1-s20, call 4; checked on seven more GEMMs,
	// other copy lengths and swaps in -s21, call 1). The stall does not
	// follow the GEMM's demand on HBM (a compute-bound 4096^3 slows as much
	// as 512x28672x4096), which HostCopyKernelReadStall assumed. 0 turns
	// it off.
	HostReadStall float64
	// HostReadEndWait is HostWriteEndWait for a copy kernel's reads from
	// host memory: a compute kernel whose work is done while c3lab's copy
	// kernel reads the host waits HostReadEndWait x the copy's read weight
	// before it ends, at most until the reads end. On one H200 single
	// GEMMs of 94 to 345 µs, launched as a 128 MiB h2d copy kernel started,
	// ended 110-175 µs later than their rate explains at 32 copy CTAs and
	// about half that at 16, whatever their length; back to back, decode
	// GEMMs took 248 µs beside the copy against 118 alone, besides the
	// launch gap (HostReadLaunchGap) between them
	// (results/2026-12-03-h200x1-s20, calls 1 and 4). Measured; 0 turns it
	// off.
	HostReadEndWait float64
	// HostReadApartWait is what a compute kernel waits before it ends
	// while an h2d copy kernel that started after it reads host memory on
	// SMs of its own partition: HostReadApartWait x the copy's read
	// weight, at most until the reads end; such a copy does not slow the
	// kernel's rate (HostReadStall).
	// On one H200 twelve GEMMs of 93 µs to 1.8 ms on the rest of a 16-SM
	// partition beside a 256 MiB h2d copy kernel in it, launched first,
	// took their time alone there plus 38-58 µs at 16 copy CTAs and 74-116
	// µs at 32, whatever their length or K: 94 and 87 µs per unit of read
	// weight at the median (results/2026-12-04-h200x1-s26, call 2; on a
	// second H200, call 3, 86 and 87; on a third with the copy in 32 SMs,
	// call 4, 81 and 84). GEMMs that outlast a shorter copy took their
	// time alone there (call 1).
	// Measured; 0 turns it off.
	HostReadApartWait float64
	// HostReadStallFrom is the read weight above which HostReadStallSteep
	// adds to the read stall: past about 40 CTAs of an h2d copy every GEMM
	// all but stops (the same probes).
	HostReadStallFrom float64
	// HostReadStallSteep is the read stall's slope per unit of read weight
	// above HostReadStallFrom, behind a copy kernel whose CTAs got SMs as
	// it launched: beside a copy of 64 CTAs that waited for a GEMM's SMs,
	// twelve 4096^3 GEMMs took 1.9-2.2x their time alone
	// (results/2026-12-03-h200x1-s21, call 3), not 12x; a decode GEMM of
	// 112 CTAs beside one that started on the 20 SMs it left free, 8x
	// (call 6).
	HostReadStallSteep float64
	// HostReadStallTiles is the tiles per CTA up to which a GEMM takes the
	// read stall whole; a GEMM of more takes it times sqrt(HostReadStallTiles
	// / its tiles per CTA). 0 gives every GEMM the whole stall.
	HostReadStallTiles float64
	// CopyEngineH2DStall and CopyEngineD2HStall slow every kernel while the
	// copy engines move host data into HBM (h2d) or out of it (d2h): its
	// CTA rate is divided by 1 + the stall x its own HBM demand as a share
	// of HBMBandwidth. Writes from PCIe cost HBM far more than their bytes.
	// Measured on one H200 (results/2026-12-01-h200x1-s3, ce_hbm_probe.py):
	// next to a 54 GB/s copy, a bf16 GEMM of 241 flop/B slowed 1.140 (h2d)
	// and 1.017 (d2h), one of 16 flop/B 1.208 and 1.035, one of 2731
	// flop/B 1.009 and 1.002. The sweeps alone do not identify them (a fit
	// left them anywhere in 0..1.1 within 2 % of its best loss).
	CopyEngineH2DStall float64
	CopyEngineD2HStall float64

	// LaunchGap is what an event of another stream costs: in a pair the
	// second op becomes runnable LaunchGap after the first (the gated
	// protocol enqueues both before the start; the second stream waits on
	// an event recorded behind the gate), and in a graph (since model v2,
	// issue 17) a stream's first instance runs LaunchGap after the first
	// stream's start, and an instance waiting on another stream's instance
	// LaunchGap after its end (its own stream's predecessor costs none).
	// Fitted to the pairs, at least 1 µs.
	LaunchGap float64

	// The following constants were introduced for graph scenarios
	// (format 2: streams of op instances with dependencies). HostLaunchGap
	// serves graphs only; KernelFixedCost and WaveJitter serve pairs too
	// since model v2.

	// HostLaunchGap is the host's time per enqueue when it walks a graph
	// the way a framework does (Graph.EnqueueOrder): instance k of that
	// order is enqueued at k x HostLaunchGap. Work already queued on the
	// GPU hides it; an idle GPU waits for it. Model: ~5 µs per launch of
	// an eager framework.
	HostLaunchGap float64
	// KernelFixedCost is what every kernel (a GEMM, a stream op, an SM
	// collective, a reduction, NCCL's copy-engine kernel, the host copy
	// kernel), in a pair as in a graph, pays from the moment it may run
	// (its stream predecessor and dependencies ended, or its launch) to
	// its first CTA: launch and the teardown of the kernel before it,
	// holding no SM. A kernel whose whole fixed cost is fitted or measured
	// (CommSetup, HostCopyKernelSetup) spends the rest of it holding its
	// SMs (NCCLCESetup holds none); copy-engine phases pay CopySyncOverhead or
	// HostCopySetup instead. Model (3 µs; the boundary probe's 3.2 µs per
	// tiny kernel back to back is the measurement to fit it to); it
	// applies to pairs since model v2 (issue 17).
	KernelFixedCost float64
	// WaveJitter spreads the work of one dispatch (a wave) of the CTAs of
	// a GEMM launched in waves (GEMMLaunches), in a pair or a graph, and
	// of a graph's stream op, over +- WaveJitter/2 around its mean, in
	// jitterGroups groups: tiles do not all take the same time, so after a
	// few waves a GEMM's SMs free up a group at a time and a queued kernel
	// of another stream can take them between its waves. Model.
	WaveJitter float64

	// GEMMTiles switches the GEMM's time from the roofline (its FLOPs at
	// the tensor rate of the SMs it holds, or its bytes at HBM's) to its
	// tiles: the launch's output tiles (the tile read from the kernel's
	// name, ParseKernelName; the table's tile when the name does not
	// parse) spread over its persistent grid, the CTA with the most tiles
	// setting the time; each tile's main loop at one SM's tensor rate
	// (K / K step iterations) or its share of HBM, plus GEMMTileEpilogue;
	// and GEMMPrologue once per CTA (once per wave for a launch in waves
	// under LateCTASetup). Off: model v2's roofline.
	GEMMTiles bool
	// LateCTASetup makes a kernel's CTAs that are dispatched after its
	// first ones spend the kernel's setup (an SM collective's peer
	// handshake, a GEMM's GEMMPrologue) themselves before they make
	// progress, as each NCCL channel and each GEMM CTA does its own; off,
	// the setup runs once from the first dispatch and later CTAs start at
	// once. It matters when a kernel gets only part of its SMs at first:
	// a collective launched beside a persistent GEMM of 128 CTAs gets the
	// 4 SMs the GEMM leaves and, off, finishes its handshake there, so the
	// rest of its CTAs skip it at the GEMM's end. Model.
	LateCTASetup bool
	// StreamFillsCopySMs lets a stream op's CTAs run on the SMs c3lab's
	// copy kernel's CTAs hold: a copy CTA uses a few warps and no shared
	// memory, and an elementwise kernel's small CTAs fill the rest of its
	// SM. Only that way round: a copy kernel launched after a stream op
	// finds its SMs full and waits for them. On one H200 the Adam stream
	// beside a 32 MiB d2h copy kernel launched first (comm-first+prio)
	// ran as if on all 132 SMs at the per-SM rate it had on the 116 and
	// 100 a partition left it (results/2026-12-03-h200x1-s18). Off: every
	// CTA holds its SM alone. Model.
	StreamFillsCopySMs bool
	// PlacementPrior scales a GEMM that GEMMPlacements lacks, in a
	// placement it measured other GEMMs in, by the median over those of
	// their measured ratio over the model's there (gemmTables.prior): on
	// one H200 the model put the suite's GEMMs 7-11 % too slow on compute
	// partitions, SM targets and the rest of an 8-SM partition, whose
	// fewer SMs run at a higher clock, and within 2 % at the median on
	// the rests of 16, 32 and 64 SMs (model.md, "A GEMM the table does
	// not have in a placement"). The nearest SM count of the same kind
	// stands in for an SM count the table lacks. Off: such a GEMM takes
	// the model's time there. Measured (the table); the rule is model.
	PlacementPrior bool
	// GEMMPrologue is what a GEMM kernel spends, holding its SMs, before
	// its first tile's main loop: the tile scheduler's and cluster's set-up
	// and the first pipeline fill (on top of KernelFixedCost, which holds
	// no SM). With GEMMTiles only. Fitted (stage 1, isolated GEMMs).
	GEMMPrologue float64
	// GEMMTileEpilogue is one output tile's time outside its main loop:
	// writing the C tile and refilling the pipeline for the next, not
	// overlapped with the main loop (so its share falls as K grows). With
	// GEMMTiles only. Fitted (stage 1, isolated GEMMs).
	GEMMTileEpilogue float64

	// MultiGPUComputeScale and MultiGPUComputeDelay are how much longer a
	// GEMM takes in a run on two GPUs or more than in a run on one: its
	// one-GPU time x (1 + MultiGPUComputeScale) + MultiGPUComputeDelay
	// (the scale slows its tensor-bound main loops, the delay adds to the
	// GEMMPrologue of its first CTAs; with GEMMTiles only). c3lab times each GPU from its
	// own start and reports the slowest GPU's op, so a multi-GPU run shows
	// the slower chip and the later start of the two. Measured: the
	// two-GPU sweeps' GEMMs against the same GEMMs in one-GPU runs
	// (backends/cuda/results/2026-12-02-h200x1-s8, compare_machines.py).
	MultiGPUComputeScale float64
	MultiGPUComputeDelay float64
	// gemmStartDelay is MultiGPUComputeDelay in a profile onGPUs made for
	// two GPUs or more, 0 otherwise: it delays a GEMM's first CTAs only.
	gemmStartDelay float64
}

// onGPUs is p as a run on n GPUs sees it: from two GPUs on, its GEMMs
// carry MultiGPUComputeScale and MultiGPUComputeDelay. p itself is left
// as it is.
func (p Profile) onGPUs(n int) Profile {
	if n < 2 || (p.MultiGPUComputeScale == 0 && p.MultiGPUComputeDelay == 0) {
		return p
	}
	eff := make(map[scenarios.DType]float64, len(p.GEMMEfficiency))
	for d, e := range p.GEMMEfficiency {
		eff[d] = e / (1 + p.MultiGPUComputeScale)
	}
	p.GEMMEfficiency = eff
	p.gemmStartDelay = p.MultiGPUComputeDelay
	return p
}

// DefaultPeerLoadCTABandwidth is PeerLoadCTABandwidth's model value
// (bytes/s per CTA), taken by a profile that does not set it.
const DefaultPeerLoadCTABandwidth = 16e9

// CommCTARef is the CTA count at which one collective CTA moves
// Profile.CTALinkBandwidth.
const CommCTARef = 16

// CTABandwidth is the link bandwidth one CTA of an SM collective's
// kernel of ctas CTAs drives: CTALinkBandwidth x (ctas /
// CommCTARef)^-CommCTAScaling.
func CTABandwidth(p Profile, coll scenarios.Collective, ctas int) float64 {
	bw := p.CTALinkBandwidth[coll]
	if p.CommCTAScaling != 0 && ctas > 0 {
		bw *= math.Pow(float64(ctas)/CommCTARef, -p.CommCTAScaling)
	}
	return bw
}

// hostWriteStall is the stall c3lab's copy kernels' writes to host memory,
// of weight w (first of it from copies that started as they launched), put
// on a kernel's CTAs, which divide their rate by 1 + it:
// HostWriteStreamStall x w for a stream op (when set); for any other
// kernel HostWriteStall x the weight above HostWriteStallFrom, or, with
// HostWriteStallAlone set, HostWriteStall x w behind a copy that started
// among other kernels' CTAs and HostWriteStallAlone x the weight first
// above HostWriteStallFrom behind one that started alone, whichever is
// more; less for a GEMM of more than HostWriteStallTiles tiles per CTA.
func (p Profile) hostWriteStall(stream bool, tilesPerCTA, w, first float64) float64 {
	if stream && p.HostWriteStreamStall > 0 {
		return p.HostWriteStreamStall * w
	}
	var s float64
	if p.HostWriteStallAlone > 0 {
		s = math.Max(p.HostWriteStall*w, p.HostWriteStallAlone*math.Max(0, first-p.HostWriteStallFrom))
	} else {
		s = p.HostWriteStall * math.Max(0, w-p.HostWriteStallFrom)
	}
	if p.HostWriteStallTiles > 0 && tilesPerCTA > p.HostWriteStallTiles {
		s *= math.Sqrt(p.HostWriteStallTiles / tilesPerCTA)
	}
	return s
}

// hostReadStall is the stall c3lab's copy kernels' reads from host
// memory, of read weight w (of which first from copies that started as
// they launched), put on a GEMM of tilesPerCTA tiles per CTA, which divides its
// CTAs' rate by 1 + it (Profile.HostReadStall).
func (p Profile) hostReadStall(tilesPerCTA, w, first float64) float64 {
	s := p.HostReadStall*w + p.HostReadStallSteep*math.Max(0, first-p.HostReadStallFrom)
	if p.HostReadStallTiles > 0 && tilesPerCTA > p.HostReadStallTiles {
		s *= math.Sqrt(p.HostReadStallTiles / tilesPerCTA)
	}
	return s
}

// peerLoadCTABandwidth is p's PeerLoadCTABandwidth, or the model default
// for a profile written before the field.
func (p Profile) peerLoadCTABandwidth() float64 {
	if p.PeerLoadCTABandwidth > 0 {
		return p.PeerLoadCTABandwidth
	}
	return DefaultPeerLoadCTABandwidth
}

// H200 returns the profile of an NVIDIA H200 SXM (141 GB), the node c3lab is
// first built for. Its HBM, NVLink and PCIe figures are
// backends.H200Facts', the ones the cuda backend reports for the device.
func H200() Profile {
	f := backends.H200Facts()
	placements, whole := h200Placements()
	return Profile{
		Name:            f.Profile,
		Device:          f.Name,
		SMs:             132,
		SMStep:          8,
		MaxGPUs:         8,
		HighestPriority: -5,
		MemoryBytes:     150109880320,

		PeakFLOPs: map[scenarios.DType]float64{
			scenarios.BF16: 989e12,
			scenarios.FP16: 989e12,
			scenarios.FP8:  1979e12,
			scenarios.FP32: 67e12,
		},
		GEMMEfficiency: map[scenarios.DType]float64{
			scenarios.BF16: 0.837,
			scenarios.FP16: 0.812,
			scenarios.FP8:  0.761,
		},
		GEMMMemoryStall: 0.05,
		GEMMLaunches:    h200Launches(),
		GEMMPlacements:  placements,
		GEMMWholeTimes:  whole,

		HBMBandwidth:   f.HBMBandwidth,
		SMHBMBandwidth: 64e9,
		HBMContention:  0.20,
		L2Bytes:        60e6,
		L2Interference: 0.5,
		// Model: in full once the others take a quarter of HBM.
		// The older form (in full whenever another op runs);
		// profiles/h200-measured.yaml starts the fit at 0.25.
		InterferenceKnee: 0,

		LinkBandwidth: f.LinkBandwidth,
		LinkEfficiencySM: map[scenarios.Collective]float64{
			scenarios.AllGather:     0.576,
			scenarios.ReduceScatter: 0.550,
			scenarios.AllReduce:     0.651,
			scenarios.AllToAll:      0.583,
		},
		// LinkEfficiencyCE, the copy phases' fixed costs and
		// ReductionBandwidth: stage 1 of c3lab calibrate (profiles/README.md).
		LinkEfficiencyCE:     0.8213,
		LinkEfficiencyNCCLCE: 0.693,

		CommCTAs: map[scenarios.Collective]int{
			scenarios.AllGather:     32,
			scenarios.ReduceScatter: 32,
			scenarios.AllReduce:     32,
			scenarios.AllToAll:      64,
		},
		CTALinkBandwidth: map[scenarios.Collective]float64{
			scenarios.AllGather:     13.7e9,
			scenarios.ReduceScatter: 14.7e9,
			scenarios.AllReduce:     20.3e9,
			scenarios.AllToAll:      10.5e9,
		},
		// Measured (results/2026-12-04-h200x1-s23, call 4; the medians
		// of analyze.py's shares): the reduction kernel 0.61, the copy
		// kernel 0.28. Used under the partition model only, which the
		// calibrated profiles turn on.
		PartitionLatencyShare: map[scenarios.Collective]float64{
			scenarios.AllReduce:     0.61,
			scenarios.ReduceScatter: 0.61,
			scenarios.AllGather:     0.28,
			scenarios.AllToAll:      0.28,
		},
		CommLatencySensitivity: 1.75,
		CommHBMPerLinkByte: map[scenarios.Collective]float64{
			scenarios.AllGather:     2,
			scenarios.ReduceScatter: 3,
			scenarios.AllReduce:     2.5,
			scenarios.AllToAll:      2,
		},
		CommLocalCopy: true,
		CommSetup: map[scenarios.Collective]float64{
			scenarios.AllGather:     59.5e-6,
			scenarios.ReduceScatter: 68.9e-6,
			scenarios.AllReduce:     31.7e-6,
			scenarios.AllToAll:      28.9e-6,
		},

		CopyEngines:         3,
		CopyEngineBandwidth: 394e9,
		CopyLaunchOverhead:  6e-6,
		CopySyncOverhead:    28.02e-6,
		// TestCopyStreamSyncMeasured checks CopyStreamSyncOverhead against
		// small copies measured apart.
		CopyStreamSyncOverhead: 8.846e-6,
		CopyChainSyncOverhead:  20.07e-6,
		CopyChunkGap:           1.5e-6,
		CopyHBMWeight:          1,
		DMAHBMPerLinkByte: map[scenarios.Collective]float64{
			scenarios.AllGather:     2,
			scenarios.ReduceScatter: 2,
			scenarios.AllReduce:     2,
			scenarios.AllToAll:      2,
		},
		ReductionCTAsPerSM:    4,
		ReductionSMBandwidth:  65e9,
		ReductionBandwidth:    4.018e12,
		ContendedSMBandwidth:  40e9,
		RestPartitionGEMMLoss: 0.06,
		RestClusterLoss:       0.09,
		// Off: profiles/h200-power.yaml holds the measured power limit
		// (model.md, "The power limit", says why it is not on here).
		PowerLimitSMs: 0,

		NCCLCECTAs:  1,
		NCCLCESetup: 36.8e-6,

		PeerLoadCTABandwidth: DefaultPeerLoadCTABandwidth,

		PCIeBandwidth:                 55.3e9,
		PCIeDuplexBandwidth:           100e9,
		PCIeLinkBandwidth:             f.PCIeLinkBandwidth,
		HostCopySetup:                 15e-6,
		HostCopyCTAs:                  32,
		HostCopyCTABandwidth:          16.4e9,
		HostCopyCTAsPerSM:             3,
		HostCopyInheritedCTABandwidth: 4.5e9,
		HostCopyInheritedAbove:        196 << 10,
		HostCopyKernelBandwidth:       51.8e9,
		HostCopyKernelDuplexBandwidth: 63.9e9,
		HostCopyKernelDuplexByCTAs:    []CTACountBandwidth{{4, 48.2e9}, {16, 60.2e9}, {32, 63.9e9}, {64, 73.8e9}},
		HostCopyKernelSetup:           5.3e-6,
		HostWriteStall:                1,
		HostWriteStreamStall:          4.6,
		HostCopyKernelBusyGain:        0.06,
		HostWriteEndWait:              386e-6,
		HostWriteLaunchGap:            140e-6,
		HostWriteLaunchGapWeight:      0.6,
		HostReadLaunchGap:             95e-6,
		// Single GEMMs and GEMM streams beside an h2d copy kernel of 8-64
		// CTAs on one H200 (results/2026-12-03-h200x1-s20 call 4, -s21
		// call 2; TestHostReadStallByCTAs). The stall by HBM demand of
		// the sixteenth session (HostCopyKernelReadStall, 1.5 then) is
		// off: these GEMMs slow alike whatever their demand.
		HostReadStall:           0.3,
		HostReadStallFrom:       1.5,
		HostReadStallSteep:      12,
		HostReadStallTiles:      4,
		HostReadEndWait:         130e-6,
		HostReadApartWait:       90e-6,
		HostCopyKernelReadStall: 0,
		// Measured (CopyEngineH2DStall's doc) after this profile was
		// tuned; profiles/h200-measured.yaml adds them, and the fitted
		// profile starts from it.
		CopyEngineH2DStall: 0,
		CopyEngineD2HStall: 0,

		LaunchGap: 2e-6,

		HostLaunchGap:   5e-6,
		KernelFixedCost: 3e-6,
		WaveJitter:      0.1,

		// Stage 1 of the calibration (h200-fit.yaml): one-GPU time, since
		// MultiGPUComputeScale and MultiGPUComputeDelay.
		GEMMTiles:          true,
		LateCTASetup:       true,
		PlacementPrior:     true,
		StreamFillsCopySMs: true,
		GEMMPrologue:       2.47e-6,
		GEMMTileEpilogue:   1.58e-6,

		MultiGPUComputeScale: 0.024,
		MultiGPUComputeDelay: 3.0e-6,
	}
}

// gemmEfficiency is GEMMEfficiency for an element type, bf16's when the
// type has no entry of its own.
func (p Profile) gemmEfficiency(d scenarios.DType) float64 {
	if e, ok := p.GEMMEfficiency[d]; ok {
		return e
	}
	return p.GEMMEfficiency[scenarios.BF16]
}

// powerClock is the SM clock, as a share of the maximum, at which busy
// SMs running GEMM main loops (Profile.PowerLimitSMs) fit the board's
// power limit: 1 when they fit at the maximum or there is no limit.
func (p Profile) powerClock(busy float64) float64 {
	if p.PowerLimitSMs <= 0 || p.PowerClockExponent <= 0 || busy <= p.PowerLimitSMs {
		return 1
	}
	return math.Pow(p.PowerLimitSMs/busy, 1/p.PowerClockExponent)
}

// powerIterations bounds the fixed point of atPowerClock.
const powerIterations = 8

// atPowerClock builds and runs an engine at the SM clock the power limit
// allows for it: a run's clock is set by its busy SMs averaged over one
// repetition and the gap before the next (Profile.RepGap), and a lower
// clock makes the repetition longer, so the clock is found by fixed-point
// iteration from the maximum (it converges from above in a few runs; a
// run whose busy SMs fit the limit at the maximum runs once). It returns
// the plan of the last run.
func atPowerClock[P any](p Profile, build func() (P, *engine, error)) (P, error) {
	clock := 1.0
	for i := 0; ; i++ {
		pl, eng, err := build()
		if err != nil {
			return pl, err
		}
		eng.clock = clock
		eng.run()
		if p.PowerLimitSMs <= 0 || i == powerIterations-1 {
			return pl, nil
		}
		next := p.powerClock(eng.busyTime / (eng.now + p.RepGap))
		if math.Abs(next-clock) < 1e-4 {
			return pl, nil
		}
		clock = next
	}
}

// interferenceExposure is how much of L2Interference applies when the other ops
// take share of HBM bandwidth: in proportion up to InterferenceKnee, in
// full past it, and in full always when the knee is 0 (the older model).
func (p Profile) interferenceExposure(share float64) float64 {
	if p.InterferenceKnee <= 0 {
		return 1
	}
	return math.Min(1, math.Max(0, share)/p.InterferenceKnee)
}

// copyHBMWeight is CopyHBMWeight, 1 when unset.
func (p Profile) copyHBMWeight() float64 {
	if p.CopyHBMWeight > 0 {
		return p.CopyHBMWeight
	}
	return 1
}

// DefaultProfile is the hand-set profile of the node c3lab is first built
// for (H200): what sim.New is given where no profile file is at hand, and
// what calibrate starts from. c3lab's commands run the simulator on the
// calibrated one (FittedH200) when --sim-profile names none; both share
// the device's limits and name.
func DefaultProfile() Profile { return H200() }

// Profiles returns every built-in profile by name.
func Profiles() map[string]Profile {
	h := H200()
	return map[string]Profile{h.Name: h}
}

// Limits returns the scenario limits of this device.
func (p Profile) Limits() scenarios.Limits {
	var dt []scenarios.DType
	for _, d := range scenarios.DTypes {
		if p.PeakFLOPs[d] > 0 {
			dt = append(dt, d)
		}
	}
	return scenarios.Limits{
		Device:          p.Device,
		SMs:             p.SMs,
		SMStep:          p.SMStep,
		MaxGPUs:         p.MaxGPUs,
		CopyEngines:     p.CopyEngines,
		HighestPriority: p.HighestPriority,
		DTypes:          dt,
		MemoryBytes:     p.MemoryBytes,
	}
}

// CTACountBandwidth is a bandwidth measured at a kernel's CTA count.
type CTACountBandwidth struct {
	CTAs      int
	Bandwidth float64
}

// hostCopyDuplex is the copy kernel's cap on a swap (both directions
// together) at ctas CTAs: HostCopyKernelDuplexByCTAs interpolated in
// log2 of the count, else HostCopyKernelDuplexBandwidth.
func (p Profile) hostCopyDuplex(ctas int) float64 {
	pts := p.HostCopyKernelDuplexByCTAs
	if len(pts) == 0 || ctas <= 0 {
		return p.HostCopyKernelDuplexBandwidth
	}
	if ctas <= pts[0].CTAs {
		return pts[0].Bandwidth
	}
	for i := 1; i < len(pts); i++ {
		if ctas <= pts[i].CTAs {
			a, b := pts[i-1], pts[i]
			f := math.Log2(float64(ctas)/float64(a.CTAs)) / math.Log2(float64(b.CTAs)/float64(a.CTAs))
			return a.Bandwidth + f*(b.Bandwidth-a.Bandwidth)
		}
	}
	return pts[len(pts)-1].Bandwidth
}
