package tui

import (
	"slices"
	"strings"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// The lab is built of components, the way soft-serve and gh-dash build
// their TUIs: each panel of the main screen and each mode over it is a
// model with its own size, Update and View, and its own keys. The root
// (Model) holds the state they share (lab), routes every message, and
// draws the screen from the components' views each time; nothing is
// rendered ahead and cached, so no panel can be left stale.

// size is a component's size in cells; embedding it gives a component its
// SetSize.
type size struct{ w, h int }

// SetSize sets the component's size (0 x 0: hidden).
func (s *size) SetSize(w, h int) { s.w, s.h = w, h }

// panel is one rectangle of the main screen: the header, the scenario
// list, metrics, utilization, timeline, why, and the footer.
type panel interface {
	SetSize(w, h int)
	// Update handles msg; took is true when it was a key the panel used.
	Update(m *Model, msg tea.Msg) (cmd tea.Cmd, took bool)
	// View draws the panel at its size from its state and the lab's:
	// one string per line, each exactly as wide as the panel.
	View(m *Model) []string
}

// keyUse is what a mode did with a message.
type keyUse int

const (
	// passed: not the mode's; the mode below, then the lab, gets it.
	passed keyUse = iota
	// took: the mode handled it.
	took
	// closed: the mode handled it and leaves the stack.
	closed
)

// mode is one level of the mode stack over the main screen: playback,
// live, help, the sweep grid, the composer. The top mode gets each key
// first; a key it passes goes down the stack and, last, to the lab's own
// keys. Its own keys (a help.KeyMap) build the hints it shows.
type mode interface {
	help.KeyMap
	// SetSize gives the mode the screen's size.
	SetSize(w, h int)
	// Update handles msg, acting on the lab through m.
	Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse)
	// View is what the mode draws over the panels, centred; nil draws
	// nothing.
	View(m *Model) []string
}

// closer is a mode that holds something to release when it leaves the
// stack (the sweep's measurements).
type closer interface{ close() }

// modeStack is the lab's modes, bottom first. Every change makes a new
// slice, so a copy of the model never sees another copy's modes.
type modeStack []mode

// push adds md on top.
func (s modeStack) push(md mode) modeStack {
	return append(slices.Clip(s), md)
}

// remove takes md off the stack, wherever it is, releasing what it holds.
func (s modeStack) remove(md mode) modeStack {
	i := slices.Index(s, md)
	if i < 0 {
		return s
	}
	if c, ok := md.(closer); ok {
		c.close()
	}
	return slices.Delete(slices.Clone(s), i, i+1)
}

// closeAll releases what every mode holds (the lab is quitting).
func (s modeStack) closeAll() {
	for _, md := range s {
		if c, ok := md.(closer); ok {
			c.close()
		}
	}
}

// top is the top mode, nil when the stack is empty.
func (s modeStack) top() mode {
	if len(s) == 0 {
		return nil
	}
	return s[len(s)-1]
}

// find returns the mode of type T on the stack, the zero T when none is.
func find[T mode](s modeStack) T {
	for _, md := range slices.Backward(s) {
		if t, ok := md.(T); ok {
			return t
		}
	}
	var zero T
	return zero
}

// has reports whether a mode of type T is on the stack.
func has[T mode](s modeStack) bool {
	for _, md := range s {
		if _, ok := md.(T); ok {
			return true
		}
	}
	return false
}

// hint joins bindings' help into one line: "key desc" items separated by
// sep, for a mode's hint line.
func hint(bindings []key.Binding, sep string) string {
	parts := make([]string, 0, len(bindings))
	for _, b := range bindings {
		parts = append(parts, strings.TrimSpace(b.Help().Key+" "+b.Help().Desc))
	}
	return strings.Join(parts, sep)
}

// fullHelp is a mode's full help: its short help as one column.
func fullHelp(k help.KeyMap) [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }
