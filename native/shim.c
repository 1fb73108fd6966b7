// See shim.h: the shim's hand-written C (the libraries' openers are
// generated into shim_gen.c from shim.api).
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "dl.h"
#include "shim.h"

void *c3_open_first(const char *const *names, char *err, size_t errlen) {
	for (int i = 0; names[i]; i++) {
		void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h) return h;
	}
	const char *why = dlerror();
	snprintf(err, errlen, "%s: %s", names[0], why ? why : "not found");
	return NULL;
}

int c3_cuda_has_batch_copy(const c3_cuda *t) { return t->cuMemcpyBatchAsync_v2 || t->cuMemcpyBatchAsync_v1; }

CUresult c3_copy_on_copy_engine(const c3_cuda *t, CUdeviceptr dst, CUdeviceptr src, size_t n, int dev, CUstream s) {
	// srcAccessOrder STREAM (1); both hints DEVICE (1) dev; flags PREFER_OVERLAP_WITH_COMPUTE (1).
	CUmemcpyAttributes a = {1, {1, dev}, {1, dev}, 1};
	size_t idx = 0, fail = 0;
	if (t->cuMemcpyBatchAsync_v2) return t->cuMemcpyBatchAsync_v2(&dst, &src, &n, 1, &a, &idx, 1, s);
	if (t->cuMemcpyBatchAsync_v1) return t->cuMemcpyBatchAsync_v1(&dst, &src, &n, 1, &a, &idx, 1, &fail, s);
	return 801;
}

int c3_cuda_has_green(const c3_cuda *t) {
	return t->cuDeviceGetDevResource && t->cuDevSmResourceSplitByCount && t->cuDevResourceGenerateDesc &&
	       t->cuGreenCtxCreate && t->cuGreenCtxDestroy && t->cuGreenCtxStreamCreate;
}

int c3_cuda_has_green_resource(const c3_cuda *t) { return c3_cuda_has_green(t) && t->cuGreenCtxGetDevResource; }

CUresult c3_launch_u64(const c3_cuda *t, CUfunction f, unsigned gx, unsigned bx, unsigned shmem, CUstream s,
                       const unsigned long long *args, int nargs) {
	void *params[16];
	if (nargs > 16) return 1; // CUDA_ERROR_INVALID_VALUE
	for (int i = 0; i < nargs; i++) params[i] = (void *)&args[i];
	return t->cuLaunchKernel(f, gx, 1, 1, bx, 1, 1, shmem, s, params, NULL);
}

int c3_cuda_has_cluster_launch(const c3_cuda *t) { return t->cuLaunchKernelEx && t->cuFuncSetAttribute; }

CUresult c3_launch_cluster_u64(const c3_cuda *t, CUfunction f, unsigned gx, unsigned bx, unsigned cluster, unsigned shmem,
                               CUstream s, const unsigned long long *args, int nargs) {
	void *params[16];
	if (nargs > 16 || cluster < 1 || gx % cluster) return 1; // CUDA_ERROR_INVALID_VALUE
	if (!c3_cuda_has_cluster_launch(t)) return 801; // CUDA_ERROR_NOT_SUPPORTED
	for (int i = 0; i < nargs; i++) params[i] = (void *)&args[i];
	if (shmem > 48 * 1024) {
		CUresult r = t->cuFuncSetAttribute(f, 8 /* MAX_DYNAMIC_SHARED_SIZE_BYTES */, (int)shmem);
		if (r) return r;
	}
	CUlaunchAttribute a;
	memset(&a, 0, sizeof a);
	a.id = 4; // CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION
	a.value.clusterDim.x = cluster;
	a.value.clusterDim.y = 1;
	a.value.clusterDim.z = 1;
	CUlaunchConfig c = {gx, 1, 1, bx, 1, 1, shmem, s, &a, 1};
	return t->cuLaunchKernelEx(&c, f, params, NULL);
}

// cuBLASLt attribute numbers (ABI-NOTES 2.2).
enum {
	DESC_TRANSA = 3,
	DESC_TRANSB = 4,
	DESC_SM_COUNT_TARGET = 15,
	PREF_MAX_WORKSPACE_BYTES = 1,
	OP_N = 0,
	OP_T = 1,
	R_32F = 0,
};

void c3_gemm_plan_destroy(const c3_cublaslt *t, c3_gemm_plan *p) {
	if (p->a) t->cublasLtMatrixLayoutDestroy(p->a);
	if (p->b) t->cublasLtMatrixLayoutDestroy(p->b);
	if (p->c) t->cublasLtMatrixLayoutDestroy(p->c);
	if (p->desc) t->cublasLtMatmulDescDestroy(p->desc);
	memset(p, 0, sizeof *p);
}

// c3_gemm_plan_create builds a TN plan and picks the heuristic's first
// algorithm. On failure it returns the cuBLAS status and sets *stage to the
// step that failed (1 desc, 2 attributes, 3 layouts, 4 heuristic, 5 no algo).
int c3_gemm_plan_create(const c3_cublaslt *t, cublasLtHandle_t h, c3_gemm_plan *p, int m, int n, int k,
                        int abType, int cType, int computeType, int smTarget, size_t maxWorkspace, int *stage) {
	memset(p, 0, sizeof *p);
	int st;
	*stage = 1;
	if ((st = t->cublasLtMatmulDescCreate(&p->desc, computeType, R_32F))) return st;
	*stage = 2;
	int ta = OP_T, tb = OP_N;
	if ((st = t->cublasLtMatmulDescSetAttribute(p->desc, DESC_TRANSA, &ta, sizeof ta))) goto fail;
	if ((st = t->cublasLtMatmulDescSetAttribute(p->desc, DESC_TRANSB, &tb, sizeof tb))) goto fail;
	if (smTarget > 0 &&
	    (st = t->cublasLtMatmulDescSetAttribute(p->desc, DESC_SM_COUNT_TARGET, &smTarget, sizeof smTarget)))
		goto fail;
	*stage = 3;
	if ((st = t->cublasLtMatrixLayoutCreate(&p->a, abType, k, m, k))) goto fail;
	if ((st = t->cublasLtMatrixLayoutCreate(&p->b, abType, k, n, k))) goto fail;
	if ((st = t->cublasLtMatrixLayoutCreate(&p->c, cType, m, n, m))) goto fail;
	*stage = 4;
	cublasLtMatmulPreference_t pref = NULL;
	if ((st = t->cublasLtMatmulPreferenceCreate(&pref))) goto fail;
	uint64_t ws = maxWorkspace;
	st = t->cublasLtMatmulPreferenceSetAttribute(pref, PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
	cublasLtMatmulHeuristicResult_t res;
	int got = 0;
	if (!st) st = t->cublasLtMatmulAlgoGetHeuristic(h, p->desc, p->a, p->b, p->c, p->c, pref, 1, &res, &got);
	t->cublasLtMatmulPreferenceDestroy(pref);
	if (st) goto fail;
	*stage = 5;
	if (got < 1) {
		st = 15; // CUBLAS_STATUS_NOT_SUPPORTED
		goto fail;
	}
	p->algo = res.algo;
	p->workspace = res.workspaceSize;
	*stage = 0;
	return 0;
fail:
	c3_gemm_plan_destroy(t, p);
	return st;
}

int c3_gemm_run(const c3_cublaslt *t, cublasLtHandle_t h, const c3_gemm_plan *p, CUdeviceptr a, CUdeviceptr b,
                CUdeviceptr d, CUdeviceptr ws, CUstream s) {
	float alpha = 1.0f, beta = 0.0f;
	return t->cublasLtMatmul(h, p->desc, &alpha, (const void *)a, p->a, (const void *)b, p->b, &beta,
	                         (const void *)d, p->c, (void *)d, p->c, &p->algo, (void *)ws, p->workspace, s);
}

#define NCCL_UNDEF_INT ((int)0x80000000)

int c3_nccl_init_rank(const c3_nccl *t, ncclComm_t *comm, int nranks, const ncclUniqueId *id, int rank,
                      int version, int minCTAs, int maxCTAs, int ctaPolicy) {
	ncclConfig_t cfg;
	memset(&cfg, 0, sizeof cfg);
	// NCCL reads size, magic and version first. 2.28 has the 80-byte layout;
	// 2.27 stops after nvlsCTAs (72 bytes), which this struct begins with.
	cfg.size = version >= 22800 ? sizeof cfg : 72;
	cfg.magic = 0xcafebeef;
	cfg.version = (unsigned)version;
	cfg.blocking = cfg.cgaClusterSize = cfg.minCTAs = cfg.maxCTAs = NCCL_UNDEF_INT;
	cfg.splitShare = cfg.trafficClass = cfg.collnetEnable = cfg.CTAPolicy = NCCL_UNDEF_INT;
	cfg.shrinkShare = cfg.nvlsCTAs = cfg.nChannelsPerNetPeer = cfg.nvlinkCentricSched = NCCL_UNDEF_INT;
	if (minCTAs > 0) cfg.minCTAs = minCTAs;
	if (maxCTAs > 0) cfg.maxCTAs = maxCTAs;
	if (ctaPolicy >= 0) cfg.CTAPolicy = ctaPolicy;
	return t->ncclCommInitRankConfig(comm, nranks, *id, rank, &cfg);
}

