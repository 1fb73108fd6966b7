package cuda

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
)

// cuptiSpans turns one repetition's CUPTI copy records into timeline
// spans on a track per CUDA stream ("cupti-sN"), relative to t0: the
// tracer's clock when the repetition's GPUs were released (the gate opened,
// or the first op was enqueued). That instant precedes the start event by
// the GPUs' reaction time, a few microseconds, so these spans sit that much
// late against the event-timed ones. Records of other devices, of earlier
// work (ending before t0) and without timestamps are left out.
func cuptiSpans(recs []native.CopyRecord, t0 uint64, devices int) []backends.Span {
	var out []backends.Span
	for _, r := range recs {
		if int(r.Device) >= devices || r.End <= r.Start || r.End < t0 {
			continue
		}
		start := int64(0)
		if r.Start > t0 {
			start = int64(r.Start - t0)
		}
		out = append(out, backends.Span{
			Op: backends.OpComm, Name: fmt.Sprintf("memcpy %s %s", copyKindName(r.Kind), fmtBytes(r.Bytes)),
			Device: int(r.Device), Track: backends.CUPTITrack(r.Stream), Kind: "copy",
			Start: start, End: int64(r.End - t0),
		})
	}
	return out
}

// cuptiTimeline is the repetition's CUPTI spans, copies then kernels, with
// t0 the tracer's clock when its GPUs were released.
func (b *Backend) cuptiTimeline(t0 uint64, devices int) []backends.Span {
	spans := cuptiSpans(b.tracer.Take(), t0, devices)
	return append(spans, cuptiKernelSpans(b.tracer.TakeKernels(), t0, devices)...)
}

// cuptiKernelSpans turns one repetition's CUPTI kernel records into spans
// on the CUDA streams' tracks ("cupti-sN"), relative to t0 as cuptiSpans
// does, named by the kernel with its grid. c3lab's own bookkeeping kernels
// (the start gate's spin, the time stamps) are left out. A kernel of
// NCCL's or one of c3lab's copy and reduction kernels counts as the
// communication op's, any other (cuBLAS's GEMMs, c3lab's stream op) as the
// compute op's.
func cuptiKernelSpans(recs []native.KernelRecord, t0 uint64, devices int) []backends.Span {
	var out []backends.Span
	for _, r := range recs {
		if int(r.Device) >= devices || r.End <= r.Start || r.End < t0 || bookkeeping(r.Name) {
			continue
		}
		start := int64(0)
		if r.Start > t0 {
			start = int64(r.Start - t0)
		}
		op := backends.OpCompute
		if commKernel(r.Name) {
			op = backends.OpComm
		}
		out = append(out, backends.Span{
			Op: op, Name: fmt.Sprintf("%s (%d CTAs)", shortKernelName(r.Name), r.CTAs()),
			Device: int(r.Device), Track: backends.CUPTITrack(r.Stream), Kind: "kernel",
			Start: start, End: int64(r.End - t0),
		})
	}
	return out
}

// bookkeeping says a kernel is c3lab's own instrumentation, no op's work.
func bookkeeping(name string) bool { return name == "c3_spin" || name == "c3_stamp" }

// commKernel says a kernel moves a collective's or host copy's data:
// NCCL's (ncclDevKernel_..., mangled or not) and c3lab's copy and
// reduction kernels.
func commKernel(name string) bool {
	return strings.Contains(name, "ncclDevKernel") || strings.Contains(name, "ncclKernel") ||
		strings.HasPrefix(name, "c3_copy") || strings.HasPrefix(name, "c3_reduce")
}

// shortKernelName keeps a timeline label readable: a mangled C++ name's
// plain identifier (_Z24ncclDevKernel_AllGather... -> ncclDevKernel_AllGather...),
// cut to 64 bytes.
func shortKernelName(name string) string {
	if rest, ok := strings.CutPrefix(name, "_Z"); ok {
		i := 0
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			i++
		}
		if n, err := strconv.Atoi(rest[:i]); err == nil && n > 0 && i+n <= len(rest) {
			name = rest[i : i+n]
		}
	}
	if len(name) > 64 {
		name = name[:64]
	}
	return name
}

// copyKindName names a CUpti_ActivityMemcpyKind.
func copyKindName(k uint8) string {
	switch k {
	case 1:
		return "HtoD"
	case 2:
		return "DtoH"
	case 8:
		return "DtoD"
	case 10:
		return "PtoP"
	}
	return fmt.Sprintf("kind %d", k)
}

// fmtBytes prints a byte count in binary units.
func fmtBytes(n uint64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%dGiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.4gMiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.4gKiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}
