package tui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// dmaStrategy is the ConCCL strategy used by the DMA fixtures.
func dmaStrategy() scenarios.Strategy {
	return scenarios.Strategy{Launch: scenarios.CommFirst, CommEngine: scenarios.EngineDMA}
}

// fixedModel is a lab showing a fixed result at w x h, with no measurement
// in flight, so its screen is deterministic.
func fixedModel(tb testing.TB, w, h int, st scenarios.Strategy) Model {
	tb.Helper()
	suite := testSuite()
	m := New(Config{Backend: newFake(), Suite: suite, Strategy: st})
	m.cancel()
	m.running = false
	r := fixtureResult(suite[0], st)
	m.setResult(r)
	m.sums["rs-gemm-long"] = summary{class: profiler.GEMMLong, fraction: 0.121, ok: true}
	m.took = 812 * time.Millisecond
	m.status = status{statusInfo, fmt.Sprintf("%s · %s: %s of ideal", r.Scenario.Name, r.Strategy.String(), fracText(r))}
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return nm.(Model)
}

// plain strips styling and checks every line is exactly w cells wide.
func plain(tb testing.TB, lines []string, w int) string {
	tb.Helper()
	for i, l := range lines {
		if got := ansi.StringWidth(l); got != w {
			tb.Errorf("line %d is %d cells wide, want %d: %q", i, got, w, ansi.Strip(l))
		}
	}
	return ansi.Strip(strings.Join(lines, "\n"))
}

// goldenPanel is one panel of the golden tests: its title and its body at
// an inner width.
type goldenPanel struct {
	name  string
	title string
	lines func(w int) []string
}

// goldenPanels are the panels the golden tests render, from fixed fixtures,
// drawn with st.
func goldenPanels(st Styles) []goldenPanel {
	suite := testSuite()
	base := fixtureResult(suite[0], scenarios.Strategy{})
	dma := fixtureResult(suite[0], dmaStrategy())
	simulated := withModelError(base)
	tracks := timelineTracks(&base, 3, 0)
	caps := h200Caps()
	sums := map[string]summary{
		"ag-gemm-balanced": {class: profiler.Balanced, fraction: 0.402, ok: true},
		"rs-gemm-long":     {class: profiler.GEMMLong, fraction: 0.121, ok: true},
	}
	return []goldenPanel{
		{"metrics", metricsTitle(&base), func(w int) []string { return metricsLines(st, &base, testTrail(), w) }},
		{"metrics_dma", metricsTitle(&dma), func(w int) []string { return metricsLines(st, &dma, nil, w) }},
		{"metrics_empty", metricsTitle(nil), func(w int) []string { return metricsLines(st, nil, nil, w) }},
		{"metrics_sim", metricsTitle(&simulated), func(w int) []string { return metricsLines(st, &simulated, nil, w) }},
		{"util", utilTitle(&base, newTelemetry(&base, 0), 0, 2), func(w int) []string { return utilLinesFor(st, &base, newTelemetry(&base, 0), w, 1) }},
		{"util_dma", utilTitle(&dma, newTelemetry(&dma, 0), 0, 2), func(w int) []string { return utilLinesFor(st, &dma, newTelemetry(&dma, 0), w, 1) }},
		{"timeline", timelineTitle(&base, 0, 2, tlZoom{}), func(w int) []string { return timelineLines(st, &base, tracks, w, 0, tlZoom{}) }},
		{"timeline_dma", timelineTitle(&dma, 0, 2, tlZoom{}), func(w int) []string { return timelineLines(st, &dma, tracks, w, 0, tlZoom{}) }},
		{"why", whyTitle(), func(w int) []string { return whyLines(st, &base, w, "fake", h200Caps()) }},
		{"why_dma", whyTitle(), func(w int) []string { return whyLines(st, &dma, w, "fake", h200Caps()) }},
		{"why_sim", whyTitle(), func(w int) []string { return whyLines(st, &simulated, w, "sim", h200Caps()) }},
		{"list", listTitle(2, len(suite), ""), func(w int) []string { return listLines(st, suite, sums, 2, 0, 0, w, len(suite)) }},
		{"help_overlay", "Help", func(w int) []string {
			return helpOverlayLines(st, helpGroups(DefaultKeyMap(), dmaStrategy(), caps, "fake", helpView{gpu: 1, n: 2, zoom: tlZoom{level: 2}}), w, 40)
		}},
		{"help_overlay_no_knobs", "Help", func(w int) []string {
			bare := backends0Caps()
			return helpOverlayLines(st, helpGroups(DefaultKeyMap().withCapabilities(bare), scenarios.Strategy{}, bare, "replay", helpView{n: 1}), w, 40)
		}},
	}
}

// goldenBars are the one-line bars (header, status, help line) the golden
// tests render at width w, drawn with st, by name.
func goldenBars(st Styles, w int) map[string]string {
	suite := testSuite()
	hs := headerState{backend: "fake", devices: deviceSummary(newFake().Devices(), 2), short: deviceShort(newFake().Devices(), 2), scenario: suite[0].Name, strategy: dmaStrategy()}
	return map[string]string{
		"header_idle":              headerLine(st, withTook(hs, 812*time.Millisecond), w),
		"header_running":           headerLine(st, running(hs), w),
		"header_failed":            headerLine(st, failed(hs), w),
		"header_recording":         headerLine(st, recordingTo(withTook(hs, 812*time.Millisecond), st), w),
		"header_recording_running": headerLine(st, recordingTo(running(hs), st), w),
		"header_ranks":             headerLine(st, withRanks(recordingTo(withTook(hs, 812*time.Millisecond), st)), w),
		"status_info":              statusLine(st, status{statusInfo, "comm engine: dma (copy engines, no SMs) · measuring…"}, w, "?"),
		"status_warn":              statusLine(st, status{statusWarn, "p: the replay backend cannot set stream priorities"}, w, "?"),
		"status_error":             statusLine(st, status{statusError, "concurrent run of ag-gemm-balanced on fake: device lost\nsecond line"}, w, "?"),
		"help_line":                shortHelp(DefaultKeyMap().withCapabilities(backends0Caps()), w),
	}
}

// TestPanelGolden renders every panel from fixed fixtures at 80 and 160
// columns; `go test ./tui -update` regenerates the golden files.
func TestPanelGolden(t *testing.T) {
	st := DefaultStyles(true)
	panels := goldenPanels(st)
	for _, w := range []int{80, 120, 160, 200} {
		for _, p := range panels {
			t.Run(fmt.Sprintf("%s_%d", p.name, w), func(t *testing.T) {
				lines := p.lines(w - 2)
				golden.RequireEqual(t, plain(t, box(st, p.title, lines, w, len(lines)+2), w))
			})
		}
		for name, line := range goldenBars(st, w) {
			t.Run(fmt.Sprintf("%s_%d", name, w), func(t *testing.T) {
				golden.RequireEqual(t, plain(t, []string{line}, w))
			})
		}
	}
}

// TestTimelineZoomGolden renders the timeline panel zoomed in at 2x (the
// window centred, as the zoom key leaves it) and at 8x (panned to the
// repetition's end, where the compute span and the copies end inside the
// window and start before it), on GPU 1 of the DMA fixture, at 80, 120 and
// 200 columns.
func TestTimelineZoomGolden(t *testing.T) {
	st := DefaultStyles(true)
	r := fixtureResult(testSuite()[0], dmaStrategy())
	end := runEnd(&r)
	tracks := timelineTracks(&r, 3, 1)
	for _, tc := range []struct {
		name string
		z    tlZoom
	}{
		{"zoom2x", tlZoom{}.zoomBy(1, end)},
		{"zoom8x", tlZoom{}.zoomBy(3, end).panBy(8, end)},
	} {
		for _, w := range []int{80, 120, 200} {
			t.Run(fmt.Sprintf("%s_%d", tc.name, w), func(t *testing.T) {
				lines := timelineLines(st, &r, tracks, w-2, 1, tc.z)
				golden.RequireEqual(t, plain(t, box(st, timelineTitle(&r, 1, 2, tc.z), lines, w, len(lines)+2), w))
			})
		}
	}
}

func withTook(h headerState, d time.Duration) headerState { h.took = d; return h }

func failed(h headerState) headerState { h.took, h.failed = time.Second, true; return h }

func running(h headerState) headerState { h.running, h.spinner = true, "⠋"; return h }

func recordingTo(h headerState, st Styles) headerState {
	h.rec = recForms(st, "c3lab-20250102-030405.c3rec", 1_234_567)
	return h
}

// shortHelp renders the help line as the footer does.
func shortHelp(k KeyMap, w int) string {
	h := help.New()
	h.SetWidth(w)
	return fit(h.ShortHelpView(k.ShortHelp()), w)
}

// goldenScreen is one whole screen of the golden tests: the lab at w x h
// under strategy st, after prep (keys, say).
type goldenScreen struct {
	name string
	w, h int
	st   scenarios.Strategy
	prep func(Model) Model
}

// goldenScreens are the screens TestScreenGolden renders: the two reference
// sizes and a few others (tabbed detail, help overlay).
func goldenScreens() []goldenScreen {
	return []goldenScreen{
		{"80x24", 80, 24, scenarios.Strategy{}, nil},
		{"160x50", 160, 50, scenarios.Strategy{}, nil},
		{"120x40_dma", 120, 40, dmaStrategy(), nil},
		{"100x40_stacked", 100, 40, scenarios.Strategy{}, nil},
		{"80x24_tab_timeline", 80, 24, dmaStrategy(), func(m Model) Model { return press(m, "tab") }},
		{"80x24_tab_why", 80, 24, scenarios.Strategy{}, func(m Model) Model { return press(press(m, "tab"), "tab") }},
		{"80x24_help", 80, 24, scenarios.Strategy{}, func(m Model) Model { return press(m, "?") }},
		{"80x24_help_scrolled", 80, 24, scenarios.Strategy{}, func(m Model) Model {
			m = press(m, "?")
			for range 40 {
				m = press(m, "down")
			}
			return m
		}},
		{"80x24_zoomed_gpu1", 80, 24, dmaStrategy(), func(m Model) Model {
			return press(press(press(press(m, "tab"), "g"), "+"), "+")
		}},
		{"160x50_help", 160, 50, dmaStrategy(), func(m Model) Model { return press(m, "?") }},
		{"120x40_help", 120, 40, dmaStrategy(), func(m Model) Model { return press(m, "?") }},
		{"200x50_help", 200, 50, dmaStrategy(), func(m Model) Model { return press(m, "?") }},
		{"50x12_too_small", 50, 12, scenarios.Strategy{}, nil},
		{"160x50_history", 160, 50, dmaStrategy(), withHistory},
		{"200x50_history", 200, 50, dmaStrategy(), withHistory},
		{"120x36_history", 120, 36, dmaStrategy(), withHistory},
		{"80x30_history", 80, 30, dmaStrategy(), withHistory},
	}
}

// screen renders a golden screen's view.
func (tc goldenScreen) screen(tb testing.TB) string {
	tb.Helper()
	m := fixedModel(tb, tc.w, tc.h, tc.st)
	if tc.prep != nil {
		m = tc.prep(m)
	}
	return m.View().Content
}

// TestScreenGolden renders the whole lab at the two reference sizes and a
// few others (tabbed detail, help overlay).
func TestScreenGolden(t *testing.T) {
	for _, tc := range goldenScreens() {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.screen(t)
			checkScreen(t, out, tc.w, tc.h)
			golden.RequireEqual(t, ansi.Strip(out))
		})
	}
}

// checkScreen asserts a screen fits w x h exactly (the too-small message
// is one line).
func checkScreen(tb testing.TB, out string, w, h int) {
	tb.Helper()
	lines := strings.Split(out, "\n")
	if w >= minWidth && h >= minHeight && len(lines) != h {
		tb.Errorf("%dx%d: screen has %d lines", w, h, len(lines))
	}
	if len(lines) > h {
		tb.Errorf("%dx%d: screen has %d lines, more than the terminal", w, h, len(lines))
	}
	for i, l := range lines {
		if got := ansi.StringWidth(l); got > w {
			tb.Errorf("%dx%d: line %d is %d cells wide: %q", w, h, i, got, ansi.Strip(l))
		}
	}
}

// press sends one key to the model.
func press(m Model, k string) Model {
	var msg tea.KeyPressMsg
	switch k {
	case "tab":
		msg = tea.KeyPressMsg{Code: tea.KeyTab}
	case "enter":
		msg = tea.KeyPressMsg{Code: tea.KeyEnter}
	case "esc":
		msg = tea.KeyPressMsg{Code: tea.KeyEscape}
	case "up":
		msg = tea.KeyPressMsg{Code: tea.KeyUp}
	case "down":
		msg = tea.KeyPressMsg{Code: tea.KeyDown}
	case "ctrl+c":
		msg = tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl}
	default:
		r := []rune(k)[0]
		msg = tea.KeyPressMsg{Code: r, Text: k}
	}
	nm, _ := m.Update(msg)
	return nm.(Model)
}

// TestScreenFitsEverySize checks that no size makes a line overflow.
func TestScreenFitsEverySize(t *testing.T) {
	for _, st := range []scenarios.Strategy{{}, dmaStrategy()} {
		m := fixedModel(t, 80, 24, st)
		for w := 40; w <= 220; w += 7 {
			for h := 10; h <= 70; h += 5 {
				nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
				m = nm.(Model)
				checkScreen(t, m.View().Content, w, h)
				checkScreen(t, press(m, "?").View().Content, w, h)
			}
		}
	}
}

// testTrail is a scenario's history of three strategies.
func testTrail() []trailPoint {
	return []trailPoint{{"baseline", upliftAt(1.08, true, nil)}, {"prio=-5", upliftAt(1.37, true, nil)}, {"comm-first prio=-5 dma", upliftAt(1.74, true, nil)}}
}

// withModelError is r as the calibrated simulator gives it: deterministic,
// with its error on held-out H200 runs beside its figures.
func withModelError(r profiler.Result) profiler.Result {
	r.Backend, r.Deterministic, r.CI = "sim", true, nil
	r.ModelError = &backends.ModelError{Profile: "h200-fit", Device: "NVIDIA H200", Scope: "all-gather", Runs: 52,
		TC3Median: 0.0197, TC3P90: 0.0657, FScope: "S_ideal 1.2 to 1.5", FRuns: 44, FMedian: 3.97, FP90: 20.49}
	return r
}
