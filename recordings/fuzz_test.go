package recordings

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
)

// FuzzReader feeds the reader arbitrary bytes: it must never panic, never
// allocate without bound, and fail only in the ways it documents.
// Seeds: valid recordings (single frames, batches, format-2 graph
// sessions) and damaged ones; more are in testdata/fuzz/FuzzReader.
func FuzzReader(f *testing.F) {
	in, _ := allKinds()
	single := smallRecording(f, in, true)
	batched := smallRecording(f, in, false)
	plain := smallRecording(f, in[5:], false) // a batch too small to compress
	for _, seed := range [][]byte{
		single, batched, plain,
		single[:len(single)/2], batched[:len(batched)-7],
		append(bytes.Clone(batched), batched[preambleSize:]...),
		single[:preambleSize], []byte(magic), nil, []byte("hello"),
	} {
		f.Add(seed)
	}
	flipped := bytes.Clone(batched)
	flipped[len(flipped)/2] ^= 0x20
	f.Add(flipped)

	// The resynchronization path: damage in the middle, intact frames
	// after it.
	many := manyResults(f, 12)
	for _, at := range []int{len(many) / 3, len(many) / 2} {
		c := bytes.Clone(many)
		c[at] ^= 0x04
		f.Add(c)
	}
	f.Add(append(bytes.Clone(single[:len(single)/2]), single[preambleSize:]...)) // a cut frame, then frames again

	// Format 2: graph scenarios, per-op repetitions, spans per instance;
	// whole, cut, and with a flipped byte in the result.
	graph := smallRecording(f, graphEvents(), false)
	graphSingle := smallRecording(f, graphEvents(), true)
	f.Add(graph)
	f.Add(graphSingle)
	f.Add(graph[:len(graph)*2/3])
	g := bytes.Clone(graphSingle)
	g[len(g)/2] ^= 0x10
	f.Add(g)

	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("bad open error %q", msg)
			}
			return
		}
		defer r.Close()
		// Damaged ranges come in order, inside the input, each once; the
		// reader goes on after each and ends with io.EOF, for good.
		prev := int64(preambleSize)
		for range 1 << 20 {
			_, err := r.Next()
			if err == nil {
				continue
			}
			var d *DamageError
			switch {
			case errors.Is(err, io.EOF):
				if _, again := r.Next(); again != err {
					t.Fatalf("EOF not sticky: then %v", again)
				}
				return
			case errors.As(err, &d):
				if d.Offset < prev || d.End <= d.Offset || d.End > int64(len(data)) || d.Reason == "" {
					t.Fatalf("damage %v out of order (after %d) or outside the %d-byte input", d, prev, len(data))
				}
				prev = d.End
			default:
				t.Fatalf("unexpected error %v", err)
			}
		}
		t.Fatal("reader never ended")
	})
}
