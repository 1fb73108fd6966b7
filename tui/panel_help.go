package tui

import (
	"fmt"
	"strings"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

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

// knobRows are the help's rows of the knob keys of table ks: each key of
// each knob as k binds it, what it does on this device, the knob's value
// in s, and "n/a on BACKEND" where the backend cannot turn it.
func knobRows(ks scenarios.Knobs, k KeyMap, s scenarios.Strategy, c backends.Capabilities, backend string) []helpEntry {
	s = s.Normalize()
	var rows []helpEntry
	for _, kk := range knobKeys(ks) {
		ok := kk.usable(c)
		state := "n/a on " + backend
		if ok {
			state = kk.knob.Setting(s, c.Limits)
		}
		rows = append(rows, helpEntry{kk.binding(k), kk.key.Help(c.Limits), state, ok})
	}
	return rows
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
	return []helpGroup{
		{"scenarios", []helpEntry{
			{k.Up, "move up", "", true},
			{k.Down, "move down", "", true},
			{k.Pick, "measure the scenario under the cursor", "", true},
			{k.NextPanel, "next detail panel (small screens)", "", true},
		}},
		{"strategy knobs (each change measures again)", knobRows(scenarios.StrategyKnobs(), k, s, c, backend)},
		{"view (timeline and utilization panels)", []helpEntry{
			{k.GPU, "GPU shown: cycles the result's devices", gpuLabel(v.gpu, v.n), true},
			{pair(k.ZoomIn, k.ZoomOut, ""), "zoom the timeline in / out, 1x to 16x", fmt.Sprintf("%dx", v.zoom.factor()), true},
			{pair(k.PanLeft, k.PanRight, ""), "pan the zoomed timeline half a window", "", true},
			{k.ZoomReset, "reset the zoom: the whole repetition", "", true},
		}},
		{"general", []helpEntry{
			{k.Advice, "apply the advice: the model's, else the rules'", "", true},
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
// Descriptions wrap at word boundaries in a column as wide as the longest
// one needs, or as the width leaves beside the knobs' values; where too
// little is left, a value goes on its own line below its description.
func helpOverlayLines(st Styles, groups []helpGroup, w, h int) []string {
	const keyW, gap = 8, 3
	descMax, stateW := 0, 0 // of the entries that show a value
	for _, g := range groups {
		for _, e := range g.entries {
			if e.state != "" {
				descMax = max(descMax, ansiWidth(e.desc))
				stateW = max(stateW, ansiWidth(e.state))
			}
		}
	}
	beside := w-keyW-gap-stateW >= 24 // room for the values beside the descriptions
	fullW, valueW := max(w-keyW, 1), max(w-keyW, 1)
	if beside {
		valueW = min(descMax, w-keyW-gap-stateW)
	}
	var blocks [][]string
	for _, g := range groups {
		block := wrapWords(st.Title.Render(g.title), w)
		for _, e := range g.entries {
			keyStyle, descStyle := st.Key, lipgloss.NewStyle()
			stateStyle := st.Selected
			if !e.ok {
				keyStyle, descStyle, stateStyle = st.Dim, st.Dim, st.Warn
			}
			descW := fullW
			if e.state != "" {
				descW = valueW
			}
			desc := wrapWords(e.desc, descW)
			pad := strings.Repeat(" ", keyW)
			for i, d := range desc {
				lead := pad
				if i == 0 {
					lead = keyStyle.Render(fit(e.b.Help().Key, keyW))
				}
				line := lead + descStyle.Render(d)
				if i == 0 && beside && e.state != "" {
					line = lead + descStyle.Render(fit(d, descW)) + strings.Repeat(" ", gap) + stateStyle.Render(e.state)
				}
				block = append(block, line)
			}
			if !beside && e.state != "" {
				for _, l := range wrapWords("now "+e.state, descW) {
					block = append(block, pad+stateStyle.Render(l))
				}
			}
		}
		blocks = append(blocks, block)
	}
	n := 0
	for _, b := range blocks {
		n += len(b)
	}
	spaced := n+len(blocks)-1 <= h
	var out []string
	for i, b := range blocks {
		if i > 0 && spaced {
			out = append(out, "")
		}
		out = append(out, b...)
	}
	glossary := append([]string{"", st.Title.Render("what the figures mean")}, glossaryLines(w)...)
	if len(out)+len(glossary) <= h {
		out = append(out, glossary...)
	}
	return out
}

// glossaryLines explains the figures at width w, each term in a column of
// its own and its meaning wrapped beside it.
func glossaryLines(w int) []string {
	const termW = 16
	var out []string
	for _, g := range [][2]string{
		{"T_comp, T_comm", "medians of each op alone; T_c3: both at once"},
		{"ideal", "(T_comp+T_comm) / max(T_comp,T_comm): perfect overlap"},
		{"realized", "(T_comp+T_comm) / T_c3"},
		{"% of ideal", "(realized-1) / (ideal-1); below 0: slower than serial"},
		{"slowdown", "an op's time in C3 over its time alone"},
	} {
		for i, l := range wrapWords(g[1], max(w-termW, 1)) {
			term := ""
			if i == 0 {
				term = g[0]
			}
			out = append(out, fit(term, termW)+l)
		}
	}
	return out
}

// messageLines shows a status message in full at width w, for the help
// overlay when the status line had to cut it.
func messageLines(st Styles, s status, w int) []string {
	out := append([]string{st.Title.Render("last message (cut short in the status line)")}, wrapWords(statusText(s), w)...)
	return append(out, "")
}

// helpMode is the help overlay as a mode: every key and knob, with each
// knob's value and what the view keys show, scrolled with its own keys.
type helpMode struct {
	size
	keys helpKeys
	// top is the first line shown.
	top int
}

// helpKeys are the help overlay's keys.
type helpKeys struct{ up, down, toggle, close, quit key.Binding }

func newHelpMode(k KeyMap) *helpMode {
	return &helpMode{keys: helpKeys{up: k.Up, down: k.Down, toggle: k.Help, close: k.Close, quit: k.Quit}}
}

// ShortHelp lists the overlay's keys.
func (h *helpMode) ShortHelp() []key.Binding {
	return []key.Binding{h.keys.up, h.keys.down, h.keys.toggle, h.keys.close}
}

// FullHelp lists the overlay's keys.
func (h *helpMode) FullHelp() [][]key.Binding { return fullHelp(h) }

// Update scrolls, or closes the overlay; it keeps every other key from
// the lab but quit.
func (h *helpMode) Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse) {
	km, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return nil, passed
	}
	switch {
	case key.Matches(km, h.keys.quit):
		return nil, passed
	case key.Matches(km, h.keys.toggle, h.keys.close):
		return nil, closed
	case key.Matches(km, h.keys.up):
		h.scroll(m, -1)
	case key.Matches(km, h.keys.down):
		h.scroll(m, 1)
	}
	return nil, took
}

// body is the overlay's width, its content and the rows it shows of it:
// the status message in full when the status line cut it, then the keys
// and knobs.
func (h *helpMode) body(m *Model) (w int, body []string, rows int) {
	// The overlay leaves the header, status and help lines visible.
	w, maxH := min(h.w-4, 84), h.h-3
	if statusCut(m.status, h.w) {
		// The status line cut the message; here it is whole.
		body = messageLines(m.styles, m.status, w-4)
	}
	v := helpView{gpu: m.gpu, n: len(m.gpus()), zoom: m.timeline.zoom}
	body = append(body, helpOverlayLines(m.styles, helpGroups(m.keys, m.strategy, m.caps, m.name, v), w-4, maxH-2-len(body))...)
	return w, body, maxH - 2
}

// scroll moves the first line shown by d, kept where the content allows.
func (h *helpMode) scroll(m *Model, d int) {
	_, body, rows := h.body(m)
	_, h.top = scrollLines(m.styles, body, h.top, rows)
	_, h.top = scrollLines(m.styles, body, h.top+d, rows)
}

// View is the overlay's box.
func (h *helpMode) View(m *Model) []string {
	w, body, rows := h.body(m)
	body, _ = scrollLines(m.styles, body, h.top, rows)
	title := "Help · keys and knobs (" + h.keys.toggle.Help().Key + " or " + h.keys.close.Help().Key + " closes)"
	return m.overlayBox(title, body, w)
}
