package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// BenchmarkView160x50 measures View on a full 160x50 screen: stitching the
// cached panels, which is all View does.
func BenchmarkView160x50(b *testing.B) {
	m := fixedModel(b, 160, 50, scenarios.Strategy{})
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkViewHelp160x50 is View with the help overlay composited on top.
func BenchmarkViewHelp160x50(b *testing.B) {
	m := press(fixedModel(b, 160, 50, dmaStrategy()), "?")
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkRender160x50 measures a full re-render (what a resize or a new
// result costs in Update), for comparison with View.
func BenchmarkRender160x50(b *testing.B) {
	m := fixedModel(b, 160, 50, scenarios.Strategy{})
	b.ReportAllocs()
	for b.Loop() {
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		_ = nm.(Model).View()
	}
}

// BenchmarkView200x60 is View at the size issue 7 names (under 5 ms).
func BenchmarkView200x60(b *testing.B) {
	m := fixedModel(b, 200, 60, scenarios.Strategy{})
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkViewSweep200x60 is View with the sweep heatmap open.
func BenchmarkViewSweep200x60(b *testing.B) {
	m := press(fixedModel(b, 200, 60, scenarios.Strategy{}), "s")
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkZoomKey200x60 is what a zoom key costs in Update (the timeline
// re-rendered) plus View, zooming in and back out at 200x60.
func BenchmarkZoomKey200x60(b *testing.B) {
	m := fixedModel(b, 200, 60, dmaStrategy())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := "+"
		if i%2 == 1 {
			k = "-"
		}
		m = press(m, k)
		_ = m.View()
	}
}
