package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// around is an interval of half-width hw about v, a little lopsided (as a
// bootstrap's percentile interval is): from v - 0.9 hw to v + 1.1 hw.
func around(v, hw float64) profiler.Interval {
	return profiler.Interval{Lo: v - 0.9*hw, Hi: v + 1.1*hw}
}

// withIntervals gives r the intervals a bootstrap over its rounds could
// have: times within 0.3 %, speedups and slowdowns within 0.01, F within
// fHW (a fraction), one interval per graph op.
func withIntervals(r profiler.Result, fHW float64) profiler.Result {
	t := func(v float64) profiler.Interval { return around(v, 0.003*v) }
	f, _ := r.Fraction()
	u, _ := uplift(r)
	ci := &profiler.Intervals{
		Level: 0.95, Resamples: 1000, Rounds: 5,
		TComp: t(r.TComp.Median), TComm: t(r.TComm.Median), TC3: t(r.TC3.Median),
		TSerial: t(r.TSerial), TIdeal: t(r.TIdeal),
		SIdeal: around(r.IdealSpeedup, 0.01), SReal: around(r.RealizedSpeedup, 0.01),
		F: around(f, fHW), U: around(u, 0.01),
		CompSlowdown: around(r.CompSlowdown, 0.01), CommSlowdown: around(r.CommSlowdown, 0.02),
	}
	for _, o := range r.Ops {
		ci.Ops = append(ci.Ops, around(o.Slowdown, 0.015))
	}
	r.CI = ci
	return r
}

// ciResult is the lab's fixture result measured with intervals.
func ciResult(st scenarios.Strategy) profiler.Result {
	return withIntervals(fixtureResult(testSuite()[0], st), 0.012)
}

// noiseResult is a result whose fraction of ideal is past 100 % (T_c3
// 1.38 ms against a longer op of 1.40 ms alone: F 103.1 %) with an interval
// that holds 100 %: within noise.
func noiseResult() profiler.Result {
	r := fixtureResult(testSuite()[0], scenarios.Strategy{Launch: scenarios.CommFirst})
	r.TC3 = profiler.Summarize([]int64{1_375_000, 1_380_000, 1_380_000, 1_388_000})
	r.TCompInC3 = profiler.Summarize([]int64{1_375_000, 1_380_000, 1_380_000, 1_388_000})
	r.TCommInC3 = profiler.Summarize([]int64{1_300_000, 1_310_000, 1_310_000, 1_320_000})
	r.Derive(4e12)
	return withIntervals(r, 0.05)
}

// pastResult is noiseResult with a tight interval: F past 100 % beyond
// its interval, a number to distrust.
func pastResult() profiler.Result {
	r := noiseResult()
	f, _ := r.Fraction()
	r.CI.F = around(f, 0.01)
	return r
}

// deterministicResult is the lab's fixture result as the simulator gives
// it: deterministic, without intervals.
func deterministicResult() profiler.Result {
	r := fixtureResult(testSuite()[0], scenarios.Strategy{})
	r.Deterministic = true
	return r
}

// ciTrail is a trail with intervals: prio=-5 is told apart from the
// baseline, comm-first prio=-5 is not told apart from prio=-5 (≈).
func ciTrail() []trailPoint {
	p := func(st string, u, hw float64) trailPoint {
		return trailPoint{st, upliftWithin(u, hw)}
	}
	return []trailPoint{p("baseline", 1.08, 0.01), p("prio=-5", 1.37, 0.02), p("comm-first prio=-5", 1.38, 0.02)}
}

// TestIntervalGolden renders the metrics and why panels with intervals,
// with F within noise, with F past ideal beyond its interval, and for a
// deterministic result, at 80, 120 and 200 columns; `go test ./tui
// -update` regenerates them.
func TestIntervalGolden(t *testing.T) {
	st := DefaultStyles(true)
	ci, noise, past, det := ciResult(scenarios.Strategy{}), noiseResult(), pastResult(), deterministicResult()
	graph := withIntervals(graphResult(), 0.02)
	graph.Deterministic = false
	bi, noCI := bimodalResult(), noCIResult()
	for _, tc := range []struct {
		name  string
		title string
		lines func(w int) []string
	}{
		{"metrics_ci", metricsTitle(&ci), func(w int) []string { return metricsLines(st, &ci, ciTrail(), w) }},
		{"why_ci", whyTitle(), func(w int) []string { return whyLines(st, &ci, w, "fake", h200Caps()) }},
		{"metrics_noise", metricsTitle(&noise), func(w int) []string { return metricsLines(st, &noise, nil, w) }},
		{"why_noise", whyTitle(), func(w int) []string { return whyLines(st, &noise, w, "fake", h200Caps()) }},
		{"metrics_past", metricsTitle(&past), func(w int) []string { return metricsLines(st, &past, nil, w) }},
		{"metrics_deterministic", metricsTitle(&det), func(w int) []string { return metricsLines(st, &det, nil, w) }},
		{"why_deterministic", whyTitle(), func(w int) []string { return whyLines(st, &det, w, "fake", h200Caps()) }},
		{"why_graph_ci", whyTitle(), func(w int) []string { return whyLines(st, &graph, w, "fake", graphCaps()) }},
		{"metrics_bimodal", metricsTitle(&bi), func(w int) []string { return metricsLines(st, &bi, nil, w) }},
		{"why_bimodal", whyTitle(), func(w int) []string { return whyLines(st, &bi, w, "fake", h200Caps()) }},
		{"why_noci", whyTitle(), func(w int) []string { return whyLines(st, &noCI, w, "fake", h200Caps()) }},
	} {
		for _, w := range []int{80, 120, 200} {
			t.Run(fmt.Sprintf("%s_%d", tc.name, w), func(t *testing.T) {
				lines := tc.lines(w - 2)
				golden.RequireEqual(t, plain(t, box(st, tc.title, lines, w, len(lines)+2), w))
			})
		}
	}
}

// TestIntervalPanels checks, at every width, what the goldens show: each
// figure of a measured result carries its ±; F within noise says so and
// is neither drawn as a success nor printed bare; a deterministic result
// says it has no interval exactly once per panel and shows no ±.
func TestIntervalPanels(t *testing.T) {
	st := DefaultStyles(true)
	ci, noise, det := ciResult(scenarios.Strategy{}), noiseResult(), deterministicResult()
	for _, w := range []int{58, 78, 118, 198} {
		metrics := ansi.Strip(strings.Join(metricsLines(st, &ci, nil, w), "\n"))
		why := ansi.Strip(strings.Join(whyLines(st, &ci, w, "fake", h200Caps()), "\n"))
		for _, want := range []string{"T_comp   1.40 ms ± 4 µs", "T_c3     2.30 ms ± 7 µs", "17.0% ± 1.2", "1.12x ± 0.01 compute", "1.84x ± 0.02 comm", "realized  1.15x ± 0.01"} {
			if !strings.Contains(metrics, want) {
				t.Errorf("w %d: metrics panel lacks %q:\n%s", w, want, metrics)
			}
		}
		for _, want := range []string{"T_c3 2.30 ms ± 7 µs", "F 17.0% ± 1.2", "U 1.15x ± 0.01", "in C3 (1.12x ± 0.01", "(1.84x ± 0.02"} {
			if !strings.Contains(why, want) {
				t.Errorf("w %d: why panel lacks %q:\n%s", w, want, why)
			}
		}
		if strings.Contains(metrics+why, noIntervalNote) {
			t.Errorf("w %d: a result with intervals says it has none", w)
		}

		nm := ansi.Strip(strings.Join(metricsLines(st, &noise, nil, w), "\n"))
		nw := ansi.Strip(strings.Join(whyLines(st, &noise, w, "fake", h200Caps()), "\n"))
		f, _ := noise.Fraction()
		if !strings.Contains(nm, "within noise (103.1% ± 5.0)") || !strings.Contains(nw, "F within noise (103.1% ± 5.0)") {
			t.Errorf("w %d: F %.3f inside [%.3f, %.3f] does not read within noise:\n%s\n%s", w, f, noise.CI.F.Lo, noise.CI.F.Hi, nm, nw)
		}

		dm := ansi.Strip(strings.Join(metricsLines(st, &det, nil, w), "\n"))
		dw := ansi.Strip(strings.Join(whyLines(st, &det, w, "fake", h200Caps()), "\n"))
		for name, text := range map[string]string{"metrics": dm, "why": dw} {
			if n := strings.Count(text, "deterministic"); n != 1 {
				t.Errorf("w %d: the %s panel says deterministic %d times, want once:\n%s", w, name, n, text)
			}
			if strings.Contains(text, "±") {
				t.Errorf("w %d: the %s panel shows an interval for a deterministic result", w, name)
			}
		}
		if !strings.Contains(dw, noIntervalNote) {
			t.Errorf("w %d: why panel does not say %q:\n%s", w, noIntervalNote, dw)
		}
	}
	// A result that is not deterministic and has no intervals (an old
	// recording) shows neither a ± nor the note.
	plainR := fixtureResult(testSuite()[0], scenarios.Strategy{})
	text := ansi.Strip(strings.Join(append(metricsLines(st, &plainR, nil, 118), whyLines(st, &plainR, 118, "fake", h200Caps())...), "\n"))
	if strings.Contains(text, "±") || strings.Contains(text, "deterministic") {
		t.Errorf("a result without intervals claims one or determinism:\n%s", text)
	}
}

// TestWithinNoiseNotCelebrated checks the styles: F past 100 % inside its
// interval is not drawn in the good style and its gauge stops at 100 %;
// past its interval it is drawn as a warning.
func TestWithinNoiseNotCelebrated(t *testing.T) {
	st := DefaultStyles(true)
	good := st.Good.Render("within noise (103.1% ± 5.0)")
	noise := noiseResult()
	lines := strings.Join(metricsLines(st, &noise, nil, 118), "\n")
	if strings.Contains(lines, good) || !strings.Contains(lines, st.Value.Render("within noise (103.1% ± 5.0)")) {
		t.Errorf("F within noise is not drawn plainly:\n%q", lines)
	}
	past := pastResult()
	lines = strings.Join(metricsLines(st, &past, nil, 118), "\n")
	if !strings.Contains(lines, st.Warn.Render("103.1% ± 1.0 past ideal")) {
		t.Errorf("F past ideal beyond its interval is not a warning:\n%q", ansi.Strip(lines))
	}
	if got := fracText(noise); got != "within noise (103.1% ± 5.0)" {
		t.Errorf("status text %q", got)
	}
}

// TestHalfWidths checks how the half-width of an interval prints.
func TestHalfWidths(t *testing.T) {
	for _, tc := range []struct {
		ns   float64
		want string
	}{
		{0, "0 ns"}, {0.5, "0.5 ns"}, {4, "4 ns"}, {12.4, "12 ns"}, {999.7, "1.0 µs"},
		{4_123, "4 µs"}, {1_523, "1.5 µs"}, {12_300, "12 µs"}, {19_600, "20 µs"}, {250_000, "300 µs"},
		{1_230_000, "1.2 ms"}, {3e9, "3 s"}, {-1, "n/a"}, {math.NaN(), "n/a"},
	} {
		if got := halfDuration(tc.ns); got != tc.want {
			t.Errorf("halfDuration(%g) = %q, want %q", tc.ns, got, tc.want)
		}
	}
	if got := percentPM(0.89, profiler.Interval{Lo: 0.878, Hi: 0.902}, true); got != "89.0% ± 1.2" {
		t.Errorf("percentPM = %q", got)
	}
	bad := &profiler.Intervals{TC3: profiler.Interval{Lo: 2, Hi: 1}}
	if got := durationPM(1.41e6, bad, func(c *profiler.Intervals) profiler.Interval { return c.TC3 }); got != "1.41 ms" {
		t.Errorf("an interval that holds no numbers printed %q", got)
	}
}

// TestFractionStates checks when F is a number, within noise, past ideal.
func TestFractionStates(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		f    *float64
		ci   *profiler.Intervals
		want fractionState
		text string
	}{
		{"undefined", nil, nil, fracNone, "n/a"},
		{"no interval", f(0.89), nil, fracPlain, "89.0%"},
		{"above 100 % without interval", f(1.02), nil, fracPlain, "102.0%"},
		{"with interval", f(0.89), &profiler.Intervals{F: profiler.Interval{Lo: 0.878, Hi: 0.902}}, fracPlain, "89.0% ± 1.2"},
		{"100 % inside", f(1.02), &profiler.Intervals{F: profiler.Interval{Lo: 0.99, Hi: 1.05}}, fracNoise, "within noise (102.0% ± 3.0)"},
		{"100 % on the edge", f(1.02), &profiler.Intervals{F: profiler.Interval{Lo: 1, Hi: 1.04}}, fracNoise, "within noise (102.0% ± 2.0)"},
		{"past", f(1.05), &profiler.Intervals{F: profiler.Interval{Lo: 1.03, Hi: 1.07}}, fracPast, "105.0% ± 2.0 past ideal"},
		{"invalid interval", f(0.5), &profiler.Intervals{F: profiler.Interval{Lo: math.NaN(), Hi: 1}}, fracPlain, "50.0%"},
	} {
		r := profiler.Result{FractionOfIdeal: tc.f, CI: tc.ci}
		if _, _, _, got := fraction(&r); got != tc.want {
			t.Errorf("%s: state %d, want %d", tc.name, got, tc.want)
		}
		if got := fractionText(&r); got != tc.text {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.text)
		}
	}
}

// TestCompareU checks the three-way comparison of uplifts.
func TestCompareU(t *testing.T) {
	ci := func(u, lo, hi float64) upliftEst {
		return upliftAt(u, true, &profiler.Interval{Lo: lo, Hi: hi})
	}
	exact := func(u float64) upliftEst { return upliftAt(u, true, nil) }
	for _, tc := range []struct {
		name string
		a, b upliftEst
		want int
	}{
		{"apart, higher", ci(1.40, 1.38, 1.42), ci(1.30, 1.28, 1.32), 1},
		{"apart, lower", ci(1.30, 1.28, 1.32), ci(1.40, 1.38, 1.42), -1},
		{"overlap", ci(1.40, 1.36, 1.44), ci(1.35, 1.30, 1.37), 0},
		{"touching", ci(1.40, 1.37, 1.44), ci(1.35, 1.30, 1.37), 0},
		{"one interval holds the other value", ci(1.40, 1.34, 1.44), exact(1.35), 0},
		{"one interval misses the other value", exact(1.30), ci(1.40, 1.34, 1.44), -1},
		{"exact, equal", exact(1.3), exact(1.3), 0},
		{"exact, apart", exact(1.31), exact(1.3), 1},
		{"unknown below known", upliftEst{}, exact(0.5), -1},
		{"known above unknown", exact(0.5), upliftEst{}, 1},
		{"both unknown", upliftEst{}, upliftEst{}, 0},
	} {
		if got := compareU(tc.a, tc.b); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
	// upliftOf takes U's interval, or S_real's where U falls back to S_real.
	r := ciResult(scenarios.Strategy{})
	if e := upliftOf(r); !e.hasCI || e.ci != r.CI.U {
		t.Errorf("upliftOf: %+v, want U's interval %+v", e, r.CI.U)
	}
	r.Uplift, r.CI.U = 0, profiler.Interval{}
	if e := upliftOf(r); !e.hasCI || e.ci != r.CI.SReal || e.u != r.RealizedSpeedup {
		t.Errorf("upliftOf without U: %+v, want S_real %v in %+v", e, r.RealizedSpeedup, r.CI.SReal)
	}
	if e := upliftOf(deterministicResult()); e.hasCI {
		t.Error("a deterministic result has an uplift interval")
	}
	// Without U, strategies are told apart by T_c3 (profiler.Compare),
	// not by S_real, whose isolated times a strategy may change: here the
	// S_real intervals overlap, the T_c3 intervals do not.
	noU := func(tc3, sreal float64) profiler.Result {
		return profiler.Result{TC3: profiler.Stat{N: 5, Median: tc3}, RealizedSpeedup: sreal,
			CI: &profiler.Intervals{TC3: around(tc3, 0.01*tc3), SReal: around(sreal, 0.1)}}
	}
	fast, slow := upliftOf(noU(1.0e6, 1.30)), upliftOf(noU(1.2e6, 1.35))
	if got := compareU(fast, slow); got != 1 {
		t.Errorf("T_c3 1.0 ms vs 1.2 ms apart: %d, want 1 (by T_c3, not S_real)", got)
	}
	if got := compareU(slow, fast); got != -1 {
		t.Errorf("T_c3 1.2 ms vs 1.0 ms apart: %d, want -1", got)
	}
}

// TestTrailNoise checks the trail joins points whose U is not told apart
// with ≈, and others with →.
func TestTrailNoise(t *testing.T) {
	st := DefaultStyles(true)
	got := strings.TrimSpace(ansi.Strip(trailLine(st, ciTrail(), 9, 118)))
	want := "trail U  baseline 1.08x → prio=-5 1.37x ≈ comm-first prio=-5 1.38x"
	if got != want {
		t.Errorf("trail\n%q, want\n%q", got, want)
	}
	// Abbreviated and cut, the joins stay with their points.
	got = strings.TrimSpace(ansi.Strip(trailLine(st, ciTrail(), 9, 40)))
	if want := "trail U  … p-5 1.37x ≈ cf p-5 1.38x"; got != want {
		t.Errorf("narrow trail %q, want %q", got, want)
	}
}

// TestHistoryNoiseMarker checks a strategy change whose U is not told
// apart from the result before it is marked ≈ on the chart and in the
// legend, and a change beyond the noise ┴.
func TestHistoryNoiseMarker(t *testing.T) {
	st := DefaultStyles(true)
	var h []fracPoint
	add := func(s string, u, hw float64) {
		h = addUplift(h, s, upliftWithin(u, hw))
	}
	add("baseline", 1.10, 0.01)
	add("baseline", 1.11, 0.01)
	add("prio=-5", 1.40, 0.02) // told apart from 1.11
	add("comm-first prio=-5", 1.41, 0.02)
	_, _, changes := fracWindow(h, 10)
	if len(changes) != 2 || changes[0].noise || !changes[1].noise {
		t.Fatalf("changes %+v: want prio=-5 told apart, comm-first inside the noise", changes)
	}
	block := ansi.Strip(strings.Join(fracChartBlock(st, h, 9, 60), "\n"))
	lines := strings.Split(block, "\n")
	if m := lines[fracChartRows]; strings.Count(m, "┴") != 1 || strings.Count(m, "≈") != 1 || strings.Index(m, "┴") > strings.Index(m, "≈") {
		t.Errorf("markers %q, want ┴ then ≈", m)
	}
	if l := lines[fracChartRows+1]; !strings.Contains(l, "┴ p-5  ≈ cf p-5") {
		t.Errorf("legend %q", l)
	}
}

// TestGridTies checks the sweep heatmap does not rank cells whose U
// intervals overlap: none of them is marked the only best, each reads ≈,
// a line says what ≈ means, and the status names how many are tied. A
// best told apart from every other cell stays the one best, without ≈.
func TestGridTies(t *testing.T) {
	st := DefaultStyles(true)
	g := newGrid(t.Context(), testSuite()[0], h200Caps())
	cell := func(u, hw float64) gridCell {
		return gridCell{done: true, upliftEst: upliftWithin(u, hw)}
	}
	for i := range g.total() {
		g.cells[i/len(g.cols)][i%len(g.cols)] = cell(1.0+0.02*float64(i), 0.005)
	}
	g.cells[0][2], g.cells[0][3] = cell(1.74, 0.02), cell(1.75, 0.02) // tied
	g.cells[1][0] = cell(0.9, 0.01)
	g.next, g.curR, g.curC = g.total(), 1, 1
	if _, _, tied := g.bestCells(); tiedCount(tied) != 2 || !tied[0][2] || !tied[0][3] {
		t.Fatalf("tied %v, want the 1.74x and 1.75x cells", tied)
	}
	lines := gridLines(st, g, 200)
	text := ansi.Strip(strings.Join(lines, "\n"))
	if !strings.Contains(text, "≈1.74x ± 0.02") || !strings.Contains(text, "≈1.75x ± 0.02") || strings.Count(text, "≈1") != 2 {
		t.Errorf("tied cells not marked ≈:\n%s", text)
	}
	if !strings.Contains(text, "≈ best: U not told apart from the best") {
		t.Errorf("no line explains ≈:\n%s", text)
	}
	if strings.Contains(strings.Join(lines, "\n"), st.Good.Render(" 1.30x ± 0.01 ")) {
		t.Error("a cell told apart from the best is marked good")
	}
	if p := g.progress(); !strings.Contains(p, "best U 1.75x") || !strings.Contains(p, "not told apart from 1 more (≈ best)") {
		t.Errorf("progress %q", p)
	}
	golden.RequireEqual(t, []byte(text))

	// At 80 columns the cells drop their ± rather than overflow.
	narrow := gridLines(st, g, 80-8)
	for i, l := range narrow {
		if w := ansi.StringWidth(l); w > 80-8 {
			t.Errorf("line %d is %d cells wide at 80 columns: %q", i, w, ansi.Strip(l))
		}
	}
	if n := ansi.Strip(strings.Join(narrow, "\n")); strings.Contains(n, "±") || !strings.Contains(n, "≈1.75x") {
		t.Errorf("narrow grid:\n%s", n)
	}

	// Told apart: the best alone, no ≈.
	g.cells[0][2] = cell(1.60, 0.02)
	text = ansi.Strip(strings.Join(gridLines(st, g, 200), "\n"))
	if strings.Contains(text, "≈") || strings.Contains(g.progress(), "not told apart") {
		t.Errorf("a best told apart is marked tied:\n%s\n%s", text, g.progress())
	}
}

// TestListNoise checks the scenario list shows ≈100% for a fraction of
// ideal within noise, not the number, and stays within its width.
func TestListNoise(t *testing.T) {
	st := DefaultStyles(true)
	suite := testSuite()
	sums := map[string]summary{suite[0].Name: {class: profiler.Balanced, fraction: 1.03, ok: true, noise: true}}
	for _, w := range []int{30, 46} {
		lines := listLines(st, suite, sums, 0, 0, 0, w, len(suite))
		if got := ansi.Strip(lines[0]); !strings.HasSuffix(got, "≈100%") || strings.Contains(got, "103") {
			t.Errorf("w %d: %q", w, got)
		}
		if got := ansi.StringWidth(lines[0]); got != w {
			t.Errorf("w %d: line is %d cells", w, got)
		}
	}
}

// TestIntervalScreens draws the whole lab on a result with intervals, one
// within noise and a deterministic one, at 80x24, 120x40 and 200x50: every
// line fits, and the status line says the fraction of ideal as the
// panels do.
func TestIntervalScreens(t *testing.T) {
	for _, tc := range []struct {
		name   string
		r      profiler.Result
		status string
	}{
		{"intervals", ciResult(scenarios.Strategy{}), "17.0% ± 1.2 of ideal (1.15x realized"},
		{"noise", noiseResult(), "within noise of ideal (103.1% ± 5.0) (1.92x realized"},
		{"past", pastResult(), "103.1% ± 1.0 of ideal: past it, beyond its interval"},
		{"deterministic", deterministicResult(), "17.0% of ideal (1.15x realized"},
	} {
		for _, size := range [][2]int{{80, 24}, {120, 40}, {200, 50}} {
			t.Run(fmt.Sprintf("%s_%dx%d", tc.name, size[0], size[1]), func(t *testing.T) {
				m := New(Config{Backend: newFake(), Suite: testSuite(), Strategy: tc.r.Strategy})
				m.cancel()
				m.running = false
				m.seq = 7
				nm, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
				nm, _ = nm.Update(resultMsg{seq: 7, result: tc.r})
				m = nm.(Model)
				if !strings.Contains(m.status.text, tc.status) {
					t.Errorf("status %q, want %q in it", m.status.text, tc.status)
				}
				checkScreen(t, m.View().Content, size[0], size[1])
				tp := m.trail[tc.r.Scenario.Name]
				if len(tp) != 1 || tp[0].hasCI != (tc.r.CI != nil) {
					t.Errorf("trail %+v: the interval was not kept", tp)
				}
			})
		}
	}
}

// upliftWithin is an uplift u whose interval is u ± hw.
func upliftWithin(u, hw float64) upliftEst {
	iv := around(u, hw)
	return upliftAt(u, true, &iv)
}

// bimodalResult is ciResult whose T_c3 repetitions fall in two modes.
func bimodalResult() profiler.Result {
	r := ciResult(scenarios.Strategy{})
	r.Bimodal = []profiler.Bimodal{{Time: "T_c3", Modes: [2]profiler.Mode{{Median: 2.10e6, Share: 0.6}, {Median: 2.62e6, Share: 0.4}}, D: 4.1}}
	return r
}

// noCIResult is a measured (not deterministic) result without intervals,
// with the profiler's reason.
func noCIResult() profiler.Result {
	r := fixtureResult(testSuite()[0], scenarios.Strategy{})
	r.CI, r.Deterministic = nil, false
	r.NoCI = "the repetitions' rounds were not recorded, and the modes hold different counts, so the protocol's split cannot be told"
	return r
}

// TestUncertaintyLines checks, at every width, that a bimodal time is
// marked in the metrics panel and given with both modes in the why panel,
// and that a measured result without intervals says why, shortly, while
// a deterministic one says only that it is deterministic.
func TestUncertaintyLines(t *testing.T) {
	st := DefaultStyles(true)
	det := deterministicResult()
	det.NoCI = "the sim backend is deterministic: every run gives the same numbers, so there is no noise to bound"
	for _, tc := range []struct {
		name            string
		r               profiler.Result
		metrics, why    []string
		notMetrics, not []string
	}{
		{"bimodal", bimodalResult(), []string{"2.30 ms ± 7 µs"}, []string{"T_c3 is bimodal: 2.10 ms (60%) and 2.62 ms (40%)"}, nil, []string{"no interval"}},
		{"no interval", noCIResult(), nil, []string{"no interval: the repetitions' rounds were not recorded"}, []string{"2 modes"}, []string{"bimodal", "different counts", noIntervalNote}},
		{"deterministic", det, nil, []string{noIntervalNote}, []string{"2 modes"}, []string{"no interval:", "bimodal"}},
		{"plain", ciResult(scenarios.Strategy{}), nil, nil, []string{"2 modes"}, []string{"no interval", "bimodal"}},
	} {
		for _, w := range []int{58, 78, 118, 198} {
			metrics := ansi.Strip(strings.Join(metricsLines(st, &tc.r, nil, w), "\n"))
			if len(tc.r.Bimodal) > 0 && !strings.Contains(metrics, "2.30 ms ± 7 µs 2 modes") && !strings.Contains(metrics, "2.30 ms ± 7 µs ≋") {
				t.Errorf("%s w %d: T_c3 not marked bimodal:\n%s", tc.name, w, metrics)
			}
			why := ansi.Strip(strings.Join(whyLines(st, &tc.r, w, "fake", h200Caps()), "\n"))
			for _, want := range tc.metrics {
				if !strings.Contains(metrics, want) {
					t.Errorf("%s w %d: metrics lacks %q:\n%s", tc.name, w, want, metrics)
				}
			}
			for _, want := range tc.why {
				if !strings.Contains(why, want) {
					t.Errorf("%s w %d: why lacks %q:\n%s", tc.name, w, want, why)
				}
			}
			for _, bad := range tc.notMetrics {
				if strings.Contains(metrics, bad) {
					t.Errorf("%s w %d: metrics says %q:\n%s", tc.name, w, bad, metrics)
				}
			}
			for _, bad := range tc.not {
				if strings.Contains(why, bad) {
					t.Errorf("%s w %d: why says %q:\n%s", tc.name, w, bad, why)
				}
			}
			for _, l := range strings.Split(metrics+"\n"+why, "\n") {
				if (strings.Contains(l, "modes") || strings.Contains(l, "≋") || strings.Contains(l, "no interval")) && ansiWidth(l) > w {
					t.Errorf("%s w %d: line wider than the panel: %q", tc.name, w, l)
				}
			}
		}
	}
}
