package heuristics

import (
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/recordings/outfile"
)

// committedSweeps are the sweeps measured/h200.json indexes: the H200
// pairs and streams the simulator's profile was calibrated on.
var committedSweeps = []string{
	"backends/cuda/results/2026-11-30-h200x2-gated/sweep.json",
	"backends/cuda/results/2026-11-30-h200x2-session3/sweep-copies.json",
	"backends/cuda/results/2026-11-30-h200x2-session3/sweep-reductions-run3.json",
	"backends/cuda/results/2026-12-01-h200x1/sweep-host.json",
	"backends/cuda/results/2026-12-03-h200x1-s16/sweep-graphs-1gpu.json",
	"backends/cuda/results/2026-12-03-h200x1-s16/sweep-fixed.json",
}

// The embedded index is what the committed sweeps hold: a spot check
// always (the all-reduce whose old advice was slower than the
// baseline, under the baseline in the gated sweep: 98.0 µs), the whole index against the sweeps with
// C3LAB_CHECK_MEASURED=1 (a minute: the older sweeps' intervals are
// bootstrapped on load), rewritten with C3LAB_UPDATE_MEASURED=1.
func TestCommittedMeasurements(t *testing.T) {
	update, check := os.Getenv("C3LAB_UPDATE_MEASURED") == "1", os.Getenv("C3LAB_CHECK_MEASURED") == "1"
	if !update {
		checkCommitted(t)
	}
	if !update && !check {
		return
	}
	all := Measurements{}
	for _, p := range committedSweeps {
		f, err := sweepfile.Load(filepath.Join("..", p))
		if err != nil {
			t.Fatal(err)
		}
		all.Add(p, f)
	}
	idx := IndexOf("NVIDIA H200", committedSweeps, all)
	if update {
		err := outfile.WriteFile("measured/h200.json", outfile.Options{Overwrite: true}, func(w io.Writer) error {
			enc := json.NewEncoder(w)
			enc.SetIndent("", " ")
			return enc.Encode(idx)
		})
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	var embedded CommittedFile
	data, _ := committedFiles.ReadFile("measured/h200.json")
	if err := json.Unmarshal(data, &embedded); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(embedded, idx) {
		t.Error("measured/h200.json is not what the committed sweeps hold; rewrite it with C3LAB_UPDATE_MEASURED=1")
	}
}

// checkCommitted spot-checks the embedded index.
func checkCommitted(t *testing.T) {
	m, err := CommittedMeasurements("NVIDIA H200")
	if err != nil || len(m) < 40 {
		t.Fatalf("%d scenarios, %v", len(m), err)
	}
	got := m.Of("llama3-70b-tp8-dp2-qkv-wgrad-mb256-ar-16m", "baseline")
	if len(got) == 0 || got[0].Source != committedSweeps[0] || math.Abs(got[0].Result.TC3.Median-98032) > 0.5 {
		t.Errorf("the issue's all-reduce under the baseline: %+v", got)
	}
	if none, err := CommittedMeasurements("no such GPU"); none != nil || err != nil {
		t.Errorf("a device without measurements: %v, %v", none, err)
	}
}
