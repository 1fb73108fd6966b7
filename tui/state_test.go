package tui

import (
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// The screen is drawn from the state each time: a change made without a
// message (as a command's result or a test makes it) shows on the next
// View, in every panel it touches; no render call can be missed.
func TestViewFollowsState(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Model)
		want   string
	}{
		{"status line", func(m *Model) { m.status = status{statusWarn, "a fresh message"} }, "! a fresh message"},
		{"header strategy", func(m *Model) { m.strategy = dmaStrategy() }, "strategy comm-first dma"},
		{"metrics of a new result", func(m *Model) { m.setResult(fixtureResult(m.suite[1], scenarios.Strategy{})) }, "Metrics · a2a-moe-comm-long"},
		{"list summary", func(m *Model) {
			m.sums["stream-ag-memory-bound"] = summary{class: profiler.CommLong, fraction: 0.5, ok: true}
		}, "comm 50%"},
		{"timeline of a result without spans", func(m *Model) {
			r := *m.result
			r.Timeline = nil
			m.setResult(r)
		}, "no timeline yet"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := fixedModel(t, 160, 50, scenarios.Strategy{})
			if strings.Contains(ansi.Strip(m.View().Content), tc.want) {
				t.Fatalf("%q on screen before the change", tc.want)
			}
			tc.change(&m)
			if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, tc.want) {
				t.Errorf("%q not on screen after the change:\n%s", tc.want, screen)
			}
		})
	}
}

// A lab without a backend or scenarios says so in its status line at any
// size; it never panics.
func TestLabWithoutBackend(t *testing.T) {
	for _, cfg := range []Config{{}, {Backend: newFake()}} {
		m := New(cfg)
		for _, size := range [][2]int{{80, 24}, {160, 50}, {50, 12}} {
			nm, _ := m.Update(tea.WindowSizeMsg{Width: size[0], Height: size[1]})
			m = nm.(Model)
			for _, k := range []string{"j", "enter", "tab", "g", "+", "?", "esc", "s", "n", "esc", "l", "a", "r", "o"} {
				m = press(m, k)
			}
			screen := ansi.Strip(m.View().Content)
			if size[0] >= minWidth && !strings.Contains(screen, "no backend") && !strings.Contains(screen, "no scenarios") {
				t.Errorf("%v at %v: the screen does not say what is missing:\n%s", cfg.Backend, size, screen)
			}
		}
	}
}
