package tui

import (
	"strings"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
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

// whyLines lists, per op of the concurrent run, each bounding resource with
// its time, its share of the op's time and the backend's detail; then the
// isolated runs' main bounds, one line per op.
func whyLines(st Styles, r *profiler.Result, w int, backend string, caps backends.Capabilities) []string {
	if r == nil {
		return []string{st.Dim.Render("no measurement yet")}
	}
	c3 := r.Explain[backends.ModeConcurrent]
	if len(c3) == 0 && len(r.Explain) == 0 {
		// No explanation, but the advice holds on any backend.
		return append([]string{st.Dim.Render("the " + backend + " backend does not say what bounded its runs")}, adviceLines(st, r, w, caps)...)
	}
	const resW, timeW, pctW = 14, 10, 6
	barW := 0
	if w >= 90 {
		barW = 10
	}
	var out []string
	for _, e := range c3 {
		total := opTime(r, backends.ModeConcurrent, e)
		opStyle := st.Compute
		slow := r.CompSlowdown
		if e.Op == backends.OpComm {
			opStyle, slow = st.Comm, r.CommSlowdown
		}
		out = append(out, opStyle.Render(fit(string(e.Op), 9))+st.Value.Render(e.Label)+
			st.Dim.Render(" · "+report.Duration(total)+" in C3 ("+report.Ratio(slow)+" its time alone)"))
		for _, b := range e.Bounds {
			share := float64(b.Nanos) / total
			line := "  " + st.Label.Render(fit(resourceLabel(b.Resource), resW)) +
				alignRight(report.Duration(float64(b.Nanos)), timeW-2) + alignRight(report.WholePercent(share), pctW) + "  "
			if barW > 0 {
				line += styledBar(st, opStyle, share, barW) + "  "
			}
			// A long detail wraps under itself (up to three lines).
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
	}
	if len(c3) == 0 {
		out = append(out, st.Dim.Render("no explanation of the concurrent run"))
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
	return append(out, adviceLines(st, r, w, caps)...)
}

// adviceLines is the heuristics' suggestion for the result's scenario and
// its first reasons, wrapped to the panel.
func adviceLines(st Styles, r *profiler.Result, w int, caps backends.Capabilities) []string {
	a := heuristics.Advise(r.Scenario, caps)
	head := st.Label.Render(fit("advice", 9)) + st.Value.Render(a.Strategy.String())
	if a.Strategy.Normalize() == r.Strategy.Normalize() {
		head += st.Dim.Render(" (in force)")
	} else {
		head += st.Dim.Render(" (a applies it)")
	}
	out := []string{head}
	for i, reason := range a.Reasons {
		if i == 2 {
			break
		}
		for j, line := range strings.Split(ansi.Wrap(reason, max(w-11, 20), " "), "\n") {
			prefix := "         "
			if j == 0 {
				prefix = "       · "
			}
			out = append(out, st.Dim.Render(prefix+line))
		}
	}
	return out
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
	return p.frame(m.styles, whyTitle(), whyLines(m.styles, m.result, p.w-2, m.name, m.caps))
}
