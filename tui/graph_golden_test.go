package tui

import (
	"fmt"
	"testing"

	"github.com/charmbracelet/x/exp/golden"
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
