package tui

import (
	"fmt"
	"slices"
	"time"

	"github.com/c3lab/c3lab/profiler"
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
func (m *lab) liveShown() bool {
	return m.liveOn && m.result != nil && !hasNVMLMetrics(m.result)
}

// gpus are the devices present: those the result reports, and those of
// live telemetry while the utilization panel shows it.
func (m *lab) gpus() []int {
	var extra []int
	if m.liveShown() {
		extra = m.liveDevs
	}
	return resultDevices(m.result, extra)
}

// refreshDevices keeps the device shown on one of those present (the
// first when the one shown is gone).
func (m *lab) refreshDevices() {
	if gpus := m.gpus(); len(gpus) > 0 && !slices.Contains(gpus, m.gpu) {
		m.gpu = gpus[0]
	}
}

// tel is the telemetry of the device shown: the result's own, or live
// NVML telemetry (with the run's own behind it) while the panel shows it.
func (m *Model) tel() telemetry {
	tel := newTelemetry(m.result, m.gpu)
	if !m.liveShown() {
		return tel
	}
	run := tel
	tel = liveTelemetry(m.live, m.gpu, m.nvmlWindow())
	tel.recorded = m.play() != nil
	tel.timed = run.timed
	if tel.window {
		tel.busy = busyShare(m.result, m.measuredTo.Sub(m.measuredFrom))
	}
	if len(run.series) > 0 {
		tel.run = &run
	}
	return tel
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
	if m.liveRun() || m.liveEpoch.IsZero() || m.measuredFrom.IsZero() {
		return w
	}
	return sampleWindow{from: m.measuredFrom.Sub(m.liveEpoch).Nanoseconds(), to: m.measuredTo.Sub(m.liveEpoch).Nanoseconds(), on: true}
}

// noteLiveDevices remembers the devices of a live batch; it reports
// whether one was new.
func (m *lab) noteLiveDevices(devs []int) bool {
	added := false
	for _, d := range devs {
		if !slices.Contains(m.liveDevs, d) {
			m.liveDevs = append(m.liveDevs, d)
			added = true
		}
	}
	return added
}

// cycleGPU is the GPU key: the timeline and utilization panels show the
// next device the result reports, or the status says why they cannot.
func (m *Model) cycleGPU() {
	gpus := m.gpus()
	switch {
	case m.result == nil:
		m.status = status{statusInfo, "no result yet: the GPU key picks among the devices a result reports"}
	case len(gpus) <= 1:
		m.status = status{statusInfo, fmt.Sprintf("%s reports one GPU: the timeline and utilization show GPU %d", m.name, m.gpu)}
	default:
		i := slices.Index(gpus, m.gpu)
		m.gpu = gpus[(i+1)%len(gpus)]
		m.status = status{statusInfo, "timeline and utilization: " + gpuLabel(m.gpu, len(gpus))}
	}
}
