package cuda

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

func TestCUPTISpans(t *testing.T) {
	rec := func(dev, stream uint32, start, end, bytes uint64, kind uint8) native.CopyRecord {
		return native.CopyRecord{Device: dev, Stream: stream, Start: start, End: end, Bytes: bytes, Kind: kind}
	}
	for _, tc := range []struct {
		name string
		recs []native.CopyRecord
		want string
	}{
		{"peer copies on two streams", []native.CopyRecord{rec(0, 13, 1005, 2005, 64<<20, 10), rec(1, 14, 1010, 1900, 1<<30, 10)},
			"0:cupti-s13 5-1005 memcpy PtoP 64MiB; 1:cupti-s14 10-900 memcpy PtoP 1GiB"},
		{"earlier work left out, a straddling copy cut at t0", []native.CopyRecord{rec(0, 7, 10, 900, 4096, 8), rec(0, 7, 990, 1100, 4096, 8)},
			"0:cupti-s7 0-100 memcpy DtoD 4KiB"},
		{"other devices and empty records left out", []native.CopyRecord{rec(2, 7, 1000, 1100, 1, 8), rec(0, 7, 1200, 1200, 1, 8)}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, s := range cuptiSpans(tc.recs, 1000, 2) {
				if s.Kind != "copy" || s.Op != backends.OpComm {
					t.Errorf("span %+v", s)
				}
				got = append(got, fmt.Sprintf("%d:%s %d-%d %s", s.Device, s.Track, s.Start, s.End, s.Name))
			}
			if g := strings.Join(got, "; "); g != tc.want {
				t.Errorf("got  %q\nwant %q", g, tc.want)
			}
		})
	}
}

// Kernel records become spans as copies do, relative to t0 and cut there;
// c3lab's bookkeeping kernels, other devices and empty records are left
// out; NCCL's and c3lab's copy and reduction kernels are the comm op's,
// the rest the compute op's; a mangled name shows its identifier.
func TestCUPTIKernelSpans(t *testing.T) {
	k := func(dev, stream uint32, start, end uint64, name string, ctas int32) native.KernelRecord {
		return native.KernelRecord{Device: dev, Stream: stream, Start: start, End: end, Name: name, Grid: [3]int32{ctas, 1, 1}}
	}
	recs := []native.KernelRecord{
		k(0, 13, 1005, 2005, "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT", 132),
		k(1, 14, 900, 1900, "_Z34ncclDevKernel_AllGather_RING_LL128P24ncclDevKernelArgsStorageILm4096EE", 16),
		k(0, 15, 1100, 1300, "c3_copy", 32),
		k(0, 15, 1100, 1200, "c3_reduce_pipe_bf16", 8),
		k(0, 13, 1000, 1010, "c3_stamp", 1),
		k(0, 13, 500, 1500, "c3_spin", 1),
		k(2, 13, 1000, 2000, "nvjet_other_device", 132),
		k(0, 13, 1500, 1500, "empty", 1),
		k(0, 13, 10, 900, "earlier", 1),
	}
	var got []string
	for _, s := range cuptiKernelSpans(recs, 1000, 2) {
		if s.Kind != "kernel" {
			t.Errorf("span %+v is not a kernel", s)
		}
		got = append(got, fmt.Sprintf("%d:%s %s %d-%d %s", s.Device, s.Track, s.Op, s.Start, s.End, s.Name))
	}
	want := "0:cupti-s13 compute 5-1005 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (132 CTAs); " +
		"1:cupti-s14 comm 0-900 ncclDevKernel_AllGather_RING_LL128 (16 CTAs); " +
		"0:cupti-s15 comm 100-300 c3_copy (32 CTAs); 0:cupti-s15 comm 100-200 c3_reduce_pipe_bf16 (8 CTAs)"
	if g := strings.Join(got, "; "); g != want {
		t.Errorf("got  %q\nwant %q", g, want)
	}
	for _, tc := range []struct{ in, want string }{
		{"_Z3foov", "foo"},
		{"_Z999x", "_Z999x"},
		{"_Zbad", "_Zbad"},
		{strings.Repeat("k", 80), strings.Repeat("k", 64)},
	} {
		if got := shortKernelName(tc.in); got != tc.want {
			t.Errorf("shortKernelName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// fakeTracer stands in for CUPTI. The backend takes records twice per
// repetition: before releasing the GPUs (stale records, to drop) and after
// the repetition; the fake answers the first with a stale copy and the
// second with one copy 50-150 ns after its clock's last reading.
type fakeTracer struct {
	clock   uint64
	takes   int
	stopped bool
}

func (f *fakeTracer) Now() uint64 { f.clock += 1000; return f.clock }

func (f *fakeTracer) Take() []native.CopyRecord {
	f.takes++
	if f.takes%2 == 1 {
		return []native.CopyRecord{{Device: 0, Stream: 1, Start: 1, End: 2, Bytes: 1, Kind: 8}}
	}
	return []native.CopyRecord{{Device: 1, Stream: 9, Start: f.clock + 50, End: f.clock + 150, Bytes: 2 << 20, Kind: 10}}
}

// TakeKernels answers like Take: a stale GEMM before the repetition, and
// after it a GEMM (150-250 ns) and the start gate's spin, which is left out.
func (f *fakeTracer) TakeKernels() []native.KernelRecord {
	if f.takes%2 == 1 {
		return []native.KernelRecord{{Stream: 1, Start: 1, End: 2, Name: "stale"}}
	}
	return []native.KernelRecord{
		{Device: 0, Stream: 4, Start: f.clock + 150, End: f.clock + 250, Grid: [3]int32{2, 66, 1}, Name: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"},
		{Device: 0, Stream: 4, Start: f.clock - 500, End: f.clock + 10, Grid: [3]int32{1, 1, 1}, Name: "c3_spin"},
	}
}

func (f *fakeTracer) Stop() { f.stopped = true }

// With a tracer, each repetition's copies become spans; copies recorded
// before it are dropped; Close turns the records off.
func TestRepsCarryCUPTISpans(t *testing.T) {
	for _, gated := range []bool{true, false} {
		t.Run(fmt.Sprintf("gated=%v", gated), func(t *testing.T) {
			f := newFakeGPU(2)
			b := fakeBackend(t, f, Options{Ungated: !gated})
			tr := &fakeTracer{}
			b.do(func() { b.tracer = tr })
			var sink backends.Collector
			ex := backends.Experiment{Scenario: smallGEMM(scenarios.AllGather), Strategy: scenarios.Strategy{CommEngine: scenarios.EngineDMA}, Mode: backends.ModeComm, Reps: 2}
			if _, err := b.Run(context.Background(), ex, &sink); err != nil {
				t.Fatal(err)
			}
			want := "rep0 1:cupti-s9 50-150 memcpy PtoP 2MiB; rep0 0:cupti-s4 150-250 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (132 CTAs); " +
				"rep1 1:cupti-s9 50-150 memcpy PtoP 2MiB; rep1 0:cupti-s4 150-250 nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT (132 CTAs)"
			if g := collectedCUPTISpans(sink); g != want {
				t.Errorf("got  %q\nwant %q", g, want)
			}
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			if !tr.stopped {
				t.Error("Close left CUPTI's records on")
			}
		})
	}
}

// collectedCUPTISpans lists the collector's CUPTI spans, one "repR D:track
// start-end name" per span, joined by "; ".
func collectedCUPTISpans(sink backends.Collector) string {
	var got []string
	for _, s := range sink.SpanList {
		if strings.HasPrefix(s.Track, "cupti") {
			got = append(got, fmt.Sprintf("rep%d %d:%s %d-%d %s", s.Rep, s.Device, s.Track, s.Start, s.End, s.Name))
		}
	}
	return strings.Join(got, "; ")
}
