package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// timelineRows returns the rows of the lab's timeline panel on a captured
// screen, by track label ("tp", "compute"): each row's text after its
// label, up to the panel's right border.
func timelineRows(screen string) map[string]string {
	rows := map[string]string{}
	in := false
	for _, l := range strings.Split(screen, "\n") {
		switch {
		case strings.Contains(l, "─ Timeline"):
			in = true
			continue
		case !in:
			continue
		case strings.Contains(l, "┬") || strings.Contains(l, "╰"):
			return rows
		}
		parts := strings.Split(l, "│")
		if len(parts) < 3 {
			continue
		}
		f := strings.Fields(parts[len(parts)-2])
		if len(f) > 1 {
			rows[f[0]] = strings.Join(f[1:], " ")
		}
	}
	return rows
}

// instances counts the op instances a timeline row draws: every stretch
// of bar between blanks is one, plus one more for each kernel boundary
// (▐) inside it. Labels (qkv[3]) sit inside the bars; the row's time at
// its end has no bar and is not counted.
func instances(row string) int {
	n := 0
	for _, run := range strings.Fields(row) {
		if !strings.ContainsAny(run, "█▓▐") {
			continue
		}
		n += 1 + strings.Count(strings.TrimPrefix(run, "▐"), "▐")
	}
	return n
}

var (
	upliftRE    = regexp.MustCompile(`· U ([0-9]+\.[0-9]+x) over the serial default`)
	serialRE    = regexp.MustCompile(`T_serial ([0-9.]+ [µm]?s) · T_ideal ([0-9.]+ [µm]?s)`)
	addedOpRE   = regexp.MustCompile(`added op (\S+) to stream (\S+)`)
	savedFileRE = regexp.MustCompile(`saved (\S+\.yaml)`)
)

// TestE2ETmuxStreams drives the real binary in a 120x40 tmux terminal on
// the simulator, on a scenario written as streams (a TP all-gather feeding
// the QKV GEMM, decomposed into 4 chunks): the timeline's rows are the
// scenario's streams with instance labels (qkv[1]); the why panel gives
// T_serial, T_ideal and U; D cycles the decomposition (2, 4, 8 chunks,
// whole) and each time the GEMM and all-gather instances on the timeline
// follow and U changes; n opens the stream composer, ctrl+n adds an op,
// ctrl+s saves the scenario as YAML, and `c3lab run --scenario FILE
// --backend sim` runs that file with the new op.
func TestE2ETmuxStreams(t *testing.T) {
	bin, dir := e2eBinary(t)
	const name = "llama3-70b-tp-qkv-ag-gemm-decomp4-2gpu"
	sc, err := scenarios.Find(name)
	if err != nil {
		t.Fatal(err)
	}
	// The decomposed pair: the GEMM that waits for the collective.
	var gemm, coll, compStream, commStream string
	own := 0
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			if o.Decompose > 1 && len(o.After) == 1 {
				gemm, coll, compStream, own = o.Name, o.After[0], ss.Name, o.Decompose
			}
		}
	}
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			if o.Name == coll {
				commStream = ss.Name
			}
		}
	}
	if gemm == "" || commStream == "" || len(sc.Streams) != 2 || own == 2 {
		t.Fatalf("%s is no longer one collective feeding one GEMM decomposed into other than 2 chunks, on two streams: %+v", name, sc.Streams)
	}

	exitFile := filepath.Join(dir, "exit-status")
	x := startTerm(t, "streams", 120, 40, fmt.Sprintf("cd %s && %s lab --backend sim --scenario %s; echo $? > %s",
		quote(dir), quote(bin), name, quote(exitFile)))

	// figures is the why panel's U with its T_serial and T_ideal: every
	// decomposition step changes them (U alone may round to the same
	// 1.00x when the chunks' fixed costs eat the overlap).
	figures := func(s string) string {
		m := upliftRE.FindStringSubmatch(s)
		if m == nil {
			return ""
		}
		return m[1] + " " + serialRE.FindString(s)
	}
	// shows waits until the timeline draws n instances of the GEMM and of
	// the collective on the scenario's two streams and the why panel
	// figures other than prev, and returns them.
	shows := func(n int, prev string) string {
		t.Helper()
		x.waitFor(fmt.Sprintf("%d instances of %s and %s on the timeline and figures other than %q", n, gemm, coll, prev), 60*time.Second, func(s string) bool {
			rows := timelineRows(s)
			f := figures(s)
			return len(rows) == 2 && instances(rows[compStream]) == n && instances(rows[commStream]) == n &&
				f != "" && f != prev
		})
		rows := timelineRows(x.screen)
		if n > 1 {
			// Labelled by instance where the bar has room: the GEMM's
			// first two always do at 120 columns, and the collective's
			// first up to 4 chunks.
			want := []string{gemm + "[0]", gemm + "[1]"}
			if n <= 4 {
				want = append(want, coll+"[0]")
			}
			for _, w := range want {
				if !strings.Contains(rows[compStream]+" "+rows[commStream], w) {
					t.Errorf("the timeline does not show %s:\n%s", w, x.screen)
				}
			}
		} else if !strings.Contains(rows[compStream], gemm) || strings.Contains(rows[compStream], gemm+"[") {
			t.Errorf("the whole GEMM is not labelled %s:\n%s", gemm, x.screen)
		}
		if !serialRE.MatchString(x.screen) {
			t.Errorf("the why panel gives no T_serial and T_ideal:\n%s", x.screen)
		}
		f := figures(x.screen)
		t.Logf("%d chunks: U %s", n, f)
		return f
	}

	// D cycles from the scenario's own decomposition through 2, 4 and 8
	// chunks to whole (the lab's decomposeSteps); each step changes T_c3.
	u := shows(own, "")
	for _, n := range []int{2, 4, 8, 1} {
		x.send("D")
		u = shows(n, u)
		if want := fmt.Sprintf("decompose=%d", n); !strings.Contains(x.screen, want) {
			t.Errorf("the header does not say %s:\n%s", want, x.screen)
		}
	}

	// The stream composer: add an op, save the scenario.
	x.send("n")
	x.waitFor("the stream composer", 30*time.Second, func(s string) bool { return strings.Contains(s, "Compose streams") })
	x.send("C-n")
	x.waitFor("the note on the added op", 30*time.Second, func(s string) bool { return addedOpRE.MatchString(s) })
	added := addedOpRE.FindStringSubmatch(x.screen)
	x.send("C-s")
	x.waitFor("the note on the saved file", 30*time.Second, func(s string) bool { return savedFileRE.MatchString(s) })
	file := savedFileRE.FindStringSubmatch(x.screen)[1]
	if !filepath.IsAbs(file) {
		file = filepath.Join(dir, file)
	}
	x.send("Escape")
	x.waitFor("the composer to close", 30*time.Second, func(s string) bool { return !strings.Contains(s, "Compose streams") })
	x.send("q")
	if code := x.waitExit(exitFile, 15*time.Second); code != "0" {
		t.Errorf("the lab exited with status %s; screen:\n%s", code, x.capture(false))
	}

	saved, err := scenarios.Load(file, sim.H200().Limits())
	if err != nil {
		data, _ := os.ReadFile(file)
		t.Fatalf("the saved file does not load: %v\n%s", err, data)
	}
	g, err := saved.Graph(saved.Strategy)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != len(sc.Streams[0].Ops)+len(sc.Streams[1].Ops)+1 {
		t.Errorf("the saved scenario has %d ops; want the %s's and %s", len(g.Ops), name, added[1])
	}
	if saved.Description == sc.Description {
		t.Errorf("the saved scenario keeps the description of %s, which no longer says what it runs: %q", name, saved.Description)
	}
	out, err := exec.Command(bin, "run", "--scenario", file, "--backend", "sim").CombinedOutput()
	if err != nil {
		t.Fatalf("c3lab run --scenario %s: %v\n%s", file, err, out)
	}
	for _, want := range []string{
		"scenario   " + saved.Name,
		fmt.Sprintf("graph      %d streams, %d ops, %d instances on 2 GPUs", len(g.Streams), len(g.Ops), len(g.Instances)),
		"stream " + added[2],
		"  " + added[1] + ": ",
		"uplift ",
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("c3lab run on the saved file does not say %q:\n%s", want, out)
		}
	}
}

// TestTimelineRowsAndInstances checks how the end-to-end test reads the
// timeline off a screen: rows by label, instances by stretches of bar and
// kernel boundaries, labelled or not, the row's time left out.
func TestTimelineRowsAndInstances(t *testing.T) {
	screen := `╭─ Scenarios ─╮╭─ Timeline · GPU 0 of 2 ─────────────────────────────╮
│  a          ││tp       ▓▓▓▓▓▐▓▓▓▓▓  ▓▓▓▓▓▓  ▓ag[5]▓ ▓ag[6]▓    720 µs│
│  b          ││compute       █qkv[0]█▐qkv[1]█▐██████            1.06 ms│
│  c          ││         ┬──────────────┬─────────────────────          │
│  d          ││compute  not a row: past the axis                      │`
	rows := timelineRows(screen)
	if len(rows) != 2 {
		t.Fatalf("rows %q; want tp and compute", rows)
	}
	for _, tc := range []struct {
		row  string
		want int
	}{
		{rows["tp"], 5}, {rows["compute"], 3}, {"█qkv████   905 µs", 1}, {"   303 µs", 0},
	} {
		if got := instances(tc.row); got != tc.want {
			t.Errorf("instances(%q) = %d, want %d", tc.row, got, tc.want)
		}
	}
}
