// c3lab's reduction for copy-engine reduce-scatter and all-reduce: out[i] =
// the sum of nsrc bf16 inputs, in fp32, rounded to nearest even. The copy
// engines bring the peers' blocks; this small kernel adds them on a few SMs.
// bf16 is handled as raw 16-bit words so no CUDA header is needed.
#define C3_REDUCE_THREADS 256
#define C3_REDUCE_MAX_SRC 8

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

extern "C" __global__ void __launch_bounds__(C3_REDUCE_THREADS)
c3_reduce_bf16(unsigned short *__restrict__ out, unsigned long long n, unsigned long long nsrc,
               const unsigned short *s0, const unsigned short *s1, const unsigned short *s2,
               const unsigned short *s3, const unsigned short *s4, const unsigned short *s5,
               const unsigned short *s6, const unsigned short *s7) {
	const unsigned short *src[C3_REDUCE_MAX_SRC] = {s0, s1, s2, s3, s4, s5, s6, s7};
	unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
	for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
		float acc = 0.0f;
		for (unsigned long long k = 0; k < nsrc && k < C3_REDUCE_MAX_SRC; k++) {
			acc += c3_bf16_to_float(src[k][i]);
		}
		out[i] = c3_float_to_bf16(acc);
	}
}
