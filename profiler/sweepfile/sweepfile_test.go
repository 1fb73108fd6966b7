package sweepfile

import (
	"bytes"
	"compress/gzip"
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
	if !strings.Contains(buf.String(), `"format": 3`) || !strings.Contains(buf.String(), `"tool": "c3lab sweep"`) {
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

// A sweep file kept gzip-compressed reads as the plain one does.
func TestReadGzip(t *testing.T) {
	in := File{Backend: "sim", Reps: 2, Results: []profiler.SweepEntry{{Scenario: "s", Strategy: "baseline", Err: "boom"}}}
	var plain bytes.Buffer
	if err := Write(&plain, in); err != nil {
		t.Fatal(err)
	}
	want, err := Read(bytes.NewReader(plain.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Read(strings.NewReader(gzipped(plain.String())))
	if err != nil {
		t.Fatal(err)
	}
	if got.Backend != want.Backend || got.Reps != want.Reps || len(got.Results) != 1 || got.Results[0] != want.Results[0] {
		t.Errorf("gzip read %+v, plain %+v", got, want)
	}
}

func gzipped(s string) string {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(s))
	zw.Close()
	return b.String()
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
		{"a newer version", `{"format": 4, "tool": "c3lab sweep", "results": {"moved": true}}`, []string{"newer c3lab", "sweep format 4", "up to 3", "update c3lab"}},
		{"version 0", `{"format": 0, "tool": "c3lab sweep"}`, []string{"damaged", "format 0"}},
		{"another tool", `{"tool": "c3lab run", "results": []}`, []string{"not a c3lab sweep file", `"c3lab run"`}},
		{"no tool", `{"results": []}`, []string{"not a c3lab sweep file"}},
		{"not an object", `[1, 2]`, []string{"not a c3lab sweep file"}},
		{"a damaged version 1", `{"tool": "c3lab sweep", "results": 7}`, []string{"damaged", "format 1"}},
		{"a cut gzip file", gzipped(`{"format": 3, "tool": "c3lab sweep", "results": []}`)[:20], []string{"damaged gzip sweep file"}},
		{"gzip of something else", gzipped(`{"tool": "c3lab run"}`), []string{"not a c3lab sweep file", `"c3lab run"`}},
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

// A sweep written before intervals gets them on reading: its results'
// repetitions split into the protocol's rounds, each figure's interval
// holds the figure, a fraction of ideal above 100 % that its interval
// explains reads within noise, and bests whose intervals overlap
// another strategy's are reported tied.
func TestOldSweepGetsIntervals(t *testing.T) {
	f, err := Load("../../backends/cuda/results/2026-12-01-h200x1/sweep-host.json")
	if err != nil {
		t.Fatal(err)
	}
	with, noisy := 0, 0
	for _, e := range f.Results {
		r := e.Result
		if r == nil || r.TC3.N == 0 {
			continue
		}
		noisy++
		if r.CI == nil {
			t.Errorf("%s · %s: no interval (%s)", e.Scenario, e.Strategy, r.NoCI)
			continue
		}
		with++
		if r.CI.Rounds != profiler.DefaultRounds || !r.CI.TC3.Contains(r.TC3.Median) || !r.CI.U.Contains(r.Uplift) {
			t.Errorf("%s · %s: rounds %d, T_c3 %v in %+v, U %v in %+v", e.Scenario, e.Strategy, r.CI.Rounds, r.TC3.Median, r.CI.TC3, r.Uplift, r.CI.U)
		}
		if fr, ok := r.Fraction(); ok && fr > 1 && r.CI.F.Contains(1) != r.FWithinNoise() {
			t.Errorf("%s · %s: F %v in %+v, within noise %v", e.Scenario, e.Strategy, fr, r.CI.F, r.FWithinNoise())
		}
	}
	if with == 0 || with != noisy {
		t.Errorf("%d of %d results have intervals", with, noisy)
	}
	tied := 0
	for _, b := range f.Best {
		tied += len(b.Tied)
		if b.UpliftCI == nil && b.Uplift > 0 {
			t.Errorf("%s: best without U's interval", b.Scenario)
		}
	}
	wins, ties := 0, 0
	for _, s := range f.Summary {
		wins += s.Wins
		ties += s.Tied
	}
	t.Logf("%d results with intervals; %d bests, %d of them tied; %d wins, %d ties", with, len(f.Best), tied, wins, ties)
	if wins > len(f.Best) {
		t.Errorf("%d wins for %d scenarios", wins, len(f.Best))
	}
}
