package sweepfile

import (
	"bytes"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// A file Write writes reads back with the current version and its results.
func TestRoundTrip(t *testing.T) {
	in := File{
		C3lab: Build{Version: "0.1.0-dev", Go: "go1.26", Platform: "linux/amd64"}, Backend: "sim",
		Devices: []backends.DeviceInfo{{Index: 0, Name: "gpu", SMs: 8}},
		Reps:    3, Grid: []profiler.NamedStrategy{{Name: "baseline"}, {Name: "prio", Strategy: scenarios.Strategy{CommPriority: -1}}},
		Results: []profiler.SweepEntry{{Scenario: "s", Strategy: "prio", Err: "boom"}},
		Skipped: "2 need more GPUs",
	}
	var buf bytes.Buffer
	if err := Write(&buf, in); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"format": 2`) || !strings.Contains(buf.String(), `"tool": "c3lab sweep"`) {
		t.Errorf("the file does not say its format and tool:\n%s", buf.String())
	}
	out, err := Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if out.Format != Version || out.Tool != Tool || out.C3lab != in.C3lab || out.Reps != 3 || out.Skipped != in.Skipped ||
		len(out.Grid) != 2 || out.Grid[1].Strategy != in.Grid[1].Strategy ||
		len(out.Results) != 1 || out.Results[0].Err != "boom" || len(out.Devices) != 1 || out.Devices[0].SMs != 8 {
		t.Errorf("read back %+v, wrote %+v", out, in)
	}
}

// A committed sweep, written before the format had a version, reads as
// version 1, brought up to the current one: a result whose isolated runs
// are the serial default's has U = S_real, one on copy engines U over the
// baseline's serial time, and the best per scenario is the one of
// highest U.
func TestCommittedSweepIsVersion1(t *testing.T) {
	f, err := Load("../../backends/cuda/results/2026-12-01-h200x1/sweep-host.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != 1 || len(f.Results) == 0 || len(f.Grid) == 0 || f.Backend != "cuda" || len(f.Devices) == 0 {
		t.Errorf("format %d, %d results, %d strategies, backend %q, %d devices", f.Format, len(f.Results), len(f.Grid), f.Backend, len(f.Devices))
	}
	base := map[string]float64{}
	for _, e := range f.Results {
		if e.Result != nil && e.Strategy == "baseline" {
			base[e.Scenario] = e.Result.TComp.Median + e.Result.TComm.Median
		}
	}
	if len(base) == 0 {
		t.Fatal("the committed sweep has no baseline run")
	}
	dma := 0
	for _, e := range f.Results {
		r := e.Result
		if r == nil || r.TC3.N == 0 {
			continue
		}
		d, ok := base[e.Scenario]
		if r.Strategy.Normalize().CommEngine == scenarios.EngineSM {
			d = r.TComp.Median + r.TComm.Median
			if r.Uplift != r.RealizedSpeedup {
				t.Errorf("%s · %s: U %v, S_real %v: the same for the serial default", e.Scenario, e.Strategy, r.Uplift, r.RealizedSpeedup)
			}
		} else {
			dma++
		}
		if ok && (r.SerialDefault != d || r.Uplift != d/r.TC3.Median) {
			t.Errorf("%s · %s: serial default %v, U %v; want %v, %v", e.Scenario, e.Strategy, r.SerialDefault, r.Uplift, d, d/r.TC3.Median)
		}
	}
	if dma == 0 || len(f.Best) == 0 {
		t.Fatalf("%d copy-engine results, %d best; the sweep has both", dma, len(f.Best))
	}
	for _, b := range f.Best {
		for _, e := range f.Results {
			if e.Scenario == b.Scenario && e.Result != nil && e.Result.Uplift > b.Uplift {
				t.Errorf("%s: best %s (U %v), but %s has U %v", b.Scenario, b.Strategy, b.Uplift, e.Strategy, e.Result.Uplift)
			}
		}
	}
}

// What Read refuses, each with a message that says why.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"a newer version", `{"format": 3, "tool": "c3lab sweep", "results": {"moved": true}}`, []string{"newer c3lab", "sweep format 3", "up to 2", "update c3lab"}},
		{"version 0", `{"format": 0, "tool": "c3lab sweep"}`, []string{"damaged", "format 0"}},
		{"another tool", `{"tool": "c3lab run", "results": []}`, []string{"not a c3lab sweep file", `"c3lab run"`}},
		{"no tool", `{"results": []}`, []string{"not a c3lab sweep file"}},
		{"not an object", `[1, 2]`, []string{"not a c3lab sweep file"}},
		{"a damaged version 1", `{"tool": "c3lab sweep", "results": 7}`, []string{"damaged", "format 1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Read(strings.NewReader(tc.data))
			if err == nil {
				t.Fatal("read without an error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}
