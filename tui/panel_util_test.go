package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/report"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/scenarios"
)

// TestUtilValue checks the units: HBM in GB/s when the bandwidth is known,
// every share in %.
func TestUtilValue(t *testing.T) {
	for _, tc := range []struct {
		metric   string
		avg, hbm float64
		want     string
	}{
		{backends.MetricHBMUtil, 0.5, 4e12, "2000 GB/s"},
		{backends.MetricHBMUtil, 0.5, 0, "50%"},
		{backends.MetricSMUtil, 0.71, 4e12, "71%"},
		{backends.MetricLinkTXUtil, 0.885, 0, "88%"},
	} {
		if got := utilValue(tc.metric, tc.avg, tc.hbm); got != tc.want {
			t.Errorf("utilValue(%s, %v, %v) = %q, want %q", tc.metric, tc.avg, tc.hbm, got, tc.want)
		}
	}
}

// TestUtilChartRows checks the charts take two rows only where every
// resource fits at that height.
func TestUtilChartRows(t *testing.T) {
	for h, want := range map[int]int{7: 1, 12: 1, 13: 2, 30: 2} {
		if got := utilChartRows(h); got != want {
			t.Errorf("utilChartRows(%d) = %d, want %d", h, got, want)
		}
	}
}

// TestUtilLiveHistory checks live NVML samples are appended one per dot
// column, newest at the right edge, keeping only what fits.
func TestUtilLiveHistory(t *testing.T) {
	h := nvtel.NewHistory(liveHistory)
	for i := range 100 {
		v := 0.0
		if i >= 98 {
			v = 1 // the two newest samples: the last cell full
		}
		h.Add(nvtel.Batch{Samples: []backends.Sample{{Device: 0, Metric: backends.MetricSMUtil, Time: int64(i) * 100e6, Value: v}}})
	}
	tel := liveTelemetry(h, 0, sampleWindow{})
	got := utilHistory(tel.series[backends.MetricSMUtil], tel, 10)
	if len(got) != 10 || got[7] != 0 || got[8] != 1 || got[9] != 1 {
		t.Errorf("live history %v, want the 10 newest samples", got)
	}
	r := fixtureResult(testSuite()[0], scenarios.Strategy{})
	lines := utilLinesFor(DefaultStyles(true), &r, tel, 60, 1)
	if sm := ansi.Strip(lines[0]); !strings.HasSuffix(sm, " ⣿") || !strings.Contains(sm, " 1%") {
		t.Errorf("SMs row %q, want a full last cell and a 1%% average (1 over the last of 99 steps)", sm)
	}
}

// A GPU run's result carries only copy-stream samples (from its own copy
// spans); while live NVML batches arrive, the panel shows NVML's rows live
// and keeps the run's copy-stream row, and says so in its title, naming
// what the row counts: busy copy streams, not copy engines.
func TestUtilLiveWithRunCopyEngines(t *testing.T) {
	h := nvtel.NewHistory(liveHistory)
	for i := range 10 {
		h.Add(nvtel.Batch{Samples: []backends.Sample{{Device: 0, Metric: backends.MetricSMUtil, Time: int64(i) * 100e6, Value: 0.5}}})
	}
	r := fixtureResult(testSuite()[0], scenarios.Strategy{CommEngine: scenarios.EngineDMA})
	r.Samples = []backends.Sample{
		{Device: 0, Metric: backends.MetricCopyStreamsBusy, Time: 0, Value: 1},
		{Device: 0, Metric: backends.MetricCopyStreamsBusy, Time: 500, Value: 0},
	}
	r.Timeline = []backends.Span{{Device: 0, Track: "ce0", Start: 0, End: 1000}}
	m := New(Config{})
	m.result, m.liveOn, m.live = &r, true, h
	if !m.liveShown() {
		t.Fatal("live telemetry not shown for a result with copy-engine samples only")
	}
	m.refreshDevices()
	title := utilTitle(&r, m.tel(), 0, 1)
	if !strings.Contains(title, "live NVML, copy streams from the run") {
		t.Errorf("title %q", title)
	}
	lines := utilLinesFor(DefaultStyles(true), &r, m.tel(), 80, 1)
	var sm, ce string
	for _, l := range lines {
		switch l = ansi.Strip(l); {
		case strings.HasPrefix(l, "SMs ") && !strings.HasPrefix(l, "SMs held"):
			sm = l
		case strings.HasPrefix(l, "copy strm "):
			ce = l
		}
	}
	if !strings.Contains(sm, "50%") || !strings.Contains(ce, "50%") {
		t.Errorf("SMs row %q (want live 50%%), copy strm row %q (want the run's 50%%)", sm, ce)
	}
	sim := fixtureResult(testSuite()[0], scenarios.Strategy{})
	if m.result = &sim; len(sim.Samples) > 0 && m.liveShown() {
		t.Error("a simulated result's own telemetry was replaced by live NVML")
	}
}

// Outside live mode the panel shows the NVML samples taken during the last
// measurement, not the idle time around it; live mode keeps the rolling
// history; a measurement shorter than a sample interval falls back to it.
func TestUtilNVMLDuringTheMeasurement(t *testing.T) {
	epoch := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	m := New(Config{})
	for i := range 50 {
		v := 0.0
		if i >= 20 && i < 30 {
			v = 0.8 // busy during the measurement, idle around it
		}
		at := time.Duration(i) * 100 * time.Millisecond
		b := nvtel.Batch{At: epoch.Add(at), Samples: []backends.Sample{{Device: 0, Metric: backends.MetricSMUtil, Time: at.Nanoseconds(), Value: v}}}
		nm, _ := m.Update(liveMsg{b})
		m = nm.(Model)
	}
	r := fixtureResult(testSuite()[0], scenarios.Strategy{CommEngine: scenarios.EngineDMA})
	r.Samples = nil
	r.Reps = map[backends.Mode][]backends.Rep{backends.ModeConcurrent: {{Wall: 90e6}, {Wall: 90e6}, {Wall: 90e6}}}
	m.result = &r
	smRow := func() string {
		for _, l := range utilLinesFor(DefaultStyles(true), &r, m.tel(), 80, 1) {
			if l = ansi.Strip(l); strings.HasPrefix(l, "SMs ") && !strings.HasPrefix(l, "SMs held") {
				return l
			}
		}
		return ""
	}
	for _, tc := range []struct {
		name     string
		live     bool
		from, to time.Duration // the measurement, from the epoch
		title    string
		sm       string
	}{
		{"the measurement's window", false, 2 * time.Second, 2900 * time.Millisecond, "NVML during the last measurement (GPUs busy 30 % of it)", "80%"},
		{"live mode: the whole history", true, 2 * time.Second, 2900 * time.Millisecond, "live NVML:", "16%"},
		{"a window without samples: the history", false, 2010 * time.Millisecond, 2020 * time.Millisecond, "live NVML:", "16%"},
	} {
		m.modes = nil
		if tc.live {
			m.modes = m.modes.push(newLiveMode(m.keys))
		}
		m.measuredFrom, m.measuredTo = epoch.Add(tc.from), epoch.Add(tc.to)
		m.refreshDevices()
		if title := utilTitle(&r, m.tel(), 0, 1); !strings.Contains(title, tc.title) {
			t.Errorf("%s: title %q, want %q", tc.name, title, tc.title)
		}
		if row := smRow(); !strings.Contains(row, tc.sm) {
			t.Errorf("%s: SMs row %q, want %s", tc.name, row, tc.sm)
		}
	}
}

// A host copy's link is PCIe: its rows replace NVLink's and show the
// PCIe samples, the simulator's or live NVML's alike.
func TestUtilRowsFollowTheLink(t *testing.T) {
	st := DefaultStyles(false)
	for _, tc := range []struct {
		name             string
		coll             scenarios.Collective
		metric, want     string
		absent           string
		live             bool
		sampleValue, pct float64
	}{
		{"all-gather", scenarios.AllGather, backends.MetricLinkTXUtil, "NVLink TX", "PCIe", false, 0.5, 50},
		{"h2d", scenarios.HostToDevice, backends.MetricPCIeRXUtil, "PCIe RX", "NVLink", false, 0.875, 88},
		{"d2h, live NVML", scenarios.DeviceToHost, backends.MetricPCIeTXUtil, "PCIe TX", "NVLink", true, 0.25, 25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := testSuite()[0]
			sc.Comm.Collective = tc.coll
			r := fixtureResult(sc, scenarios.Strategy{})
			r.Samples = []backends.Sample{{Device: 0, Metric: tc.metric, Time: 0, Value: tc.sampleValue}}
			tel := newTelemetry(&r, 0)
			if tc.live {
				h := nvtel.NewHistory(liveHistory)
				h.Add(nvtel.Batch{Samples: []backends.Sample{{Device: 0, Metric: tc.metric, Time: 1, Value: tc.sampleValue}}})
				tel = liveTelemetry(h, 0, sampleWindow{})
			}
			out := ansi.Strip(strings.Join(utilLinesFor(st, &r, tel, 80, 1), "\n"))
			var row string
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, tc.want) {
					row = l
				}
			}
			if row == "" || !strings.Contains(row, report.WholePercent(tc.pct/100)) {
				t.Errorf("no %s row showing %.0f%%:\n%s", tc.want, tc.pct, out)
			}
			if strings.Contains(out, tc.absent) {
				t.Errorf("%s rows shown for a %s:\n%s", tc.absent, tc.coll, out)
			}
		})
	}
}

// A host copy's isolated bandwidth is what crossed PCIe, not a busbw.
func TestMetricsSayPCIeForHostCopies(t *testing.T) {
	for _, tc := range []struct {
		coll       scenarios.Collective
		want, lack string
	}{{scenarios.AllGather, "busbw", "PCIe"}, {scenarios.HostSwap, "PCIe", "busbw"}} {
		sc := testSuite()[0]
		sc.Comm.Collective = tc.coll
		r := fixtureResult(sc, scenarios.Strategy{})
		for _, w := range []int{40, 80} {
			text := ansi.Strip(strings.Join(metricsLines(DefaultStyles(false), &r, nil, w), "\n"))
			if !strings.Contains(text, tc.want) || strings.Contains(text, tc.lack) {
				t.Errorf("%s at %d columns: want %q, not %q:\n%s", tc.coll, w, tc.want, tc.lack, text)
			}
		}
	}
}

// The list's title keeps what it leaves out in sight.
func TestListTitle(t *testing.T) {
	for _, tc := range []struct {
		cursor, n  int
		note, want string
	}{
		{2, 44, "", "Scenarios 3/44"},
		{0, 8, "36 need more GPUs", "Scenarios 1/8 · 36 need more GPUs"},
		{0, 0, "", "Scenarios"},
	} {
		if got := listTitle(tc.cursor, tc.n, tc.note); got != tc.want {
			t.Errorf("listTitle(%d, %d, %q) = %q, want %q", tc.cursor, tc.n, tc.note, got, tc.want)
		}
	}
}

// A backend that explains nothing (cuda) still gets the advice in the why
// panel, where the simulator's runs show it under their explanations.
func TestWhyShowsAdviceWithoutExplanations(t *testing.T) {
	sc := testSuite()[0]
	sc.Comm.Collective = scenarios.DeviceToHost
	r := fixtureResult(sc, scenarios.Strategy{})
	r.Explain = nil
	text := ansi.Strip(strings.Join(whyLines(DefaultStyles(false), &r, 120, "cuda", h200Caps()), "\n"))
	for _, want := range []string{"the cuda backend does not say what bounded its runs", "advice", "copy engines"} {
		if !strings.Contains(text, want) {
			t.Errorf("why panel lacks %q:\n%s", want, text)
		}
	}
}
