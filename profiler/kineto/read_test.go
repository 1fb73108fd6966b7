package kineto

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadFileProgress: progress hears of the file's bytes as they are
// read, ending at its size, and the trace is the one ReadFile reads.
func TestReadFileProgress(t *testing.T) {
	for _, name := range []string{"synthetic-tp2-rank0.json", "h200-offload.json.gz"} {
		path := fixture(t, name)
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		var calls [][2]int64
		got, err := ReadFileProgress(path, func(read, size int64) { calls = append(calls, [2]int64{read, size}) })
		if err != nil {
			t.Fatal(err)
		}
		if len(calls) == 0 || calls[len(calls)-1] != [2]int64{st.Size(), st.Size()} {
			t.Errorf("%s: progress calls %v, want them to end at %d of %d", name, calls, st.Size(), st.Size())
		}
		for i := 1; i < len(calls); i++ {
			if calls[i][0] < calls[i-1][0] {
				t.Errorf("%s: progress goes back: %v", name, calls)
			}
		}
		want, err := ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: ReadFileProgress and ReadFile read different traces", name)
		}
	}
	// A directory is refused before any reading.
	if _, err := ReadFileProgress(filepath.Dir(fixture(t, "synthetic-tp2-rank0.json")), func(int64, int64) { t.Error("progress on a directory") }); err == nil {
		t.Error("a directory reads")
	}
}

// chunkReader returns at most n bytes a read, so that the reader's window
// is refilled at every place in the text.
type chunkReader struct {
	r io.Reader
	n int
}

func (c *chunkReader) Read(b []byte) (int, error) { return c.r.Read(b[:min(len(b), c.n)]) }

// TestReadInChunks: the trace read does not depend on how the text
// arrives (a gzip reader hands it out in pieces of its own sizes; a
// window refilled between an event's key and its colon once lost the key).
func TestReadInChunks(t *testing.T) {
	gen, err := io.ReadAll(newGenTrace(1 << 20))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := os.ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"generated": gen, "synthetic": plain} {
		want, err := Read(bytes.NewReader(data), name)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 7, 61, 509, 4093, 32771} {
			if testing.Short() && n < 61 {
				continue
			}
			got, err := Read(&chunkReader{bytes.NewReader(data), n}, name)
			if err != nil {
				t.Errorf("%s in chunks of %d: %v", name, n, err)
				continue
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s in chunks of %d: %s, want %s", name, n, summary(got), summary(want))
			}
		}
	}
}
