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
// Seeds: valid recordings (single frames, batches) and damaged ones; more
// are in testdata/fuzz/FuzzReader.
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

	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data))
		if err != nil {
			if msg := err.Error(); msg == "" || strings.Contains(msg, "\n") {
				t.Fatalf("bad open error %q", msg)
			}
			return
		}
		defer r.Close()
		for range 1 << 20 {
			_, err := r.Next()
			if err == nil {
				continue
			}
			var d *DamageError
			switch {
			case errors.Is(err, io.EOF):
			case errors.As(err, &d):
				if d.Offset < preambleSize || d.Offset > int64(len(data)) {
					t.Fatalf("damage offset %d outside the %d-byte input", d.Offset, len(data))
				}
			default:
				t.Fatalf("unexpected error %v", err)
			}
			if _, again := r.Next(); again != err {
				t.Fatalf("error not sticky: %v then %v", err, again)
			}
			return
		}
		t.Fatal("reader never ended")
	})
}
