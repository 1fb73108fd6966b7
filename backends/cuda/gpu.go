// Package cuda is c3lab's real backend: it runs scenarios on NVIDIA GPUs,
// one process driving every GPU of the node, with cuBLASLt GEMMs, c3lab's
// own NVRTC-compiled kernels and NCCL collectives, and applies each strategy
// knob for real: launch order and stream priorities, SM partitions (green
// contexts), NCCL CTA caps and the cuBLASLt SM count target.
//
// The backend's logic (buffers, verification, strategy application, the
// timing protocol) talks to the hardware only through the gpu interface, so
// it is tested on any machine against a fake; nativeGPU implements it over
// package native.
package cuda

import (
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// Handles the gpu interface hands out.
type (
	bufID    int
	streamID int
	eventID  int
)

// bufRef is a place in a device buffer (a byte offset).
type bufRef struct {
	b   bufID
	off int64
}

// devInfo is what the backend needs to know of one GPU.
type devInfo struct {
	Name string
	UUID string
	// Driver is the CUDA driver's version (cuDriverGetVersion: 1000*major
	// + 10*minor); 0 when unknown.
	Driver      int
	SMs         int
	MemoryBytes int64
	CopyEngines int
	// CCMajor, CCMinor are the compute capability (9, 0 on H200).
	CCMajor, CCMinor int
	// PriorityLeast and PriorityGreatest bound stream priorities (0, -5).
	PriorityLeast, PriorityGreatest int
	// Green is whether SM partitions (green contexts) are available.
	Green bool
	// SMStep is the partition granularity (smPartitionStep).
	SMStep int
	// Peers lists the GPUs whose memory this one maps directly (peer
	// access enabled); copy-engine collectives need every pair.
	Peers []int
}

// partition says which SMs a stream's kernels may use.
type partition struct {
	// GroupSMs is 0 for the whole GPU; otherwise the device is split into a
	// group of GroupSMs SMs and the rest, and Rest picks which side.
	GroupSMs int
	Rest     bool
	// Structured, on the rest side, runs it on a structured group of this
	// many SMs split again out of the rest (the structured-rest probe); 0
	// runs it on the rest itself.
	Structured int
}

// streamSpec describes a stream: its priority and its SMs.
type streamSpec struct {
	Priority  int
	Partition partition
}

// gemmSpec is one GEMM as the library plans it.
type gemmSpec struct {
	M, N, K  int
	DType    scenarios.DType
	SMTarget int // 0: the whole device
}

// commSpec picks a communicator configuration.
type commSpec struct {
	MaxCTAs int // 0: NCCL's default
	Ranks   int // the communicator spans GPUs 0..Ranks-1
	// CTAPolicy 2 asks NCCL 2.28+ for its copy-engine collectives (on
	// symmetric windows); 0 is NCCL's default.
	CTAPolicy int
}

// collective is one collective call across all ranks.
type collective struct {
	Kind scenarios.Collective
	// Count is the element count NCCL takes: the per-rank shard for
	// all-gather, the per-rank result for reduce-scatter, the buffer for
	// all-reduce, the per-peer block for all-to-all. Elements are bf16.
	Count int64
	Comm  commSpec
}

// gpu is everything the backend asks of a node of NVIDIA GPUs. Every call
// comes from one goroutine locked to its OS thread.
type gpu interface {
	Devices() []devInfo
	// FreeMemory returns a device's free memory in bytes.
	FreeMemory(dev int) (int64, error)
	Alloc(dev int, bytes int64) (bufID, error)
	// AllocSymmetric allocates memory NCCL can register as a symmetric
	// window (ncclMemAlloc); Free frees it and drops its windows.
	AllocSymmetric(dev int, bytes int64) (bufID, error)
	// RegisterWindows registers one buffer per rank as a symmetric window
	// of the communicators of spec (created if needed).
	RegisterWindows(spec commSpec, bufs []bufID) error
	// AllocHost pins bytes of host memory for GPU dev's host copies,
	// device-mapped so an SM kernel reaches it too. Upload, Download,
	// CopyPeer, CopyKernel and Free take it like a device buffer.
	AllocHost(dev int, bytes int64) (bufID, error)
	Free(b bufID) error
	Upload(b bufID, data []byte) error
	Download(b bufID, out []byte) error
	Stream(dev int, spec streamSpec) (streamID, error)
	Event(dev int) (eventID, error)
	Record(e eventID, s streamID) error
	Wait(s streamID, e eventID) error
	// Done reports whether an event's work has finished, without waiting.
	Done(e eventID) (bool, error)
	// Elapsed returns the nanoseconds between two recorded events of one device.
	Elapsed(from, to eventID) (int64, error)
	// GateWait holds stream s until the start gate is at least v; OpenGate
	// raises the gate to v (never lowers it, so a late call is harmless). The gate is one word of pinned host memory that
	// every GPU reads: OpenGate is a plain memory store that calls no CUDA
	// function, so a watchdog goroutine may call it while the worker is
	// blocked in the driver, and it releases every GPU at once. Neither
	// uses an SM.
	GateWait(s streamID, v uint32) error
	OpenGate(v uint32)
	// Reduce enqueues out[outOff:] = the element-wise bf16 sum of n
	// elements of every source, on stream s (a small kernel on the stream's
	// SMs). At most 8 sources.
	Reduce(s streamID, out bufID, outOff int64, srcs []bufRef, n int64) error
	// ReducePipelined enqueues the same sum as Reduce, chunk by chunk,
	// alongside the copies that bring the sources: before adding chunk c
	// it waits (on the SMs, inside the kernel) until every peer source's
	// flag for c reaches ps.seq, and after writing it (with ps.countDone)
	// every CTA adds 1 to the chunk's done counter. Source 0 is the rank's own block, ready
	// from the start. The flags and counters are ps.sync's words (see
	// pipeSync).
	ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error
	// ReduceLoad enqueues out = the element-wise bf16 sum of n elements of
	// every source (at most 8), as Reduce, as one kernel of at most ctas
	// CTAs on stream s that loads each source where it lives: a source in
	// a peer GPU's memory (peer access in one process, a CUDA IPC mapping
	// between processes) is read over NVLink by the kernel itself, with no
	// copy before it (comm_engine p2p-load).
	ReduceLoad(s streamID, out bufRef, srcs []bufRef, n int64, ctas int) error
	// WriteFlag enqueues, on stream s after the work before it, a write of
	// v to the 32-bit word at w; WaitFlag holds stream s until that word,
	// compared cyclically, is at least v. Neither runs a kernel.
	WriteFlag(s streamID, w bufRef, v uint32) error
	WaitFlag(s streamID, w bufRef, v uint32) error
	// CopyPeer enqueues a copy of n bytes from src+srcOff to dst+dstOff on
	// stream s; the buffers may live on different GPUs (a copy engine moves
	// the data; no SM is used).
	CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error
	// CopyKernel enqueues on stream s one kernel of ctas CTAs that copies
	// every segment (at most 2, each a multiple of 16 bytes) on the SMs:
	// a host copy done by SMs instead of copy engines.
	CopyKernel(s streamID, segs []copySeg, ctas int) error
	GEMM(s streamID, g gemmSpec, a, b, d bufID) error
	// GEMMAt is GEMM on places in buffers: a graph's chunk i of a
	// decomposed GEMM reads its A rows and writes its output at byte
	// offsets into buffers that hold every chunk.
	GEMMAt(s streamID, g gemmSpec, a, b, d bufRef) error
	StreamOp(s streamID, in, out bufID, bytes int64) error
	// Collective enqueues one collective on every rank: send[r], recv[r]
	// and streams[r] belong to device r.
	Collective(c collective, send, recv []bufID, streams []streamID) error
	// CollectiveAt is Collective on places in buffers (a graph's chunk of
	// a decomposed collective).
	CollectiveAt(c collective, send, recv []bufRef, streams []streamID) error
	// Abort abandons every communicator (after a hang); later collectives
	// make new ones.
	Abort() error
	Synchronize(dev int) error
	Close() error
}

// copySeg is one contiguous copy of bytes from src to dst.
type copySeg struct {
	dst, src bufRef
	bytes    int64
}

// pipeSync ties one rank's pipelined reduction to its copies. The sync
// buffer holds 32-bit words: the status word (native.ReduceSyncStatusTimeout
// once a flag was not raised in time), from word native.ReduceSyncFlags the
// flags, one per peer source and chunk, then the done counters, one per
// chunk.
type pipeSync struct {
	sync      bufID
	chunk     int64  // elements per chunk
	seq       uint32 // the call's sequence number: flags reach it when ready
	grid      int    // CTAs; after call seq a done counter reads seq*grid
	timeoutNs int64  // how long the kernel waits for a flag before it gives up
	// countDone asks the kernel to count each chunk done (fenced), for
	// copies that forward reduced chunks; a reduce-scatter skips it.
	countDone bool
}

// chunks is how many chunks a reduction of n elements has.
func (ps pipeSync) chunks(n int64) int64 { return (n + ps.chunk - 1) / ps.chunk }

// flagWord is the index of the flag of source k (1..sources-1) for chunk c.
func flagWord(k int, c, chunks int64) int64 {
	return native.ReduceSyncFlags + int64(k-1)*chunks + c
}

// doneWord is the index of chunk c's done counter.
func doneWord(sources int, c, chunks int64) int64 {
	return native.ReduceSyncFlags + int64(sources-1)*chunks + c
}

// syncWords is how many words a reduction of that many sources and chunks
// uses.
func syncWords(sources int, chunks int64) int64 { return doneWord(sources, chunks, chunks) }

// smPartitionStep is the SM granularity of a green-context partition on a
// GPU of compute capability major.x, as the driver API documents it for
// cuDevSmResourceSplitByCount: groups of at least 8 SMs, in multiples of
// 8, from 9.0 (Hopper) on; 4 in multiples of 2 on 8.x; 2 on 7.x; 1 before.
// A step of 4 on 8.x keeps every partition a valid size.
func smPartitionStep(major int) int {
	switch {
	case major >= 9:
		return 8
	case major == 8:
		return 4
	case major == 7:
		return 2
	}
	return 1
}
