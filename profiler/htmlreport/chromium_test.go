package htmlreport

import (
	"context"
	"errors"
	"html"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/recordings"
)

// requireChromium is the environment variable that turns a missing
// Chromium from a skip into a failure (.ci/run sets it).
const requireChromium = "C3LAB_REQUIRE_CHROMIUM"

// chromiumPath finds headless Chromium, or skips the test saying why
// (fails instead when requireChromium is 1).
func chromiumPath(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	msg := "no headless Chromium on PATH (Debian: apt-get install chromium); the report's DOM check needs it"
	if os.Getenv(requireChromium) == "1" {
		t.Fatal(msg + "; " + requireChromium + "=1 asks for it")
	}
	t.Skip(msg)
	return ""
}

// dumpDOM opens file in headless Chromium with the network shut off and
// returns the DOM after the page's script ran.
func dumpDOM(t *testing.T, chromium, file string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	args := []string{
		"--headless", "--disable-gpu", "--no-first-run", "--no-default-browser-check",
		"--disable-extensions", "--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(),
		// No network: a page that needed one would show it missing.
		"--proxy-server=127.0.0.1:9", "--host-resolver-rules=MAP * ~NOTFOUND",
		"--dump-dom", "file://" + file,
	}
	if os.Geteuid() == 0 {
		args = append([]string{"--no-sandbox"}, args...) // Chromium's sandbox refuses root
	}
	cmd := exec.CommandContext(ctx, chromium, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Fatalf("chromium took over 90 s: %s", stderr.String())
	}
	if err != nil {
		t.Fatalf("chromium: %v: %s", err, stderr.String())
	}
	return string(out)
}

// element returns the inner markup of the first element with the given
// tag and id.
func element(t *testing.T, dom, tag, id string) string {
	t.Helper()
	re := regexp.MustCompile(`(?s)<` + tag + `\b[^>]*\bid="` + regexp.QuoteMeta(id) + `"[^>]*>(.*?)</` + tag + `>`)
	m := re.FindStringSubmatch(dom)
	if m == nil {
		t.Fatalf("no <%s id=%q> in the DOM", tag, id)
	}
	return m[1]
}

var (
	cellRe  = regexp.MustCompile(`(?s)<g class="cell[^"]*" data-scenario="([^"]*)" data-strategy="([^"]*)" data-value="([^"]*)">.*?<text class="v"[^>]*>([^<]*)</text>`)
	rowRe   = regexp.MustCompile(`<tr class="(faster|slower|same|unknown)"`)
	readyRe = regexp.MustCompile(`data-ready-ms="(\d+)"`)
)

// TestReportInChromium renders a report of a committed H200 sweep and a
// recorded run in headless Chromium, without network, and checks the DOM
// it ends with: the script ran; every section is there; the heatmaps have
// one cell per scenario and strategy of the sweep, each with the sweep's
// U and F; the timeline draws every span of the recording; the why
// tables, devices, libraries and the comparison hold their data.
func TestReportInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	ins := load(t, sweepPass1, runRec)
	page := render(t, ins, Options{})
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	dom := dumpDOM(t, chromium, file)
	t.Logf("chromium loaded the report in %v", time.Since(start).Round(time.Millisecond))

	if !strings.Contains(dom, `data-script="ready"`) {
		t.Error("the page's script did not run through")
	}
	if m := readyRe.FindStringSubmatch(dom); m != nil {
		ms, _ := strconv.Atoi(m[1])
		t.Logf("the page was ready %d ms after navigation began", ms)
		if ms > 1000 {
			t.Errorf("the page took %d ms to be ready, over a second", ms)
		}
	}
	for _, id := range []string{"heatmaps", "bars", "timelines", "why", "devices", "compare"} {
		if !strings.Contains(dom, `<section id="`+id+`"`) {
			t.Errorf("no section %q", id)
		}
	}

	// The heatmaps against the sweep file, read on its own.
	sw, err := sweepfile.Load(sweepPass1)
	if err != nil {
		t.Fatal(err)
	}
	type cellWant struct{ u, f string }
	want := map[[2]string]cellWant{}
	scen, strat := map[string]bool{}, map[string]bool{}
	for _, e := range sw.Results {
		scen[e.Scenario], strat[e.Strategy] = true, true
		f, _ := e.Result.Fraction()
		want[[2]string{e.Scenario, e.Strategy}] = cellWant{report.Ratio(e.Result.Uplift), report.Percent(f)}
	}
	for _, fig := range []string{"u", "f"} {
		cells := cellRe.FindAllStringSubmatch(element(t, dom, "svg", "in1-"+fig), -1)
		if len(cells) != len(scen)*len(strat) {
			t.Errorf("heatmap %s: %d cells, the sweep has %d scenarios x %d strategies", fig, len(cells), len(scen), len(strat))
		}
		for _, c := range cells {
			key := [2]string{html.UnescapeString(c[1]), html.UnescapeString(c[2])}
			w, ok := want[key]
			if !ok {
				t.Errorf("heatmap %s: a cell %v the sweep does not have", fig, key)
				continue
			}
			text := w.u
			if fig == "f" {
				text = w.f
			}
			if c[4] != text {
				t.Errorf("heatmap %s %v: cell reads %q, the sweep says %q", fig, key, c[4], text)
			}
			if _, err := strconv.ParseFloat(c[3], 64); err != nil {
				t.Errorf("heatmap %s %v: data-value %q: %v", fig, key, c[3], err)
			}
		}
	}
	if got := element(t, dom, "svg", "in1-bars"); strings.Count(got, `<g class="bar"`) != len(strat) {
		t.Errorf("strategy bars: %d, want %d", strings.Count(got, `<g class="bar"`), len(strat))
	}

	// The timeline against the recording, read on its own.
	rec, err := recordings.ReadAll(runRec)
	if err != nil {
		t.Fatal(err)
	}
	var spans int
	for _, ev := range rec.Events {
		if ev.Result != nil {
			spans = len(ev.Result.Timeline)
		}
	}
	tl := element(t, dom, "svg", "tl1-svg")
	if got := strings.Count(tl, `<rect class="span"`); got != spans || spans == 0 {
		t.Errorf("timeline: %d spans drawn, the recording's run has %d", got, spans)
	}

	why := element(t, dom, "section", "why")
	if n := strings.Count(why, `<details class="why"`); n < len(scen) || strings.Count(why, `<table class="figures">`) != n {
		t.Errorf("why: %d runs explained (want one per scenario at least, %d), each with its figures", n, len(scen))
	}
	dev := element(t, dom, "section", "devices")
	for _, s := range []string{"NVIDIA H200", "libnccl.so.2", sw.Host} {
		if !strings.Contains(dev, s) {
			t.Errorf("devices: %q missing", s)
		}
	}

	rep := compare.Compare(ins[0].Input, ins[1].Input, compare.Options{})
	cmp := element(t, dom, "section", "compare")
	if got := len(rowRe.FindAllString(cmp, -1)); got != len(rep.Pairs) || got == 0 {
		t.Errorf("compare: %d rows, %d pairs", got, len(rep.Pairs))
	}
}

// The report of the whole suite swept on 2 x H200 (36 scenarios x 7
// strategies) is ready in headless Chromium within a second of navigation,
// without network, with one heatmap cell per scenario and strategy.
func TestFullSuiteReportReadyInChromium(t *testing.T) {
	chromium := chromiumPath(t)
	const full = "../../backends/cuda/results/2026-11-30-h200x2-gated/sweep.json"
	page := render(t, load(t, full), Options{})
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, []byte(page), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := dumpDOM(t, chromium, file)
	m := readyRe.FindStringSubmatch(dom)
	if m == nil || !strings.Contains(dom, `data-script="ready"`) {
		t.Fatal("the page's script did not run through")
	}
	ms, _ := strconv.Atoi(m[1])
	t.Logf("the full-suite page (%d KiB) was ready %d ms after navigation began", len(page)>>10, ms)
	if ms > 1000 {
		t.Errorf("the full-suite page took %d ms to be ready, over a second", ms)
	}
	if n := len(cellRe.FindAllString(element(t, dom, "svg", "in1-u"), -1)); n != 36*7 {
		t.Errorf("U heatmap: %d cells, want 36 x 7", n)
	}
}
