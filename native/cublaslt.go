package native

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// CUBLASLt is cuBLASLt, loaded from libcublasLt.so.13 (or .12).
type CUBLASLt struct {
	t *C.c3_cublaslt
}

// BLASHandle is a cuBLASLt handle.
type BLASHandle struct{ p C.cublasLtHandle_t }

// CUDA data types (cudaDataType) and compute types (cublasComputeType_t).
const (
	TypeF32    = 0
	TypeF16    = 2
	TypeBF16   = 14
	TypeF8E4M3 = 28
	Compute32F = 68
)

// OpenCUBLASLt loads cuBLASLt.
func OpenCUBLASLt() (*CUBLASLt, error) {
	t := (*C.c3_cublaslt)(C.calloc(1, C.sizeof_c3_cublaslt))
	var buf [512]C.char
	if C.c3_cublaslt_open(t, &buf[0], C.size_t(len(buf))) != 0 {
		C.free(unsafe.Pointer(t))
		return nil, &MissingLibraryError{Library: "libcublasLt.so.13", NeededFor: "GEMMs", Detail: C.GoString(&buf[0])}
	}
	return &CUBLASLt{t: t}, nil
}

// Version returns cuBLASLt's version number (e.g. 130100).
func (b *CUBLASLt) Version() int { return int(C.c3_cublasLtGetVersion(b.t)) }

// NewHandle creates a handle (call with the device's context current).
func (b *CUBLASLt) NewHandle() (BLASHandle, error) {
	var h C.cublasLtHandle_t
	if st := C.c3_cublasLtCreate(b.t, &h); st != 0 {
		return BLASHandle{}, &CUBLASError{Call: "cublasLtCreate", Status: int(st)}
	}
	return BLASHandle{h}, nil
}

// DestroyHandle destroys a handle.
func (b *CUBLASLt) DestroyHandle(h BLASHandle) { C.c3_cublasLtDestroy(b.t, h.p) }

// GEMMPlan is a planned D[M,N] = A^T B (TN, column-major: A is K x M, B is
// K x N, D is M x N), the layout every element type including fp8 supports.
type GEMMPlan struct {
	p C.c3_gemm_plan
	// Workspace is the scratch memory the chosen algorithm needs.
	Workspace int64
}

// PlanGEMM picks an algorithm for an M x N x K GEMM with operands of type
// ab, output of type c, fp32 accumulation, and an optional SM count target
// (0 = the whole device).
func (b *CUBLASLt) PlanGEMM(h BLASHandle, m, n, k, ab, c, smTarget int, maxWorkspace int64) (*GEMMPlan, error) {
	p := &GEMMPlan{}
	var stage C.int
	st := C.c3_gemm_plan_create(b.t, h.p, &p.p, C.int(m), C.int(n), C.int(k), C.int(ab), C.int(c), Compute32F, C.int(smTarget), C.size_t(maxWorkspace), &stage)
	if st != 0 {
		steps := map[C.int]string{1: "creating the descriptor", 2: "setting attributes", 3: "creating layouts", 4: "asking the heuristic", 5: "finding an algorithm"}
		return nil, &CUBLASError{Call: fmt.Sprintf("cuBLASLt plan %dx%dx%d (%s)", m, n, k, steps[stage]), Status: int(st)}
	}
	p.Workspace = int64(p.p.workspace)
	return p, nil
}

// DestroyPlan releases a plan.
func (b *CUBLASLt) DestroyPlan(p *GEMMPlan) { C.c3_gemm_plan_destroy(b.t, &p.p) }

// Run enqueues the GEMM on stream s (alpha 1, beta 0).
func (b *CUBLASLt) Run(h BLASHandle, p *GEMMPlan, a, bm, d, workspace DevPtr, s Stream) error {
	if st := C.c3_gemm_run(b.t, h.p, &p.p, C.CUdeviceptr(a), C.CUdeviceptr(bm), C.CUdeviceptr(d), C.CUdeviceptr(workspace), s.p); st != 0 {
		return &CUBLASError{Call: "cublasLtMatmul", Status: int(st)}
	}
	return nil
}
