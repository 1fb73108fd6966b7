package htmlreport

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/charmbracelet/x/exp/golden"
)

// Committed inputs the tests read: a sweep of 3 scenarios x 4
// strategies on one H200 (format 3, with intervals), a second pass of
// it, a recording of one run with its timeline, and a lab session on two
// H200s.
const (
	sweepPass1 = "../../backends/cuda/results/2026-12-01-h200x1-i16/sweep-passes-1.json"
	sweepPass2 = "../../backends/cuda/results/2026-12-01-h200x1-i16/sweep-passes-2.json"
	runRec     = "../../backends/cuda/results/2026-12-01-h200x1-i16/run-llama3-8b-act-reload-h2d-gemm-decomp4-1gpu.c3rec"
	labRec     = "../../recordings/samples/h200x2-lab.c3rec"
)

func load(t testing.TB, paths ...string) []Input {
	t.Helper()
	var ins []Input
	for _, p := range paths {
		in, err := Load(p)
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, in)
	}
	return ins
}

func render(t testing.TB, ins []Input, opt Options) string {
	t.Helper()
	p, err := Build(ins, opt)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, p); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// section cuts the <section id="id"> element out of a page.
func section(t *testing.T, page, id string) string {
	t.Helper()
	start := strings.Index(page, `<section id="`+id+`"`)
	if start < 0 {
		t.Fatalf("no section %q", id)
	}
	end := strings.Index(page[start:], "</section>")
	if end < 0 {
		t.Fatalf("section %q does not end", id)
	}
	return page[start : start+end+len("</section>")]
}

// TestSectionsGolden checks the page's sections against golden files
// (go test ./profiler/htmlreport -run TestSectionsGolden -update
// rewrites them): the heatmaps, bars and devices of a committed H200
// sweep, the timeline and why table of a recorded run, and the
// comparison of a sweep's two passes.
func TestSectionsGolden(t *testing.T) {
	sweep := render(t, load(t, sweepPass1), Options{})
	run := render(t, load(t, runRec), Options{})
	pair := render(t, load(t, sweepPass1, sweepPass2), Options{})
	for _, tc := range []struct{ name, page, id string }{
		{"heatmaps", sweep, "heatmaps"},
		{"bars", sweep, "bars"},
		{"devices", sweep, "devices"},
		{"timelines", run, "timelines"},
		{"why", run, "why"},
		{"compare", pair, "compare"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			golden.RequireEqual(t, []byte(section(t, tc.page, tc.id)))
		})
	}
}

// TestDeterministic: the same inputs give the same bytes.
func TestDeterministic(t *testing.T) {
	ins := load(t, sweepPass1, labRec)
	if a, b := render(t, ins, Options{}), render(t, ins, Options{}); a != b {
		t.Fatal("two renderings of the same inputs differ")
	}
}

// TestSelfContained: nothing in the page is fetched from elsewhere.
func TestSelfContained(t *testing.T) {
	page := render(t, load(t, sweepPass1, runRec), Options{})
	for _, bad := range []string{`src="http`, `href="http`, `src="//`, `href="//`, "@import", "url(http", "<link "} {
		if strings.Contains(page, bad) {
			t.Errorf("the page refers to something outside it: %q", bad)
		}
	}
	for _, id := range []string{"heatmaps", "bars", "timelines", "why", "devices", "compare"} {
		section(t, page, id)
	}
}

// TestEscapes: names from an input file are escaped, never markup.
func TestEscapes(t *testing.T) {
	ins := load(t, runRec)
	r := ins[0].Entries[0].Result
	const evil = `x"><script>alert(1)</script><b`
	r.Scenario.Name = evil
	for i := range r.Timeline {
		r.Timeline[i].Name = evil
		r.Timeline[i].Track = evil
	}
	data, err := json.Marshal([]profiler.Result{r})
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "evil.json")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	page := render(t, load(t, path), Options{})
	if strings.Contains(page, "<script>alert") || strings.Contains(page, `x">`) {
		t.Fatal("a name from the input reached the page unescaped")
	}
	if !strings.Contains(page, "&lt;script&gt;alert(1)") {
		t.Fatal("the escaped name is missing")
	}
}

// TestCellsMatchSweep: each U cell holds the sweep's U, as a number and
// as text.
func TestCellsMatchSweep(t *testing.T) {
	ins := load(t, sweepPass1)
	p, err := Build(ins, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[[2]string]float64{}
	for _, e := range ins[0].Entries {
		want[[2]string{e.Result.Scenario.Name, e.Name}] = e.Result.Uplift
	}
	cells := p.Inputs[0].HeatU.Cells
	if len(cells) != len(want) || len(want) != 12 {
		t.Fatalf("%d cells for %d results, want 12", len(cells), len(want))
	}
	for _, c := range cells {
		u := want[[2]string{c.Scenario, c.Strategy}]
		if c.Value != num(u) {
			t.Errorf("%s/%s: cell %s, sweep %v", c.Scenario, c.Strategy, c.Value, u)
		}
	}
}

func TestTimelineChoice(t *testing.T) {
	ins := load(t, labRec)
	for _, tc := range []struct {
		name  string
		want  []string
		n     int
		fails bool
	}{
		{"default", nil, 2, false},
		{"scenario", []string{"llama3-405b-tp8-qkv-ag-224m"}, 3, false},
		{"scenario/strategy", []string{"llama3-405b-tp8-qkv-ag-224m/baseline"}, 1, false},
		{"unknown", []string{"no-such-scenario"}, 0, true},
		{"unknown strategy", []string{"llama3-405b-tp8-qkv-ag-224m/nope"}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Build(ins, Options{Timelines: tc.want})
			if tc.fails {
				if err == nil {
					t.Fatal("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Timelines) != tc.n {
				t.Fatalf("%d timelines, want %d", len(p.Timelines), tc.n)
			}
		})
	}
}

var spanRe = regexp.MustCompile(`<rect class="span"`)

// TestTimelineSpans: a timeline draws every span of its run.
func TestTimelineSpans(t *testing.T) {
	ins := load(t, runRec)
	page := render(t, ins, Options{})
	if got, want := len(spanRe.FindAllString(page, -1)), len(ins[0].Entries[0].Result.Timeline); got != want || want == 0 {
		t.Fatalf("%d spans drawn, the run has %d", got, want)
	}
}

func TestSweepLibraries(t *testing.T) {
	d := load(t, sweepPass1)[0].Details
	found := false
	for _, l := range d.Libraries {
		found = found || (l.Name == "libnccl.so.2" && l.Version != "")
	}
	if !found || d.Driver == "" || d.Host == "" {
		t.Fatalf("details %+v: want the driver, the host and libnccl's version", d)
	}
}

func TestNoInputs(t *testing.T) {
	if _, err := Build(nil, Options{}); err == nil {
		t.Fatal("no error for no inputs")
	}
}

// A sweep kept gzip-compressed reports as the plain file does: its results
// and what it says of where it ran.
func TestGzipSweep(t *testing.T) {
	const gz = "../../backends/cuda/results/2026-12-01-h200x1-s3/sweep-full-1.json.gz"
	ins := load(t, gz)
	d := ins[0].Details
	if d.Driver == "" || len(d.Devices) != 1 || d.Devices[0].Name != "NVIDIA H200" {
		t.Fatalf("details %+v: want the driver and the one H200", d)
	}
	if page := render(t, ins, Options{}); !strings.Contains(page, "llama3-8b-act-reload-h2d-gemm-decomp4-1gpu") {
		t.Error("the page lacks the sweep's scenarios")
	}
}
