package tui

import (
	"fmt"
	"math"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// utilLines is the utilization panel's line count.
const utilLines = 7

// utilRow is one resource of the utilization panel.
type utilRow struct{ label, metric string }

// utilRows lists the resources shown, in order.
func utilRows() []utilRow {
	return []utilRow{
		{"SMs", backends.MetricSMUtil},
		{"tensor", backends.MetricTensorUtil},
		{"HBM", backends.MetricHBMUtil},
		{"NVLink TX", backends.MetricLinkTXUtil},
		{"NVLink RX", backends.MetricLinkRXUtil},
		{"copy eng", backends.MetricCopyEngUtil},
	}
}

// utilTitle names the panel and the run it shows.
func utilTitle(r *profiler.Result, live bool) string {
	switch {
	case r == nil:
		return "Utilization"
	case live:
		return "Utilization · GPU 0 · live NVML: average, then over time"
	}
	return "Utilization · GPU 0 · concurrent run: average, then over time"
}

// utilLinesFor renders, per resource, the time-weighted average over the
// concurrent repetition as a bar and its course over time as a sparkline.
func utilLinesFor(st Styles, r *profiler.Result, tel telemetry, w int) []string {
	if r == nil {
		return []string{st.Dim.Render("no measurement yet")}
	}
	const labelW, pctW = 10, 5
	rest := max(w-labelW-pctW-2, 4)
	bw := min(max(rest*2/5, 4), 30)
	sw := max(rest-bw, 0)
	out := make([]string, 0, utilLines)
	for _, row := range utilRows() {
		lab := st.Label.Render(fit(row.label, labelW))
		s, ok := tel.series[row.metric]
		if !ok {
			out = append(out, lab+st.Dim.Render("n/a (not in this backend's telemetry)"))
			continue
		}
		avg := s.mean(0, tel.end)
		line := lab + styledBar(st, st.Util, avg, bw) + alignRight(fmtPct0(avg), pctW)
		if sw > 2 {
			line += "  " + st.Util.Render(sparkline(s.resample(tel.end, sw)))
		}
		out = append(out, line)
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

// fmtSMs formats an average SM count.
func fmtSMs(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.0f", v)
}
