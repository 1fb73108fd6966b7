package tui

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/scenarios"
)

// testHistory is a scenario's history of uplift U over four strategy
// changes, with a result that has no U (a gap) and one strategy slower
// than serial (below 1.00x).
func testHistory() []fracPoint {
	var h []fracPoint
	add := func(st string, n int, base, step float64) {
		for i := range n {
			h = addFrac(h, st, base+step*float64(i%3), true)
		}
	}
	add("baseline", 8, 1.15, 0.02)
	add("prio=-5", 10, 1.70, 0.03)
	h = addFrac(h, "prio=-5", 0, false)
	add("comm-first prio=-5 dma", 12, 1.95, 0.02)
	add("comm_sms=8", 6, 0.75, 0.05)
	add("comm-first prio=-5 dma", 6, 1.97, 0.01)
	return h
}

// TestAddFracBounded checks the history keeps the newest maxFracHistory
// results and turns a missing fraction into a gap.
func TestAddFracBounded(t *testing.T) {
	var h []fracPoint
	for i := range maxFracHistory + 10 {
		h = addFrac(h, "baseline", float64(i), true)
	}
	if len(h) != maxFracHistory || h[0].u != 10 || h[len(h)-1].u != maxFracHistory+9 {
		t.Errorf("len %d, first %v, last %v", len(h), h[0].u, h[len(h)-1].u)
	}
	h = addFrac(h, "baseline", 0.5, false)
	if !math.IsNaN(h[len(h)-1].u) {
		t.Errorf("a result without U is %v, want NaN", h[len(h)-1].u)
	}
}

// TestFracWindow checks where the markers of strategy changes fall: one
// result per cell, the newest at the right edge, changes scrolled off the
// left not counted.
func TestFracWindow(t *testing.T) {
	h := []fracPoint{{strategy: "a"}, {strategy: "a"}, {strategy: "b"}, {strategy: "c"}}
	vis, pad, changes := fracWindow(h, 6) // 2 blank cells, then a a b c
	if len(vis) != 4 || pad != 2 {
		t.Fatalf("vis %d, pad %d", len(vis), pad)
	}
	want := []fracChange{{cell: 4, strategy: "b"}, {cell: 5, strategy: "c"}}
	if fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Errorf("changes %v, want %v", changes, want)
	}
	// 2 cells: b c; the change to b is the first visible point.
	_, pad, changes = fracWindow(h, 2)
	want = []fracChange{{cell: 0, strategy: "b"}, {cell: 1, strategy: "c"}}
	if pad != 0 || fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Errorf("pad %d, changes %v, want %v", pad, changes, want)
	}
	// 1 cell: c; only the change to c is on the chart.
	_, _, changes = fracWindow(h, 1)
	if want := []fracChange{{cell: 0, strategy: "c"}}; fmt.Sprint(changes) != fmt.Sprint(want) {
		t.Errorf("changes %v, want %v", changes, want)
	}
}

// TestFracChartBlock checks the block's shape: its size, the range of U
// on the axis (down to a strategy slower than serial), a marker per change and the
// legend; and no chart when the width leaves no room.
func TestFracChartBlock(t *testing.T) {
	st := DefaultStyles(true)
	lines := fracChartBlock(st, testHistory(), 9, 70)
	if len(lines) != fracChartLines {
		t.Fatalf("%d lines, want %d", len(lines), fracChartLines)
	}
	text := strings.Split(plain(t, lines, 70), "\n")
	if !strings.Contains(text[0], "uplift U 1.99x┤") || !strings.Contains(text[1], "43 runs") || !strings.Contains(text[2], "0.75x┤") {
		t.Errorf("axis labels:\n%s", strings.Join(text, "\n"))
	}
	if n := strings.Count(text[fracChartRows], "┴"); n != 4 {
		t.Errorf("%d markers, want 4: %q", n, text[fracChartRows])
	}
	if want := "┴ p-5  ┴ cf p-5 dma  ┴ sms=8  ┴ cf p-5 dma"; !strings.Contains(text[fracChartRows+1], want) {
		t.Errorf("legend %q, want %q", text[fracChartRows+1], want)
	}
	// A narrow legend keeps the newest changes.
	narrow := ansi.Strip(fracChartBlock(st, testHistory(), 9, 40)[fracChartRows+1])
	if !strings.HasSuffix(strings.TrimRight(narrow, " "), "┴ sms=8  ┴ cf p-5 dma") || strings.Contains(narrow, "┴ p-5") {
		t.Errorf("narrow legend %q", narrow)
	}
	if got := fracChartBlock(st, testHistory(), 9, 18); got != nil {
		t.Errorf("no room, got %q", got)
	}
	empty := ansi.Strip(strings.Join(fracChartBlock(st, nil, 9, 40), "\n"))
	if !strings.Contains(empty, "0 runs") || !strings.Contains(empty, "┴ marks a strategy change") || strings.Contains(empty, "─┴") {
		t.Errorf("empty history:\n%s", empty)
	}
}

// TestAbbrevStrategy checks the legend's short names.
func TestAbbrevStrategy(t *testing.T) {
	for in, want := range map[string]string{
		"baseline":                          "baseline",
		"comm-first prio=-5 dma":            "cf p-5 dma",
		"comm_sms=8 compute_sms=120 ctas=8": "sms=8 csms=120 cta=8",
		"gemm_sm_target=96 dma chunk=4MiB":  "tgt=96 dma ch=4MiB",
	} {
		if got := abbrevStrategy(in); got != want {
			t.Errorf("abbrevStrategy(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestHistoryLayout checks the history chart shows only where it costs no
// panel: hidden at 80x24 and in the stacked 100x40, shown on wide screens
// and where the lower panels are tabbed anyway but still fit.
func TestHistoryLayout(t *testing.T) {
	for _, tc := range []struct {
		w, h         int
		history, tab bool
	}{
		{80, 24, false, true},
		{100, 40, false, false},
		{80, 30, true, true},
		{110, 30, false, false},
		{120, 36, true, false},
		{160, 50, true, false},
		{200, 60, true, false},
	} {
		l := computeLayout(tc.w, tc.h, 5)
		if l.history != tc.history || l.tabbed != tc.tab {
			t.Errorf("%dx%d: history %v tabbed %v, want %v %v", tc.w, tc.h, l.history, l.tabbed, tc.history, tc.tab)
		}
		if tc.history && l.metrics.H != metricsHeight(l.metrics.W)+fracChartLines {
			t.Errorf("%dx%d: metrics panel %d rows, want %d", tc.w, tc.h, l.metrics.H, metricsHeight(l.metrics.W)+fracChartLines)
		}
	}
}

// TestFracChartGolden renders the metrics panel with its history chart at
// 80, 120 and 200 columns.
func TestFracChartGolden(t *testing.T) {
	st := DefaultStyles(true)
	base := fixtureResult(testSuite()[0], scenarios.Strategy{})
	for _, w := range []int{80, 120, 200} {
		t.Run(fmt.Sprintf("metrics_history_%d", w), func(t *testing.T) {
			h := metricsHeight(w) + fracChartLines
			lines := metricsPanelLines(st, &base, testTrail(), testHistory(), w-2, h-2, true)
			golden.RequireEqual(t, plain(t, box(st, metricsTitle(&base), lines, w, h), w))
		})
	}
}

// withHistory gives the lab on screen a history of four strategies, three
// results each, the last one the strategy it shows.
func withHistory(m Model) Model {
	sc := m.suite[0]
	for _, st := range []scenarios.Strategy{{}, {Launch: scenarios.CommFirst}, {Launch: scenarios.CommFirst, CommPriority: -5}, m.strategy} {
		for range 3 {
			m.setResult(fixtureResult(sc, st))
		}
	}
	return m
}
