// c3lab's native shim: declarations of the few NVIDIA types and functions
// c3lab calls, written from native/ABI-NOTES.md so that building needs no
// CUDA toolkit. The libraries are opened at run time with dlopen; every
// function pointer lives in a table that the Go side owns.
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
// CUmemLocation and CUmemcpyAttributes (12.8 through 13.0; 24 bytes).
typedef struct { int type; int id; } CUmemLocation;
typedef struct {
	int srcAccessOrder;
	CUmemLocation srcLocHint;
	CUmemLocation dstLocHint;
	unsigned flags;
} CUmemcpyAttributes;
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

typedef struct {
	void *handle;
	CUresult (*cuInit)(unsigned);
	CUresult (*cuDriverGetVersion)(int *);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
	CUresult (*cuDeviceTotalMem)(size_t *, CUdevice);
	CUresult (*cuDeviceGetUuid)(CUuuid *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuCtxSynchronize)(void);
	CUresult (*cuCtxGetStreamPriorityRange)(int *, int *);
	CUresult (*cuStreamCreateWithPriority)(CUstream *, unsigned, int);
	CUresult (*cuStreamDestroy)(CUstream);
	CUresult (*cuStreamSynchronize)(CUstream);
	CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
	CUresult (*cuEventCreate)(CUevent *, unsigned);
	CUresult (*cuEventRecord)(CUevent, CUstream);
	CUresult (*cuEventSynchronize)(CUevent);
	CUresult (*cuEventQuery)(CUevent);
	CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
	CUresult (*cuEventDestroy)(CUevent);
	CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
	CUresult (*cuMemFree)(CUdeviceptr);
	CUresult (*cuMemGetInfo)(size_t *, size_t *);
	CUresult (*cuMemHostAlloc)(void **, size_t, unsigned);
	CUresult (*cuMemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned);
	CUresult (*cuMemFreeHost)(void *);
	CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
	CUresult (*cuMemcpyPeerAsync)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, size_t, CUstream);
	CUresult (*cuMemcpyAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
	CUresult (*cuDeviceCanAccessPeer)(int *, CUdevice, CUdevice);
	CUresult (*cuCtxEnablePeerAccess)(CUcontext, unsigned);
	CUresult (*cuStreamWaitValue32)(CUstream, CUdeviceptr, uint32_t, unsigned);
	CUresult (*cuStreamWriteValue32)(CUstream, CUdeviceptr, uint32_t, unsigned);
	CUresult (*cuModuleLoadData)(CUmodule *, const void *);
	CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*cuModuleUnload)(CUmodule);
	CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
	                           unsigned, CUstream, void **, void **);
	CUresult (*cuGetErrorName)(CUresult, const char **);
	CUresult (*cuGetErrorString)(CUresult, const char **);
	// Green contexts (12.4+; optional: NULL when the driver lacks them).
	CUresult (*cuDeviceGetDevResource)(CUdevice, CUdevResource *, int);
	CUresult (*cuDevSmResourceSplitByCount)(CUdevResource *, unsigned *, const CUdevResource *,
	                                        CUdevResource *, unsigned, unsigned);
	CUresult (*cuDevResourceGenerateDesc)(CUdevResourceDesc *, CUdevResource *, unsigned);
	CUresult (*cuGreenCtxCreate)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned);
	CUresult (*cuGreenCtxDestroy)(CUgreenCtx);
	CUresult (*cuGreenCtxStreamCreate)(CUstream *, CUgreenCtx, unsigned, int);
	// cuMemcpyBatchAsync: the 13.0 form (_v2) and the 12.8 form (with failIdx).
	CUresult (*cuMemcpyBatchAsync_v2)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t, CUstream);
	CUresult (*cuMemcpyBatchAsync_v1)(CUdeviceptr *, CUdeviceptr *, size_t *, size_t, CUmemcpyAttributes *, size_t *, size_t, size_t *, CUstream);
} c3_cuda;

// c3_cuda_open fills t from libcuda; it returns 0, or writes what failed
// into err and returns -1.
int c3_cuda_open(c3_cuda *t, char *err, size_t errlen);
int c3_cuda_has_green(const c3_cuda *t);
// c3_copy_on_copy_engine copies n bytes within device dev on stream s with
// cuMemcpyBatchAsync and the hint PREFER_OVERLAP_WITH_COMPUTE, so a copy
// engine moves them rather than a kernel on the SMs. It returns
// CUDA_ERROR_NOT_SUPPORTED (801) when the driver lacks the call.
CUresult c3_copy_on_copy_engine(const c3_cuda *t, CUdeviceptr dst, CUdeviceptr src, size_t n, int dev, CUstream s);
int c3_cuda_has_batch_copy(const c3_cuda *t);
CUresult c3_launch_u64(const c3_cuda *t, CUfunction f, unsigned gx, unsigned bx, unsigned shmem,
                       CUstream s, const unsigned long long *args, int nargs);

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

typedef struct {
	void *handle;
	int (*cublasLtCreate)(cublasLtHandle_t *);
	int (*cublasLtDestroy)(cublasLtHandle_t);
	size_t (*cublasLtGetVersion)(void);
	int (*cublasLtMatmulDescCreate)(cublasLtMatmulDesc_t *, int, int);
	int (*cublasLtMatmulDescDestroy)(cublasLtMatmulDesc_t);
	int (*cublasLtMatmulDescSetAttribute)(cublasLtMatmulDesc_t, int, const void *, size_t);
	int (*cublasLtMatrixLayoutCreate)(cublasLtMatrixLayout_t *, int, uint64_t, uint64_t, int64_t);
	int (*cublasLtMatrixLayoutDestroy)(cublasLtMatrixLayout_t);
	int (*cublasLtMatmulPreferenceCreate)(cublasLtMatmulPreference_t *);
	int (*cublasLtMatmulPreferenceSetAttribute)(cublasLtMatmulPreference_t, int, const void *, size_t);
	int (*cublasLtMatmulPreferenceDestroy)(cublasLtMatmulPreference_t);
	int (*cublasLtMatmulAlgoGetHeuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
	                                      cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
	                                      cublasLtMatmulPreference_t, int, cublasLtMatmulHeuristicResult_t *, int *);
	int (*cublasLtMatmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *, cublasLtMatrixLayout_t,
	                      const void *, cublasLtMatrixLayout_t, const void *, const void *, cublasLtMatrixLayout_t,
	                      void *, cublasLtMatrixLayout_t, const cublasLtMatmulAlgo_t *, void *, size_t, CUstream);
} c3_cublaslt;

int c3_cublaslt_open(c3_cublaslt *t, char *err, size_t errlen);

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

// ---- NCCL (libnccl.so.2), 2.28 ABI ----
typedef void *ncclComm_t;
typedef struct { char internal[128]; } ncclUniqueId;
typedef struct {
	size_t size;
	unsigned magic, version;
	int blocking, cgaClusterSize, minCTAs, maxCTAs;
	const char *netName;
	int splitShare, trafficClass;
	const char *commName;
	int collnetEnable, CTAPolicy, shrinkShare, nvlsCTAs, nChannelsPerNetPeer, nvlinkCentricSched;
} ncclConfig_t;

typedef struct {
	void *handle;
	int (*ncclGetVersion)(int *);
	const char *(*ncclGetErrorString)(int);
	int (*ncclGetUniqueId)(ncclUniqueId *);
	int (*ncclCommInitRankConfig)(ncclComm_t *, int, ncclUniqueId, int, ncclConfig_t *);
	int (*ncclCommDestroy)(ncclComm_t);
	int (*ncclCommAbort)(ncclComm_t);
	int (*ncclCommGetAsyncError)(ncclComm_t, int *);
	int (*ncclAllGather)(const void *, void *, size_t, int, ncclComm_t, CUstream);
	int (*ncclReduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
	int (*ncclAllReduce)(const void *, void *, size_t, int, int, ncclComm_t, CUstream);
	int (*ncclAlltoAll)(const void *, void *, size_t, int, ncclComm_t, CUstream); // 2.28+, may be NULL
	int (*ncclSend)(const void *, size_t, int, int, ncclComm_t, CUstream);
	int (*ncclRecv)(void *, size_t, int, int, ncclComm_t, CUstream);
	int (*ncclGroupStart)(void);
	int (*ncclGroupEnd)(void);
	// Symmetric memory and windows (2.27+/2.28, optional: NULL when absent).
	int (*ncclMemAlloc)(void **, size_t);
	int (*ncclMemFree)(void *);
	int (*ncclCommWindowRegister)(ncclComm_t, void *, size_t, void **, int);
	int (*ncclCommWindowDeregister)(ncclComm_t, void *);
} c3_nccl;

int c3_nccl_open(c3_nccl *t, char *err, size_t errlen);
int c3_nccl_init_rank(const c3_nccl *t, ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank,
                      int minCTAs, int maxCTAs, int ctaPolicy);

// ---- NVRTC (libnvrtc.so.13 / .12) ----
typedef void *nvrtcProgram;
typedef struct {
	void *handle;
	int (*nvrtcVersion)(int *, int *);
	const char *(*nvrtcGetErrorString)(int);
	int (*nvrtcCreateProgram)(nvrtcProgram *, const char *, const char *, int, const char *const *,
	                          const char *const *);
	int (*nvrtcCompileProgram)(nvrtcProgram, int, const char *const *);
	int (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t *);
	int (*nvrtcGetProgramLog)(nvrtcProgram, char *);
	int (*nvrtcGetCUBINSize)(nvrtcProgram, size_t *);
	int (*nvrtcGetCUBIN)(nvrtcProgram, char *);
	int (*nvrtcDestroyProgram)(nvrtcProgram *);
} c3_nvrtc;

int c3_nvrtc_open(c3_nvrtc *t, char *err, size_t errlen);




// ---- call wrappers: cgo cannot call C function pointers directly ----
static inline CUresult c3_cuInit(const c3_cuda *t, unsigned a0) { return t->cuInit(a0); }
static inline CUresult c3_cuDriverGetVersion(const c3_cuda *t, int * a0) { return t->cuDriverGetVersion(a0); }
static inline CUresult c3_cuDeviceGetCount(const c3_cuda *t, int * a0) { return t->cuDeviceGetCount(a0); }
static inline CUresult c3_cuDeviceGet(const c3_cuda *t, CUdevice * a0, int a1) { return t->cuDeviceGet(a0, a1); }
static inline CUresult c3_cuDeviceGetName(const c3_cuda *t, char * a0, int a1, CUdevice a2) { return t->cuDeviceGetName(a0, a1, a2); }
static inline CUresult c3_cuDeviceGetAttribute(const c3_cuda *t, int * a0, int a1, CUdevice a2) { return t->cuDeviceGetAttribute(a0, a1, a2); }
static inline CUresult c3_cuDeviceTotalMem(const c3_cuda *t, size_t * a0, CUdevice a1) { return t->cuDeviceTotalMem(a0, a1); }
static inline CUresult c3_cuDeviceGetUuid(const c3_cuda *t, CUuuid * a0, CUdevice a1) { return t->cuDeviceGetUuid(a0, a1); }
static inline CUresult c3_cuDevicePrimaryCtxRetain(const c3_cuda *t, CUcontext * a0, CUdevice a1) { return t->cuDevicePrimaryCtxRetain(a0, a1); }
static inline CUresult c3_cuDevicePrimaryCtxRelease(const c3_cuda *t, CUdevice a0) { return t->cuDevicePrimaryCtxRelease(a0); }
static inline CUresult c3_cuCtxSetCurrent(const c3_cuda *t, CUcontext a0) { return t->cuCtxSetCurrent(a0); }
static inline CUresult c3_cuCtxSynchronize(const c3_cuda *t) { return t->cuCtxSynchronize(); }
static inline CUresult c3_cuCtxGetStreamPriorityRange(const c3_cuda *t, int * a0, int * a1) { return t->cuCtxGetStreamPriorityRange(a0, a1); }
static inline CUresult c3_cuStreamCreateWithPriority(const c3_cuda *t, CUstream * a0, unsigned a1, int a2) { return t->cuStreamCreateWithPriority(a0, a1, a2); }
static inline CUresult c3_cuStreamDestroy(const c3_cuda *t, CUstream a0) { return t->cuStreamDestroy(a0); }
static inline CUresult c3_cuStreamSynchronize(const c3_cuda *t, CUstream a0) { return t->cuStreamSynchronize(a0); }
static inline CUresult c3_cuStreamWaitEvent(const c3_cuda *t, CUstream a0, CUevent a1, unsigned a2) { return t->cuStreamWaitEvent(a0, a1, a2); }
static inline CUresult c3_cuEventCreate(const c3_cuda *t, CUevent * a0, unsigned a1) { return t->cuEventCreate(a0, a1); }
static inline CUresult c3_cuEventRecord(const c3_cuda *t, CUevent a0, CUstream a1) { return t->cuEventRecord(a0, a1); }
static inline CUresult c3_cuEventSynchronize(const c3_cuda *t, CUevent a0) { return t->cuEventSynchronize(a0); }
static inline CUresult c3_cuEventQuery(const c3_cuda *t, CUevent a0) { return t->cuEventQuery(a0); }
static inline CUresult c3_cuEventElapsedTime(const c3_cuda *t, float * a0, CUevent a1, CUevent a2) { return t->cuEventElapsedTime(a0, a1, a2); }
static inline CUresult c3_cuEventDestroy(const c3_cuda *t, CUevent a0) { return t->cuEventDestroy(a0); }
static inline CUresult c3_cuMemAlloc(const c3_cuda *t, CUdeviceptr * a0, size_t a1) { return t->cuMemAlloc(a0, a1); }
static inline CUresult c3_cuMemFree(const c3_cuda *t, CUdeviceptr a0) { return t->cuMemFree(a0); }
static inline CUresult c3_cuMemGetInfo(const c3_cuda *t, size_t * a0, size_t * a1) { return t->cuMemGetInfo(a0, a1); }
static inline CUresult c3_cuMemHostAlloc(const c3_cuda *t, void ** a0, size_t a1, unsigned a2) { return t->cuMemHostAlloc(a0, a1, a2); }
static inline CUresult c3_cuMemHostGetDevicePointer(const c3_cuda *t, CUdeviceptr * a0, void * a1, unsigned a2) { return t->cuMemHostGetDevicePointer(a0, a1, a2); }
static inline CUresult c3_cuMemFreeHost(const c3_cuda *t, void * a0) { return t->cuMemFreeHost(a0); }
static inline CUresult c3_cuMemcpyHtoD(const c3_cuda *t, CUdeviceptr a0, const void * a1, size_t a2) { return t->cuMemcpyHtoD(a0, a1, a2); }
static inline CUresult c3_cuMemcpyDtoH(const c3_cuda *t, void * a0, CUdeviceptr a1, size_t a2) { return t->cuMemcpyDtoH(a0, a1, a2); }
static inline CUresult c3_cuMemsetD32Async(const c3_cuda *t, CUdeviceptr a0, unsigned a1, size_t a2, CUstream a3) { return t->cuMemsetD32Async(a0, a1, a2, a3); }
static inline CUresult c3_cuMemcpyPeerAsync(const c3_cuda *t, CUdeviceptr a0, CUcontext a1, CUdeviceptr a2, CUcontext a3, size_t a4, CUstream a5) { return t->cuMemcpyPeerAsync(a0, a1, a2, a3, a4, a5); }
static inline CUresult c3_cuMemcpyAsync(const c3_cuda *t, CUdeviceptr a0, CUdeviceptr a1, size_t a2, CUstream a3) { return t->cuMemcpyAsync(a0, a1, a2, a3); }
static inline CUresult c3_cuDeviceCanAccessPeer(const c3_cuda *t, int * a0, CUdevice a1, CUdevice a2) { return t->cuDeviceCanAccessPeer(a0, a1, a2); }
static inline CUresult c3_cuCtxEnablePeerAccess(const c3_cuda *t, CUcontext a0, unsigned a1) { return t->cuCtxEnablePeerAccess(a0, a1); }
static inline CUresult c3_cuStreamWaitValue32(const c3_cuda *t, CUstream a0, CUdeviceptr a1, uint32_t a2, unsigned a3) { return t->cuStreamWaitValue32(a0, a1, a2, a3); }
static inline CUresult c3_cuStreamWriteValue32(const c3_cuda *t, CUstream a0, CUdeviceptr a1, uint32_t a2, unsigned a3) { return t->cuStreamWriteValue32(a0, a1, a2, a3); }
static inline CUresult c3_cuModuleLoadData(const c3_cuda *t, CUmodule * a0, const void * a1) { return t->cuModuleLoadData(a0, a1); }
static inline CUresult c3_cuModuleGetFunction(const c3_cuda *t, CUfunction * a0, CUmodule a1, const char * a2) { return t->cuModuleGetFunction(a0, a1, a2); }
static inline CUresult c3_cuModuleUnload(const c3_cuda *t, CUmodule a0) { return t->cuModuleUnload(a0); }
static inline CUresult c3_cuLaunchKernel(const c3_cuda *t, CUfunction a0, unsigned a1, unsigned a2, unsigned a3, unsigned a4, unsigned a5, unsigned a6, unsigned a7, CUstream a8, void ** a9, void ** a10) { return t->cuLaunchKernel(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10); }
static inline CUresult c3_cuGetErrorName(const c3_cuda *t, CUresult a0, const char ** a1) { return t->cuGetErrorName(a0, a1); }
static inline CUresult c3_cuGetErrorString(const c3_cuda *t, CUresult a0, const char ** a1) { return t->cuGetErrorString(a0, a1); }
static inline CUresult c3_cuDeviceGetDevResource(const c3_cuda *t, CUdevice a0, CUdevResource * a1, int a2) { return t->cuDeviceGetDevResource(a0, a1, a2); }
static inline CUresult c3_cuDevSmResourceSplitByCount(const c3_cuda *t, CUdevResource * a0, unsigned * a1, const CUdevResource * a2, CUdevResource * a3, unsigned a4, unsigned a5) { return t->cuDevSmResourceSplitByCount(a0, a1, a2, a3, a4, a5); }
static inline CUresult c3_cuDevResourceGenerateDesc(const c3_cuda *t, CUdevResourceDesc * a0, CUdevResource * a1, unsigned a2) { return t->cuDevResourceGenerateDesc(a0, a1, a2); }
static inline CUresult c3_cuGreenCtxCreate(const c3_cuda *t, CUgreenCtx * a0, CUdevResourceDesc a1, CUdevice a2, unsigned a3) { return t->cuGreenCtxCreate(a0, a1, a2, a3); }
static inline CUresult c3_cuGreenCtxDestroy(const c3_cuda *t, CUgreenCtx a0) { return t->cuGreenCtxDestroy(a0); }
static inline CUresult c3_cuGreenCtxStreamCreate(const c3_cuda *t, CUstream * a0, CUgreenCtx a1, unsigned a2, int a3) { return t->cuGreenCtxStreamCreate(a0, a1, a2, a3); }
static inline int c3_cublasLtCreate(const c3_cublaslt *t, cublasLtHandle_t * a0) { return t->cublasLtCreate(a0); }
static inline int c3_cublasLtDestroy(const c3_cublaslt *t, cublasLtHandle_t a0) { return t->cublasLtDestroy(a0); }
static inline size_t c3_cublasLtGetVersion(const c3_cublaslt *t) { return t->cublasLtGetVersion(); }
static inline int c3_cublasLtMatmulDescCreate(const c3_cublaslt *t, cublasLtMatmulDesc_t * a0, int a1, int a2) { return t->cublasLtMatmulDescCreate(a0, a1, a2); }
static inline int c3_cublasLtMatmulDescDestroy(const c3_cublaslt *t, cublasLtMatmulDesc_t a0) { return t->cublasLtMatmulDescDestroy(a0); }
static inline int c3_cublasLtMatmulDescSetAttribute(const c3_cublaslt *t, cublasLtMatmulDesc_t a0, int a1, const void * a2, size_t a3) { return t->cublasLtMatmulDescSetAttribute(a0, a1, a2, a3); }
static inline int c3_cublasLtMatrixLayoutCreate(const c3_cublaslt *t, cublasLtMatrixLayout_t * a0, int a1, uint64_t a2, uint64_t a3, int64_t a4) { return t->cublasLtMatrixLayoutCreate(a0, a1, a2, a3, a4); }
static inline int c3_cublasLtMatrixLayoutDestroy(const c3_cublaslt *t, cublasLtMatrixLayout_t a0) { return t->cublasLtMatrixLayoutDestroy(a0); }
static inline int c3_cublasLtMatmulPreferenceCreate(const c3_cublaslt *t, cublasLtMatmulPreference_t * a0) { return t->cublasLtMatmulPreferenceCreate(a0); }
static inline int c3_cublasLtMatmulPreferenceSetAttribute(const c3_cublaslt *t, cublasLtMatmulPreference_t a0, int a1, const void * a2, size_t a3) { return t->cublasLtMatmulPreferenceSetAttribute(a0, a1, a2, a3); }
static inline int c3_cublasLtMatmulPreferenceDestroy(const c3_cublaslt *t, cublasLtMatmulPreference_t a0) { return t->cublasLtMatmulPreferenceDestroy(a0); }
static inline int c3_cublasLtMatmulAlgoGetHeuristic(const c3_cublaslt *t, cublasLtHandle_t a0, cublasLtMatmulDesc_t a1, cublasLtMatrixLayout_t a2, cublasLtMatrixLayout_t a3, cublasLtMatrixLayout_t a4, cublasLtMatrixLayout_t a5, cublasLtMatmulPreference_t a6, int a7, cublasLtMatmulHeuristicResult_t * a8, int * a9) { return t->cublasLtMatmulAlgoGetHeuristic(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9); }
static inline int c3_cublasLtMatmul(const c3_cublaslt *t, cublasLtHandle_t a0, cublasLtMatmulDesc_t a1, const void * a2, const void * a3, cublasLtMatrixLayout_t a4, const void * a5, cublasLtMatrixLayout_t a6, const void * a7, const void * a8, cublasLtMatrixLayout_t a9, void * a10, cublasLtMatrixLayout_t a11, const cublasLtMatmulAlgo_t * a12, void * a13, size_t a14, CUstream a15) { return t->cublasLtMatmul(a0, a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12, a13, a14, a15); }
static inline int c3_ncclGetVersion(const c3_nccl *t, int * a0) { return t->ncclGetVersion(a0); }
static inline const char * c3_ncclGetErrorString(const c3_nccl *t, int a0) { return t->ncclGetErrorString(a0); }
static inline int c3_ncclGetUniqueId(const c3_nccl *t, ncclUniqueId * a0) { return t->ncclGetUniqueId(a0); }
static inline int c3_ncclCommInitRankConfig(const c3_nccl *t, ncclComm_t * a0, int a1, ncclUniqueId a2, int a3, ncclConfig_t * a4) { return t->ncclCommInitRankConfig(a0, a1, a2, a3, a4); }
static inline int c3_ncclCommDestroy(const c3_nccl *t, ncclComm_t a0) { return t->ncclCommDestroy(a0); }
static inline int c3_ncclCommAbort(const c3_nccl *t, ncclComm_t a0) { return t->ncclCommAbort(a0); }
static inline int c3_ncclCommGetAsyncError(const c3_nccl *t, ncclComm_t a0, int * a1) { return t->ncclCommGetAsyncError(a0, a1); }
static inline int c3_ncclAllGather(const c3_nccl *t, const void * a0, void * a1, size_t a2, int a3, ncclComm_t a4, CUstream a5) { return t->ncclAllGather(a0, a1, a2, a3, a4, a5); }
static inline int c3_ncclReduceScatter(const c3_nccl *t, const void * a0, void * a1, size_t a2, int a3, int a4, ncclComm_t a5, CUstream a6) { return t->ncclReduceScatter(a0, a1, a2, a3, a4, a5, a6); }
static inline int c3_ncclAllReduce(const c3_nccl *t, const void * a0, void * a1, size_t a2, int a3, int a4, ncclComm_t a5, CUstream a6) { return t->ncclAllReduce(a0, a1, a2, a3, a4, a5, a6); }
static inline int c3_ncclAlltoAll(const c3_nccl *t, const void * a0, void * a1, size_t a2, int a3, ncclComm_t a4, CUstream a5) { return t->ncclAlltoAll(a0, a1, a2, a3, a4, a5); }
static inline int c3_ncclSend(const c3_nccl *t, const void * a0, size_t a1, int a2, int a3, ncclComm_t a4, CUstream a5) { return t->ncclSend(a0, a1, a2, a3, a4, a5); }
static inline int c3_ncclRecv(const c3_nccl *t, void * a0, size_t a1, int a2, int a3, ncclComm_t a4, CUstream a5) { return t->ncclRecv(a0, a1, a2, a3, a4, a5); }
static inline int c3_ncclGroupStart(const c3_nccl *t) { return t->ncclGroupStart(); }
static inline int c3_ncclGroupEnd(const c3_nccl *t) { return t->ncclGroupEnd(); }
static inline int c3_nvrtcVersion(const c3_nvrtc *t, int * a0, int * a1) { return t->nvrtcVersion(a0, a1); }
static inline const char * c3_nvrtcGetErrorString(const c3_nvrtc *t, int a0) { return t->nvrtcGetErrorString(a0); }
static inline int c3_nvrtcCreateProgram(const c3_nvrtc *t, nvrtcProgram * a0, const char * a1, const char * a2, int a3, const char *const * a4, const char *const * a5) { return t->nvrtcCreateProgram(a0, a1, a2, a3, a4, a5); }
static inline int c3_nvrtcCompileProgram(const c3_nvrtc *t, nvrtcProgram a0, int a1, const char *const * a2) { return t->nvrtcCompileProgram(a0, a1, a2); }
static inline int c3_nvrtcGetProgramLogSize(const c3_nvrtc *t, nvrtcProgram a0, size_t * a1) { return t->nvrtcGetProgramLogSize(a0, a1); }
static inline int c3_nvrtcGetProgramLog(const c3_nvrtc *t, nvrtcProgram a0, char * a1) { return t->nvrtcGetProgramLog(a0, a1); }
static inline int c3_nvrtcGetCUBINSize(const c3_nvrtc *t, nvrtcProgram a0, size_t * a1) { return t->nvrtcGetCUBINSize(a0, a1); }
static inline int c3_nvrtcGetCUBIN(const c3_nvrtc *t, nvrtcProgram a0, char * a1) { return t->nvrtcGetCUBIN(a0, a1); }
static inline int c3_nvrtcDestroyProgram(const c3_nvrtc *t, nvrtcProgram * a0) { return t->nvrtcDestroyProgram(a0); }
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
static inline unsigned c3_res_sm_count(const CUdevResource *r) { return r->u.sm.smCount; }

#endif
