package tui

import (
	"fmt"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/scenarios"
)

// TestGraphGolden renders the panels of a scenario written as streams from
// fixtures (graphScenario, graphResult), not live runs, at 80, 120 and 200
// columns: the instance timeline zoomed out (1x) and in (4x, panned to
// the chunks of the decomposed pair, and 16x), and the why panel.
func TestGraphGolden(t *testing.T) {
	st := DefaultStyles(true)
	r := graphResult()
	end := runEnd(&r)
	tracks := timelineTracks(&r, 3, 0)
	for _, tc := range []struct {
		name  string
		title string
		lines func(w int) []string
	}{
		{"timeline_1x", timelineTitle(&r, 0, 2, tlZoom{}), func(w int) []string { return timelineLines(st, &r, tracks, w, 0, tlZoom{}) }},
		{"timeline_4x", timelineTitle(&r, 0, 2, tlZoom{}.zoomBy(2, end).panBy(-4, end)), func(w int) []string {
			return timelineLines(st, &r, tracks, w, 0, tlZoom{}.zoomBy(2, end).panBy(-4, end))
		}},
		{"timeline_16x", timelineTitle(&r, 0, 2, tlZoom{}.zoomBy(4, end)), func(w int) []string {
			return timelineLines(st, &r, tracks, w, 0, tlZoom{}.zoomBy(4, end))
		}},
		{"why", whyTitle(), func(w int) []string { return whyLines(st, &r, w, "fake", graphCaps()) }},
	} {
		for _, w := range []int{80, 120, 200} {
			t.Run(fmt.Sprintf("%s_%d", tc.name, w), func(t *testing.T) {
				lines := tc.lines(w - 2)
				golden.RequireEqual(t, plain(t, box(st, tc.title, lines, w, len(lines)+2), w))
			})
		}
	}
}

// TestGraphScreenGolden renders the whole lab on the synthetic graph
// result at 80x24 (the timeline tab), 120x40 and 200x50: a track per
// stream, the why panel per graph op.
func TestGraphScreenGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
		prep func(Model) Model
	}{
		{"80x24_tab_timeline", 80, 24, func(m Model) Model { return press(m, "tab") }},
		{"80x24_tab_why", 80, 24, func(m Model) Model { return press(press(m, "tab"), "tab") }},
		{"120x40", 120, 40, nil},
		{"200x50", 200, 50, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.caps = graphCaps()
			m := New(Config{Backend: fake, Suite: []scenarios.Scenario{graphScenario(8192)}, Strategy: scenarios.Strategy{Decompose: 4}})
			m.cancel()
			m.running = false
			m.setResult(graphResult())
			m.took = 812 * time.Millisecond
			m.status = status{statusInfo, "tp-ag-gemm-streams · decompose=4: U 1.29x"}
			nm, _ := m.Update(tea.WindowSizeMsg{Width: tc.w, Height: tc.h})
			m = nm.(Model)
			if tc.prep != nil {
				m = tc.prep(m)
			}
			out := m.View().Content
			checkScreen(t, out, tc.w, tc.h)
			golden.RequireEqual(t, ansi.Strip(out))
		})
	}
}
