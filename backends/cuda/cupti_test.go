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
			want := "rep0 1:cupti-s9 50-150 memcpy PtoP 2MiB; rep1 1:cupti-s9 50-150 memcpy PtoP 2MiB"
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
