package compare

import (
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"
)

// The committed one-GPU sweeps, compared on one CPU and on several, give
// the same report: each pair draws from its own seed. And a sweep kept
// gzip-compressed loads as the plain file does.
func TestCompareSameOnAnyCPUCountAndGzip(t *testing.T) {
	const dir = "../../backends/cuda/results/2026-12-01-h200x1-i16/"
	old, err := Load(dir + "sweep-fixed-1.json")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(dir + "sweep-fixed-2.json")
	if err != nil {
		t.Fatal(err)
	}
	gz := filepath.Join(t.TempDir(), "sweep-fixed-2.json.gz")
	f, err := os.Create(gz)
	if err != nil {
		t.Fatal(err)
	}
	zw := gzip.NewWriter(f)
	if _, err := zw.Write(raw); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	plain, err := Load(dir + "sweep-fixed-2.json")
	if err != nil {
		t.Fatal(err)
	}
	packed, err := Load(gz)
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{Resamples: 300}
	prev := runtime.GOMAXPROCS(1)
	one := Compare(old, plain, opt)
	runtime.GOMAXPROCS(max(4, prev))
	many := Compare(old, packed, opt)
	runtime.GOMAXPROCS(prev)
	one.New.Path, many.New.Path = "", ""
	if len(one.Pairs) != 20 {
		t.Fatalf("%d pairs, want 20", len(one.Pairs))
	}
	if !reflect.DeepEqual(one, many) {
		for i := range one.Pairs {
			if !reflect.DeepEqual(one.Pairs[i], many.Pairs[i]) {
				t.Errorf("pair %d: one CPU %+v\nseveral, gzip %+v", i, one.Pairs[i], many.Pairs[i])
			}
		}
		t.Errorf("the reports differ:\n%+v\n%+v", one.Summary, many.Summary)
	}
}
