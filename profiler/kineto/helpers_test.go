package kineto

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata")

// ev is a GPU activity for a synthetic trace, times in µs.
type ev struct {
	cat, name string
	ts, dur   float64
	stream    int
	args      map[string]any
}

// synth writes a Kineto-style trace of the given GPU activities (rank 0
// of world), as torch.profiler lays one out.
func synth(t testing.TB, world int, evs ...ev) []byte {
	t.Helper()
	var out []map[string]any
	for i, e := range evs {
		args := map[string]any{"device": 0, "stream": e.stream, "correlation": 1000 + i}
		for k, v := range e.args {
			args[k] = v
		}
		out = append(out, map[string]any{"ph": "X", "cat": e.cat, "name": e.name, "pid": 0, "tid": e.stream,
			"ts": e.ts, "dur": e.dur, "args": args})
	}
	doc := map[string]any{"schemaVersion": 1, "traceEvents": out,
		"distributedInfo": map[string]any{"backend": "nccl", "rank": 0, "world_size": world}}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func mustRead(t testing.TB, data []byte) *Trace {
	t.Helper()
	tr, err := Read(bytes.NewReader(data), "test.json")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	return tr
}

func mustAnalyze(t testing.TB, tr *Trace, sel Select) *Report {
	t.Helper()
	r, err := Analyze(tr, sel)
	if err != nil {
		t.Fatalf("Analyze: %v", err)
	}
	return r
}

func fixture(t testing.TB, name string) string { return filepath.Join("testdata", name) }

// golden compares got with testdata/golden/name, rewriting it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to write it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs from the golden file (go test -update rewrites it):\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

func near(a, b, tol float64) bool { return a-b <= tol && b-a <= tol }

func mustContain(t *testing.T, s string, subs ...string) {
	t.Helper()
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			t.Errorf("%q does not contain %q", s, sub)
		}
	}
}

func jsonNumber(s string) rawNum { return rawNum(s) }
