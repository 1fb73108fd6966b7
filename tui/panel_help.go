package tui

import (
	"fmt"

	"charm.land/bubbles/v2/key"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// helpEntry is one row of the help overlay.
type helpEntry struct {
	b     key.Binding
	desc  string
	state string
	ok    bool // false: the backend lacks the knob
}

// helpGroup is a titled block of the help overlay.
type helpGroup struct {
	title   string
	entries []helpEntry
}

// helpView is what the view keys currently show: the device (of n
// present) and the timeline's zoom.
type helpView struct {
	gpu, n int
	zoom   tlZoom
}

// helpGroups builds the overlay's content from the key map, with each
// knob's current value and whether the backend can apply it, and what the
// view keys show (v).
func helpGroups(k KeyMap, s scenarios.Strategy, c backends.Capabilities, backend string, v helpView) []helpGroup {
	s = s.Normalize()
	lim := c.Limits
	na := "n/a on " + backend
	or := func(ok bool, v string) string {
		if ok {
			return v
		}
		return na
	}
	step := lim.SMStep
	if step <= 0 {
		step = 8
	}
	sms := "none"
	if s.CommSMs > 0 {
		sms = fmt.Sprintf("%d of %d", s.CommSMs, lim.SMs)
	}
	ctas := "library default"
	if s.CommCTAs > 0 {
		ctas = fmt.Sprintf("at most %d", s.CommCTAs)
	}
	ces := fmt.Sprintf("all %d", lim.CopyEngines)
	if s.CopyEngines > 0 {
		ces = fmt.Sprintf("%d of %d", s.CopyEngines, lim.CopyEngines)
	}
	if s.CommEngine != scenarios.EngineDMA {
		ces += " (with dma only)"
	}
	prioOK := c.Priority && lim.HighestPriority < 0
	return []helpGroup{
		{"scenarios", []helpEntry{
			{k.Up, "move up", "", true},
			{k.Down, "move down", "", true},
			{k.Pick, "measure the scenario under the cursor", "", true},
			{k.NextPanel, "next detail panel (small screens)", "", true},
		}},
		{"strategy knobs (each change measures again)", []helpEntry{
			{k.Launch, "launch order: compute-first / comm-first", string(s.Launch), true},
			{k.Priority, fmt.Sprintf("comm stream priority: 0 / %d", lim.HighestPriority), or(prioOK, fmt.Sprint(s.CommPriority)), prioOK},
			{k.SMsDown, fmt.Sprintf("comm SM partition -%d SMs", step), or(c.SMPartition, sms), c.SMPartition},
			{k.SMsUp, fmt.Sprintf("comm SM partition +%d SMs", step), or(c.SMPartition, sms), c.SMPartition},
			{k.CTAs, "comm CTA cap: default, 8, 16, 32", or(c.CommCTACap, ctas), c.CommCTACap},
			{k.DMA, "DMA offload: collective on copy engines", or(c.DMA, string(s.CommEngine)), c.DMA},
			{k.CEs, "copy engines used by a dma collective", or(c.DMA, ces), c.DMA},
		}},
		{"view (timeline and utilization panels)", []helpEntry{
			{k.GPU, "GPU shown: cycles the result's devices", gpuLabel(v.gpu, v.n), true},
			{pair(k.ZoomIn, k.ZoomOut, ""), "zoom the timeline in / out, 1x to 16x", fmt.Sprintf("%dx", v.zoom.factor()), true},
			{pair(k.PanLeft, k.PanRight, ""), "pan the zoomed timeline half a window", "", true},
			{k.ZoomReset, "reset the zoom: the whole repetition", "", true},
		}},
		{"general", []helpEntry{
			{k.Advice, "apply the heuristics' advice (see the why panel)", "", true},
			{k.Live, "live: measure back to back, baselines reused", "", true},
			{k.Sweep, "sweep: partitions x collective setups as a heatmap", "", true},
			{k.Compose, "compose a scenario from this one; save it as YAML", "", true},
			{k.Rerun, "measure again", "", true},
			{k.Record, "record the session; again stops and saves", "", true},
			{k.Help, "toggle this help (esc closes it too)", "", true},
			{k.Quit, "quit", "", true},
		}},
	}
}

// helpOverlayLines renders the overlay's body at inner width w and at most
// h lines: the figures' glossary and the spacing come only when they fit.
func helpOverlayLines(st Styles, groups []helpGroup, w, h int) []string {
	const keyW = 8
	descW := min(42, max(w-keyW-14, 10))
	n := 0
	for _, g := range groups {
		n += 1 + len(g.entries)
	}
	spaced := n+len(groups)-1 <= h
	var out []string
	for i, g := range groups {
		if i > 0 && spaced {
			out = append(out, "")
		}
		out = append(out, st.Title.Render(g.title))
		for _, e := range g.entries {
			line := st.Key.Render(fit(e.b.Help().Key, keyW)) + fit(e.desc, descW)
			switch {
			case !e.ok:
				line = st.Dim.Render(fit(e.b.Help().Key, keyW)+fit(e.desc, descW)) + " " + st.Warn.Render(e.state)
			case e.state != "":
				line += " " + st.Selected.Render(e.state)
			}
			out = append(out, line)
		}
	}
	glossary := []string{
		"",
		st.Title.Render("what the figures mean"),
		"T_comp, T_comm  medians of each op alone; T_c3: both at once",
		"ideal       (T_comp+T_comm) / max(T_comp,T_comm): perfect overlap",
		"realized    (T_comp+T_comm) / T_c3",
		"% of ideal  (realized-1) / (ideal-1); below 0: slower than serial",
		"slowdown    an op's time in C3 over its time alone",
	}
	if len(out)+len(glossary) <= h {
		out = append(out, glossary...)
	}
	return out
}
