package tui

import (
	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// liveMode is live mode: the lab measures back to back, reusing the
// isolated baselines while the scenario and collective stay the same.
// Every key but its own passes to the lab below, so the knobs still
// turn; l or esc turns it off.
type liveMode struct {
	size
	keys liveKeys
}

// liveKeys are live mode's keys.
type liveKeys struct{ toggle, close key.Binding }

func newLiveMode(k KeyMap) *liveMode {
	return &liveMode{keys: liveKeys{toggle: k.Live, close: k.Close}}
}

// ShortHelp lists live mode's keys.
func (l *liveMode) ShortHelp() []key.Binding { return []key.Binding{l.keys.toggle, l.keys.close} }

// FullHelp lists live mode's keys.
func (l *liveMode) FullHelp() [][]key.Binding { return fullHelp(l) }

// Update starts the next live iteration on its tick, and turns live mode
// off on its keys.
func (l *liveMode) Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse) {
	switch msg := msg.(type) {
	case liveTickMsg:
		// The next live iteration, unless a knob or a toggle came first.
		if m.running || msg.seq != m.seq {
			return nil, took
		}
		m.seq++
		return m.start(), took
	case tea.KeyPressMsg:
		if key.Matches(msg, l.keys.toggle, l.keys.close) {
			m.liveOff()
			return nil, closed
		}
	}
	return nil, passed
}

// View draws nothing over the panels: the status line says live.
func (l *liveMode) View(*Model) []string { return nil }

// liveOff says live mode is off.
func (m *Model) liveOff() {
	m.status = status{statusInfo, "live off: measuring only when a knob changes"}
}
