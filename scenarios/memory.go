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
type Footprint struct {
	// Compute is the compute op's buffers: a GEMM's A (K x M), B (K x N)
	// and C (M x N, bf16 for an fp8 GEMM), its workspace, and the check
	// operands (A and B again) allocated while its result is verified; a
	// stream op's input and output.
	Compute int64
	// Comm is the collective's send and receive buffers, or a host copy's
	// device buffers.
	Comm int64
	// Engine is what the collective's engine adds: a copy-engine
	// reduction's staging buffer (the N-1 peers' blocks), or the
	// symmetric-memory copies of the send and receive buffers that NCCL's
	// copy-engine path registers as windows.
	Engine int64
	// Reserve is RuntimeReserveBytes, left to NCCL and cuBLASLt.
	Reserve int64
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
	c := sc.Compute
	switch c.Kind {
	case GEMM:
		m, n, k, size := nonNeg(int64(c.M)), nonNeg(int64(c.N)), nonNeg(int64(c.K)), c.DType.Size()
		out := size
		if c.DType == FP8 {
			out = BF16.Size() // fp8 GEMMs write bf16
		}
		ab := addSat(mulSat(mulSat(k, m), size), mulSat(mulSat(k, n), size))
		f.Compute = addSat(addSat(mulSat(ab, 2), mulSat(mulSat(m, n), out)), GEMMWorkspaceBytes)
	case Stream:
		f.Compute = mulSat(nonNeg(int64(c.Bytes)), 2)
	}
	gpus := max(int64(sc.GPUs), 1)
	b := nonNeg(int64(sc.Comm.Bytes))
	var send, recv int64
	switch sc.Comm.Collective {
	case AllGather:
		send, recv = b, mulSat(b, gpus)
	case ReduceScatter:
		send, recv = mulSat(b, gpus), b
	case AllReduce, AllToAll:
		send, recv = b, b
	case HostToDevice, DeviceToHost, HostSwap:
		// The device side of each direction (the host side is pinned host
		// memory): the d2h source and the h2d destination.
		send, recv = sc.Comm.HostBytes()
	}
	f.Comm = addSat(send, recv)
	switch st.CommEngine {
	case EngineDMA:
		// The peers' blocks land in a staging buffer before the add: the
		// reduce-scatter's result size, or 1/N of the all-reduce buffer.
		switch sc.Comm.Collective {
		case ReduceScatter:
			f.Engine = mulSat(gpus-1, b)
		case AllReduce:
			f.Engine = mulSat(gpus-1, b/gpus)
		}
	case EngineNCCLCE:
		f.Engine = f.Comm
	}
	return f
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
	if f.Engine > 0 {
		what := "copy-engine staging buffer"
		if sc.Strategy.Normalize().CommEngine == EngineNCCLCE {
			what = "NCCL copy-engine windows"
		}
		parts = append(parts, fmt.Sprintf("%s %s", what, fmtBytes(f.Engine)))
	}
	parts = append(parts, fmtBytes(f.Reserve)+" for NCCL and cuBLASLt")
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
