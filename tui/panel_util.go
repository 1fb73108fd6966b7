package tui

import (
	"fmt"
	"math"
	"slices"
	"strings"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/numfmt"
	"github.com/c3lab/c3lab/profiler/report"
)

// utilLines is the utilization panel's line count.
const utilLines = 7

// utilRow is one resource of the utilization panel.
type utilRow struct{ label, metric string }

// utilRows lists the resources shown, in order. The link rows are the
// scenario's link: NVLink between GPUs, or PCIe to the host for a host
// copy (pcie).
func utilRows(pcie bool) []utilRow {
	tx, rx := utilRow{"NVLink TX", backends.MetricLinkTXUtil}, utilRow{"NVLink RX", backends.MetricLinkRXUtil}
	if pcie {
		tx, rx = utilRow{"PCIe TX", backends.MetricPCIeTXUtil}, utilRow{"PCIe RX", backends.MetricPCIeRXUtil}
	}
	return []utilRow{
		{"SMs", backends.MetricSMUtil},
		{"tensor", backends.MetricTensorUtil},
		{"HBM", backends.MetricHBMUtil},
		tx, rx,
		// Busy copy streams, not copy engines: no backend sees the engines.
		{"copy strm", backends.MetricCopyStreamsBusy},
	}
}

// utilMetrics lists every metric a utilization row may show.
func utilMetrics() []string {
	var out []string
	for _, pcie := range []bool{false, true} {
		for _, r := range utilRows(pcie) {
			if !slices.Contains(out, r.metric) {
				out = append(out, r.metric)
			}
		}
	}
	return out
}

// overPCIe reports whether r's comm op is a host copy, whose link is PCIe.
func overPCIe(r *profiler.Result) bool {
	return r != nil && r.Scenario.Comm.Collective.IsHostCopy()
}

// utilTitle names the panel, the device it shows (dev, of n present) and
// the run it shows.
func utilTitle(r *profiler.Result, tel telemetry, dev, n int) string {
	switch {
	case r == nil:
		return "Utilization"
	case tel.live:
		what := "live NVML"
		switch {
		case tel.recorded && tel.window:
			what = "recorded NVML during this measurement"
		case tel.recorded:
			what = "recorded NVML"
		case tel.window:
			what = "NVML during the last measurement"
		}
		if tel.window && tel.busy > 0 {
			what += fmt.Sprintf(" (GPUs busy %.0f %% of it)", max(tel.busy*100, 1))
		}
		if tel.run != nil {
			what += ", copy streams from the run"
		}
		return "Utilization · " + gpuLabel(dev, n) + " · " + what + ": average, " + timedTitle(tel) + "then over time"
	}
	return "Utilization · " + gpuLabel(dev, n) + " · concurrent run: average, " + timedTitle(tel) + "then over time"
}

// timedTitle names the timed-window column in the panel's title when it
// is shown: "timed (the repetitions only), ".
func timedTitle(tel telemetry) string {
	if len(tel.timed) == 0 {
		return ""
	}
	return "timed (the repetitions only), "
}

// utilChartRows is how many rows each resource's history chart takes in
// a utilization panel of inner height h: two when every resource fits at
// that height, else one.
func utilChartRows(h int) int {
	if h >= 2*len(utilRows(false))+1 {
		return 2
	}
	return 1
}

// utilValueW is the width of the utilization panel's value column ("71%",
// "2450 GB/s", after a blank).
const utilValueW = 10

// utilValue formats a resource's average in its unit: HBM in GB/s when the
// device's HBM bandwidth is known (hbm, bytes/s), every other share in %.
func utilValue(metric string, avg, hbm float64) string {
	if metric == backends.MetricHBMUtil && hbm > 0 && !math.IsNaN(avg) {
		return numfmt.Fixed(avg*hbm/1e9, 0) + " GB/s"
	}
	return report.WholePercent(avg)
}

// utilHistory is the course of series s that a chart of n samples shows:
// live telemetry one sample per dot column, newest last (as they are
// appended); a run's own telemetry averaged over n equal slices of the
// repetition.
func utilHistory(s series, tel telemetry, n int) []float64 {
	if tel.live {
		return s.v[max(len(s.v)-n, 0):]
	}
	return s.resample(tel.end, n)
}

// utilLinesFor renders, per resource, the time-weighted average as a bar
// and a value in its unit, then its course over time as a braille chart
// (two samples per cell) of rows rows, for a panel of inner width w.
func utilLinesFor(st Styles, r *profiler.Result, tel telemetry, w, rows int) []string {
	if r == nil {
		return []string{st.Dim.Render("no measurement yet")}
	}
	var hbm float64
	if r.Bound != nil {
		hbm = r.Bound.HBMBandwidth
	}
	const labelW = 10
	// label, bar, value, [timed value,] two blanks, chart.
	timedW := 0
	if len(tel.timed) > 0 {
		timedW = utilTimedW
	}
	rest := max(w-labelW-utilValueW-timedW-2, 4)
	bw := min(max(rest/3, 4), 24)
	sw := rest - bw
	rows = max(rows, 1)
	out := make([]string, 0, rows*len(utilRows(false))+1)
	for _, row := range utilRows(overPCIe(r)) {
		lab := st.Label.Render(fit(row.label, labelW))
		s, src, ok := tel.lookup(row.metric)
		if !ok {
			out = append(out, lab+st.Dim.Render("n/a (not in this backend's telemetry)"))
			continue
		}
		avg := s.mean(0, src.end)
		line := lab + styledBar(st, st.Util, avg, bw) + alignRight(utilValue(row.metric, avg, hbm), utilValueW)
		if timedW > 0 {
			line += timedText(st, tel.timed, row.metric, hbm)
		}
		if sw <= 0 {
			out = append(out, line)
			continue
		}
		chart := brailleFill(utilHistory(s, src, 2*sw), 0, 1, sw, rows)
		out = append(out, line+"  "+st.Util.Render(chart[0]))
		for _, c := range chart[1:] {
			out = append(out, strings.Repeat(" ", labelW+bw+utilValueW+timedW+2)+st.Util.Render(c))
		}
	}
	comp, cok := tel.avg(backends.MetricSMsCompute)
	comm, mok := tel.avg(backends.MetricSMsComm)
	held := st.Dim.Render("n/a (not in this backend's telemetry)")
	if cok || mok {
		held = st.Compute.Render(fmtSMs(comp, cok)) + st.Dim.Render(" compute · ") +
			st.Comm.Render(fmtSMs(comm, mok)) + st.Dim.Render(" comm (average)")
	}
	out = append(out, st.Label.Render(fit("SMs held", labelW))+held)
	return out
}

// utilTimedW is the width of the timed-window column ("timed 2000 GB/s",
// after a blank).
const utilTimedW = 16

// timedText is a resource's use during the timed repetitions, right-aligned
// in utilTimedW cells: "timed 47%", or "timed n/a" where NVML gave none.
func timedText(st Styles, timed map[string]float64, metric string, hbm float64) string {
	v, ok := timed[metric]
	text := "timed n/a"
	if ok {
		text = "timed " + utilValue(metric, v, hbm)
	}
	pad := utilTimedW - len([]rune(text))
	if pad < 1 {
		pad = 1
	}
	if !ok {
		return strings.Repeat(" ", pad) + st.Dim.Render(text)
	}
	return strings.Repeat(" ", pad) + st.Dim.Render("timed ") + st.Value.Render(utilValue(metric, v, hbm))
}

// fmtSMs formats an average SM count.
func fmtSMs(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "n/a"
	}
	return numfmt.Fixed(v, 0)
}

// utilPanel is the utilization of the GPU shown: the result's own
// telemetry, or live NVML where the result has none.
type utilPanel struct{ detailFrame }

// Update handles no message: the GPU key is the lab's.
func (p *utilPanel) Update(*Model, tea.Msg) (tea.Cmd, bool) { return nil, false }

// View is the utilization box.
func (p *utilPanel) View(m *Model) []string {
	if p.w <= 0 || p.h <= 0 {
		return nil
	}
	tel := m.tel()
	return p.frame(m.styles, utilTitle(m.result, tel, m.gpu, len(m.gpus())),
		utilLinesFor(m.styles, m.result, tel, p.w-2, utilChartRows(p.h-2)))
}
