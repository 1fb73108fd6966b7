package recordings

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
)

// manyResults records n results, each flushed as a frame of its own, with
// a batch (a marker and a sample batch, compressed together) after every
// tenth, and returns the file's bytes.
func manyResults(t testing.TB, n int) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "many.c3rec")
	clk := &fakeClock{}
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		clk.advance(100 * time.Millisecond)
		res := testResult()
		res.TC3.Median = float64(1_000_000 + i) // tells the results apart
		rec.Result(res)
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		if i%10 == 9 {
			rec.Marker(fmt.Sprintf("after result %d", i))
			var samples []backends.Sample
			for range 20 {
				samples = append(samples, testSamples()...)
			}
			rec.Samples(samples) // enough to be compressed
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// frameEvents counts the events each top-level frame holds, by reading
// each frame on its own behind the file's preamble and header.
func frameEvents(t testing.TB, b []byte, frames []frameSpan) []int {
	t.Helper()
	out := make([]int, len(frames))
	head := b[:frames[0].end]
	for i, f := range frames[1:] {
		rec, err := readBytes(append(bytes.Clone(head), b[f.start:f.end]...))
		if err != nil || rec.Damage != nil {
			t.Fatalf("frame at %d alone: %v, damage %v", f.start, err, rec.Damage)
		}
		out[i+1] = len(rec.Events)
	}
	return out
}

// Flipped bits in the middle of a recording lose the frames they hit, and
// only those: the reader resynchronizes on the next intact frame, reports
// each damaged byte range, and reads on to the end.
func TestResyncAfterDamage(t *testing.T) {
	many := manyResults(t, 82)
	sample, err := os.ReadFile(filepath.Join("samples", "h200x2-lab.c3rec"))
	if err != nil {
		t.Fatal(err)
	}
	// A flip in a frame: its payload's middle, or its head (type, length,
	// time, checksum).
	type hit struct {
		frame int // index among the top-level frames
		at    int // byte within the frame; -1: the middle of its payload
	}
	for _, tc := range []struct {
		name string
		data []byte
		hits []hit
	}{
		{"a result's payload", many, []hit{{45, -1}}},
		{"a result's length", many, []hit{{45, 3}}},
		{"a result's type", many, []hit{{45, 0}}},
		{"a result's time", many, []hit{{45, 12}}},
		{"a result's checksum", many, []hit{{45, 15}}},
		{"a compressed batch", many, []hit{{11, -1}}},
		{"the first event", many, []hit{{1, -1}}},
		{"two frames", many, []hit{{20, -1}, {60, 4}}},
		{"two frames in a row", many, []hit{{30, -1}, {31, 2}}},
		{"the end frame", many, []hit{{-1, -1}}},
		{"the H200 lab sample", sample, []hit{{-2, -1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			frames := topFrames(t, tc.data)
			counts := frameEvents(t, tc.data, frames)
			full, err := readBytes(tc.data)
			if err != nil || full.Damage != nil || !full.Complete {
				t.Fatalf("intact file: %v, damage %v", err, full.Damage)
			}
			c := bytes.Clone(tc.data)
			lost := map[int]bool{}
			for _, h := range tc.hits {
				i := h.frame
				switch i {
				case -1:
					i = len(frames) - 1
				case -2:
					i = len(frames) / 2
				}
				f := frames[i]
				pos := f.start + int64(h.at)
				if h.at < 0 {
					pos = f.start + frameHeaderSize + (f.end-f.start-frameHeaderSize)/2
				}
				c[pos] ^= 0x10
				lost[i] = true
			}
			got, err := readBytes(c)
			if err != nil {
				t.Fatal(err)
			}
			var want []Event
			var wantRanges []frameSpan
			next := 0
			for i, f := range frames[1:] {
				n := counts[i+1]
				if lost[i+1] {
					if k := len(wantRanges); k > 0 && wantRanges[k-1].end == f.start {
						wantRanges[k-1].end = f.end // adjacent damage is one range
					} else {
						wantRanges = append(wantRanges, f)
					}
				} else {
					want = append(want, full.Events[next:next+n]...)
				}
				next += n
			}
			if len(got.Events) != len(want) {
				t.Fatalf("%d events recovered, want %d (of %d); damage %v", len(got.Events), len(want), len(full.Events), got.Damages)
			}
			for i := range want {
				if !sameEvent(got.Events[i], want[i]) || got.Events[i].Time != want[i].Time {
					t.Fatalf("event %d differs", i)
				}
			}
			if len(got.Damages) != len(wantRanges) || got.Damage != got.Damages[0] {
				t.Fatalf("damage %v, want the ranges %v", got.Damages, wantRanges)
			}
			for i, d := range got.Damages {
				if d.Offset != wantRanges[i].start || d.End != wantRanges[i].end || d.Reason == "" {
					t.Errorf("damage %d: %v, want bytes %d..%d", i, d, wantRanges[i].start, wantRanges[i].end)
				}
			}
			// A flip in a payload leaves the frame's length whole: the
			// range is known to be that one frame.
			if h := tc.hits[0]; len(tc.hits) == 1 && h.at < 0 && got.Damages[0].Frames != 1 {
				t.Errorf("damage %v: want 1 frame lost", got.Damages[0])
			}
			if wantComplete := !lost[len(frames)-1]; got.Complete != wantComplete {
				t.Errorf("complete %v, want %v", got.Complete, wantComplete)
			}
		})
	}
}

// A damaged record inside an uncompressed batch loses that record only:
// the records around it are intact frames the reader resumes on.
func TestResyncInsideABatch(t *testing.T) {
	in := []Event{{Kind: KindMarker, Text: "one"}, {Kind: KindMarker, Text: "two"}, {Kind: KindMarker, Text: "three"}}
	b := smallRecording(t, in, false) // one batch, too small to compress
	frames := topFrames(t, b)
	batch := frames[1]
	if b[batch.start] != frameBatch || b[batch.start+1]&flagZstd != 0 {
		t.Fatalf("frame 1 is type 0x%02x, flags 0x%02x; want an uncompressed batch", b[batch.start], b[batch.start+1])
	}
	c := bytes.Clone(b)
	second := bytes.Index(c, []byte(`"two"`))
	c[second+1] ^= 0x01
	got, err := readBytes(c)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, ev := range got.Events {
		texts = append(texts, ev.Text)
	}
	if fmt.Sprint(texts) != "[one three]" || !got.Complete {
		t.Errorf("read %q (complete %v), want [one three]", texts, got.Complete)
	}
	// The batch's own head (its checksum fails), then the second record.
	if len(got.Damages) != 2 || got.Damages[0].Offset != batch.start || got.Damages[1].End > batch.end {
		t.Errorf("damage %v", got.Damages)
	}
}

// Megabytes of garbage between two frames are one damaged range; the scan
// through them stays linear and holds little of them in memory.
func TestResyncOverGarbage(t *testing.T) {
	b := manyResults(t, 12)
	frames := topFrames(t, b)
	cut := frames[6].start
	garbage := make([]byte, 8<<20)
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range garbage {
		garbage[i] = byte(rng.Uint32())
	}
	c := append(append(bytes.Clone(b[:cut]), garbage...), b[cut:]...)
	full, _ := readBytes(b)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err := readBytes(c)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != len(full.Events) || !got.Complete {
		t.Errorf("%d events (complete %v), want all %d", len(got.Events), got.Complete, len(full.Events))
	}
	if len(got.Damages) != 1 || got.Damage.Offset != cut || got.Damage.End != cut+int64(len(garbage)) {
		t.Errorf("damage %v, want bytes %d..%d", got.Damages, cut, cut+int64(len(garbage)))
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 4<<20 {
		t.Errorf("reading past %d MiB of garbage allocated %d MiB", len(garbage)>>20, grew>>20)
	}
}
