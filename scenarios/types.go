// Package scenarios holds c3lab's domain types: a Scenario (a compute op next
// to a communication op on N GPUs), the Strategy knobs a user flips and the
// one table that describes them (StrategyKnobs), their YAML form with
// line-numbered validation errors, and the built-in suite.
//
// It imports no backend: device-specific limits arrive as a Limits value
// from whoever knows the device.
package scenarios

import (
	"fmt"
	"reflect"
)

// DType is the element type of a GEMM's operands.
type DType string

// Supported GEMM element types.
const (
	BF16 DType = "bf16"
	FP16 DType = "fp16"
	FP8  DType = "fp8"
	FP32 DType = "fp32"
)

// DTypes lists every supported element type, in display order.
var DTypes = []DType{BF16, FP16, FP8, FP32}

// Size returns the bytes of one element, or 0 for an unknown type.
func (d DType) Size() int64 {
	switch d {
	case BF16, FP16:
		return 2
	case FP8:
		return 1
	case FP32:
		return 4
	}
	return 0
}

// ComputeKind says what a compute op is.
type ComputeKind string

// Compute op kinds.
const (
	// GEMM is C[M,N] = A[M,K] x B[K,N], compute-bound or memory-bound by shape.
	GEMM ComputeKind = "gemm"
	// Stream is a memory-bound streaming op that reads Bytes and writes Bytes.
	Stream ComputeKind = "stream"
)

// ComputeOp is the computation half of a scenario, run on every GPU.
type ComputeOp struct {
	Kind ComputeKind `yaml:"kind" json:"kind"`
	// M, N, K are the GEMM dimensions (Kind gemm only).
	M int `yaml:"m,omitempty" json:"m,omitempty"`
	N int `yaml:"n,omitempty" json:"n,omitempty"`
	K int `yaml:"k,omitempty" json:"k,omitempty"`
	// DType is the GEMM element type (Kind gemm only).
	DType DType `yaml:"dtype,omitempty" json:"dtype,omitempty"`
	// Bytes is the size of the buffer a stream op reads (and writes again).
	Bytes ByteSize `yaml:"bytes,omitempty" json:"bytes,omitempty"`
}

// FLOPs returns the floating-point operations of the op (2MNK for a GEMM,
// one per element for a stream op).
func (c ComputeOp) FLOPs() float64 {
	switch c.Kind {
	case GEMM:
		return 2 * float64(c.M) * float64(c.N) * float64(c.K)
	case Stream:
		return float64(c.Bytes) / 2
	}
	return 0
}

// String is a short human label such as "gemm 8192x8192x8192 bf16".
func (c ComputeOp) String() string {
	switch c.Kind {
	case GEMM:
		return fmt.Sprintf("gemm %dx%dx%d %s", c.M, c.N, c.K, c.DType)
	case Stream:
		return fmt.Sprintf("stream %s", c.Bytes)
	}
	return string(c.Kind)
}

// Collective names a communication pattern.
type Collective string

// Supported collectives.
const (
	AllGather     Collective = "all-gather"
	ReduceScatter Collective = "reduce-scatter"
	AllReduce     Collective = "all-reduce"
	AllToAll      Collective = "all-to-all"
)

// Host<->device copies: the communication one GPU has on its own, over
// PCIe, next to its kernels (activation offload and reload, optimizer
// offload, KV-cache offload). They run on every GPU of the scenario, each
// with its own host buffer, and need no peer.
const (
	// HostToDevice copies Bytes from pinned host memory to the GPU.
	HostToDevice Collective = "h2d"
	// DeviceToHost copies Bytes from the GPU to pinned host memory.
	DeviceToHost Collective = "d2h"
	// HostSwap copies Bytes each way at once: one layer's activations go
	// out while another's come back, or gradients go out while optimizer
	// states come in.
	HostSwap Collective = "swap"
)

// Collectives lists every supported collective, in display order.
var Collectives = []Collective{AllGather, ReduceScatter, AllReduce, AllToAll}

// HostCopies lists the host<->device copy kinds, in display order.
var HostCopies = []Collective{HostToDevice, DeviceToHost, HostSwap}

// CommKinds lists every communication op kind a scenario's comm may be:
// the collectives, then the host copies.
var CommKinds = append(append([]Collective{}, Collectives...), HostCopies...)

// IsPureCopy reports whether the op only moves data (no reduction), so
// copy engines alone can carry it.
func (c Collective) IsPureCopy() bool {
	return c == AllGather || c == AllToAll || c.IsHostCopy()
}

// NCCLCopyEngineCovers reports whether NCCL's own copy-engine path
// (comm_engine nccl-ce) runs the op: all-gather and all-to-all.
func (c Collective) NCCLCopyEngineCovers() bool { return c == AllGather || c == AllToAll }

// IsHostCopy reports whether the op is a host<->device copy rather than a
// collective between GPUs.
func (c Collective) IsHostCopy() bool {
	return c == HostToDevice || c == DeviceToHost || c == HostSwap
}

// MinGPUs is the fewest GPUs the op runs on: 1 for a host copy, 2 for a
// collective.
func (c Collective) MinGPUs() int {
	if c.IsHostCopy() {
		return 1
	}
	return 2
}

// CommOp is the communication half of a scenario: a collective over all
// GPUs, or a host<->device copy on each of them (Collective h2d, d2h, swap).
type CommOp struct {
	Collective Collective `yaml:"collective" json:"collective"`
	// Bytes is the per-rank message: the shard each rank contributes to an
	// all-gather, the shard each rank ends with after a reduce-scatter, the
	// buffer each rank holds in an all-reduce, and each rank's whole send
	// buffer in an all-to-all (Bytes/N to every rank).
	Bytes ByteSize `yaml:"bytes" json:"bytes"`
}

// SizeBytes returns the message size as nccl-tests reports it (the "size"
// column, which algbw divides): the all-gather output and the reduce-scatter
// input (N x Bytes), the all-reduce buffer and the all-to-all send buffer.
// For a host copy it is the bytes one GPU moves over PCIe: Bytes, or twice
// that for a swap (Bytes each way).
func (c CommOp) SizeBytes(gpus int) int64 {
	switch c.Collective {
	case AllGather, ReduceScatter:
		return int64(c.Bytes) * int64(gpus)
	case HostSwap:
		return 2 * int64(c.Bytes)
	}
	return int64(c.Bytes)
}

// HostBytes returns the bytes one GPU copies to the host and from the host
// (0, 0 for a collective).
func (c CommOp) HostBytes() (toHost, fromHost int64) {
	switch c.Collective {
	case HostToDevice:
		return 0, int64(c.Bytes)
	case DeviceToHost:
		return int64(c.Bytes), 0
	case HostSwap:
		return int64(c.Bytes), int64(c.Bytes)
	}
	return 0, 0
}

// LinkBytes returns the bytes one rank sends to its peers (and receives from
// them) in the bandwidth-optimal algorithm: (N-1)/N of the size for
// all-gather, reduce-scatter and all-to-all, twice that for all-reduce.
// Host copies use no GPU-to-GPU link (0; see HostBytes).
func (c CommOp) LinkBytes(gpus int) float64 {
	if gpus < 2 || c.Collective.IsHostCopy() {
		return 0
	}
	frac := float64(gpus-1) / float64(gpus)
	size := float64(c.SizeBytes(gpus))
	if c.Collective == AllReduce {
		return 2 * frac * size
	}
	return frac * size
}

// String is a short human label such as "all-gather 256MiB".
func (c CommOp) String() string { return fmt.Sprintf("%s %s", c.Collective, c.Bytes) }

// Describe says what the collective does on gpus GPUs, in words whose
// every count (GPUs, peers, blocks, bytes sent) comes from the op and
// gpus: "an all-gather over 2 GPUs in which each GPU contributes a
// 224MiB shard and sends it to its peer".
func (c CommOp) Describe(gpus int) string {
	peers := gpus - 1
	to := "its peer"
	if peers != 1 {
		to = fmt.Sprintf("each of its %d peers", peers)
	}
	sent := ByteSize(c.LinkBytes(gpus)).Human()
	inAll := ""
	if peers != 1 {
		inAll = " (" + sent + " in all)"
	}
	b := c.Bytes.Human()
	switch c.Collective {
	case AllGather:
		return fmt.Sprintf("an all-gather over %d GPUs in which each GPU contributes a %s shard and sends it to %s%s", gpus, b, to, inAll)
	case ReduceScatter:
		return fmt.Sprintf("a reduce-scatter over %d GPUs in which each GPU sends %s its partial sums of the %s block that GPU ends with%s, and ends with its own %s block reduced", gpus, to, b, inAll, b)
	case AllReduce:
		return fmt.Sprintf("an all-reduce over %d GPUs of a %s buffer on each, in which a ring sends %s per GPU", gpus, b, sent)
	case AllToAll:
		return fmt.Sprintf("an all-to-all over %d GPUs in which each GPU cuts its %s buffer into %d blocks of %s, sends one to %s%s and keeps one", gpus, b, gpus, ByteSize(int64(c.Bytes)/int64(max(gpus, 1))).Human(), to, inAll)
	case HostToDevice:
		return fmt.Sprintf("a copy of %s from pinned host memory to the GPU over PCIe", b)
	case DeviceToHost:
		return fmt.Sprintf("a copy of %s from the GPU to pinned host memory over PCIe", b)
	case HostSwap:
		return fmt.Sprintf("copies of %s each way between the GPU and pinned host memory over PCIe at once", b)
	}
	return fmt.Sprintf("a %s over %d GPUs", c, gpus)
}

// Runs says what the scenario runs, from its fields: "runs gemm
// 16384x1280x8192 bf16 on each GPU next to an all-gather over 2 GPUs in
// which ...".
func (s Scenario) Runs() string {
	return fmt.Sprintf("It runs %s on each GPU next to %s", s.Compute, s.Comm.Describe(s.GPUs))
}

// LaunchOrder says which op is enqueued first in a concurrent run.
type LaunchOrder string

// Launch orders.
const (
	// ComputeFirst enqueues the compute op first: plain C3, the usual case
	// in frameworks, where a GEMM that fills the GPU can starve the collective.
	ComputeFirst LaunchOrder = "compute-first"
	// CommFirst enqueues the collective first: the paper's schedule prioritization.
	CommFirst LaunchOrder = "comm-first"
)

// CommEngine says what carries the collective's data.
type CommEngine string

// Communication engines.
const (
	// EngineSM runs the collective as kernels on the SMs (NCCL's default).
	EngineSM CommEngine = "sm"
	// EngineDMA runs the collective on the copy engines (the paper's ConCCL).
	EngineDMA CommEngine = "dma"
	// EngineNCCLCE runs it on NCCL's own copy-engine path (NCCL 2.28+: CTA
	// policy 2 on symmetric memory windows), for all-gather and all-to-all.
	EngineNCCLCE CommEngine = "nccl-ce"
	// EngineP2PLoad runs a reduction (reduce-scatter, all-reduce) as one
	// kernel per GPU that loads each peer's block straight from the
	// peer's memory over NVLink (peer access, or CUDA IPC mappings between
	// processes), adds it to the local block and stores the sum: no
	// staging copy, few CTAs (comm_ctas, comm_sms). An all-reduce then
	// gathers the reduced blocks on the copy engines.
	EngineP2PLoad CommEngine = "p2p-load"
)

// P2PLoadCovers reports whether comm_engine p2p-load runs the op: the
// reductions between GPUs, reduce-scatter and all-reduce.
func (c Collective) P2PLoadCovers() bool { return c == ReduceScatter || c == AllReduce }

// Strategy is the set of knobs applied to a concurrent run. The zero value
// (after Normalize) is plain C3: compute first, equal priorities, no
// partition, library defaults, the collective on the SMs.
type Strategy struct {
	// Launch is the launch order; empty means compute-first.
	Launch LaunchOrder `yaml:"launch,omitempty" json:"launch"`
	// CommPriority is the comm stream's priority in CUDA's convention:
	// 0 is the lowest (the compute stream's), negative is higher (-5 on H200).
	CommPriority int `yaml:"comm_priority,omitempty" json:"comm_priority"`
	// CommSMs confines the collective to a partition of this many SMs
	// (a green context; steps of the device's granularity, 8 on H200);
	// 0 means no partition. Unless ComputeSMs is set, the compute op is
	// confined to the rest of the SMs.
	CommSMs int `yaml:"comm_sms,omitempty" json:"comm_sms"`
	// ComputeSMs confines the compute op to a partition of this many SMs;
	// 0 means the rest of the GPU (all of it when CommSMs is 0 as well).
	ComputeSMs int `yaml:"compute_sms,omitempty" json:"compute_sms"`
	// CommCTAs caps the collective's CTAs (NCCL channels); 0 is the library default.
	CommCTAs int `yaml:"comm_ctas,omitempty" json:"comm_ctas"`
	// GEMMSMTarget asks the GEMM library to size the GEMM for this many SMs
	// (cuBLASLt's SM count target): softer than a partition; 0 is off.
	GEMMSMTarget int `yaml:"gemm_sm_target,omitempty" json:"gemm_sm_target"`
	// CommEngine is sm (kernels), dma (copy engines), nccl-ce (NCCL's
	// copy engines) or p2p-load (a reduction kernel that loads the peers'
	// blocks over NVLink); empty means sm.
	CommEngine CommEngine `yaml:"comm_engine,omitempty" json:"comm_engine"`
	// CopyEngines is how many copy engines a dma collective spreads over;
	// 0 means all the device has.
	CopyEngines int `yaml:"copy_engines,omitempty" json:"copy_engines"`
	// ChunkBytes splits each dma transfer into chunks of this size so they
	// pipeline; 0 means one copy per transfer.
	ChunkBytes ByteSize `yaml:"chunk_bytes,omitempty" json:"chunk_bytes"`
	// Decompose splits every dependent pair of a format-2 scenario (a
	// collective feeding a GEMM, a GEMM feeding a collective) into this
	// many chunks wired chunk by chunk (async TP); 1 keeps every pair
	// whole; 0 keeps the scenario's own decomposition.
	Decompose int `yaml:"decompose,omitempty" json:"decompose,omitempty"`
}

// Normalize fills the defaults of empty enum fields.
func (s Strategy) Normalize() Strategy {
	if s.Launch == "" {
		s.Launch = ComputeFirst
	}
	if s.CommEngine == "" {
		s.CommEngine = EngineSM
	}
	return s
}

// String is a compact one-line summary listing only knobs that differ from
// plain C3, or "baseline" when none do, each as its knob prints it
// (StrategyKnobs).
func (s Strategy) String() string { return StrategyKnobs().Format(s) }

// Scenario is one C3 experiment: a compute op and a collective running at
// the same time on separate streams on every one of GPUs devices.
type Scenario struct {
	// Name is a unique, lower-case, dash-separated identifier.
	Name string `yaml:"name" json:"name"`
	// Description says what the scenario shows.
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Source names the model layer and parallelism the shapes come from.
	Source string `yaml:"source,omitempty" json:"source,omitempty"`
	// GPUs is the number of GPUs the collective spans (2 or more), or that
	// each run a host copy (1 or more).
	GPUs int `yaml:"gpus" json:"gpus"`
	// Profile names the device profile, such as "h200"; empty means the
	// backend's default device.
	Profile string `yaml:"profile,omitempty" json:"profile,omitempty"`
	// Compute is the computation op. In a format-2 scenario (Streams set)
	// it is left out of the file and holds the lead compute op, the first
	// of the streams: what a summary line names (WithLead).
	Compute ComputeOp `yaml:"compute,omitempty" json:"compute"`
	// Comm is the collective; in a format-2 scenario the lead
	// communication op, like Compute.
	Comm CommOp `yaml:"comm,omitempty" json:"comm"`
	// Streams, when set, makes the scenario a graph of ops on streams
	// (format 2): streams of GEMMs next to streams of collectives,
	// dependencies, decomposed pairs. Scenario.Graph expands it.
	Streams []StreamSpec `yaml:"streams,omitempty" json:"streams,omitempty"`
	// Reps is the number of measured repetitions of each run (after warm-up).
	Reps int `yaml:"reps,omitempty" json:"reps,omitempty"`
	// Strategy is the strategy the scenario starts with; flags and the TUI
	// change it afterwards.
	Strategy Strategy `yaml:"strategy,omitempty" json:"strategy"`
}

// DefaultReps is the repetition count used when a scenario sets none.
const DefaultReps = 20

// MaxReps is the most repetitions a scenario or a command may ask for.
const MaxReps = 100000

// RepsOrDefault returns Reps, or DefaultReps when unset.
func (s Scenario) RepsOrDefault() int {
	if s.Reps > 0 {
		return s.Reps
	}
	return DefaultReps
}

// Limits are the device facts a scenario and strategy are validated against.
// A backend reports them for the devices it drives.
type Limits struct {
	// Device names the device, for messages ("NVIDIA H200").
	Device string
	// SMs is the number of SMs per GPU.
	SMs int
	// SMStep is the partition granularity in SMs (8 on H200).
	SMStep int
	// MaxGPUs is the largest GPU count the backend can run.
	MaxGPUs int
	// CopyEngines is the number of async copy engines per GPU.
	CopyEngines int
	// HighestPriority is the most urgent stream priority (-5 on H200; 0 is the lowest).
	HighestPriority int
	// DTypes are the GEMM element types the device supports.
	DTypes []DType
	// MemoryBytes is each GPU's device memory (the smallest, when they
	// differ); 0 means unknown, and scenarios are then not checked against it.
	MemoryBytes int64
}

// Isolated returns the strategy an op's isolated baseline runs under: the
// collective's implementation (engine, copy engines, chunking) and the
// decomposition, which changes the ops themselves, are kept, and
// every knob that only shares the GPU between the two ops (launch order,
// priority, partitions, CTA cap, GEMM SM target) is cleared, so each op runs
// alone on the whole GPU and the cost of sharing shows as a slowdown.
func (s Strategy) Isolated() Strategy {
	s = s.Normalize()
	return Strategy{
		Launch:      ComputeFirst,
		CommEngine:  s.CommEngine,
		CopyEngines: s.CopyEngines,
		ChunkBytes:  s.ChunkBytes,
		Decompose:   s.Decompose,
	}
}

// Equal reports whether two scenarios are the same in every field,
// streams included (a scenario with streams cannot be compared with ==).
func (s Scenario) Equal(o Scenario) bool {
	return reflect.DeepEqual(s.normalStreams(), o.normalStreams())
}

// normalStreams returns s with empty stream, op and after lists as nil, so
// that a decoded empty list equals a missing one.
func (s Scenario) normalStreams() Scenario {
	if len(s.Streams) == 0 {
		s.Streams = nil
		return s
	}
	streams := make([]StreamSpec, len(s.Streams))
	for i, ss := range s.Streams {
		if len(ss.Ops) == 0 {
			ss.Ops = nil
		} else {
			ops := make([]StreamOp, len(ss.Ops))
			for j, o := range ss.Ops {
				if len(o.After) == 0 {
					o.After = nil
				}
				ops[j] = o
			}
			ss.Ops = ops
		}
		streams[i] = ss
	}
	s.Streams = streams
	return s
}
