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

// c3lab's SM copy kernel: copies up to two segments of 16-byte words (a
// swap's two directions at once), for host<->device copies done by SMs
// through pinned, device-mapped host memory instead of by the copy engines.
// CTAs [0, split) copy segment 0 and the rest segment 1, each grid-stride
// with C3_COPY_UNROLL loads per thread in flight, so a few CTAs keep
// enough requests outstanding to cover PCIe's latency. The grid is the
// CTA count a strategy asks for (comm_ctas).
#define C3_COPY_THREADS 512
#define C3_COPY_UNROLL 4

static __device__ __forceinline__ void c3_copy_body(uint4 *d0, const uint4 *s0, unsigned long long n0,
                                                    uint4 *d1, const uint4 *s1, unsigned long long n1,
                                                    unsigned long long split) {
	uint4 *d = d0;
	const uint4 *s = s0;
	unsigned long long n = n0, b = blockIdx.x, nb = split;
	if (b >= split) {
		d = d1;
		s = s1;
		n = n1;
		b -= split;
		nb = gridDim.x - split;
	}
	unsigned long long stride = nb * C3_COPY_THREADS;
	unsigned long long i = b * C3_COPY_THREADS + threadIdx.x;
	for (; i + (C3_COPY_UNROLL - 1) * stride < n; i += C3_COPY_UNROLL * stride) {
		uint4 v[C3_COPY_UNROLL];
#pragma unroll
		for (int j = 0; j < C3_COPY_UNROLL; j++) v[j] = s[i + j * stride];
#pragma unroll
		for (int j = 0; j < C3_COPY_UNROLL; j++) d[i + j * stride] = v[j];
	}
	for (; i < n; i += stride) d[i] = s[i];
}

extern "C" __global__ void __launch_bounds__(C3_COPY_THREADS)
c3_copy(uint4 *d0, const uint4 *s0, unsigned long long n0,
        uint4 *d1, const uint4 *s1, unsigned long long n1, unsigned long long split) {
	c3_copy_body(d0, s0, n0, d1, s1, n1, split);
}

// c3_copy with a record of where and when each CTA ran, for probes of the
// block scheduler: CTA b writes its SM's id, the %globaltimer as its first
// thread started and as its last thread finished to trace[3b .. 3b+2].
extern "C" __global__ void __launch_bounds__(C3_COPY_THREADS)
c3_copy_traced(uint4 *d0, const uint4 *s0, unsigned long long n0,
               uint4 *d1, const uint4 *s1, unsigned long long n1, unsigned long long split,
               unsigned long long *trace) {
	unsigned long long t;
	if (threadIdx.x == 0) {
		unsigned int sm;
		asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		trace[3 * blockIdx.x] = sm;
		trace[3 * blockIdx.x + 1] = t;
	}
	c3_copy_body(d0, s0, n0, d1, s1, n1, split);
	__syncthreads();
	if (threadIdx.x == 0) {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		trace[3 * blockIdx.x + 2] = t;
	}
}

// c3lab's timestamp kernel: one thread writes the GPU's %globaltimer (ns)
// to *out, which may be pinned host memory mapped into the device. One
// process per GPU puts it first after the start gate: the ranks' stamps
// compare across processes, where cuEventElapsedTime cannot.
extern "C" __global__ void c3_stamp(unsigned long long *out) {
	unsigned long long t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	*(volatile unsigned long long *)out = t;
	__threadfence_system();
}

// c3lab's busy kernel: each CTA (one warp) spins on its SM, without
// touching memory but for one look at *stop every ~2 us, until *stop,
// compared cyclically, reaches v, or max_ns have passed (so a host that
// never raises the word cannot hang the GPU). It keeps a few SMs active,
// so the GPU is not idle while only its copy engines work.
extern "C" __global__ void c3_spin(const volatile unsigned int *stop, unsigned int v, unsigned long long max_ns) {
	unsigned long long t0, t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	for (;;) {
		if ((int)(*stop - v) >= 0) break;
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t - t0 >= max_ns) break;
		long long c0 = clock64();
		while (clock64() - c0 < 4000) {
		}
	}
}
