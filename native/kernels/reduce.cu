// c3lab's reductions for copy-engine reduce-scatter and all-reduce: out[i] =
// the sum of nsrc bf16 inputs, in fp32, rounded to nearest even. The copy
// engines bring the peers' blocks; these small kernels add them on a few
// SMs. bf16 is handled as raw 16-bit words so no CUDA header is needed.
//
// c3_reduce_bf16 runs after the copies. c3_reduce_pipe_bf16 runs alongside
// them, in an SM partition of its own: it adds the block chunk by chunk, each
// as soon as the copy engines have landed it (a flag per source and chunk,
// written by the copy stream), and counts every finished chunk so a copy
// stream can forward it (an all-reduce's all-gather) without waiting for the
// whole block.
#define C3_REDUCE_THREADS 256
#define C3_REDUCE_MAX_SRC 8
#define C3_UNROLL 4
// Layout of the pipelined kernel's sync words (32-bit): the status word,
// then from C3_SYNC_FLAGS one flag per peer source and chunk
// (flags[(k-1)*nchunks + c] for source k >= 1; source 0 is the rank's own
// block, ready from the start), then one done counter per chunk.
#define C3_SYNC_FLAGS 16
#define C3_STATUS_TIMEOUT 1u

__device__ __forceinline__ float c3_bf16_to_float(unsigned short h) {
	return __uint_as_float(((unsigned int)h) << 16);
}

__device__ __forceinline__ unsigned short c3_float_to_bf16(float f) {
	unsigned int u = __float_as_uint(f);
	if ((u & 0x7f800000u) == 0x7f800000u && (u & 0x007fffffu)) {
		return (unsigned short)((u >> 16) | 0x0040u); // keep NaN a NaN
	}
	u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even
	return (unsigned short)(u >> 16);
}

// c3_add8 adds the 8 bf16 lanes of one 16-byte word into acc.
__device__ __forceinline__ void c3_add8(float acc[8], uint4 w) {
	unsigned int v[4] = {w.x, w.y, w.z, w.w};
#pragma unroll
	for (int j = 0; j < 4; j++) {
		acc[2 * j] += __uint_as_float(v[j] << 16);
		acc[2 * j + 1] += __uint_as_float(v[j] & 0xffff0000u);
	}
}

__device__ __forceinline__ uint4 c3_pack8(const float acc[8]) {
	uint4 w;
	w.x = (unsigned int)c3_float_to_bf16(acc[0]) | ((unsigned int)c3_float_to_bf16(acc[1]) << 16);
	w.y = (unsigned int)c3_float_to_bf16(acc[2]) | ((unsigned int)c3_float_to_bf16(acc[3]) << 16);
	w.z = (unsigned int)c3_float_to_bf16(acc[4]) | ((unsigned int)c3_float_to_bf16(acc[5]) << 16);
	w.w = (unsigned int)c3_float_to_bf16(acc[6]) | ((unsigned int)c3_float_to_bf16(acc[7]) << 16);
	return w;
}

// Loads through L2 only (ld.global.cg), in PTX so no header is needed.
__device__ __forceinline__ uint4 c3_load_cg16(const void *p) {
	uint4 w;
	asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(w.x), "=r"(w.y), "=r"(w.z), "=r"(w.w) : "l"(p));
	return w;
}

__device__ __forceinline__ unsigned short c3_load_cg2(const unsigned short *p) {
	unsigned short h;
	asm volatile("ld.global.cg.u16 %0, [%1];" : "=h"(h) : "l"(p));
	return h;
}

// c3_reduce_range sums elements [lo, hi) of every source into out, the
// CTAs of the grid striding over it: 16-byte words when every pointer and
// lo are 16-byte aligned, single elements otherwise and for the tail.
// Sources are read through L2 (ld.global.cg): copy engines wrote them, and
// nothing should come from a stale L1 line.
__device__ void c3_reduce_range(unsigned short *out, const unsigned short *const *src, int nsrc,
                                unsigned long long lo, unsigned long long hi, bool vec) {
	unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	unsigned long long i = lo;
	if (vec && (lo & 7ull) == 0) {
		unsigned long long words = (hi - lo) / 8;
		const uint4 *s0 = (const uint4 *)(src[0] + lo);
		uint4 *o = (uint4 *)(out + lo);
		// C3_UNROLL words per thread per step, every load issued before the
		// first add: few SMs must keep many bytes in flight, or a GEMM's
		// memory traffic next to them stretches each round trip and the
		// add slows with it.
		unsigned long long w = tid;
		for (; w + (C3_UNROLL - 1) * stride < words; w += C3_UNROLL * stride) {
			float acc[C3_UNROLL][8];
			uint4 v[C3_UNROLL];
#pragma unroll
			for (int u = 0; u < C3_UNROLL; u++) {
				v[u] = c3_load_cg16(s0 + w + u * stride);
			}
#pragma unroll
			for (int u = 0; u < C3_UNROLL; u++) {
#pragma unroll
				for (int j = 0; j < 8; j++) acc[u][j] = 0.0f;
				c3_add8(acc[u], v[u]);
			}
			for (int k = 1; k < nsrc; k++) {
				const uint4 *sk = (const uint4 *)(src[k] + lo);
#pragma unroll
				for (int u = 0; u < C3_UNROLL; u++) {
					v[u] = c3_load_cg16(sk + w + u * stride);
				}
#pragma unroll
				for (int u = 0; u < C3_UNROLL; u++) {
					c3_add8(acc[u], v[u]);
				}
			}
#pragma unroll
			for (int u = 0; u < C3_UNROLL; u++) {
				o[w + u * stride] = c3_pack8(acc[u]);
			}
		}
		for (; w < words; w += stride) {
			float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int k = 0; k < nsrc; k++) {
				c3_add8(acc, c3_load_cg16((const uint4 *)(src[k] + lo) + w));
			}
			o[w] = c3_pack8(acc);
		}
		i = lo + words * 8;
	}
	for (unsigned long long e = i + tid; e < hi; e += stride) {
		float acc = 0.0f;
		for (int k = 0; k < nsrc; k++) {
			acc += c3_bf16_to_float(c3_load_cg2(src[k] + e));
		}
		out[e] = c3_float_to_bf16(acc);
	}
}

__device__ __forceinline__ bool c3_aligned(const unsigned short *out, const unsigned short *const *src, int nsrc) {
	unsigned long long bits = (unsigned long long)out;
	for (int k = 0; k < nsrc; k++) {
		bits |= (unsigned long long)src[k];
	}
	return (bits & 15ull) == 0;
}

extern "C" __global__ void __launch_bounds__(C3_REDUCE_THREADS)
c3_reduce_bf16(unsigned short *__restrict__ out, unsigned long long n, unsigned long long nsrc,
               const unsigned short *s0, const unsigned short *s1, const unsigned short *s2,
               const unsigned short *s3, const unsigned short *s4, const unsigned short *s5,
               const unsigned short *s6, const unsigned short *s7) {
	const unsigned short *src[C3_REDUCE_MAX_SRC] = {s0, s1, s2, s3, s4, s5, s6, s7};
	int ns = (int)(nsrc < C3_REDUCE_MAX_SRC ? nsrc : C3_REDUCE_MAX_SRC);
	c3_reduce_range(out, src, ns, 0, n, c3_aligned(out, src, ns));
}

__device__ __forceinline__ unsigned int c3_load_acquire(const unsigned int *p) {
	unsigned int v;
	asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
	return v;
}

__device__ __forceinline__ unsigned long long c3_now_ns() {
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}

// c3_reduce_pipe_bf16: see the file comment. seq is this call's sequence
// number: a flag is ready when it reaches seq (compared cyclically). With
// count_done set (an all-reduce, whose copy streams forward each reduced
// chunk), every CTA adds 1 to a chunk's done counter when its part of the
// chunk is written, so after call seq the counter reads seq * gridDim.x;
// otherwise nothing waits on a chunk and the fences are skipped. A flag
// that is not ready after timeout_ns sets the status word; the kernel then
// stops adding but still counts every chunk done, so nothing waiting on it
// hangs, and the host reports the failure.
extern "C" __global__ void __launch_bounds__(C3_REDUCE_THREADS)
c3_reduce_pipe_bf16(unsigned short *__restrict__ out, unsigned long long n, unsigned long long nsrc,
                    const unsigned short *s0, const unsigned short *s1, const unsigned short *s2,
                    const unsigned short *s3, const unsigned short *s4, const unsigned short *s5,
                    const unsigned short *s6, const unsigned short *s7,
                    unsigned int *sync, unsigned long long chunk, unsigned long long seq,
                    unsigned long long timeout_ns, unsigned long long count_done) {
	const unsigned short *src[C3_REDUCE_MAX_SRC] = {s0, s1, s2, s3, s4, s5, s6, s7};
	int ns = (int)(nsrc < C3_REDUCE_MAX_SRC ? nsrc : C3_REDUCE_MAX_SRC);
	bool vec = c3_aligned(out, src, ns) && (chunk & 7ull) == 0;
	unsigned long long nchunks = (n + chunk - 1) / chunk;
	unsigned int *status = sync;
	const unsigned int *flags = sync + C3_SYNC_FLAGS;
	unsigned int *done = sync + C3_SYNC_FLAGS + (ns - 1) * nchunks;
	unsigned int want = (unsigned int)seq;
	__shared__ int ready;
	unsigned long long t0 = c3_now_ns();
	for (unsigned long long c = 0; c < nchunks; c++) {
		if (threadIdx.x == 0) {
			int ok = *(volatile unsigned int *)status == 0;
			for (int k = 1; k < ns && ok; k++) {
				const unsigned int *f = flags + (k - 1) * nchunks + c;
				while ((int)(c3_load_acquire(f) - want) < 0) {
					if (c3_now_ns() - t0 > timeout_ns) {
						atomicOr(status, C3_STATUS_TIMEOUT);
						ok = 0;
						break;
					}
					asm volatile("nanosleep.u32 256;");
				}
			}
			ready = ok;
		}
		__syncthreads();
		if (ready) {
			unsigned long long lo = c * chunk;
			unsigned long long hi = lo + chunk < n ? lo + chunk : n;
			c3_reduce_range(out, src, ns, lo, hi, vec);
		}
		if (count_done) {
			// A copy stream forwards the chunk once every CTA has counted
			// it: make the writes visible to the copy engines first.
			__threadfence();
			__syncthreads();
			if (threadIdx.x == 0) {
				__threadfence_system();
				atomicAdd(done + c, 1u);
			}
		} else {
			__syncthreads(); // ready is rewritten for the next chunk
		}
	}
}

// c3_reduce_load_bf16 is comm_engine p2p-load's reduction: the same sum as
// c3_reduce_bf16, but the sources other than the rank's own block live in
// the peers' memory (a peer-access pointer in one process, a CUDA IPC
// mapping between processes), so every load of them crosses NVLink and
// nothing was staged first. A load from a peer takes a round trip over
// the link, several times an HBM one, and the kernel runs on few CTAs (a
// CTA cap, or a small comm partition beside a GEMM): each thread keeps
// C3_LOAD_UNROLL 16-byte loads of a source in flight before it adds them,
// twice the staged kernel's, so a few dozen CTAs cover the link's
// bandwidth-delay product. The host orders the peers' writes of the
// sources before the launch (cross-GPU events or stream flags), and the
// loads bypass L1 (ld.global.cg).
#define C3_LOAD_UNROLL 8

__device__ void c3_load_range(unsigned short *out, const unsigned short *const *src, int nsrc,
                              unsigned long long n, bool vec) {
	unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	unsigned long long i = 0;
	if (vec) {
		unsigned long long words = n / 8;
		uint4 *o = (uint4 *)out;
		unsigned long long w = tid;
		for (; w + (C3_LOAD_UNROLL - 1) * stride < words; w += C3_LOAD_UNROLL * stride) {
			float acc[C3_LOAD_UNROLL][8];
			uint4 v[C3_LOAD_UNROLL];
#pragma unroll
			for (int u = 0; u < C3_LOAD_UNROLL; u++) {
#pragma unroll
				for (int j = 0; j < 8; j++) acc[u][j] = 0.0f;
			}
			for (int k = 0; k < nsrc; k++) {
				const uint4 *sk = (const uint4 *)src[k];
#pragma unroll
				for (int u = 0; u < C3_LOAD_UNROLL; u++) {
					v[u] = c3_load_cg16(sk + w + u * stride);
				}
#pragma unroll
				for (int u = 0; u < C3_LOAD_UNROLL; u++) {
					c3_add8(acc[u], v[u]);
				}
			}
#pragma unroll
			for (int u = 0; u < C3_LOAD_UNROLL; u++) {
				o[w + u * stride] = c3_pack8(acc[u]);
			}
		}
		for (; w < words; w += stride) {
			float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
			for (int k = 0; k < nsrc; k++) {
				c3_add8(acc, c3_load_cg16((const uint4 *)src[k] + w));
			}
			o[w] = c3_pack8(acc);
		}
		i = words * 8;
	}
	for (unsigned long long e = i + tid; e < n; e += stride) {
		float acc = 0.0f;
		for (int k = 0; k < nsrc; k++) {
			acc += c3_bf16_to_float(c3_load_cg2(src[k] + e));
		}
		out[e] = c3_float_to_bf16(acc);
	}
}

extern "C" __global__ void __launch_bounds__(C3_REDUCE_THREADS)
c3_reduce_load_bf16(unsigned short *__restrict__ out, unsigned long long n, unsigned long long nsrc,
                    const unsigned short *s0, const unsigned short *s1, const unsigned short *s2,
                    const unsigned short *s3, const unsigned short *s4, const unsigned short *s5,
                    const unsigned short *s6, const unsigned short *s7) {
	const unsigned short *src[C3_REDUCE_MAX_SRC] = {s0, s1, s2, s3, s4, s5, s6, s7};
	int ns = (int)(nsrc < C3_REDUCE_MAX_SRC ? nsrc : C3_REDUCE_MAX_SRC);
	c3_load_range(out, src, ns, n, c3_aligned(out, src, ns));
}
