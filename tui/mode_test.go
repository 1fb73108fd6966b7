package tui

import (
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// Typing q in the composer types it (scenario names hold q: qkv); the
// composer is on top of the mode stack, so it gets the key before the
// lab's quit. ctrl+c, which no field takes, still quits.
func TestComposerTypesQ(t *testing.T) {
	m := press(fixedModel(t, 120, 40, scenarios.Strategy{}), "n")
	nm, _ := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
	m = nm.(Model)
	if m.quitting {
		t.Fatal("q in the composer quit the lab")
	}
	if got := m.comp().fields[0].value; !strings.HasSuffix(got, "-customq") {
		t.Errorf("name field %q, want the q typed at its end", got)
	}
	nm, cmd := m.Update(tea.KeyPressMsg{Code: 'c', Mod: tea.ModCtrl})
	if !nm.(Model).quitting || cmd == nil || !isQuit(cmd) {
		t.Error("ctrl+c in the composer did not quit")
	}
}

// isQuit reports whether cmd quits the program.
func isQuit(cmd tea.Cmd) bool {
	_, ok := cmd().(tea.QuitMsg)
	return ok
}

// idleModel is a lab on the fake backend with a result on screen and no
// measurement in flight.
func idleModel(t *testing.T) Model {
	t.Helper()
	return fixedModel(t, 120, 40, scenarios.Strategy{})
}

// The top mode gets each key first, and esc closes the top mode only:
// help over live mode keeps l from turning live off; esc closes help,
// then live.
func TestModeStackTopFirst(t *testing.T) {
	m := press(idleModel(t), "l")
	m.running = false
	m = press(m, "?")
	if !m.liveRun() || !m.showHelp() {
		t.Fatalf("live %v, help %v, want both", m.liveRun(), m.showHelp())
	}
	seq := m.seq
	if m = press(m, "l"); !m.liveRun() || m.seq != seq {
		t.Error("l under the help overlay reached live mode")
	}
	if m = press(m, "esc"); m.showHelp() || !m.liveRun() {
		t.Errorf("esc: help %v, live %v; want help closed, live on", m.showHelp(), m.liveRun())
	}
	if m = press(m, "esc"); m.liveRun() || !strings.Contains(m.status.text, "live off") {
		t.Errorf("esc again: live %v, status %q", m.liveRun(), m.status.text)
	}
	if len(m.modes) != 0 {
		t.Errorf("%d modes left", len(m.modes))
	}
}

// Quit passes through the modes that keep every other key.
func TestModeStackQuitPasses(t *testing.T) {
	for _, tc := range []struct {
		name string
		open string
	}{{"help", "?"}, {"sweep", "s"}, {"live", "l"}} {
		t.Run(tc.name, func(t *testing.T) {
			m := press(idleModel(t), tc.open)
			if len(m.modes) != 1 {
				t.Fatalf("%s opened %d modes", tc.open, len(m.modes))
			}
			g := m.grid()
			nm, cmd := m.Update(tea.KeyPressMsg{Code: 'q', Text: "q"})
			if !nm.(Model).quitting || cmd == nil || !isQuit(cmd) {
				t.Errorf("q under %s did not quit", tc.name)
			}
			if g != nil && g.ctx.Err() == nil {
				t.Error("quitting left the sweep measuring")
			}
		})
	}
}

// Each copy of the model has its own modes: opening one on a copy leaves
// the original and its other copies alone.
func TestModeStackCopies(t *testing.T) {
	m := idleModel(t)
	a := press(m, "?")
	b := press(m, "n")
	switch {
	case len(m.modes) != 0:
		t.Errorf("the original has %d modes", len(m.modes))
	case !a.showHelp() || a.comp() != nil:
		t.Errorf("copy a: help %v, composer %v", a.showHelp(), a.comp() != nil)
	case b.showHelp() || b.comp() == nil:
		t.Errorf("copy b: help %v, composer %v", b.showHelp(), b.comp() != nil)
	}
	if c := press(a, "esc"); c.showHelp() || !a.showHelp() {
		t.Errorf("closing help on a copy of a: copy %v, a %v", c.showHelp(), a.showHelp())
	}
}

// The modes' hint lines are built from their own key maps.
func TestModeHints(t *testing.T) {
	g := newGrid(t.Context(), testSuite()[0], h200Caps())
	defer g.cancel()
	for _, tc := range []struct {
		km   interface{ ShortHelp() []key.Binding }
		sep  string
		want string
	}{
		{g, " · ", "arrows move · enter applies · esc closes"},
		{newComposer(testSuite()[0]), " · ", "↑/↓ field · enter add and measure · ctrl+s save YAML · esc close"},
		{newPlayer(Playback{}), ", ", "space play/pause, ←/→ step, {/} speed, home/end"},
		{newHelpMode(DefaultKeyMap()), " · ", "↑/k up · ↓/j down · ? help · esc close help"},
		{newLiveMode(DefaultKeyMap()), " · ", "l live (back to back) · esc close help"},
	} {
		if got := hint(tc.km.ShortHelp(), tc.sep); got != tc.want {
			t.Errorf("hint %q, want %q", got, tc.want)
		}
	}
}
