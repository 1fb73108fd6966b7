// c3lab's native shim: declarations of the few NVIDIA types and functions
// c3lab calls, written from native/ABI-NOTES.md so that building needs no
// CUDA toolkit. The libraries are opened at run time with dlopen; every
// function pointer lives in a table that the Go side owns. The tables,
// their openers and the c3_* call wrappers are generated from shim.api
// (shim_gen.h, shim_gen.c); this file holds the types and the hand-written
// helpers.
#ifndef C3_SHIM_H
#define C3_SHIM_H

#include <stddef.h>
#include <stdint.h>

// ---- CUDA driver API (libcuda.so.1), CUDA 12.4+ ABI, checked on 13.0 ----
typedef int CUresult;
typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef void *CUcontext;
typedef void *CUstream;
typedef void *CUevent;
typedef void *CUmodule;
typedef void *CUfunction;
typedef void *CUgreenCtx;
typedef void *CUdevResourceDesc;
typedef struct { char bytes[16]; } CUuuid;
// Sizes and offsets from ABI-NOTES (section numbers in the messages): a
// layout that drifts from them fails the build.
_Static_assert(sizeof(CUresult) == 4, "CUresult and every enum are 4-byte ints (ABI-NOTES 1.1)");
_Static_assert(sizeof(CUdevice) == 4, "CUdevice is 4 bytes (ABI-NOTES 1.1)");
_Static_assert(sizeof(CUdeviceptr) == 8, "CUdeviceptr is 8 bytes (ABI-NOTES 1.1)");
_Static_assert(sizeof(CUuuid) == 16 && _Alignof(CUuuid) == 1, "CUuuid is 16 bytes, align 1 (ABI-NOTES 1.1)");
// CUipcMemHandle: CU_IPC_HANDLE_SIZE (64) opaque bytes, passed by value to
// cuIpcOpenMemHandle.
typedef struct { char reserved[64]; } CUipcMemHandle;
_Static_assert(sizeof(CUipcMemHandle) == 64 && _Alignof(CUipcMemHandle) == 1, "CUipcMemHandle is 64 bytes, align 1 (ABI-NOTES 1.8)");
// CUmemLocation and CUmemcpyAttributes (12.8 through 13.0; 24 bytes).
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int srcAccessOrder;
	CUmemLocation srcLocHint;
	CUmemLocation dstLocHint;
	unsigned flags;
} CUmemcpyAttributes;
_Static_assert(sizeof(CUmemLocation) == 8, "CUmemLocation is 8 bytes (ABI-NOTES 1.5)");
_Static_assert(sizeof(CUmemcpyAttributes) == 24 && _Alignof(CUmemcpyAttributes) == 4,
               "CUmemcpyAttributes is 24 bytes, align 4 (ABI-NOTES 1.5)");
_Static_assert(offsetof(CUmemcpyAttributes, srcAccessOrder) == 0, "CUmemcpyAttributes.srcAccessOrder at 0 (ABI-NOTES 1.5)");
_Static_assert(offsetof(CUmemcpyAttributes, srcLocHint) == 4, "CUmemcpyAttributes.srcLocHint at 4 (ABI-NOTES 1.5)");
_Static_assert(offsetof(CUmemcpyAttributes, dstLocHint) == 12, "CUmemcpyAttributes.dstLocHint at 12 (ABI-NOTES 1.5)");
_Static_assert(offsetof(CUmemcpyAttributes, flags) == 20, "CUmemcpyAttributes.flags at 20 (ABI-NOTES 1.5)");
// Cluster launches (ABI-NOTES 1.9): cuLaunchKernelEx's config and its
// one attribute c3lab sets, the cluster's dimensions.
typedef struct {
	int id;
	int pad;
	union {
		struct { unsigned x, y, z; } clusterDim;
		char bytes[64];
	} value;
} CUlaunchAttribute;
typedef struct {
	unsigned gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes;
	CUstream hStream;
	CUlaunchAttribute *attrs;
	unsigned numAttrs;
} CUlaunchConfig;
_Static_assert(sizeof(CUlaunchAttribute) == 72 && offsetof(CUlaunchAttribute, value) == 8, "CUlaunchAttribute is 72 bytes, value at 8 (ABI-NOTES 1.9)");
_Static_assert(sizeof(CUlaunchConfig) == 56 && offsetof(CUlaunchConfig, hStream) == 32 && offsetof(CUlaunchConfig, attrs) == 40 &&
                   offsetof(CUlaunchConfig, numAttrs) == 48,
               "CUlaunchConfig is 56 bytes: hStream at 32, attrs at 40, numAttrs at 48 (ABI-NOTES 1.9)");
// CUdevResource: 144 bytes from 12.4 through 13.0; the SM count is the first
// field of the union at offset 96.
typedef struct {
	int type;
	unsigned char pad[92];
	union {
		struct { unsigned smCount, minSmPartitionSize, smCoscheduledAlignment; } sm;
		unsigned char oversize[48];
	} u;
} CUdevResource;
_Static_assert(sizeof(CUdevResource) == 144 && _Alignof(CUdevResource) == 4,
               "CUdevResource is 144 bytes, align 4, 12.4 through 13.0 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, type) == 0, "CUdevResource.type at 0 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, pad) == 4 && sizeof(((CUdevResource *)0)->pad) == 92,
               "CUdevResource._internal_padding: 92 bytes at 4 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, u) == 96 && sizeof(((CUdevResource *)0)->u) == 48,
               "CUdevResource's union: 48 bytes at 96 (ABI-NOTES 1.6)");
_Static_assert(sizeof(((CUdevResource *)0)->u.sm) == 12, "CUdevSmResource is 12 bytes in 13.0 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, u.sm.smCount) == 96 + 0, "CUdevSmResource.smCount at 0 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, u.sm.minSmPartitionSize) == 96 + 4,
               "CUdevSmResource.minSmPartitionSize at 4 (ABI-NOTES 1.6)");
_Static_assert(offsetof(CUdevResource, u.sm.smCoscheduledAlignment) == 96 + 8,
               "CUdevSmResource.smCoscheduledAlignment at 8 (ABI-NOTES 1.6)");

// ---- cuBLASLt (libcublasLt.so.13 / .12) ----
typedef void *cublasLtHandle_t;
typedef void *cublasLtMatmulDesc_t;
typedef void *cublasLtMatrixLayout_t;
typedef void *cublasLtMatmulPreference_t;
typedef struct { uint64_t data[8]; } cublasLtMatmulAlgo_t;
typedef struct {
	cublasLtMatmulAlgo_t algo;
	size_t workspaceSize;
	int state;
	float wavesCount;
	int reserved[4];
} cublasLtMatmulHeuristicResult_t;
_Static_assert(sizeof(cublasLtMatmulAlgo_t) == 64 && _Alignof(cublasLtMatmulAlgo_t) == 8,
               "cublasLtMatmulAlgo_t is 64 bytes, align 8 (ABI-NOTES 2.3)");
_Static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == 96 && _Alignof(cublasLtMatmulHeuristicResult_t) == 8,
               "cublasLtMatmulHeuristicResult_t is 96 bytes, align 8 (ABI-NOTES 2.3)");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, algo) == 0, "HeuristicResult.algo at 0 (ABI-NOTES 2.3)");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, workspaceSize) == 64,
               "HeuristicResult.workspaceSize at 64 (ABI-NOTES 2.3)");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, state) == 72, "HeuristicResult.state at 72 (ABI-NOTES 2.3)");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, wavesCount) == 76,
               "HeuristicResult.wavesCount at 76 (ABI-NOTES 2.3)");
_Static_assert(offsetof(cublasLtMatmulHeuristicResult_t, reserved) == 80, "HeuristicResult.reserved at 80 (ABI-NOTES 2.3)");

// ---- NCCL (libnccl.so.2), 2.28 ABI ----
typedef void *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
_Static_assert(sizeof(ncclUniqueId) == 128, "ncclUniqueId is 128 bytes (ABI-NOTES 3.1)");
typedef struct {
	size_t size;
	unsigned magic, version;
	int blocking, cgaClusterSize, minCTAs, maxCTAs;
	const char *netName;
	int splitShare, trafficClass;
	const char *commName;
	int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
} ncclConfig_t;
_Static_assert(sizeof(ncclConfig_t) == 80 && _Alignof(ncclConfig_t) == 8, "ncclConfig_t is 80 bytes, align 8 (ABI-NOTES 3.3)");
#define C3_NCCL_CONFIG_AT(field, off) \
	_Static_assert(offsetof(ncclConfig_t, field) == off, "ncclConfig_t." #field " at " #off " (ABI-NOTES 3.3)")
C3_NCCL_CONFIG_AT(size, 0);
C3_NCCL_CONFIG_AT(magic, 8);
C3_NCCL_CONFIG_AT(version, 12);
C3_NCCL_CONFIG_AT(blocking, 16);
C3_NCCL_CONFIG_AT(cgaClusterSize, 20);
C3_NCCL_CONFIG_AT(minCTAs, 24);
C3_NCCL_CONFIG_AT(maxCTAs, 28);
C3_NCCL_CONFIG_AT(netName, 32);
C3_NCCL_CONFIG_AT(splitShare, 40);
C3_NCCL_CONFIG_AT(trafficClass, 44);
C3_NCCL_CONFIG_AT(commName, 48);
C3_NCCL_CONFIG_AT(collnetEnable, 56);
C3_NCCL_CONFIG_AT(CTAPolicy, 60);
C3_NCCL_CONFIG_AT(shrinkShare, 64);
C3_NCCL_CONFIG_AT(nvlsCTAs, 68);
C3_NCCL_CONFIG_AT(nChannelsPerNetPeer, 72); // where 2.27's 72-byte ncclConfig_v22700 ends
C3_NCCL_CONFIG_AT(nvlinkCentricSched, 76);
#undef C3_NCCL_CONFIG_AT

// ---- NVRTC (libnvrtc.so.13 / .12) ----
typedef void *nvrtcProgram;

// The function tables (c3_cuda, c3_cublaslt, c3_nccl, c3_nvrtc), their
// openers and the c3_<call> wrappers.
#include "shim_gen.h"

// ---- CUDA helpers ----
int c3_cuda_has_green(const c3_cuda *t);
int c3_cuda_has_green_resource(const c3_cuda *t);
// c3_copy_on_copy_engine copies n bytes within device dev on stream s with
// cuMemcpyBatchAsync and the hint PREFER_OVERLAP_WITH_COMPUTE, so a copy
// engine moves them rather than a kernel on the SMs. It returns
// CUDA_ERROR_NOT_SUPPORTED (801) when the driver lacks the call.
CUresult c3_copy_on_copy_engine(const c3_cuda *t, CUdeviceptr dst, CUdeviceptr src, size_t n, int dev, CUstream s);
int c3_cuda_has_batch_copy(const c3_cuda *t);
CUresult c3_launch_u64(const c3_cuda *t, CUfunction f, unsigned gx, unsigned bx, unsigned shmem,
                       CUstream s, const unsigned long long *args, int nargs);
// c3_launch_cluster_u64 is c3_launch_u64 in thread-block clusters of
// cluster CTAs (cuLaunchKernelEx), with shmem bytes of dynamic shared
// memory per CTA (above 48 KiB, the function's limit is raised first).
CUresult c3_launch_cluster_u64(const c3_cuda *t, CUfunction f, unsigned gx, unsigned bx, unsigned cluster, unsigned shmem,
                               CUstream s, const unsigned long long *args, int nargs);
int c3_cuda_has_cluster_launch(const c3_cuda *t);
static inline unsigned c3_res_sm_count(const CUdevResource *r) { return r->u.sm.smCount; }

// ---- cuBLASLt helpers ----
// A GEMM plan: D[M,N] = A^T B in column-major TN form (A is K x M, B is K x N).
typedef struct {
	cublasLtMatmulDesc_t desc;
	cublasLtMatrixLayout_t a, b, c;
	cublasLtMatmulAlgo_t algo;
	size_t workspace;
} c3_gemm_plan;

int c3_gemm_plan_create(const c3_cublaslt *t, cublasLtHandle_t h, c3_gemm_plan *p, int m, int n, int k,
                        int abType, int cType, int computeType, int smTarget, size_t maxWorkspace, int *stage);
void c3_gemm_plan_destroy(const c3_cublaslt *t, c3_gemm_plan *p);
int c3_gemm_run(const c3_cublaslt *t, cublasLtHandle_t h, const c3_gemm_plan *p, CUdeviceptr a, CUdeviceptr b,
                CUdeviceptr d, CUdeviceptr ws, CUstream s);

// ---- NCCL helpers ----
// c3_nccl_init_rank makes one rank of a communicator with a config for
// NCCL version (ncclGetVersion's code, which fixes the config's layout).
int c3_nccl_init_rank(const c3_nccl *t, ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank,
                      int version, int minCTAs, int maxCTAs, int ctaPolicy);
static inline int c3n_has_windows(const c3_nccl *t) {
	return t->ncclMemAlloc && t->ncclMemFree && t->ncclCommWindowRegister && t->ncclCommWindowDeregister;
}
static inline int c3n_mem_alloc(const c3_nccl *t, CUdeviceptr *p, size_t n) {
	void *v = NULL;
	int r = t->ncclMemAlloc(&v, n);
	*p = (CUdeviceptr)v;
	return r;
}
static inline int c3n_mem_free(const c3_nccl *t, CUdeviceptr p) { return t->ncclMemFree((void *)p); }
static inline int c3n_window_register(const c3_nccl *t, ncclComm_t c, CUdeviceptr p, size_t n, void **win) {
	return t->ncclCommWindowRegister(c, (void *)p, n, win, 1); // NCCL_WIN_COLL_SYMMETRIC
}
static inline int c3n_window_deregister(const c3_nccl *t, ncclComm_t c, void *win) {
	return t->ncclCommWindowDeregister(c, win);
}

#endif
