package scenarios

import (
	"fmt"
	"math"
	"strings"
)

// RuntimeReserveBytes is the device memory a scenario leaves to NCCL's and
// cuBLASLt's own allocations (communicator buffers, library state): the
// cuda backend refuses a scenario whose buffers leave less than this free.
const RuntimeReserveBytes = 1 << 30

// GEMMWorkspaceBytes is the cuBLASLt workspace a GEMM may use (the cuda
// backend's maxGEMMWorkspace).
const GEMMWorkspaceBytes = 64 << 20

// Footprint is the device memory one GPU holds for a scenario under a
// strategy, part by part, as the cuda backend allocates it
// (backends/cuda: prepare, checkGEMMOn, reductionSetup, symmetricSetup).
// Every part saturates at math.MaxInt64 instead of overflowing.
//
// For a format-2 scenario every op holds its own buffers, one set per op
// whatever its count (its instances run one after another on one stream
// and reuse them), and a decomposed op's chunks are slices of the whole
// op's buffers, so decomposition adds nothing. GEMMs are verified one at a
// time, so only the largest GEMM's check operands are held at once.
type Footprint struct {
	// Compute is the compute ops' buffers: a GEMM's A (K x M), B (K x N)
	// and C (M x N, bf16 for an fp8 GEMM) and its workspace, a stream op's
	// input and output; and the check operands (A and B again) of the
	// largest GEMM, allocated while its result is verified.
	Compute int64
	// Comm is the collectives' send and receive buffers, or the host
	// copies' device buffers.
	Comm int64
	// Engine is what the collective's engine adds: a copy-engine
	// reduction's staging buffer (the N-1 peers' blocks), or the
	// symmetric-memory copies of the send and receive buffers that NCCL's
	// copy-engine path registers as windows.
	Engine int64
	// Reserve is RuntimeReserveBytes, left to NCCL and cuBLASLt.
	Reserve int64
	// Ops is each op's own share of Compute, Comm and Engine (check
	// operands aside), in stream order, for a format-2 scenario; nil for a
	// one-pair scenario.
	Ops []OpMemory
}

// OpMemory is the device memory one op of a format-2 scenario holds.
type OpMemory struct {
	// Name is the op's name ("<stream>.<n>" when the file gives none) and
	// Path its field ("$.streams[0].ops[1]").
	Name, Path string
	// Bytes is the op's buffers (and its engine's).
	Bytes int64
}

// Total is the sum of every part.
func (f Footprint) Total() int64 {
	return addSat(addSat(f.Compute, f.Comm), addSat(f.Engine, f.Reserve))
}

// DeviceMemory returns the device memory one GPU needs to run sc under st.
// Negative sizes count as zero (Validate reports them).
func (sc Scenario) DeviceMemory(st Strategy) Footprint {
	st = st.Normalize()
	f := Footprint{Reserve: RuntimeReserveBytes}
	if !sc.IsGraph() {
		buf, check := computeMemory(sc.Compute)
		f.Compute = addSat(buf, check)
		f.Comm, f.Engine = commMemory(sc.Comm, sc.GPUs, st)
		return f
	}
	var maxCheck int64
	for si, ss := range sc.Streams {
		for oi, o := range ss.Ops {
			om := OpMemory{Name: o.Name, Path: fmt.Sprintf("$.streams[%d].ops[%d]", si, oi)}
			if om.Name == "" {
				om.Name = fmt.Sprintf("%s.%d", ss.Name, oi+1)
			}
			switch {
			case o.Kind.IsCompute():
				buf, check := computeMemory(o.AsCompute())
				f.Compute = addSat(f.Compute, buf)
				maxCheck = max(maxCheck, check)
				om.Bytes = buf
			case o.Kind.IsComm():
				comm, engine := commMemory(o.AsComm(), sc.GPUs, st)
				f.Comm, f.Engine = addSat(f.Comm, comm), addSat(f.Engine, engine)
				om.Bytes = addSat(comm, engine)
			}
			f.Ops = append(f.Ops, om)
		}
	}
	f.Compute = addSat(f.Compute, maxCheck)
	return f
}

// computeMemory returns a compute op's buffers (and workspace) and the
// check operands its verification adds.
func computeMemory(c ComputeOp) (buffers, check int64) {
	switch c.Kind {
	case GEMM:
		m, n, k, size := nonNeg(int64(c.M)), nonNeg(int64(c.N)), nonNeg(int64(c.K)), c.DType.Size()
		out := size
		if c.DType == FP8 {
			out = BF16.Size() // fp8 GEMMs write bf16
		}
		ab := addSat(mulSat(mulSat(k, m), size), mulSat(mulSat(k, n), size))
		return addSat(addSat(ab, mulSat(mulSat(m, n), out)), GEMMWorkspaceBytes), ab
	case Stream:
		return mulSat(nonNeg(int64(c.Bytes)), 2), 0
	}
	return 0, 0
}

// commMemory returns a communication op's device buffers on one of gpus
// GPUs and what its engine under st adds.
func commMemory(c CommOp, gpus int, st Strategy) (comm, engine int64) {
	g := max(int64(gpus), 1)
	b := nonNeg(int64(c.Bytes))
	var send, recv int64
	switch c.Collective {
	case AllGather:
		send, recv = b, mulSat(b, g)
	case ReduceScatter:
		send, recv = mulSat(b, g), b
	case AllReduce, AllToAll:
		send, recv = b, b
	case HostToDevice, DeviceToHost, HostSwap:
		// The device side of each direction (the host side is pinned host
		// memory): the d2h source and the h2d destination.
		send, recv = c.HostBytes()
	}
	comm = addSat(send, recv)
	switch st.CommEngine {
	case EngineDMA:
		// The peers' blocks land in a staging buffer before the add: the
		// reduce-scatter's result size, or 1/N of the all-reduce buffer.
		switch c.Collective {
		case ReduceScatter:
			engine = mulSat(g-1, b)
		case AllReduce:
			engine = mulSat(g-1, b/g)
		}
	case EngineNCCLCE:
		engine = comm
	}
	return comm, engine
}

// checkMemory reports, at the field that contributes most, a scenario whose
// footprint under its strategy exceeds the device memory in lim (nil when it
// fits or the memory is unknown).
func checkMemory(sc Scenario, lim Limits) *FieldError {
	if lim.MemoryBytes <= 0 {
		return nil
	}
	f := sc.DeviceMemory(sc.Strategy)
	if f.Total() <= lim.MemoryBytes {
		return nil
	}
	if sc.IsGraph() {
		return graphMemoryError(sc, f, lim)
	}
	var parts []string
	if f.Compute > 0 {
		what := "GEMM A, B, C, workspace and check operands"
		if sc.Compute.Kind == Stream {
			what = "stream input and output"
		}
		parts = append(parts, fmt.Sprintf("%s %s", what, fmtBytes(f.Compute)))
	}
	if f.Comm > 0 {
		what := "send and receive buffers"
		if sc.Comm.Collective.IsHostCopy() {
			what = "device buffers"
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", sc.Comm.Collective, what, fmtBytes(f.Comm)))
	}
	parts = append(parts, engineAndReserve(sc, f)...)
	path, fix := "$.comm.bytes", "use a smaller comm.bytes"
	if sc.Comm.Collective == AllGather || sc.Comm.Collective == ReduceScatter {
		fix += " or fewer gpus"
	}
	if f.Compute > addSat(f.Comm, f.Engine) {
		path, fix = "$.compute", "use smaller m, n, k"
		if sc.Compute.Kind == Stream {
			path, fix = "$.compute.bytes", "use a smaller compute.bytes"
		}
	}
	return &FieldError{Path: path, Msg: fmt.Sprintf("the scenario needs %s of device memory per GPU (%s) but %s has %s; %s",
		fmtBytes(f.Total()), strings.Join(parts, ", "), deviceName(lim), fmtBytes(lim.MemoryBytes), fix)}
}

// engineAndReserve words the engine's and the runtime's parts of f.
func engineAndReserve(sc Scenario, f Footprint) []string {
	var parts []string
	if f.Engine > 0 {
		what := "copy-engine staging buffer"
		if sc.Strategy.Normalize().CommEngine == EngineNCCLCE {
			what = "NCCL copy-engine windows"
		}
		parts = append(parts, fmt.Sprintf("%s %s", what, fmtBytes(f.Engine)))
	}
	return append(parts, fmtBytes(f.Reserve)+" for NCCL and cuBLASLt")
}

// graphMemoryError words a format-2 scenario that does not fit: the parts
// summed over its ops, at the op that holds the most.
func graphMemoryError(sc Scenario, f Footprint, lim Limits) *FieldError {
	var nCompute, nComm int
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			switch {
			case o.Kind.IsCompute():
				nCompute++
			case o.Kind.IsComm():
				nComm++
			}
		}
	}
	var parts []string
	if f.Compute > 0 {
		parts = append(parts, fmt.Sprintf("%d compute ops' buffers, workspaces and the largest GEMM's check operands %s", nCompute, fmtBytes(f.Compute)))
	}
	if f.Comm > 0 {
		parts = append(parts, fmt.Sprintf("%d communication ops' device buffers %s", nComm, fmtBytes(f.Comm)))
	}
	parts = append(parts, engineAndReserve(sc, f)...)
	path, fix := "$.streams", "use smaller shapes or bytes, or fewer ops"
	if len(f.Ops) > 0 {
		big := f.Ops[0]
		for _, o := range f.Ops[1:] {
			if o.Bytes > big.Bytes {
				big = o
			}
		}
		path = big.Path
		fix = fmt.Sprintf("the largest op, %s, holds %s (one buffer set per op, whatever its count): use smaller shapes or bytes, or fewer ops", big.Name, fmtBytes(big.Bytes))
	}
	return &FieldError{Path: path, Msg: fmt.Sprintf("the scenario needs %s of device memory per GPU (%s) but %s has %s; %s",
		fmtBytes(f.Total()), strings.Join(parts, ", "), deviceName(lim), fmtBytes(lim.MemoryBytes), fix)}
}

// CheckMemory reports a scenario that does not fit in the device memory of
// lim under strategy st, with the numbers; nil when it fits or lim does not
// know the memory. Validate runs it on the scenario's own strategy; a
// caller that changes the GPU count or the strategy (a sweep) calls it.
func CheckMemory(sc Scenario, st Strategy, lim Limits) error {
	sc.Strategy = st
	if e := checkMemory(sc, lim); e != nil {
		return &ValidationError{Scenario: sc.Name, Fields: []FieldError{*e}}
	}
	return nil
}

// fmtBytes formats a byte count in binary units with one decimal
// ("139.8 GiB", "8.0 TiB"), or "more than 8 EiB" when it saturated.
func fmtBytes(b int64) string {
	if b == math.MaxInt64 {
		return "more than 8 EiB"
	}
	v := float64(b)
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for v >= 1024 && i < len(units)-1 {
		v /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", b)
	}
	return fmt.Sprintf("%.1f %s", v, units[i])
}

func nonNeg(v int64) int64 { return max(v, 0) }

// mulSat multiplies two non-negative numbers, saturating at math.MaxInt64.
func mulSat(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// addSat adds two non-negative numbers, saturating at math.MaxInt64.
func addSat(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}
