package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Timeline layout.
const (
	tlLabelW, tlPlotW, tlRowH, tlTop = 170, 860, 22, 8
)

// spanFill colours a span by its op's role, a copy lighter than a kernel.
func spanFill(s backends.Span) string {
	switch {
	case s.Op == backends.OpComm && s.Kind == "copy":
		return "#ffbe7d"
	case s.Op == backends.OpComm:
		return "#f28e2b"
	case s.Kind == "copy":
		return "#a0cbe8"
	}
	return "#4e79a7"
}

func timelineView(k int, in Input, c *run) TimelineView {
	r := c.r
	t := TimelineView{
		ID: fmt.Sprintf("tl%d", k+1), Scenario: c.scenario, Strategy: c.strategy,
		Input: in.Source.Path, Simulated: simulated(in), LabelW: tlLabelW, PlotW: tlPlotW,
		U: report.Uplift(r.Uplift), TC3: report.Duration(r.TC3.Median),
	}
	spans := slices.Clone(r.Timeline)
	slices.SortStableFunc(spans, func(a, b backends.Span) int {
		if a.Device != b.Device {
			return a.Device - b.Device
		}
		return int(a.Start - b.Start)
	})
	t0, t1 := spans[0].Start, spans[0].End
	var tracks []string
	for _, s := range spans {
		t0, t1 = min(t0, s.Start), max(t1, s.End)
		key := fmt.Sprintf("gpu%d · %s", s.Device, s.Track)
		if !slices.Contains(tracks, key) {
			tracks = append(tracks, key)
		}
	}
	dur := float64(max(t1-t0, 1))
	t.Dur = num(dur)
	for i, tr := range tracks {
		t.Rows = append(t.Rows, Label{X: tlLabelW - 8, Y: tlTop + i*tlRowH + tlRowH/2 + 4, Text: tr})
	}
	x := func(ns int64) float64 { return tlLabelW + float64(ns-t0)/dur*tlPlotW }
	for _, s := range spans {
		row := slices.Index(tracks, fmt.Sprintf("gpu%d · %s", s.Device, s.Track))
		name := s.Name
		if s.GraphOp != "" {
			name = fmt.Sprintf("%s[%d] · %s", s.GraphOp, s.Instance, s.Name)
		}
		t.Spans = append(t.Spans, SpanView{
			X: px(x(s.Start)), W: px(max(x(s.End)-x(s.Start), 0.5)), Y: tlTop + row*tlRowH + 3, H: tlRowH - 6,
			S: num(float64(s.Start - t0)), E: num(float64(s.End - t0)), Fill: spanFill(s), Name: name, Kind: s.Kind, Op: string(s.Op),
			Tip: fmt.Sprintf("%s\n%s on gpu%d · %s\nstart %s, took %s", name, s.Kind, s.Device, s.Track,
				report.Duration(float64(s.Start-t0)), report.Duration(float64(s.End-s.Start))),
		})
	}
	t.Height = tlTop + len(tracks)*tlRowH + 26
	t.AxisY = tlTop + len(tracks)*tlRowH
	t.Width = tlLabelW + tlPlotW + 16
	t.ClipH = len(tracks) * tlRowH
	for _, v := range niceTicks(0, dur, 8) {
		t.Ticks = append(t.Ticks, Tick{X: px(tlLabelW + v/dur*tlPlotW), Text: durationTick(v, dur)})
	}
	return t
}

// capsOf is what an input's runs show its backend could do, for the
// advice: the knobs its strategies used and its first device's limits.
func capsOf(in Input, g grid) backends.Capabilities {
	var sts []scenarios.Strategy
	for _, c := range g.cell {
		sts = append(sts, c.r.Strategy)
	}
	caps := profiler.KnobsOf(sts...)
	lim := &caps.Limits
	lim.Device = "recorded device"
	if devs := in.Details.Devices; len(devs) > 0 {
		d := devs[0]
		lim.Device, lim.SMs, lim.CopyEngines = d.Name, d.SMs, d.CopyEngines
		lim.SMStep, lim.HighestPriority, caps.HBMBandwidth = d.SMStep, d.HighestPriority, d.HBMBandwidth
		lim.MaxGPUs = len(devs)
	}
	return caps
}

var modeTitles = []struct {
	m     backends.Mode
	title string
}{
	{backends.ModeConcurrent, "what held each op back, together (C3)"},
	{backends.ModeCompute, "compute alone"},
	{backends.ModeComm, "comm alone"},
}

func whyView(k int, in Input, g grid, c *run) WhyView {
	r := c.r
	w := WhyView{
		ID: fmt.Sprintf("why%d", k+1), Scenario: c.scenario, Strategy: c.strategy, Input: in.Source.Path,
		Simulated: simulated(in), Class: string(r.Class), U: report.Uplift(r.Uplift), Figures: report.Figures(*r),
		Ops: report.OpRows(*r), Notes: report.UncertaintyNotes(*r),
	}
	if isDefault(c) {
		w.Role = "default"
	}
	if b, ok := bestOf(g)[c.scenario]; ok && b.Strategy == c.strategy {
		w.Role = strings.TrimPrefix(w.Role+", best", ", ")
	}
	for _, mt := range modeTitles {
		ex := r.Explain[mt.m]
		if len(ex) == 0 {
			continue
		}
		grp := BoundGroup{Title: mt.title}
		for _, e := range ex {
			var total int64
			for _, b := range e.Bounds {
				total += b.Nanos
			}
			op := BoundOp{Label: e.Label, Op: string(e.Op)}
			for _, b := range e.Bounds {
				op.Rows = append(op.Rows, BoundRow{
					Resource: string(b.Resource), Time: report.Duration(float64(b.Nanos)),
					Share: report.WholePercent(float64(b.Nanos) / float64(max(total, 1))), Detail: b.Detail,
				})
			}
			grp.Ops = append(grp.Ops, op)
		}
		w.Bounds = append(w.Bounds, grp)
	}
	if len(w.Bounds) == 0 {
		w.NoBounds = "the " + r.Backend + " backend does not say what bounded its runs"
	}
	a := heuristics.Advise(r.Scenario, capsOf(in, g))
	w.Advice, w.Reasons = a.Strategy.String(), a.Reasons
	w.AdviceInForce = a.Strategy.Normalize().String() == r.Strategy.Normalize().String()
	return w
}

// Compare chart layout.
const (
	cmpLabelW, cmpHalfW, cmpRowH = 330, 230, 16
)

func compareView(rep compare.Report) CompareView {
	cv := CompareView{Old: rep.Old.Path, New: rep.New.Path, Notes: rep.Notes, LabelW: cmpLabelW}
	s := rep.Summary
	cv.Summary = fmt.Sprintf("%d pair(s): %d faster, %d slower, %d not told apart, %d unknown", s.Pairs, s.Faster, s.Slower, s.Same, s.Unknown)
	if s.GeomeanTC3.Known() {
		cv.Summary += fmt.Sprintf(" · geometric mean of T_c3 new/old %s", pctChange(s.GeomeanTC3.Delta))
		if s.GeomeanTC3.CI.Valid() && !s.GeomeanTC3.Exact {
			cv.Summary += fmt.Sprintf(" (95 %% CI %s .. %s)", pctChange(s.GeomeanTC3.CI.Lo), pctChange(s.GeomeanTC3.CI.Hi))
		}
	}
	scale := 0.01
	for _, p := range rep.Pairs {
		if p.TC3.Known() {
			scale = max(scale, math.Abs(p.TC3.Delta-1))
			if p.TC3.CI.Valid() {
				scale = max(scale, math.Abs(p.TC3.CI.Lo-1), math.Abs(p.TC3.CI.Hi-1))
			}
		}
	}
	mid := float64(cmpLabelW + cmpHalfW)
	x := func(ratio float64) float64 {
		return mid + min(max((ratio-1)/scale, -1), 1)*cmpHalfW
	}
	cv.MidX = px(mid)
	for k, p := range rep.Pairs {
		row := CompareRow{Scenario: p.Scenario, Name: p.Name, Verdict: string(p.Verdict), P: "–"}
		if p.TC3.Known() {
			row.Old, row.New = report.Duration(p.TC3.Old), report.Duration(p.TC3.New)
			row.Change, row.Data = pctChange(p.TC3.Delta), num(p.TC3.Delta)
			if p.TC3.CI.Valid() && !p.TC3.Exact {
				row.CI = pctChange(p.TC3.CI.Lo) + " .. " + pctChange(p.TC3.CI.Hi)
			}
		} else {
			row.Old, row.New, row.Change = report.Duration(p.TC3.Old), report.Duration(p.TC3.New), report.NA
		}
		if !math.IsNaN(p.P) {
			row.P = fmt.Sprintf("%.3g", p.P)
		}
		if p.TC3.Exact {
			row.CI = "exact (no noise)"
		}
		row.Notes = strings.Join(p.Notes, "; ")
		if p.Machine != nil && p.Machine.Flagged {
			row.Notes = strings.TrimPrefix(row.Notes+"; machine: "+strings.Join(p.Machine.Reasons, ", "), "; ")
		}
		cv.Rows = append(cv.Rows, row)
		y := 30 + k*cmpRowH
		b := Bar{Y: y, BY: y + 3, BH: cmpRowH - 6, LY: y + cmpRowH - 4, Label: p.Scenario + " · " + p.Name, VX: cmpLabelW + 2*cmpHalfW + 8}
		b.Value = row.Change
		b.Tip = fmt.Sprintf("%s · %s\nT_c3 %s -> %s: %s\n95 %% CI %s · p %s · %s", p.Scenario, p.Name, row.Old, row.New, row.Change, row.CI, row.P, p.Verdict)
		if p.TC3.Known() {
			a, z := mid, x(p.TC3.Delta)
			b.X, b.W, b.Data = px(min(a, z)), px(max(math.Abs(z-a), 1)), num(p.TC3.Delta)
			switch p.Verdict {
			case compare.Faster:
				b.Fill = "#1b7837"
			case compare.Slower:
				b.Fill = "#b2182b"
			default:
				b.Fill = "#bbbbbb"
			}
			if p.TC3.CI.Valid() && !p.TC3.Exact {
				b.HasCI, b.LoX, b.HiX, b.MidY = true, px(x(p.TC3.CI.Lo)), px(x(p.TC3.CI.Hi)), y+cmpRowH/2
			}
		}
		cv.Chart.Bars = append(cv.Chart.Bars, b)
	}
	cv.Chart.ID, cv.Chart.LabelW, cv.Chart.PlotW = "cmp-chart", cmpLabelW, 2*cmpHalfW
	cv.Chart.RefX, cv.Chart.RefLabel = cv.MidX, "no change"
	cv.Chart.Height = 30 + len(rep.Pairs)*cmpRowH + 24
	cv.Chart.AxisY = cv.Chart.Height - 22
	cv.Chart.Width = cmpLabelW + 2*cmpHalfW + 90
	for _, t := range []float64{-1, -0.5, 0, 0.5, 1} {
		cv.Chart.Ticks = append(cv.Chart.Ticks, Tick{X: px(mid + t*cmpHalfW), Text: pctChange(1 + t*scale)})
	}
	return cv
}

// pctChange is a ratio as a signed change: "+3.2%", "-12.0%".
func pctChange(ratio float64) string {
	if math.IsNaN(ratio) {
		return report.NA
	}
	return fmt.Sprintf("%+.1f%%", 100*(ratio-1))
}
