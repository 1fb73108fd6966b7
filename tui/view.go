package tui

import (
	"fmt"
	"slices"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
)

// zoomLevels is the number of timeline zoom levels: 1x, 2x, 4x, 8x, 16x.
const zoomLevels = 5

// tlZoom is the timeline's zoom: level z shows 1/2^z of the repetition,
// from start (ns). The window is clamped into the run when it is used, so
// a shorter result keeps a valid view.
type tlZoom struct {
	level int
	start int64
}

// factor is the zoom's magnification (1, 2, 4, 8 or 16).
func (z tlZoom) factor() int { return 1 << min(max(z.level, 0), zoomLevels-1) }

// length is the window's length in ns for a run of [0, end): end / factor,
// rounded up, at least 1.
func (z tlZoom) length(end int64) int64 {
	end = max(end, 1)
	f := int64(z.factor())
	return max((end+f-1)/f, 1)
}

// window is the visible [a, b) of a run of [0, end): the zoom's length from
// its start, kept inside the run.
func (z tlZoom) window(end int64) (a, b int64) {
	end = max(end, 1)
	n := z.length(end)
	a = min(max(z.start, 0), end-n)
	return a, a + n
}

// zoomBy changes the level by d (clamped to 1x..16x), keeping the window's
// centre where the run allows.
func (z tlZoom) zoomBy(d int, end int64) tlZoom {
	a, b := z.window(end)
	nz := tlZoom{level: min(max(z.level+d, 0), zoomLevels-1)}
	if nz.level == 0 {
		return nz
	}
	nz.start = a + (b-a)/2 - nz.length(end)/2
	nz.start, _ = nz.window(end)
	return nz
}

// panBy moves the window by d halves of its length, clamped at the run's
// start and end.
func (z tlZoom) panBy(d int, end int64) tlZoom {
	a, b := z.window(end)
	z.start = a + int64(d)*((b-a+1)/2)
	z.start, _ = z.window(end)
	return z
}

// runEnd is the end of r's repetition: its last span's end, over every
// device (0 without spans).
func runEnd(r *profiler.Result) int64 {
	var end int64
	if r == nil {
		return 0
	}
	for _, s := range r.Timeline {
		end = max(end, s.End)
	}
	return end
}

// resultDevices lists the devices r's spans and samples name, sorted,
// with extra (live telemetry's devices, say) added.
func resultDevices(r *profiler.Result, extra []int) []int {
	var out []int
	add := func(d int) {
		if !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	if r != nil {
		for _, s := range r.Timeline {
			add(s.Device)
		}
		for _, s := range r.Samples {
			add(s.Device)
		}
	}
	for _, d := range extra {
		add(d)
	}
	slices.Sort(out)
	return out
}

// gpuLabel names the device shown among those present: "GPU 1 of 2".
func gpuLabel(dev, n int) string {
	return fmt.Sprintf("GPU %d of %d", dev, max(n, 1))
}

// liveShown reports whether the utilization panel shows live NVML
// telemetry: while batches arrive, for a result without NVML-type samples
// of its own (a GPU run's copy-engine samples stay, next to the live rows).
func (m *Model) liveShown() bool {
	return m.liveOn && m.result != nil && !hasNVMLMetrics(m.result)
}

// refreshDevices recomputes the devices present and keeps the selection on
// one of them (the first when the shown one is gone), then the telemetry
// of the device shown.
func (m *Model) refreshDevices() {
	var extra []int
	if m.liveShown() {
		extra = m.liveDevs
	}
	m.gpus = resultDevices(m.result, extra)
	if len(m.gpus) > 0 && !slices.Contains(m.gpus, m.gpu) {
		m.gpu = m.gpus[0]
	}
	m.tel = newTelemetry(m.result, m.gpu)
	if m.liveShown() {
		run := m.tel
		m.tel = liveTelemetry(m.live, m.gpu, m.nvmlWindow())
		m.tel.recorded = m.play != nil
		if m.tel.window {
			m.tel.busy = busyShare(m.result, m.measuredTo.Sub(m.measuredFrom))
		}
		if len(run.series) > 0 {
			m.tel.run = &run
		}
	}
}

// busyShare is the share of a measurement's wall time its timed
// repetitions took (every mode), at most 1.
func busyShare(r *profiler.Result, took time.Duration) float64 {
	if r == nil || took <= 0 {
		return 0
	}
	var ns int64
	for _, reps := range r.Reps {
		for _, rep := range reps {
			ns += rep.Wall
		}
	}
	return min(float64(ns)/float64(took.Nanoseconds()), 1)
}

// nvmlWindow is the live sample-time window of the last measurement, when
// the panel should show it: outside live mode, once the sampler's clock is
// known and a measurement has finished. Live mode shows the rolling
// history instead.
func (m *Model) nvmlWindow() (w sampleWindow) {
	if m.liveRun || m.liveEpoch.IsZero() || m.measuredFrom.IsZero() {
		return w
	}
	return sampleWindow{from: m.measuredFrom.Sub(m.liveEpoch).Nanoseconds(), to: m.measuredTo.Sub(m.liveEpoch).Nanoseconds(), on: true}
}

// noteLiveDevices remembers the devices of a live batch; it reports
// whether one was new.
func (m *Model) noteLiveDevices(devs []int) bool {
	added := false
	for _, d := range devs {
		if !slices.Contains(m.liveDevs, d) {
			m.liveDevs = append(m.liveDevs, d)
			added = true
		}
	}
	return added
}

// viewKey handles the keys that change what the timeline and utilization
// panels show (GPU, zoom, pan); ok is false for other keys. They act on
// the main screen only: overlays take their keys first.
func (m Model) viewKey(msg tea.KeyPressMsg) (Model, bool) {
	k := m.keys
	end := runEnd(m.result)
	switch {
	case key.Matches(msg, k.GPU):
		switch {
		case m.result == nil:
			m.status = status{statusInfo, "no result yet: the GPU key picks among the devices a result reports"}
		case len(m.gpus) <= 1:
			m.status = status{statusInfo, fmt.Sprintf("%s reports one GPU: the timeline and utilization show GPU %d", m.name, m.gpu)}
		default:
			i := slices.Index(m.gpus, m.gpu)
			m.gpu = m.gpus[(i+1)%len(m.gpus)]
			m.refreshDevices()
			m.status = status{statusInfo, "timeline and utilization: " + gpuLabel(m.gpu, len(m.gpus))}
			m.renderResultPanels()
		}
	case key.Matches(msg, k.ZoomIn, k.ZoomOut, k.ZoomReset, k.PanLeft, k.PanRight):
		if end <= 0 {
			m.status = status{statusInfo, "no timeline yet to zoom"}
			break
		}
		before := m.zoom
		var limit string
		switch {
		case key.Matches(msg, k.ZoomIn):
			m.zoom = m.zoom.zoomBy(1, end)
			limit = fmt.Sprintf("%dx is the closest zoom", m.zoom.factor())
		case key.Matches(msg, k.ZoomOut):
			m.zoom = m.zoom.zoomBy(-1, end)
			limit = "the timeline shows the whole repetition"
		case key.Matches(msg, k.ZoomReset):
			m.zoom = tlZoom{}
			limit = "the timeline shows the whole repetition"
		case key.Matches(msg, k.PanLeft):
			m.zoom = m.zoom.panBy(-1, end)
			limit = "the window is at the repetition's start"
		default:
			m.zoom = m.zoom.panBy(1, end)
			limit = "the window is at the repetition's end"
		}
		a, b := m.zoom.window(end)
		ba, _ := before.window(end)
		switch {
		case m.zoom.level == 0 && before.level == 0 && !key.Matches(msg, k.ZoomOut, k.ZoomReset):
			m.status = status{statusInfo, fmt.Sprintf("the timeline is not zoomed: %s zooms in, then %s/%s pan",
				k.ZoomIn.Help().Key, k.PanLeft.Help().Key, k.PanRight.Help().Key)}
		case m.zoom.level == before.level && a == ba:
			m.status = status{statusInfo, limit}
		default:
			m.status = status{statusInfo, fmt.Sprintf("timeline at %dx: %s to %s", m.zoom.factor(), report.Duration(float64(a)), report.Duration(float64(b)))}
		}
		m.renderResultPanels()
	default:
		return m, false
	}
	m.renderFooter()
	return m, true
}
