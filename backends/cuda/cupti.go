package cuda

import (
	"fmt"

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
			Device: int(r.Device), Track: fmt.Sprintf("cupti-s%d", r.Stream), Kind: "copy",
			Start: start, End: int64(r.End - t0),
		})
	}
	return out
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
