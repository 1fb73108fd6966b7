package kineto

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// torchTypeSize is the element size of a tensor type as "Input type"
// writes it (C++ names) and as a collective's "dtype" writes it (c10
// ScalarType names); 0 when unknown.
func torchTypeSize(t string) int64 {
	t = strings.TrimPrefix(strings.TrimSpace(t), "c10::")
	switch strings.ToLower(t) {
	case "double", "long int", "long", "int64", "complexfloat":
		return 8
	case "float", "int", "int32", "float32":
		return 4
	case "bfloat16", "half", "float16", "short int", "short", "int16":
		return 2
	case "bool", "byte", "char", "signed char", "unsigned char", "int8", "uint8":
		return 1
	}
	if strings.HasPrefix(strings.ToLower(t), "float8") {
		return 1
	}
	return 0
}

// dtypeOf maps a torch type name to c3lab's GEMM element type ("" when
// c3lab has none for it).
func dtypeOf(t string) scenarios.DType {
	t = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(t), "c10::"))
	switch {
	case t == "bfloat16":
		return scenarios.BF16
	case t == "half" || t == "float16":
		return scenarios.FP16
	case t == "float" || t == "float32":
		return scenarios.FP32
	case strings.HasPrefix(t, "float8"):
		return scenarios.FP8
	}
	return ""
}

// gemmFromOp reads a matrix multiply's shape from its aten op's input
// dimensions, nil when the op is not one or its shapes are not recorded.
func gemmFromOp(name string, dims [][]int64, types []string) *GEMMShape {
	at := func(i int) []int64 {
		if i < len(dims) {
			return dims[i]
		}
		return nil
	}
	typ := func(i int) string {
		if i < len(types) {
			return types[i]
		}
		return ""
	}
	var a, b []int64
	var ti int
	linear := false
	switch name {
	case "aten::mm", "aten::_scaled_mm", "aten::matmul", "aten::bmm":
		a, b, ti = at(0), at(1), 0
	case "aten::addmm", "aten::baddbmm", "aten::addbmm":
		a, b, ti = at(1), at(2), 1
	case "aten::linear":
		a, b, ti, linear = at(0), at(1), 0, true
	default:
		return nil
	}
	if len(a) < 2 || len(b) < 1 {
		return nil
	}
	k := a[len(a)-1]
	m := int64(1)
	for _, d := range a[:len(a)-1] {
		m *= d
	}
	var n int64
	switch {
	case linear && len(b) == 2: // weight [N, K]
		n = b[0]
		if b[1] != k {
			return nil
		}
	case !linear && len(b) >= 2: // [..., K, N]
		n = b[len(b)-1]
		if b[len(b)-2] != k {
			return nil
		}
	default:
		return nil
	}
	if m < 1 || n < 1 || k < 1 || m > 1<<31 || n > 1<<31 || k > 1<<31 {
		return nil
	}
	return &GEMMShape{M: int(m), N: int(n), K: int(k), DType: typ(ti)}
}

// inputBytes is the sum of the tensor inputs' sizes, 0 when a type is
// unknown.
func inputBytes(dims [][]int64, types []string) int64 {
	var total int64
	for i, d := range dims {
		if len(d) == 0 || i >= len(types) {
			continue
		}
		sz := torchTypeSize(types[i])
		if sz == 0 {
			continue
		}
		n := sz
		for _, x := range d {
			if x < 0 || (x > 0 && n > (1<<50)/x) {
				return 0
			}
			n *= x
		}
		total += n
	}
	return total
}

// Class says what an activity is to c3lab.
type Class string

// Activity classes.
const (
	ClassGEMM    Class = "gemm"    // a matrix multiply kernel (cuBLAS, cuBLASLt, nvjet, CUTLASS)
	ClassKernel  Class = "kernel"  // any other compute kernel
	ClassNCCL    Class = "nccl"    // an NCCL kernel
	ClassH2D     Class = "h2d"     // a copy host -> device
	ClassD2H     Class = "d2h"     // a copy device -> host
	ClassD2D     Class = "d2d"     // a copy within a GPU
	ClassP2P     Class = "p2p"     // a copy between GPUs
	ClassMemset  Class = "memset"  // a fill
	ClassUnknown Class = "unknown" // a copy of a direction c3lab does not know
)

// Role is the side of C3 the class is on: communication for NCCL kernels
// and copies between the GPU and the host or another GPU, compute for the
// rest.
func (c Class) Role() scenarios.Role {
	switch c {
	case ClassNCCL, ClassH2D, ClassD2H, ClassP2P:
		return scenarios.RoleComm
	}
	return scenarios.RoleCompute
}

// IsNCCL reports whether a kernel is NCCL's, as Holistic Trace Analysis
// decides it (the name starts with "nccl").
func IsNCCL(name string) bool { return strings.HasPrefix(name, "nccl") }

// isGEMMKernel recognizes cuBLAS, cuBLASLt (nvjet, xmma), and CUTLASS
// matrix multiply kernels by name.
func isGEMMKernel(name string) bool {
	l := strings.ToLower(name)
	return strings.Contains(l, "gemm") || strings.HasPrefix(l, "nvjet") || strings.Contains(l, "cutlass") ||
		strings.Contains(l, "xmma") || strings.Contains(l, "cublas") || strings.Contains(l, "matmul")
}

// classify places one activity.
func classify(o GPUOp) Class {
	switch o.Kind {
	case Memset:
		return ClassMemset
	case Memcpy:
		switch {
		case strings.Contains(o.Name, "HtoD"):
			return ClassH2D
		case strings.Contains(o.Name, "DtoH"):
			return ClassD2H
		case strings.Contains(o.Name, "DtoD"):
			return ClassD2D
		case strings.Contains(o.Name, "PtoP"):
			return ClassP2P
		}
		return ClassUnknown
	}
	switch {
	case IsNCCL(o.Name):
		return ClassNCCL
	case isGEMMKernel(o.Name):
		return ClassGEMM
	}
	return ClassKernel
}

// collectiveOf names the collective of an NCCL kernel, from torch's
// "Collective name" when the trace has it, else from the kernel's name
// ("ncclDevKernel_AllGather_RING_LL"); "" when c3lab has no such op
// (broadcast, send/receive on their own).
func collectiveOf(kernel string, args *CommArgs) scenarios.Collective {
	if args != nil {
		if c := collectiveFromText(args.Name); c != "" {
			return c
		}
	}
	return collectiveFromText(kernel)
}

func collectiveFromText(s string) scenarios.Collective {
	l := strings.ReplaceAll(strings.ToLower(s), "_", "")
	switch {
	case strings.Contains(l, "allgather"):
		return scenarios.AllGather
	case strings.Contains(l, "reducescatter"):
		return scenarios.ReduceScatter
	case strings.Contains(l, "allreduce"):
		return scenarios.AllReduce
	case strings.Contains(l, "alltoall"):
		return scenarios.AllToAll
	}
	return ""
}

// commBytes is the per-rank message c3lab's CommOp.Bytes means, from the
// collective's element counts: the shard a rank contributes to an
// all-gather (its input), the shard it ends with after a reduce-scatter
// (its output), the buffer of an all-reduce and the send buffer of an
// all-to-all (their input). 0 when the trace does not say.
func commBytes(c scenarios.Collective, a *CommArgs) int64 {
	if a == nil || c == "" {
		return 0
	}
	sz := torchTypeSize(a.DType)
	if sz == 0 {
		return 0
	}
	n := a.InNelems
	if c == scenarios.ReduceScatter {
		n = a.OutNelems
	}
	if n <= 0 {
		return 0
	}
	return n * sz
}

var (
	tileRe  = regexp.MustCompile(`tilesize(\d+)x(\d+)x(\d+)`)
	nvjetRe = regexp.MustCompile(`^nvjet_[a-z0-9]+_(\d+)x(\d+)_(\d+)x`)
)

// gemmTile reads the CTA tile (M x N, and K when named) from a cuBLAS or
// cuBLASLt kernel name: "..._tilesize128x256x64_..." or
// "nvjet_hsh_256x128_64x4_...". ok is false when the name has none.
func gemmTile(name string) (m, n, k int, ok bool) {
	if s := tileRe.FindStringSubmatch(name); s != nil {
		fmt.Sscan(s[1], &m)
		fmt.Sscan(s[2], &n)
		fmt.Sscan(s[3], &k)
		return m, n, k, true
	}
	if s := nvjetRe.FindStringSubmatch(name); s != nil {
		fmt.Sscan(s[1], &m)
		fmt.Sscan(s[2], &n)
		fmt.Sscan(s[3], &k)
		return m, n, k, true
	}
	return 0, 0, 0, false
}

// gemmDTypeFromName reads the element type from a cuBLAS kernel name
// ("..._bf16bf16_...", nvjet's "hsh" for half, "tst" for tf32), "" when it
// does not say.
func gemmDTypeFromName(name string) scenarios.DType {
	l := strings.ToLower(name)
	switch {
	case strings.Contains(l, "e4m3") || strings.Contains(l, "e5m2") || strings.Contains(l, "fp8"):
		return scenarios.FP8
	case strings.Contains(l, "bf16"):
		return scenarios.BF16
	case strings.Contains(l, "f16") || strings.Contains(l, "fp16") || strings.HasPrefix(l, "nvjet_hsh"):
		return scenarios.FP16
	case strings.HasPrefix(l, "nvjet_sss") || strings.HasPrefix(l, "nvjet_tst") || strings.Contains(l, "sgemm"):
		return scenarios.FP32
	}
	return ""
}

// ShortName is a kernel name without its template and argument lists
// ("void at::native::vectorized_elementwise_kernel<4, ...>(...)" becomes
// "at::native::vectorized_elementwise_kernel").
func ShortName(name string) string {
	s := strings.TrimPrefix(name, "void ")
	if i := strings.IndexAny(s, "<("); i > 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}
