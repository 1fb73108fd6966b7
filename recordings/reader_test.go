package recordings

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// corruptionFile is a small recording with single-event frames, a batch
// frame and the end frame.
func corruptionFile(t testing.TB) []byte {
	in, _ := allKinds()
	path := filepath.Join(t.TempDir(), "c.c3rec")
	clk := &fakeClock{}
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range in {
		clk.advance(time.Millisecond)
		record(rec, ev)
		if i < 4 {
			rec.Flush() // one frame each
		}
	}
	rec.Close() // the rest as one batch
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// eventsBefore counts the events in the frames that end at or before off.
func eventsBefore(t testing.TB, b []byte, frames []frameSpan, off int64) int {
	t.Helper()
	end := int64(frames[0].end)
	for _, f := range frames[1:] {
		if f.end <= off {
			end = f.end
		}
	}
	rec, err := readBytes(b[:end])
	if err != nil {
		t.Fatal(err)
	}
	return len(rec.Events)
}

// frameAt returns the frame holding byte off.
func frameAt(frames []frameSpan, off int64) frameSpan {
	for _, f := range frames {
		if off >= f.start && off < f.end {
			return f
		}
	}
	return frameSpan{}
}

func TestTruncateEverywhere(t *testing.T) {
	b := corruptionFile(t)
	frames := topFrames(t, b)
	headerEnd := frames[0].end
	full, err := readBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int{}
	for cut := int64(0); cut <= int64(len(b)); cut++ {
		rec, err := readBytes(b[:cut])
		if cut < headerEnd {
			if err == nil {
				t.Fatalf("cut at %d (inside the header): no error", cut)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("cut at %d: multi-line error %q", cut, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		f := frameAt(frames, cut)
		wantDamage := cut < int64(len(b)) && f.start != cut
		if wantDamage != (rec.Damage != nil) {
			t.Fatalf("cut at %d: damage %v, want damage %v", cut, rec.Damage, wantDamage)
		}
		if wantDamage {
			// From the cut frame's start, within it: a cut uncompressed
			// batch may end cleanly after its last whole record.
			for _, d := range rec.Damages {
				if rec.Damage.Offset != f.start || d.Offset < f.start || d.End > cut {
					t.Errorf("cut at %d: damage %v, want from %d up to the cut", cut, rec.Damages, f.start)
				}
			}
		}
		if rec.Complete != (cut == int64(len(b))) {
			t.Errorf("cut at %d: complete %v", cut, rec.Complete)
		}
		want, ok := counts[f.start]
		if !ok {
			want = eventsBefore(t, b, frames, cut)
			counts[f.start] = want
		}
		// Every event of the frames before the cut; the intact records of
		// a cut uncompressed batch may come too.
		if len(rec.Events) < want || len(rec.Events) > len(full.Events) {
			t.Fatalf("cut at %d: %d events, want at least %d", cut, len(rec.Events), want)
		}
		for i, ev := range rec.Events {
			if !sameEvent(ev, full.Events[i]) || ev.Time != full.Events[i].Time {
				t.Fatalf("cut at %d: event %d differs", cut, i)
			}
		}
	}
}

func TestFlipEverywhere(t *testing.T) {
	b := corruptionFile(t)
	frames := topFrames(t, b)
	full, err := readBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[int64]int{}
	for _, mask := range []byte{0x01, 0x80, 0xff} {
		for pos := int64(0); pos < int64(len(b)); pos++ {
			c := bytes.Clone(b)
			c[pos] ^= mask
			rec, err := readBytes(c)
			if pos < frames[0].end {
				if err == nil {
					t.Fatalf("flip %#x at %d (header): no error", mask, pos)
				}
				continue
			}
			if err != nil {
				t.Fatalf("flip %#x at %d: %v", mask, pos, err)
			}
			// The damage is in the frame hit, and only there: the reader
			// reads on after it, and is complete unless the end frame was
			// hit.
			f := frameAt(frames, pos)
			if rec.Damage == nil || rec.Damage.Offset != f.start {
				t.Fatalf("flip %#x at %d: damage %v, want at %d", mask, pos, rec.Damage, f.start)
			}
			for _, d := range rec.Damages {
				if d.Offset < f.start || d.End > f.end || d.End <= d.Offset {
					t.Fatalf("flip %#x at %d: damage %v outside the frame hit (%d..%d)", mask, pos, d, f.start, f.end)
				}
			}
			if end := frames[len(frames)-1]; rec.Complete != (f != end) {
				t.Errorf("flip %#x at %d: complete %v", mask, pos, rec.Complete)
			}
			// Every event outside the frame hit, in order; of its own
			// events, only intact records of an uncompressed batch.
			from, ok := counts[f.start]
			if !ok {
				from = eventsBefore(t, b, frames, f.start)
				counts[f.start] = from
			}
			to, ok := counts[f.end]
			if !ok {
				to = eventsBefore(t, b, frames, f.end)
				counts[f.end] = to
			}
			j := 0
			for i, ev := range full.Events {
				if j < len(rec.Events) && sameEvent(rec.Events[j], ev) && rec.Events[j].Time == ev.Time {
					j++
				} else if i < from || i >= to {
					t.Fatalf("flip %#x at %d: event %d (outside the frame hit) lost", mask, pos, i)
				}
			}
			if j != len(rec.Events) {
				t.Fatalf("flip %#x at %d: %d events read that the file does not hold", mask, pos, len(rec.Events)-j)
			}
		}
	}
}

func TestOpenErrors(t *testing.T) {
	good := corruptionFile(t)
	headerEnd := topFrames(t, good)[0].end
	preamble := func(schema uint32) []byte {
		return binary.LittleEndian.AppendUint32([]byte(magic), schema)
	}
	badType := bytes.Clone(good)
	badType[preambleSize] = byte(KindMarker)
	binary.LittleEndian.PutUint32(badType[preambleSize+crcOffset:], frameCRC(badType[preambleSize:], badType[preambleSize+frameHeaderSize:headerEnd]))
	notJSON := append(preamble(1), appendFrame(nil, frameHeader, 0, 0, []byte("{not json"))...)
	wrongSchema := append(preamble(1), appendFrame(nil, frameHeader, 0, 0, []byte(`{"schema":7}`))...)
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "not a c3lab recording: the file is empty"},
		{"text", []byte("hello, world\nthis is not it\n"), "not a c3lab recording"},
		{"json", []byte(`{"schema":1}`), "not a c3lab recording"},
		{"png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "not a c3lab recording"},
		{"one byte", []byte("C"), "truncated c3lab recording: it ends inside its preamble"},
		{"magic only", []byte(magic), "truncated c3lab recording: it ends inside its preamble"},
		{"future schema", append(preamble(SchemaVersion+1), good[preambleSize:]...),
			fmt.Sprintf("written by a newer c3lab (schema %d); this c3lab reads up to %d", SchemaVersion+1, SchemaVersion)},
		{"schema zero", preamble(0), "schema version 0"},
		{"no header", preamble(1), "truncated c3lab recording: it has no header"},
		{"cut header", good[:headerEnd-3], "damaged c3lab recording header: truncated frame"},
		{"flipped header", append(append(bytes.Clone(good[:headerEnd-3]), good[headerEnd-3]^1), good[headerEnd-2:]...), "checksum mismatch"},
		{"first frame not a header", badType, "not a header"},
		{"header not json", notJSON, "damaged c3lab recording header"},
		{"header schema disagrees", wrongSchema, "header says schema 7"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "bad.c3rec")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := ReadAll(path)
			if err == nil {
				t.Fatal("no error")
			}
			msg := err.Error()
			if !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, path+": ") || strings.Contains(msg, "\n") {
				t.Errorf("error %q, want one line: %s: ...%s...", msg, path, tc.want)
			}
		})
	}
	if _, err := ReadAll(filepath.Join(t.TempDir(), "missing.c3rec")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}

func TestStreamDamage(t *testing.T) {
	good := corruptionFile(t)
	frames := topFrames(t, good)
	end := int64(len(good))
	last := frames[len(frames)-1] // the end frame
	total, _ := readBytes(good)
	n := len(total.Events)
	withFrame := func(typ, flags byte, payload []byte) []byte {
		return appendFrame(bytes.Clone(good[:last.start]), typ, flags, time.Second, payload)
	}
	hugeLen := bytes.Clone(good[:last.start+frameHeaderSize])
	binary.LittleEndian.PutUint32(hugeLen[last.start+2:], 60<<20) // claims 60 MiB, has none
	for _, tc := range []struct {
		name     string
		data     []byte
		events   int
		at       int64
		reason   string
		complete bool
	}{
		{"data after the end", append(bytes.Clone(good), "junk"...), n, end, "data after the end frame", true},
		{"frame after the end", appendFrame(bytes.Clone(good), byte(KindMarker), 0, 0, []byte(`{"text":"x"}`)), n, end, "data after the end frame", true},
		{"unknown type", withFrame(0x30, 0, []byte("{}")), n, last.start, "unknown frame type 0x30", false},
		{"unknown optional type is skipped", withFrame(0x30, flagOptional, []byte("{}")), n, -1, "", false},
		{"unknown flags", withFrame(byte(KindMarker), 0x40, []byte("{}")), n, last.start, "unknown frame flags", false},
		{"bad json", withFrame(byte(KindMarker), 0, []byte(`{"text":`)), n, last.start, "undecodable marker payload", false},
		{"wrong json type", withFrame(byte(KindSpans), 0, []byte(`{"a":1}`)), n, last.start, "undecodable spans payload", false},
		{"result without result", withFrame(byte(KindResult), 0, []byte(`{}`)), n, last.start, "result missing", false},
		{"bad zstd", withFrame(byte(KindMarker), flagZstd, []byte("not zstd at all")), n, last.start, "undecodable compressed payload", false},
		{"second header", withFrame(frameHeader, 0, []byte("{}")), n, last.start, "a second header frame", false},
		{"huge length", hugeLen, n, last.start, "truncated frame: 0 of 62914560", false},
		{"over the limit", func() []byte {
			c := bytes.Clone(hugeLen)
			binary.LittleEndian.PutUint32(c[last.start+2:], MaxFrameSize+1)
			return c
		}(), n, last.start, "exceeds the", false},
		{"batch with junk", withFrame(frameBatch, 0, append(appendFrame(nil, byte(KindMarker), 0, 5, []byte(`{"text":"in"}`)), 1, 2, 3)),
			n + 1, last.start, "batch record at byte 31: truncated header", false},
		{"batch holding a batch", withFrame(frameBatch, 0, appendFrame(nil, frameBatch, 0, 5, nil)), n, last.start, "unknown type 0x20", false},
		{"batch with bad crc", withFrame(frameBatch, 0, func() []byte {
			f := appendFrame(nil, byte(KindMarker), 0, 5, []byte(`{"text":"in"}`))
			f[len(f)-2] ^= 1
			return f
		}()), n, last.start, "checksum mismatch", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			rec, err := readBytes(tc.data)
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if err != nil {
				t.Fatal(err)
			}
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 16<<20 {
				t.Errorf("reading allocated %d MiB", grew>>20)
			}
			if len(rec.Events) != tc.events || rec.Complete != tc.complete {
				t.Errorf("%d events (complete %v), want %d (%v)", len(rec.Events), rec.Complete, tc.events, tc.complete)
			}
			switch {
			case tc.at < 0 && rec.Damage != nil:
				t.Errorf("damage %v, want none", rec.Damage)
			case tc.at >= 0 && (rec.Damage == nil || rec.Damage.Offset != tc.at || !strings.Contains(rec.Damage.Reason, tc.reason)):
				t.Errorf("damage %v, want at %d: ...%s...", rec.Damage, tc.at, tc.reason)
			}
		})
	}
}

// TestNextAfterEnd checks that damage is reported once, before the reader
// goes on, and that io.EOF is sticky.
func TestNextAfterEnd(t *testing.T) {
	good := corruptionFile(t)
	for _, tc := range []struct {
		name   string
		data   []byte
		damage bool
	}{
		{"whole", good, false},
		{"cut", good[:len(good)-1], true},
	} {
		r, err := NewReader(bytes.NewReader(tc.data))
		if err != nil {
			t.Fatal(err)
		}
		var errs []error
		for len(errs) == 0 || !errors.Is(errs[len(errs)-1], io.EOF) {
			if _, err := r.Next(); err != nil {
				errs = append(errs, err)
			}
			if len(errs) > 2 {
				t.Fatalf("%s: errors %v", tc.name, errs)
			}
		}
		var d *DamageError
		if got := len(errs) == 2 && errors.As(errs[0], &d); got != tc.damage {
			t.Errorf("%s: errors %v, want damage %v then EOF", tc.name, errs, tc.damage)
		}
		for range 3 {
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("%s: after EOF, Next returned %v", tc.name, err)
			}
		}
		r.Close()
	}
}

// errReader fails with a non-EOF error after its data.
type errReader struct {
	data []byte
	err  error
}

func (e *errReader) Read(p []byte) (int, error) {
	if len(e.data) == 0 {
		return 0, e.err
	}
	n := copy(p, e.data)
	e.data = e.data[n:]
	return n, nil
}

func TestReadErrorIsNotDamage(t *testing.T) {
	good := corruptionFile(t)
	eio := errors.New("input/output error")
	r, err := NewReader(&errReader{data: good[:len(good)-5], err: eio})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := r.Next()
		if err == nil {
			continue
		}
		var d *DamageError
		if !errors.Is(err, eio) || errors.As(err, &d) {
			t.Errorf("got %v, want the read error", err)
		}
		break
	}
}

// A result recorded before intervals reads as recorded, and gets them
// from FillUncertainty, its repetitions split into the protocol's
// rounds; one recorded with them reads with its own, which
// FillUncertainty keeps.
func TestOldResultGetsIntervals(t *testing.T) {
	r := testResult()
	r.RoundOf, r.DefaultRoundOf, r.CI, r.Bimodal, r.Precision = nil, nil, nil, nil, nil
	r.Reps = map[backends.Mode][]backends.Rep{}
	for i := range 20 {
		d := int64(i%7) * 1000
		r.Reps[backends.ModeCompute] = append(r.Reps[backends.ModeCompute], backends.Rep{Wall: 416600 + d, Compute: 416600 + d})
		r.Reps[backends.ModeComm] = append(r.Reps[backends.ModeComm], backends.Rep{Wall: 839769 + 2*d, Comm: 839769 + 2*d})
		r.Reps[backends.ModeConcurrent] = append(r.Reps[backends.ModeConcurrent], backends.Rep{Wall: 1100192 + 3*d, Compute: 422849, Comm: 1095192})
	}
	path := filepath.Join(t.TempDir(), "old.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	rec.Result(r)
	kept := testResult()
	rec.Result(kept)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 {
		t.Fatalf("%d events", len(got.Events))
	}
	old := got.Events[0].Result
	if old.CI != nil || old.NoCI != "" {
		t.Errorf("an old result read with intervals %+v (%q): reading changed it", old.CI, old.NoCI)
	}
	old.FillUncertainty()
	got.Events[1].Result.FillUncertainty()
	if old.CI == nil || old.CI.Rounds != profiler.DefaultRounds || !old.CI.TComp.Valid() {
		t.Errorf("an old result read with intervals %+v (why none: %q)", old.CI, old.NoCI)
	}
	if c := got.Events[1].Result.CI; c == nil || !c.TC3.Valid() || c.TC3 != kept.CI.TC3 {
		t.Errorf("a recorded interval changed on reading: %+v, recorded %+v", c, kept.CI)
	}
}
