package tui

import (
	"fmt"
	"math"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// resourceLabel is a resource's name on screen.
func resourceLabel(r backends.Resource) string {
	switch r {
	case backends.ResWaitSMs:
		return "waiting SMs"
	case backends.ResSMs:
		return "SMs held"
	case backends.ResTensor:
		return "tensor"
	case backends.ResHBM:
		return "HBM"
	case backends.ResLink:
		return "NVLink"
	case backends.ResCTA:
		return "per-CTA"
	case backends.ResCopyEngines:
		return "copy engines"
	case backends.ResLaunch:
		return "launch/sync"
	case backends.ResDependency:
		return "dependency"
	}
	return string(r)
}

// opTime is an op's median time in a mode, the base of its bound shares;
// when unknown it is the sum of the bounds.
func opTime(r *profiler.Result, mode backends.Mode, e backends.OpExplanation) float64 {
	var t float64
	switch {
	case mode == backends.ModeConcurrent && e.Op == backends.OpCompute:
		t = r.TCompInC3.Median
	case mode == backends.ModeConcurrent && e.Op == backends.OpComm:
		t = r.TCommInC3.Median
	case e.Op == backends.OpCompute:
		t = r.TComp.Median
	case e.Op == backends.OpComm:
		t = r.TComm.Median
	}
	if t > 0 {
		return t
	}
	for _, b := range e.Bounds {
		t += float64(b.Nanos)
	}
	return t
}

// whyTitle names the panel.
func whyTitle() string { return "Why · what bounded each op in the concurrent run" }

// whyLines says what the result's figures are (T_serial, T_ideal, T_c3,
// S_ideal, S_real, F and U) and then, per op of the concurrent run, each
// bounding resource with its time, its share of the op's time and the
// backend's detail: per graph op (Result.Ops) with its slowdown for a
// scenario written as streams, per role for a one-pair result; then the
// isolated runs' main bounds, one line per op, and the advice.
func whyLines(st Styles, r *profiler.Result, w int, backend string, caps backends.Capabilities) []string {
	return whyLinesAdvised(st, r, w, backend, caps, adviceView{})
}

// whyLinesAdvised is whyLines with the advice v (adviceLines).
func whyLinesAdvised(st Styles, r *profiler.Result, w int, backend string, caps backends.Capabilities, v adviceView) []string {
	if r == nil {
		return []string{st.Dim.Render("no measurement yet")}
	}
	out := figureLines(st, r, w)
	c3 := r.Explain[backends.ModeConcurrent]
	if len(c3) == 0 && len(r.Explain) == 0 && len(r.Ops) == 0 {
		// No explanation, but the advice holds on any backend.
		out = append(out, st.Dim.Render("the "+backend+" backend does not say what bounded its runs"))
		return append(out, adviceLines(st, r, w, caps, v)...)
	}
	if len(r.Ops) > 0 {
		out = append(out, graphOpLines(st, r, c3, w)...)
	} else {
		for _, e := range c3 {
			total := opTime(r, backends.ModeConcurrent, e)
			opStyle := st.Compute
			slow, slowIv := r.CompSlowdown, func(c *profiler.Intervals) profiler.Interval { return c.CompSlowdown }
			if e.Op == backends.OpComm {
				opStyle, slow = st.Comm, r.CommSlowdown
				slowIv = func(c *profiler.Intervals) profiler.Interval { return c.CommSlowdown }
			}
			head := opStyle.Render(fit(string(e.Op), 9)) + st.Value.Render(e.Label)
			slowText := ratioPM(slow, ciOf(r), slowIv)
			tail := " · " + report.Duration(total) + " in C3 (" + slowText + " its time alone)"
			if ansiWidth(head+tail) > w {
				tail = " · " + report.Duration(total) + " in C3 (" + slowText + ")"
			}
			out = append(out, head+st.Dim.Render(tail))
			out = append(out, boundLines(st, opStyle, e.Bounds, total, w)...)
		}
		if len(c3) == 0 {
			out = append(out, st.Dim.Render("no explanation of the concurrent run"))
		}
	}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
		for _, e := range r.Explain[m] {
			total := opTime(r, m, e)
			parts := make([]string, 0, 3)
			for i, b := range e.Bounds {
				if i == 3 {
					break
				}
				parts = append(parts, resourceLabel(b.Resource)+" "+report.WholePercent(float64(b.Nanos)/total))
			}
			out = append(out, st.Label.Render(fit("alone", 6))+st.Dim.Render(fit(string(e.Op), 9))+strings.Join(parts, " · "))
		}
	}
	return append(out, adviceLines(st, r, w, caps, v)...)
}

// graphFigures are a result's graph figures, in ns and ratios: the
// result's own where the profiler filled them, else the one-pair forms
// (T_serial = T_comp + T_comm, T_ideal = the longer of the two). U falls
// back to S_real (uplift) until the profiler fills it; uFilled says
// whether it did.
func graphFigures(r *profiler.Result) (tSerial, tIdeal, u float64, uFilled bool) {
	tSerial, tIdeal = r.TSerial, r.TIdeal
	if tSerial <= 0 {
		tSerial = r.TComp.Median + r.TComm.Median
	}
	if tIdeal <= 0 {
		tIdeal = max(r.TComp.Median, r.TComm.Median)
	}
	u, _ = uplift(*r)
	return tSerial, tIdeal, u, r.Uplift > 0
}

// figureLines are the why panel's first lines: the times the figures come
// from and the figures, U last, as the one a strategy is judged by, each
// with its interval when r has them ("T_c3 1.41 ms ± 4 µs", "F 89.0% ±
// 1.2"). A deterministic result says once, after T_c3, that it has none;
// F past 100 % inside its interval reads "within noise". The figures are
// wrapped at " · " to the panel's width w.
func figureLines(st Styles, r *profiler.Result, w int) []string {
	tSerial, tIdeal, u, filled := graphFigures(r)
	ci := ciOf(r)
	lab := func(s string) string { return st.Label.Render(s + " ") }
	val := func(s string) string { return st.Value.Render(s) }
	times := []string{
		lab("T_serial") + val(durationPM(tSerial, ci, func(c *profiler.Intervals) profiler.Interval { return c.TSerial })),
		lab("T_ideal") + val(durationPM(tIdeal, ci, func(c *profiler.Intervals) profiler.Interval { return c.TIdeal })),
		lab("T_c3") + val(durationPM(r.TC3.Median, ci, func(c *profiler.Intervals) profiler.Interval { return c.TC3 })),
	}
	if r.Deterministic && ci == nil {
		note := noIntervalNote
		if me := r.ModelError; me != nil {
			// A model's figures: its error on held-out GPU runs stands
			// where a measurement's interval would.
			note = report.ModelErrorC3(*me)
		}
		times = append(times, st.Dim.Render(note))
	}
	f := fractionText(r)
	fStyle := st.Value
	if _, _, _, state := fraction(r); state == fracPast {
		fStyle = st.Warn
	}
	uIv := func(c *profiler.Intervals) profiler.Interval { return c.U }
	uNote := " over the serial default"
	if !filled {
		uIv = func(c *profiler.Intervals) profiler.Interval { return c.SReal }
		uNote = " (S_real until the serial default is measured)"
	}
	figs := []string{
		lab("S_ideal") + val(ratioPM(r.IdealSpeedup, ci, func(c *profiler.Intervals) profiler.Interval { return c.SIdeal })),
		lab("S_real") + val(ratioPM(r.RealizedSpeedup, ci, func(c *profiler.Intervals) profiler.Interval { return c.SReal })),
		lab("F") + fStyle.Render(f),
		lab("U") + val(ratioPM(u, ci, uIv)),
	}
	out := joinWrapped(st, times, w)
	if me := r.ModelError; me != nil && ci == nil {
		out = append(out, st.Dim.Render(fit("model errors: "+report.ModelErrorScope(*me), w)))
	}
	if ci == nil && !r.Deterministic && r.NoCI != "" {
		out = append(out, st.Dim.Render(fit("no interval: "+shortReason(r.NoCI), w)))
	}
	for _, b := range r.Bimodal {
		out = append(out, bimodalLine(st, b, w))
	}
	figLines := joinWrapped(st, figs, w)
	if last := len(figLines) - 1; ansiWidth(figLines[last]+uNote) <= w {
		figLines[last] += st.Dim.Render(uNote)
	}
	return append(out, figLines...)
}

// shortReason is the first clause of a reason (Result.NoCI): up to its
// first ", " or "; ", so that it fits a panel's line.
func shortReason(s string) string {
	for _, sep := range []string{"; ", ", "} {
		if i := strings.Index(s, sep); i > 0 {
			s = s[:i]
		}
	}
	return s
}

// bimodalLine says a time has two modes, both with their share, and that
// its median describes neither: "T_c3 is bimodal: 5.85 ms (55%) and 6.97
// ms (45%); the median describes neither", the tail left off where w is
// too narrow for it.
func bimodalLine(st Styles, b profiler.Bimodal, w int) string {
	head := st.Warn.Render(b.Time + " is bimodal: ")
	modes := st.Value.Render(report.Duration(b.Modes[0].Median)) + st.Dim.Render(" ("+report.WholePercent(b.Modes[0].Share)+") and ") +
		st.Value.Render(report.Duration(b.Modes[1].Median)) + st.Dim.Render(" ("+report.WholePercent(b.Modes[1].Share)+")")
	line := head + modes
	if tail := st.Dim.Render("; the median describes neither"); ansiWidth(line+tail) <= w {
		line += tail
	}
	return fit(line, w)
}

// joinWrapped joins parts with " · " into lines of at most w cells,
// starting a new line before a part that does not fit.
func joinWrapped(st Styles, parts []string, w int) []string {
	sep := st.Dim.Render(" · ")
	var out []string
	line := ""
	for _, p := range parts {
		switch {
		case line == "":
			line = p
		case ansiWidth(line+sep+p) <= w:
			line += sep + p
		default:
			out = append(out, line)
			line = p
		}
	}
	return append(out, line)
}

// graphOpLines explains each graph op of r (Result.Ops): its label, its
// time in the concurrent run against its time alone (the slowdown), and
// the bounds the backend reported for it, matched by label or name.
// Explanations that match no op follow, by role, so none is lost.
func graphOpLines(st Styles, r *profiler.Result, c3 []backends.OpExplanation, w int) []string {
	used := make([]bool, len(c3))
	var out []string
	ci := ciOf(r)
	for k, o := range r.Ops {
		opStyle := st.Compute
		if o.Role == scenarios.RoleComm {
			opStyle = st.Comm
		}
		label := strings.TrimPrefix(o.Label, o.Name+": ")
		slow := o.Slowdown
		if slow == 0 && o.TAlone.Median > 0 {
			slow = o.TInC3.Median / o.TAlone.Median
		}
		head := opStyle.Render(fit(o.Name, 9)) + st.Value.Render(label) +
			st.Dim.Render(" · "+report.Duration(o.TInC3.Median)+" in C3, "+report.Duration(o.TAlone.Median)+" alone")
		if slow > 0 {
			slowText := report.Ratio(slow)
			if ci != nil && k < len(ci.Ops) {
				slowText = ratioPM(slow, ci, func(c *profiler.Intervals) profiler.Interval { return c.Ops[k] })
			}
			head += st.Dim.Render(" (") + slowStyle(st, slow).Render(slowText) + st.Dim.Render(")")
		}
		out = append(out, head)
		for i, e := range c3 {
			if used[i] || !explains(e, o) {
				continue
			}
			used[i] = true
			total := o.TInC3.Median
			if total <= 0 {
				total = opTime(r, backends.ModeConcurrent, e)
			}
			out = append(out, boundLines(st, opStyle, e.Bounds, total, w)...)
			break
		}
	}
	for i, e := range c3 {
		if used[i] {
			continue
		}
		opStyle := st.Compute
		if e.Op == backends.OpComm {
			opStyle = st.Comm
		}
		total := opTime(r, backends.ModeConcurrent, e)
		out = append(out, opStyle.Render(fit(string(e.Op), 9))+st.Value.Render(e.Label))
		out = append(out, boundLines(st, opStyle, e.Bounds, total, w)...)
	}
	return out
}

// explains reports whether explanation e is about graph op o: its label
// is the op's ("qkv: gemm ..."), starts with the op's name, or is it.
func explains(e backends.OpExplanation, o profiler.OpResult) bool {
	return e.Label == o.Label || e.Label == o.Name || strings.HasPrefix(e.Label, o.Name+": ")
}

// slowStyle colours a slowdown: bad from 1.5x, plain below.
func slowStyle(st Styles, slow float64) lipgloss.Style {
	if slow >= 1.5 {
		return st.Bad
	}
	return st.Value
}

// boundLines lists an op's bounds, one resource a line: its time, its
// share of the op's time total, a bar on wide panels and the backend's
// detail, wrapped under itself (up to three lines).
func boundLines(st Styles, opStyle lipgloss.Style, bounds []backends.Bound, total float64, w int) []string {
	const resW, timeW, pctW = 14, 10, 6
	barW := 0
	if w >= 90 {
		barW = 10
	}
	var out []string
	for _, b := range bounds {
		share := float64(b.Nanos) / total
		line := "  " + st.Label.Render(fit(resourceLabel(b.Resource), resW)) +
			alignRight(report.Duration(float64(b.Nanos)), timeW-2) + alignRight(report.WholePercent(share), pctW) + "  "
		if barW > 0 {
			line += styledBar(st, opStyle, share, barW) + "  "
		}
		indent := 2 + resW + timeW - 2 + pctW + 2
		if barW > 0 {
			indent += barW + 2
		}
		parts := []string{b.Detail}
		if avail := w - indent; avail >= 24 {
			parts = strings.Split(ansi.Wrap(b.Detail, avail, " "), "\n")
			if len(parts) > 3 {
				parts = append(parts[:2], strings.Join(parts[2:], " "))
			}
		}
		out = append(out, line+st.Dim.Render(parts[0]))
		for _, p := range parts[1:] {
			out = append(out, strings.Repeat(" ", indent)+st.Dim.Render(p))
		}
	}
	return out
}

// adviceState is how far the model's advice on a scenario is.
type adviceState int

const (
	// adviceRules: no model advises here; the rules of thumb do.
	adviceRules adviceState = iota
	// adviceRanking: the model is ranking the strategies.
	adviceRanking
	// adviceReady: the model's advice is in.
	adviceReady
	// adviceFailed: the model could not advise (err says why).
	adviceFailed
)

// adviceView is what the why panel knows of the model's advice on the
// result's scenario.
type adviceView struct {
	state  adviceState
	advice heuristics.Advice
	err    error
	// noKey says no key applies the advice on this screen (the lessons):
	// the panel says whether the run used it instead of naming the key.
	noKey bool
}

// adviceLines is the advice on the result's scenario, fitted to the
// panel's width w: the model's (adviceReady: its strategy, predicted U
// and T_c3, its lead over the runner-up, the model, and its first other
// reasons), "ranking…" while the model runs, else the rules' with one
// line saying why the model's is missing (none when no model advises
// here).
func adviceLines(st Styles, r *profiler.Result, w int, caps backends.Capabilities, v adviceView) []string {
	label := st.Label.Render(fit("advice", 9))
	if v.state == adviceRanking {
		return []string{fitWidth(label+st.Dim.Render("ranking… (predicting every sensible strategy)"), w)}
	}
	a, why := v.advice, ""
	switch {
	case v.state == adviceFailed:
		a, why = heuristics.Advise(r.Scenario, caps), "rules of thumb: the model failed: "+errLine(v.err)
	case v.state == adviceReady && len(a.Predictions) == 0 && len(a.Reasons) > 0:
		// The model ran no candidate: its first reason says so.
		why, a.Reasons = "rules of thumb: "+a.Reasons[0], a.Reasons[1:]
	case v.state != adviceReady:
		a = heuristics.Advise(r.Scenario, caps)
	}
	name := a.Strategy.String()
	if a.Advised != "" && a.Advised != name {
		name += " (" + a.Advised + ")"
	}
	head := label + st.Value.Render(name)
	switch {
	case a.Strategy.Normalize() == r.Strategy.Normalize():
		head += st.Dim.Render(" (in force)")
	case v.noKey:
		head += st.Dim.Render(" (not the strategy run here)")
	default:
		head += st.Dim.Render(" (a applies it)")
	}
	out := []string{fitWidth(head, w)}
	const indent = "         "
	if why != "" {
		out = append(out, fitWidth(st.Warn.Render(indent+why), w))
	}
	reasons := a.Reasons
	if len(a.Predictions) > 0 {
		out = append(out, predictedLine(st, a, w-len(indent), indent))
		// The predicted figures are on the line above.
		reasons = nil
		for _, rs := range a.Reasons {
			if !strings.HasPrefix(rs, "predicted by ") {
				reasons = append(reasons, rs)
			}
		}
	}
	for i, reason := range reasons {
		if i == 2 {
			break
		}
		for j, line := range strings.Split(ansi.Wrap(reason, max(w-11, 20), " "), "\n") {
			prefix := indent
			if j == 0 {
				prefix = "       · "
			}
			out = append(out, st.Dim.Render(prefix+line))
		}
	}
	return out
}

// predictedLine is the model's figures for its advice, indented, in w
// cells after the indent: "predicted U 2.07x · T_c3 659 µs · 12.3 %
// ahead of dma-prio · by the built-in h200 profile", the later parts
// left off where they do not fit.
func predictedLine(st Styles, a heuristics.Advice, w int, indent string) string {
	adv := a.Predictions[0]
	parts := []string{
		st.Label.Render("predicted U ") + st.Value.Render(report.Uplift(adv.Uplift)),
		st.Label.Render("T_c3 ") + st.Value.Render(report.Duration(adv.TC3)),
	}
	if len(a.Predictions) > 1 {
		if lead := runnerUpLead(adv, a.Predictions[1]); lead != "" {
			parts = append(parts, st.Dim.Render(lead))
		}
	}
	if a.Model != "" {
		parts = append(parts, st.Dim.Render("by "+a.Model))
	}
	sep := st.Dim.Render(" · ")
	line := parts[0]
	for _, p := range parts[1:] {
		if ansiWidth(line+sep+p) > w {
			break
		}
		line += sep + p
	}
	return indent + fitWidth(line, max(w, 1))
}

// runnerUpLead says how the advice stands against the runner-up: "tied
// with NAME" within 0.05 % of its T_c3, else "12.3 % ahead of NAME" (how
// much longer the runner-up's predicted T_c3 is).
func runnerUpLead(adv, next heuristics.Prediction) string {
	if adv.TC3 <= 0 || next.TC3 <= 0 || next.Err != "" {
		return ""
	}
	lead := next.TC3/adv.TC3 - 1
	if math.Abs(lead) < 5e-4 {
		return "tied with " + next.Name
	}
	return fmt.Sprintf("%.1f %% ahead of %s", 100*lead, next.Name)
}

// whyPanel says what bounded each op of the result, and the advice.
type whyPanel struct{ detailFrame }

// Update handles no message: the advice key is the lab's.
func (p *whyPanel) Update(*Model, tea.Msg) (tea.Cmd, bool) { return nil, false }

// View is the why box.
func (p *whyPanel) View(m *Model) []string {
	if p.w <= 0 || p.h <= 0 {
		return nil
	}
	return p.frame(m.styles, whyTitle(), whyLinesAdvised(m.styles, m.result, p.w-2, m.name, m.caps, m.adviceView()))
}
