package scenarios

import (
	"cmp"
	"fmt"
	"slices"
)

// The rates the suite is sized with: what c3lab measured on H200s, each
// op alone (backends/cuda/results). TestMeasuredRatesMatchResults
// recomputes every figure below from the committed files.
//
//   - GEMMs and collectives on 2 x H200 (NVLink, NCCL 2.28.3, cuBLASLt
//     13.1.0): the median of the baseline runs' isolated T_comp and T_comm
//     over the gated sweeps of 2026-11-30 (h200x2-gated/sweep.json,
//     sweep-dma.json and sweep-reductions.json; h200x2-session3/sweep-copies.json,
//     sweep-copies-one-copy.json, sweep-reductions.json, -run2 and -run3),
//     the NCCL (sm) column of the collective size scan
//     (h200x2-session3/ce-sizes.json and ce-sizes-run2.json: 64 KiB to
//     256 MiB per rank), and c3lab's GEMMs in the PyTorch comparison
//     (h200x2/reference-ops.json);
//   - host copies on one H200 (PCIe, c3lab's copy kernel, the default
//     engine) and the GEMMs beside them: the median of the baseline runs
//     over h200x1/sweep-host.json, sweep-host-run1.json and
//     h200x1-i14/sweep-host.json (2026-12-01).
//
// Times are in microseconds; bytes are per rank (CommOp.Bytes).

// measuredGEMM is one GEMM shape's isolated time.
type measuredGEMM struct {
	m, n, k int
	dtype   DType
	us      float64
}

// measuredPoint is one size's isolated time for a communication kind, or
// for a stream op (kind "stream").
type measuredPoint struct {
	kind  string
	bytes ByteSize
	us    float64
}

const kib = ByteSize(1 << 10)

// h200GEMMs returns the GEMM shapes measured on H200s.
func h200GEMMs() []measuredGEMM {
	return []measuredGEMM{
		{16384, 1280, 8192, BF16, 453.9},
		{8192, 7168, 8192, BF16, 1243.7},
		{8192, 2304, 16384, BF16, 799.2},
		{4096, 13312, 16384, FP8, 1304.2},
		{4096, 4608, 12288, FP16, 614.8},
		{16384, 8192, 1024, BF16, 399.8},
		{8192, 8192, 3584, BF16, 659.2},
		{8192, 12288, 1536, FP16, 432.4},
		{1024, 28672, 8192, BF16, 629.9},
		{1024, 128256, 8192, BF16, 2795.1},
		{1024, 16384, 16384, BF16, 710.5},
		{1024, 16384, 6144, BF16, 274.9},
		{128, 18432, 16384, BF16, 159.2},
		{16, 49152, 12288, FP16, 297.4},
		{8192, 28672, 1024, BF16, 681.4},
		{16384, 18432, 256, BF16, 296.4},
		{2048, 16384, 6144, BF16, 540.9},
		{2048, 32768, 6144, BF16, 1078.3},
		{4096, 6144, 16384, BF16, 1060.3},
		{8192, 8, 6144, BF16, 33.6},
		{2048, 6144, 6144, BF16, 208.8},
		{512, 6144, 16384, BF16, 149.3},
		{64, 16384, 6144, BF16, 57.9},
		{128, 32768, 6144, BF16, 113.8},
		{256, 32768, 6144, FP8, 98.1},
		{32, 6144, 16384, BF16, 60.4},
		{16384, 10240, 8192, BF16, 3561.9},
		{8192, 16384, 16384, BF16, 6014.3},
		{12288, 4608, 4096, FP16, 634.7},
		{3584, 8192, 8192, BF16, 630.8},
		{8192, 1280, 256, BF16, 20.3},
		{128, 13312, 16384, FP8, 67.2},
		{6144, 8192, 8192, BF16, 1081.5},
		{8192, 28672, 8192, BF16, 4886.5},
		{64, 28672, 8192, BF16, 119.6},
		{4096, 28672, 8192, BF16, 2465.9},
		{8192, 10240, 8192, BF16, 1765.1},
		{12288, 8192, 28672, BF16, 7307.2},
		{256, 16384, 6144, BF16, 75.1},
		{8192, 8192, 8192, BF16, 1295.2},
		{4096, 4096, 4096, BF16, 243.6},
		{8192, 8192, 8192, FP16, 1308.6},
		{8192, 8192, 8192, FP8, 774.4},
	}
}

// h200Transfers returns the collectives measured on 2 x H200, the host
// copies measured on one, and the stream ops (kind "stream").
func h200Transfers() []measuredPoint {
	const (
		AllGather, ReduceScatter, AllReduce, AllToAll = "all-gather", "reduce-scatter", "all-reduce", "all-to-all"
		HostToDevice, DeviceToHost, HostSwap, Stream  = "h2d", "d2h", "swap", "stream"
	)
	return []measuredPoint{
		{AllGather, 64 * kib, 20.0},
		{AllGather, 256 * kib, 21.4},
		{AllGather, 1024 * kib, 29.6},
		{AllGather, 4096 * kib, 45.4},
		{AllGather, 16384 * kib, 95.4},
		{AllGather, 65536 * kib, 294.8},
		{AllGather, 86016 * kib, 372.0},
		{AllGather, 98304 * kib, 418.7},
		{AllGather, 114688 * kib, 486.5},
		{AllGather, 229376 * kib, 926.4},
		{AllGather, 262144 * kib, 1047.2},
		{AllGather, 294912 * kib, 1164.5},
		{AllGather, 589824 * kib, 2214.0},
		{AllGather, 1026048 * kib, 3661.1},
		{ReduceScatter, 98304 * kib, 449.2},
		{ReduceScatter, 114688 * kib, 515.7},
		{ReduceScatter, 172032 * kib, 747.2},
		{ReduceScatter, 229376 * kib, 966.8},
		{ReduceScatter, 294912 * kib, 1201.5},
		{AllReduce, 16384 * kib, 85.7},
		{AllReduce, 65536 * kib, 250.1},
		{AllReduce, 98304 * kib, 356.7},
		{AllReduce, 196608 * kib, 680.1},
		{AllReduce, 229376 * kib, 786.8},
		{AllReduce, 262144 * kib, 889.5},
		{AllToAll, 64 * kib, 21.2},
		{AllToAll, 256 * kib, 21.5},
		{AllToAll, 1024 * kib, 25.7},
		{AllToAll, 4096 * kib, 34.1},
		{AllToAll, 16384 * kib, 63.5},
		{AllToAll, 36864 * kib, 96.8},
		{AllToAll, 49152 * kib, 118.6},
		{AllToAll, 65536 * kib, 151.4},
		{AllToAll, 73728 * kib, 162.2},
		{AllToAll, 98304 * kib, 207.2},
		{AllToAll, 147456 * kib, 289.9},
		{AllToAll, 196608 * kib, 372.9},
		{AllToAll, 262144 * kib, 559.0},
		{AllToAll, 327680 * kib, 644.2},
		{HostToDevice, 65536 * kib, 1314.2},
		{HostToDevice, 131072 * kib, 2622.0},
		{HostToDevice, 196608 * kib, 3935.0},
		{HostToDevice, 458752 * kib, 9168.2},
		{DeviceToHost, 16384 * kib, 322.2},
		{DeviceToHost, 114688 * kib, 2239.1},
		{HostSwap, 32768 * kib, 1013.8},
		{HostSwap, 98304 * kib, 3146.9},
		{Stream, 98304 * kib, 58.2},
		{Stream, 229376 * kib, 123.0},
		{Stream, 1048576 * kib, 528.9},
	}
}

// Rates estimates an op's isolated time on an H200 from measured rates:
// a GEMM shape that was measured takes its measured time, any other the
// roofline of the measured ceilings (the median achieved FLOP/s of the
// measured compute-bound GEMMs of its type, the HBM rate of the measured
// stream ops) plus the median fixed cost of the measured short GEMMs; a
// transfer is interpolated between the measured sizes of its kind.
type Rates struct {
	gemms []measuredGEMM
	// points holds each kind's measured sizes, ascending.
	points map[string][]measuredPoint
	// peak is the roofline's compute ceiling per type, in FLOP/s; hbm the
	// memory ceiling in B/s; fixed the per-GEMM fixed cost in seconds.
	peak  map[DType]float64
	hbm   float64
	fixed float64
}

// H200Rates returns the estimator built from the rates measured on H200s.
func H200Rates() Rates {
	r := Rates{gemms: h200GEMMs(), points: map[string][]measuredPoint{}, peak: map[DType]float64{}}
	for _, p := range h200Transfers() {
		r.points[p.kind] = append(r.points[p.kind], p)
	}
	for k := range r.points {
		slices.SortFunc(r.points[k], func(a, b measuredPoint) int { return cmp.Compare(a.bytes, b.bytes) })
	}
	// The memory ceiling: a stream op reads and writes its buffer.
	var hbm []float64
	for _, p := range r.points[string(Stream)] {
		hbm = append(hbm, 2*float64(p.bytes)/(p.us*1e-6))
	}
	r.hbm = median(hbm)
	// The compute ceilings: GEMMs of at least 1000 FLOP per byte moved.
	flops := map[DType][]float64{}
	for _, g := range r.gemms {
		c := g.op()
		if c.FLOPs()/gemmBytes(c) >= 1000 {
			flops[g.dtype] = append(flops[g.dtype], c.FLOPs()/(g.us*1e-6))
		}
	}
	for d, v := range flops {
		r.peak[d] = median(v)
	}
	// The fixed cost: what the GEMMs under 100 us take beyond the roofline.
	var extra []float64
	for _, g := range r.gemms {
		if g.us < 100 {
			extra = append(extra, g.us*1e-6-r.roofline(g.op()))
		}
	}
	r.fixed = max(median(extra), 0)
	return r
}

func (g measuredGEMM) op() ComputeOp {
	return ComputeOp{Kind: GEMM, M: g.m, N: g.n, K: g.k, DType: g.dtype}
}

// gemmBytes is the HBM traffic of a GEMM that reads A and B once and
// writes C once (C is bf16 for an fp8 GEMM).
func gemmBytes(c ComputeOp) float64 {
	out := c.DType.Size()
	if c.DType == FP8 {
		out = BF16.Size()
	}
	m, n, k := float64(c.M), float64(c.N), float64(c.K)
	return (m*k+k*n)*float64(c.DType.Size()) + m*n*float64(out)
}

// roofline is a GEMM's time at the measured ceilings, without fixed cost.
// A type with no measured compute-bound GEMM (fp32) takes bf16's ceiling
// scaled by the element size, a guess the suite does not rely on.
func (r Rates) roofline(c ComputeOp) float64 {
	peak, ok := r.peak[c.DType]
	if !ok {
		peak = r.peak[BF16] * float64(BF16.Size()) / float64(max(c.DType.Size(), 1))
	}
	return max(c.FLOPs()/peak, gemmBytes(c)/r.hbm)
}

// Measured reports the measured time of a GEMM shape, in seconds.
func (r Rates) Measured(c ComputeOp) (float64, bool) {
	for _, g := range r.gemms {
		if g.op() == c {
			return g.us * 1e-6, true
		}
	}
	return 0, false
}

// Compute returns the compute op's isolated time in seconds.
func (r Rates) Compute(c ComputeOp) float64 {
	switch c.Kind {
	case GEMM:
		if t, ok := r.Measured(c); ok {
			return t
		}
		return r.roofline(c) + r.fixed
	case Stream:
		return interpolate(r.points[string(Stream)], c.Bytes)
	}
	return 0
}

// Comm returns the communication op's isolated time in seconds on gpus
// GPUs. Collectives were measured on 2 GPUs; on more, the estimate is the
// 2-GPU time of a message that sends as many bytes per GPU over the links
// (LinkBytes), which leaves out the extra peers' latency.
func (r Rates) Comm(c CommOp, gpus int) float64 {
	pts := r.points[string(c.Collective)]
	if c.Collective.IsHostCopy() || gpus <= 2 {
		return interpolate(pts, c.Bytes)
	}
	perByte := CommOp{Collective: c.Collective, Bytes: 1 << 20}.LinkBytes(2) / float64(1<<20)
	return interpolate(pts, ByteSize(c.LinkBytes(gpus)/perByte))
}

// Op returns one instance's isolated time of a graph op, in seconds.
func (r Rates) Op(o GraphOp, gpus int) float64 {
	if o.Role == RoleComm {
		return r.Comm(o.Comm, gpus)
	}
	return r.Compute(o.Compute)
}

// Estimate returns the scenario's T_serial and T_ideal in seconds under
// strategy st (its decomposition), every op at its estimated isolated time.
func (r Rates) Estimate(sc Scenario, st Strategy) (serial, ideal float64, err error) {
	g, err := sc.Graph(st)
	if err != nil {
		return 0, 0, fmt.Errorf("estimating %s: %w", sc.Name, err)
	}
	dur := make([]float64, len(g.Ops))
	for i, o := range g.Ops {
		dur[i] = r.Op(o, g.GPUs)
	}
	return g.Serial(dur), g.ListSchedule(dur).Makespan, nil
}

// interpolate is the time, in seconds, of a transfer of b bytes from
// measured points (ascending): linear between the two that bracket it;
// below the smallest, the line through the two smallest but never less
// than the smallest's bandwidth allows; above the largest, the line
// through the two largest but never less than the largest's time.
func interpolate(pts []measuredPoint, b ByteSize) float64 {
	switch len(pts) {
	case 0:
		return 0
	case 1:
		return pts[0].us * 1e-6 * float64(b) / float64(pts[0].bytes)
	}
	line := func(p, q measuredPoint) float64 {
		slope := (q.us - p.us) / float64(q.bytes-p.bytes)
		return (p.us + slope*float64(b-p.bytes)) * 1e-6
	}
	lo, hi := pts[0], pts[len(pts)-1]
	switch {
	case b <= lo.bytes:
		return max(line(lo, pts[1]), lo.us*1e-6*float64(b)/float64(lo.bytes))
	case b >= hi.bytes:
		return max(line(pts[len(pts)-2], hi), hi.us*1e-6)
	}
	i, _ := slices.BinarySearchFunc(pts, b, func(p measuredPoint, b ByteSize) int { return cmp.Compare(p.bytes, b) })
	if pts[i].bytes == b {
		return pts[i].us * 1e-6
	}
	return line(pts[i-1], pts[i])
}

// median is the median of v (0 when empty).
func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// The balance classes of a pair, by T_comm / T_comp.
const (
	ClassGEMMLong = "gemm-long"
	ClassBalanced = "balanced"
	ClassCommLong = "comm-long"
)

// BalanceClass names a pair's class: balanced when T_comm / T_comp is
// within [0.67, 1.5], else gemm-long or comm-long.
func BalanceClass(tComp, tComm float64) string {
	switch ratio := tComm / tComp; {
	case ratio < 0.67:
		return ClassGEMMLong
	case ratio > 1.5:
		return ClassCommLong
	}
	return ClassBalanced
}
