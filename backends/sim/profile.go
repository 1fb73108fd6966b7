// Package sim is c3lab's simulator backend: an event-driven fluid model of a
// GPU node that runs the same experiments as the real backend, so the lab
// works and teaches C3 interference on a machine without a GPU.
//
// The model (see model.md beside this file): kernels are made of CTAs that
// hold one SM each from dispatch to completion; a block scheduler hands free
// SMs to queued CTAs by stream priority, then launch order, within each
// kernel's SM partition; collectives on copy engines hold no SMs. While ops
// overlap, HBM and NVLink bandwidth are shared (max-min fair in proportion to
// demand, with a contention penalty), and every op progresses at the rate of
// its scarcest resource. Rates are recomputed whenever a CTA cohort ends, a
// kernel launches or an op finishes. Every constant is a named field of a
// Profile. The model is deterministic.
package sim

import "github.com/c3lab/c3lab/scenarios"

// Profile is a device model: every constant the simulator uses, named and
// documented. Bandwidths are bytes per second, rates FLOP per second, times
// seconds.
//
// Values marked "datasheet" come from NVIDIA's H200 specifications, values
// marked "measured" from runs on a 2 x H200 node (c3lab's own, in
// backends/cuda/results, and shared/reference/GPU-NODE.md), and values
// marked "model" are first estimates that calibration against recordings
// replaces. TestCalibrationAgainstH200 reports the error against the real
// sweep.
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
	// MemoryBytes is HBM capacity (datasheet: 141 GB).
	MemoryBytes int64

	// PeakFLOPs is dense tensor-core peak per element type (datasheet;
	// fp32 is the non-tensor SIMT rate).
	PeakFLOPs map[scenarios.DType]float64
	// GEMMEfficiency is the share of peak a large, well-shaped GEMM sustains
	// on the SMs it holds (measured by c3lab on 2 x H200: bf16 8192^3 at
	// 812-875 of 989 TFLOP/s).
	GEMMEfficiency float64
	// GEMMMemoryStall slows compute-bound GEMM CTAs when another op loads
	// HBM: the CTA rate is divided by 1 + GEMMMemoryStall x (the other op's
	// share of HBM bandwidth). Model.
	GEMMMemoryStall float64

	// HBMBandwidth is achievable HBM bandwidth (measured: c3lab's stream op
	// moves 3.9-4.0 TB/s read + write; a large copy ~4.3 TB/s).
	HBMBandwidth float64
	// SMHBMBandwidth is the most HBM bandwidth one SM's CTA can pull; a
	// memory-bound kernel needs HBMBandwidth / SMHBMBandwidth SMs to
	// saturate HBM. Model.
	SMHBMBandwidth float64
	// HBMContention is the share of HBM bandwidth lost to bank and row
	// conflicts while two ops stream through it at once. Model.
	HBMContention float64
	// L2Bytes is the L2 cache size (datasheet: 60 MB on H200, 50 MiB usable
	// per partition pair; the model uses the whole).
	L2Bytes int64
	// L2Interference raises a GEMM's HBM traffic by this share while
	// another op streams through L2 and evicts its tiles. Model.
	L2Interference float64

	// LinkBandwidth is one GPU's NVLink bandwidth per direction
	// (datasheet: 18 links x 26.56 GB/s = 478 GB/s; NVSwitch gives every GPU
	// the same total).
	LinkBandwidth float64
	// LinkEfficiencySM is the share of LinkBandwidth that SM-driven copies
	// (NCCL kernels) reach. Measured: NCCL 2.28 all-gather busbw 249-290 GB/s
	// on 2 x H200 behind NVSwitch with NVLS off.
	LinkEfficiencySM float64
	// LinkEfficiencyCE is the share the copy engines reach (measured: one
	// 256 MiB peer copy at ~394 GB/s).
	LinkEfficiencyCE float64

	// CommCTAs is the CTA (channel) count of an SM collective by default,
	// per collective (NCCL's choice on NV18). Model.
	CommCTAs map[scenarios.Collective]int
	// CTALinkBandwidth is the link bandwidth one collective CTA drives,
	// per collective; the collective saturates the link at about
	// LinkBandwidth x LinkEfficiencySM / CTALinkBandwidth CTAs. Measured for
	// all-gather: 8 and 16 NCCL channels moved 107 and 186 GB/s on H200
	// (12-13 GB/s each); the others are model values from the paper's
	// saturation points (all-to-all ~64 CUs).
	CTALinkBandwidth map[scenarios.Collective]float64
	// CommLatencySensitivity slows an SM collective's CTAs when another op
	// loads HBM (its copies are latency-bound): CTA rate divided by
	// 1 + CommLatencySensitivity x (the other op's share of HBM). Model.
	CommLatencySensitivity float64
	// CommHBMPerLinkByte is the HBM traffic per byte sent over the link
	// (read to send, write on receive, reduction reads), per collective.
	CommHBMPerLinkByte map[scenarios.Collective]float64
	// CommLocalCopy is whether an SM all-gather also copies the rank's own
	// shard into the output (NCCL's out-of-place all-gather does).
	CommLocalCopy bool
	// CommLaunchOverhead is an SM collective's fixed cost: kernel launch,
	// peer handshake and, as c3lab's real protocol measures it today, the
	// host's group launch for all ranks. Measured: small collectives on
	// H200 take 60-100 µs over their bandwidth time.
	CommLaunchOverhead float64

	// CopyEngines is the number of async copy engines per GPU (measured: 3).
	CopyEngines int
	// CopyEngineBandwidth is the most one copy engine moves between peers.
	// Measured: ~394 GB/s for one large peer copy.
	CopyEngineBandwidth float64
	// CopyLaunchOverhead is the host's cost to enqueue one copy and the
	// engine's to start it. Model.
	CopyLaunchOverhead float64
	// CopySyncOverhead is a copy-engine collective's fixed cost for its
	// cross-GPU flags (stream write/wait value pairs). Model.
	CopySyncOverhead float64
	// CopyChunkGap is an engine's idle gap between consecutive chunks. Model.
	CopyChunkGap float64
	// DMAHBMPerLinkByte is the HBM traffic per link byte of a copy-engine
	// collective, per collective (the reductions stage data through HBM).
	DMAHBMPerLinkByte map[scenarios.Collective]float64
	// ReductionCTAs is the CTA count of the reduction kernel that a
	// copy-engine reduce-scatter or all-reduce runs on the SMs.
	ReductionCTAs int
	// ReductionBytesPerLinkByte is the HBM bytes that reduction kernel moves
	// per link byte (reads two operands, writes one).
	ReductionBytesPerLinkByte float64

	// LaunchGap is the time between enqueueing the first op and the second.
	LaunchGap float64
}

// H200 returns the profile of an NVIDIA H200 SXM (141 GB), the node c3lab is
// first built for.
func H200() Profile {
	return Profile{
		Name:            "h200",
		Device:          "NVIDIA H200",
		SMs:             132,
		SMStep:          8,
		MaxGPUs:         8,
		HighestPriority: -5,
		MemoryBytes:     141e9,

		PeakFLOPs: map[scenarios.DType]float64{
			scenarios.BF16: 989e12,
			scenarios.FP16: 989e12,
			scenarios.FP8:  1979e12,
			scenarios.FP32: 67e12,
		},
		GEMMEfficiency:  0.86,
		GEMMMemoryStall: 0.30,

		HBMBandwidth:   4.0e12,
		SMHBMBandwidth: 64e9,
		HBMContention:  0.06,
		L2Bytes:        60e6,
		L2Interference: 0.15,

		LinkBandwidth:    18 * 26.5625e9,
		LinkEfficiencySM: 0.63,
		LinkEfficiencyCE: 0.825,

		CommCTAs: map[scenarios.Collective]int{
			scenarios.AllGather:     32,
			scenarios.ReduceScatter: 32,
			scenarios.AllReduce:     32,
			scenarios.AllToAll:      64,
		},
		CTALinkBandwidth: map[scenarios.Collective]float64{
			scenarios.AllGather:     12.5e9,
			scenarios.ReduceScatter: 11e9,
			scenarios.AllReduce:     11e9,
			scenarios.AllToAll:      7e9,
		},
		CommLatencySensitivity: 0.5,
		CommHBMPerLinkByte: map[scenarios.Collective]float64{
			scenarios.AllGather:     2,
			scenarios.ReduceScatter: 3,
			scenarios.AllReduce:     2.5,
			scenarios.AllToAll:      2,
		},
		CommLocalCopy:      true,
		CommLaunchOverhead: 60e-6,

		CopyEngines:         3,
		CopyEngineBandwidth: 394e9,
		CopyLaunchOverhead:  6e-6,
		CopySyncOverhead:    10e-6,
		CopyChunkGap:        1.5e-6,
		DMAHBMPerLinkByte: map[scenarios.Collective]float64{
			scenarios.AllGather:     2,
			scenarios.ReduceScatter: 2,
			scenarios.AllReduce:     2,
			scenarios.AllToAll:      2,
		},
		ReductionCTAs:             16,
		ReductionBytesPerLinkByte: 3,

		LaunchGap: 5e-6,
	}
}

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
	}
}
