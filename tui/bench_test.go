package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// BenchmarkView160x50 measures View on a full 160x50 screen: every panel
// drawn from the state.
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

// BenchmarkRender160x50 measures a resize through Update (the layout and
// every component's size) and then View.
func BenchmarkRender160x50(b *testing.B) {
	m := fixedModel(b, 160, 50, scenarios.Strategy{})
	b.ReportAllocs()
	for b.Loop() {
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
		_ = nm.(Model).View()
	}
}

// BenchmarkView200x60 is View at the size issues 7 and 14 name (under
// 5 ms).
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

// BenchmarkZoomKey200x60 is what a zoom key costs in Update plus View,
// zooming in and back out at 200x60.
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

// BenchmarkFrame200x60 is one frame as a user sees it at 200x60: a key
// through Update (the list cursor down, then up) and then View, so it
// counts whatever rendering a key causes, wherever it happens.
func BenchmarkFrame200x60(b *testing.B) {
	m := fixedModel(b, 200, 60, dmaStrategy())
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := "j"
		if i%2 == 1 {
			k = "k"
		}
		m = press(m, k)
		_ = m.View()
	}
}

// BenchmarkResize200x60 is a resize to 200x60 through Update, then View:
// every panel drawn anew.
func BenchmarkResize200x60(b *testing.B) {
	m := fixedModel(b, 200, 60, dmaStrategy())
	b.ReportAllocs()
	for b.Loop() {
		nm, _ := m.Update(tea.WindowSizeMsg{Width: 200, Height: 60})
		_ = nm.(Model).View()
	}
}

// BenchmarkViewHelp200x60 is View with the help overlay open at 200x60.
func BenchmarkViewHelp200x60(b *testing.B) {
	m := press(fixedModel(b, 200, 60, dmaStrategy()), "?")
	b.ReportAllocs()
	for b.Loop() {
		_ = m.View()
	}
}

// BenchmarkLiveBatch200x60 is a batch of live NVML telemetry (2 GPUs, a
// full history behind it) through Update, then View, at 200x60: what the
// lab does ten times a second on a GPU node.
func BenchmarkLiveBatch200x60(b *testing.B) {
	m := fixedModel(b, 200, 60, dmaStrategy())
	r := *m.result
	r.Samples = nil // a GPU run's result: the panel shows live NVML
	m.setResult(r)
	batch := func(i int) liveMsg {
		var s []backends.Sample
		for dev := range 2 {
			for j, metric := range utilMetrics() {
				s = append(s, backends.Sample{Device: dev, Metric: metric, Time: int64(i) * 100_000_000, Value: float64((i+j)%10) / 10})
			}
		}
		return liveMsg{nvtel.Batch{Samples: s}}
	}
	for i := range liveHistory {
		nm, _ := m.Update(batch(i))
		m = nm.(Model)
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		nm, _ := m.Update(batch(liveHistory + i))
		m = nm.(Model)
		_ = m.View()
	}
}
