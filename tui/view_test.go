package tui

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// The zoom window for each level and pan, clamped at 0 and at the run's
// end.
func TestZoomWindow(t *testing.T) {
	const end = 1600
	for _, tc := range []struct {
		name string
		z    tlZoom
		a, b int64
	}{
		{"1x", tlZoom{}, 0, 1600},
		{"1x ignores start", tlZoom{start: 500}, 0, 1600},
		{"2x from 0", tlZoom{level: 1}, 0, 800},
		{"4x from 0", tlZoom{level: 2}, 0, 400},
		{"8x from 0", tlZoom{level: 3}, 0, 200},
		{"16x from 0", tlZoom{level: 4}, 0, 100},
		{"16x mid", tlZoom{level: 4, start: 700}, 700, 800},
		{"clamped at 0", tlZoom{level: 2, start: -300}, 0, 400},
		{"clamped at the end", tlZoom{level: 2, start: 1500}, 1200, 1600},
		{"level above 16x is 16x", tlZoom{level: 9}, 0, 100},
		{"zoom in keeps the centre", tlZoom{}.zoomBy(1, end), 400, 1200},
		{"zoom in twice", tlZoom{}.zoomBy(1, end).zoomBy(1, end), 600, 1000},
		{"zoom in at 16x stays", tlZoom{level: 4, start: 700}.zoomBy(1, end), 700, 800},
		{"zoom out keeps the centre", tlZoom{level: 2, start: 600}.zoomBy(-1, end), 400, 1200},
		{"zoom out near the end clamps", tlZoom{level: 2, start: 1200}.zoomBy(-1, end), 800, 1600},
		{"zoom out to 1x", tlZoom{level: 1, start: 800}.zoomBy(-1, end), 0, 1600},
		{"pan right half a window", tlZoom{level: 2, start: 400}.panBy(1, end), 600, 1000},
		{"pan left half a window", tlZoom{level: 2, start: 400}.panBy(-1, end), 200, 600},
		{"pan left stops at 0", tlZoom{level: 2, start: 100}.panBy(-1, end), 0, 400},
		{"pan right stops at the end", tlZoom{level: 2, start: 1100}.panBy(1, end), 1200, 1600},
		{"pan far right", tlZoom{level: 4}.panBy(100, end), 1500, 1600},
		{"pan at 1x does nothing", tlZoom{}.panBy(1, end), 0, 1600},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := tc.z.window(end)
			if a != tc.a || b != tc.b {
				t.Errorf("window [%d, %d), want [%d, %d)", a, b, tc.a, tc.b)
			}
		})
	}
	// An odd length rounds up, so the windows still cover the run.
	if a, b := (tlZoom{level: 4, start: 1 << 40}).window(1001); a != 938 || b != 1001 {
		t.Errorf("16x of 1001 ns at the end: [%d, %d)", a, b)
	}
	if a, b := (tlZoom{level: 3}).window(0); a != 0 || b != 1 {
		t.Errorf("empty run: [%d, %d)", a, b)
	}
}

// The zoomed axis labels the window's edges and its ticks in one unit, with
// the decimals the step needs.
func TestWindowAxis(t *testing.T) {
	for _, tc := range []struct {
		a, b int64
		w    int
		want []string
	}{
		{0, 100_000, 61, []string{"0 µs", "20 µs", "100 µs"}},
		{1_000_000, 1_025_000, 61, []string{"1000 µs", "1005 µs", "1025 µs"}},
		{1_000, 3_000, 61, []string{"1.0 µs", "1.5 µs", "3.0 µs"}},
		{200, 450, 61, []string{"200 ns", "250 ns", "450 ns"}},
		{40_000_000, 45_000_000, 61, []string{"40 ms", "41 ms", "45 ms"}},
	} {
		axis, labels := windowAxis(tc.a, tc.b, tc.w)
		if n := len([]rune(axis)); n != tc.w || len([]rune(labels)) != tc.w {
			t.Errorf("[%d, %d): axis %d and labels %d cells, want %d", tc.a, tc.b, n, len([]rune(labels)), tc.w)
		}
		if !strings.Contains(axis, "┬") {
			t.Errorf("[%d, %d): no tick on %q", tc.a, tc.b, axis)
		}
		for _, l := range tc.want {
			if !strings.Contains(labels, l) {
				t.Errorf("[%d, %d): labels %q lack %q", tc.a, tc.b, labels, l)
			}
		}
		if !strings.HasPrefix(labels, tc.want[0]) || !strings.HasSuffix(labels, tc.want[len(tc.want)-1]) {
			t.Errorf("[%d, %d): labels %q do not start at %q and end at %q", tc.a, tc.b, labels, tc.want[0], tc.want[len(tc.want)-1])
		}
	}
}

// Spans cut at the window's edges are drawn in part; the busy column keeps
// the track's total.
func TestTimelineZoomCutsSpans(t *testing.T) {
	r := profiler.Result{Timeline: []backends.Span{
		{Device: 0, Track: "compute", Op: backends.OpCompute, Start: 0, End: 1000},
		{Device: 0, Track: "comm", Op: backends.OpComm, Start: 600, End: 800},
		{Device: 1, Track: "comm", Op: backends.OpComm, Start: 0, End: 100},
	}}
	st := DefaultStyles(true)
	w := tlLabelW + tlBusyW + 40
	lines := timelineLines(st, &r, []string{"compute", "comm"}, w, 0, tlZoom{level: 1, start: 500})
	comp, comm := ansi.Strip(lines[0]), ansi.Strip(lines[1])
	if got := strings.Count(comp, "█"); got != 40 {
		t.Errorf("compute covers [500, 1000) of the window, drew %d of 40 cells: %q", got, comp)
	}
	if got := strings.Count(comm, "▓"); got != 16 || !strings.HasPrefix(comm[tlLabelW:], strings.Repeat(" ", 8)) {
		t.Errorf("comm [600, 800) in [500, 1000) is cells 8..24, got %d cells: %q", got, comm)
	}
	if !strings.HasSuffix(comp, "1.00 µs") || !strings.HasSuffix(comm, "200 ns") {
		t.Errorf("busy column is not the track total: %q, %q", comp, comm)
	}
	if !strings.Contains(ansi.Strip(lines[len(lines)-1]), "time 2x") {
		t.Errorf("axis does not say the zoom: %q", ansi.Strip(lines[len(lines)-1]))
	}
	if got := resultDevices(&r, []int{3, 1}); !slices.Equal(got, []int{0, 1, 3}) {
		t.Errorf("devices %v", got)
	}
}

// The GPU key cycles the devices of the result; the zoom keys move the
// window; a new scenario resets the zoom.
func TestGPUAndZoomKeys(t *testing.T) {
	m := fixedModel(t, 160, 50, dmaStrategy())
	if !slices.Equal(m.gpus(), []int{0, 1}) || m.gpu != 0 {
		t.Fatalf("devices %v, showing %d", m.gpus(), m.gpu)
	}
	m = press(m, "g")
	screen := ansi.Strip(m.View().Content)
	if m.gpu != 1 || !strings.Contains(screen, "Timeline · GPU 1 of 2") || !strings.Contains(screen, "Utilization · GPU 1 of 2") {
		t.Errorf("after g: GPU %d, screen:\n%s", m.gpu, screen)
	}
	if m = press(m, "g"); m.gpu != 0 {
		t.Errorf("g again shows GPU %d, want 0", m.gpu)
	}
	for _, k := range []string{"+", "="} {
		m = press(m, k)
	}
	if m.timeline.zoom.level != 2 || !strings.Contains(ansi.Strip(m.View().Content), "zoom 4x") {
		t.Errorf("+ and = zoom to level %d, status %q", m.timeline.zoom.level, m.status.text)
	}
	for range 5 {
		m = press(m, "+")
	}
	if m.timeline.zoom.level != zoomLevels-1 || !strings.Contains(m.status.text, "16x is the closest zoom") {
		t.Errorf("zoom level %d, status %q", m.timeline.zoom.level, m.status.text)
	}
	m = press(m, "-")
	if m.timeline.zoom.level != zoomLevels-2 {
		t.Errorf("- leaves level %d", m.timeline.zoom.level)
	}
	for range 40 {
		m = press(m, "<")
	}
	if a, _ := m.timeline.zoom.window(runEnd(m.result)); a != 0 || !strings.Contains(m.status.text, "start") {
		t.Errorf("panning left ends at %d, status %q", a, m.status.text)
	}
	m = press(m, ">")
	if a, _ := m.timeline.zoom.window(runEnd(m.result)); a == 0 {
		t.Errorf("> did not pan")
	}
	m = press(m, "0")
	if m.timeline.zoom != (tlZoom{}) || strings.Contains(ansi.Strip(m.View().Content), "· zoom ") {
		t.Errorf("0 leaves zoom %+v", m.timeline.zoom)
	}
	m = press(m, ">")
	if !strings.Contains(m.status.text, "not zoomed") {
		t.Errorf("> at 1x says %q", m.status.text)
	}

	m = press(m, "+")
	m.setResult(fixtureResult(m.suite[0], scenarios.Strategy{}))
	if m.timeline.zoom.level != 1 {
		t.Errorf("a new result of the same scenario reset the zoom")
	}
	m.setResult(fixtureResult(m.suite[1], scenarios.Strategy{}))
	if m.timeline.zoom != (tlZoom{}) {
		t.Errorf("a new scenario kept zoom %+v", m.timeline.zoom)
	}
}

// The new keys act on the main screen only: the help overlay, the sweep and
// the composer keep them; playback lets them through, with its speed on
// { and }.
func TestViewKeysOnlyOnTheMainScreen(t *testing.T) {
	m := fixedModel(t, 160, 50, scenarios.Strategy{})
	if h := press(press(m, "?"), "+"); h.timeline.zoom.level != 0 {
		t.Errorf("+ under the help overlay zoomed")
	}
	if c := press(press(m, "n"), "g"); c.gpu != 0 || c.comp() == nil {
		t.Errorf("g in the composer switched the GPU")
	}
	s := press(m, "s")
	defer s.grid().cancel()
	if s = press(s, "+"); s.timeline.zoom.level != 0 || s.grid() == nil {
		t.Errorf("+ in the sweep zoomed")
	}

	p := playbackModel(t)
	p = press(press(p, "+"), "g")
	if p.timeline.zoom.level != 1 || p.gpu != 1 || p.play().speed != 1 {
		t.Errorf("playback: zoom %d, GPU %d, speed %v", p.timeline.zoom.level, p.gpu, p.play().speed)
	}
	if p = press(p, "}"); p.play().speed != 2 {
		t.Errorf("} in playback: speed %v", p.play().speed)
	}
}

// No default key does two things, and none shadows the player's keys.
func TestDefaultKeysDistinct(t *testing.T) {
	k := DefaultKeyMap()
	owner := map[string]string{}
	for action, b := range k.bindingsByAction() {
		for _, kk := range b.Keys() {
			if other, ok := owner[kk]; ok {
				t.Errorf("key %q is bound to %s and %s", kk, other, action)
			}
			owner[kk] = action
		}
	}
	for _, kk := range []string{keyPlayPause, keyStepNext, keyStepPrev, keyFaster, keySlower, keyStart, keyEnd} {
		if a, ok := owner[kk]; ok {
			t.Errorf("player key %q is also %s", kk, a)
		}
	}
	if !key.Matches(tea.KeyPressMsg{Code: '=', Text: "="}, k.ZoomIn) {
		t.Errorf("= does not zoom in")
	}
}

// Live NVML batches add their devices to those the GPU key cycles through,
// while the result has no samples of its own.
func TestLiveDevices(t *testing.T) {
	m := fixedModel(t, 160, 50, scenarios.Strategy{})
	r := *m.result
	r.Samples = nil
	m.setResult(r)
	nm, _ := m.Update(liveMsg{nvtel.Batch{Samples: []backends.Sample{
		{Device: 0, Metric: backends.MetricSMUtil, Time: 1, Value: 0.5},
		{Device: 2, Metric: backends.MetricSMUtil, Time: 1, Value: 0.7},
	}}})
	m = nm.(Model)
	if !slices.Equal(m.gpus(), []int{0, 1, 2}) {
		t.Fatalf("devices %v", m.gpus())
	}
	m = press(press(m, "g"), "g")
	if m.gpu != 2 || !m.tel().live || !strings.Contains(ansi.Strip(m.View().Content), "Utilization · GPU 2 of 3 · live NVML") {
		t.Errorf("GPU %d, live %v", m.gpu, m.tel().live)
	}
}

// A result of one device: the GPU key says so instead of switching.
func TestGPUKeyOneDevice(t *testing.T) {
	m := fixedModel(t, 160, 50, scenarios.Strategy{})
	r := *m.result
	r.Timeline = slices.DeleteFunc(slices.Clone(r.Timeline), func(s backends.Span) bool { return s.Device != 0 })
	r.Samples = slices.DeleteFunc(slices.Clone(r.Samples), func(s backends.Sample) bool { return s.Device != 0 })
	m.setResult(r)
	m = press(m, "g")
	if m.gpu != 0 || m.status.text != "fake reports one GPU: the timeline and utilization show GPU 0" {
		t.Errorf("GPU %d, status %q", m.gpu, m.status.text)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), "Timeline · GPU 0 of 1 · █") {
		t.Errorf("title does not say GPU 0 of 1")
	}
}

// TestFlowGPUAndZoom presses g, +, +, >, 0 on the simulator and checks the
// status, the panels' titles and the timeline's axis. The simulator
// reports every GPU of the scenario (the same spans on each).
func TestFlowGPUAndZoom(t *testing.T) {
	b := sim.New(sim.H200())
	suite := scenarios.Builtin()[:3]
	n := suite[0].GPUs
	tm, obs := startLabWith(t, Config{Backend: b, Suite: suite}, 160, 50)
	s := obs.wait(t, tm, "the first measurement", idle)
	if want := "GPU 0 of " + strconv.Itoa(n); !strings.Contains(s.screen, "Timeline · "+want+" · █") || !strings.Contains(s.screen, "Utilization · "+want) {
		t.Fatalf("titles before any key, want %s:\n%s", want, s.screen)
	}
	tm.Type("g")
	if n > 1 {
		want := "GPU 1 of " + strconv.Itoa(n)
		obs.wait(t, tm, want, func(s snapshot) bool {
			return strings.Contains(s.screen, "Timeline · "+want) && strings.Contains(s.screen, "Utilization · "+want)
		})
	} else {
		obs.wait(t, tm, "the one-GPU note", func(s snapshot) bool { return strings.Contains(s.status.text, "sim reports one GPU") })
	}
	tm.Type("+")
	s = obs.wait(t, tm, "2x", func(s snapshot) bool { return strings.Contains(s.screen, "zoom 2x") })
	tm.Type("+")
	s = obs.wait(t, tm, "4x", func(s snapshot) bool { return strings.Contains(s.screen, "zoom 4x") })
	axis4 := axisLine(t, s.screen)
	if !strings.Contains(axis4, "time 4x") || !strings.Contains(axis4, "µs") {
		t.Errorf("4x axis %q", axis4)
	}
	tm.Type(">")
	s = obs.wait(t, tm, "the pan", func(s snapshot) bool { return axisLine(t, s.screen) != axis4 })
	if !strings.Contains(s.screen, "zoom 4x") || !strings.Contains(s.status.text, "timeline at 4x") {
		t.Errorf("after >: status %q", s.status.text)
	}
	tm.Type("0")
	s = obs.wait(t, tm, "the reset", func(s snapshot) bool { return !strings.Contains(s.screen, "zoom 4x") })
	if axis := axisLine(t, s.screen); !strings.Contains(axis, "time     0") {
		t.Errorf("1x axis %q", axis)
	}
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}

// axisLine is the timeline's labelled axis row on a screen.
func axisLine(t *testing.T, screen string) string {
	t.Helper()
	for _, l := range strings.Split(screen, "\n") {
		if i := strings.Index(l, "│time "); i >= 0 {
			return l[i:]
		}
	}
	t.Fatalf("no time axis on screen:\n%s", screen)
	return ""
}
