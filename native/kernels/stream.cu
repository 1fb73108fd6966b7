// c3lab's memory-bound streaming op: reads n16 16-byte words and writes them
// back changed, so HBM sees B bytes read and B bytes written. Each CTA owns
// one contiguous tile of c3_stream_tile words (many short CTAs, as
// elementwise kernels in frameworks are), so a higher-priority kernel gets
// SMs as soon as tiles finish.
#define C3_STREAM_THREADS 256
#define C3_STREAM_PER_THREAD 8

extern "C" __global__ void __launch_bounds__(C3_STREAM_THREADS)
c3_stream(const uint4 *__restrict__ in, uint4 *__restrict__ out, unsigned long long n16) {
	unsigned long long base = (unsigned long long)blockIdx.x * (C3_STREAM_THREADS * C3_STREAM_PER_THREAD);
	uint4 v[C3_STREAM_PER_THREAD];
#pragma unroll
	for (int j = 0; j < C3_STREAM_PER_THREAD; j++) {
		unsigned long long i = base + (unsigned long long)j * C3_STREAM_THREADS + threadIdx.x;
		if (i < n16) v[j] = in[i];
	}
#pragma unroll
	for (int j = 0; j < C3_STREAM_PER_THREAD; j++) {
		unsigned long long i = base + (unsigned long long)j * C3_STREAM_THREADS + threadIdx.x;
		if (i < n16) {
			v[j].x ^= 0x9e3779b9u;
			out[i] = v[j];
		}
	}
}
