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
	if !strings.Contains(buf.String(), `"format": 1`) || !strings.Contains(buf.String(), `"tool": "c3lab sweep"`) {
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
// version 1.
func TestCommittedSweepIsVersion1(t *testing.T) {
	f, err := Load("../../backends/cuda/results/2026-12-01-h200x1/sweep-host.json")
	if err != nil {
		t.Fatal(err)
	}
	if f.Format != 1 || len(f.Results) == 0 || len(f.Grid) == 0 || f.Backend != "cuda" || len(f.Devices) == 0 {
		t.Errorf("format %d, %d results, %d strategies, backend %q, %d devices", f.Format, len(f.Results), len(f.Grid), f.Backend, len(f.Devices))
	}
}

// What Read refuses, each with a message that says why.
func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"a newer version", `{"format": 2, "tool": "c3lab sweep", "results": {"moved": true}}`, []string{"newer c3lab", "sweep format 2", "up to 1", "update c3lab"}},
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
