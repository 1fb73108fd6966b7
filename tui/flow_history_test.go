package tui

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// TestFlowHistoryMarkers flips two knobs on the simulator, recording the
// session, and checks that the history chart marks both strategy changes.
// Then it replays the recording: measured again on the replay backend
// with the same keys (c3lab replay FILE --lab), and played back result by
// result; both draw the same chart.
func TestFlowHistoryMarkers(t *testing.T) {
	b := sim.New(sim.H200())
	path := filepath.Join(t.TempDir(), "lab.c3rec")
	simChart := flipTwoKnobs(t, Config{Backend: b, Suite: scenarios.Builtin()[:3], Recorder: testRecorder(b), RecordPath: path})

	rec, err := recordings.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	rb := replay.New(rec)
	if got := flipTwoKnobs(t, Config{Backend: rb, Suite: rb.Scenarios()}); !slices.Equal(got, simChart) {
		t.Errorf("replay chart:\n%s\nsimulator chart:\n%s", strings.Join(got, "\n"), strings.Join(simChart, "\n"))
	}

	pm := New(Config{Backend: rb, Suite: rb.Scenarios(), Playback: &Playback{Results: rb.Results()}})
	nm, _ := pm.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	for range len(rb.Results()) - 1 {
		nm, _ = nm.Update(tea.KeyPressMsg{Code: tea.KeyRight})
	}
	if got := historyBlock(t, ansi.Strip(nm.(Model).View().Content)); !slices.Equal(got, simChart) {
		t.Errorf("playback chart:\n%s\nsimulator chart:\n%s", strings.Join(got, "\n"), strings.Join(simChart, "\n"))
	}
}

// flipTwoKnobs runs the lab for cfg at 160x50, turns the launch order and
// then the priority, checks the history chart shows two markers, quits,
// and returns the chart.
func flipTwoKnobs(t *testing.T, cfg Config) []string {
	t.Helper()
	tm, obs := startLabWith(t, cfg, 160, 50)
	obs.wait(t, tm, "the first measurement", idle)
	tm.Type("o")
	obs.wait(t, tm, "the comm-first result", func(s snapshot) bool { return idle(s) && s.resSt.Launch == scenarios.CommFirst })
	tm.Type("p")
	s := obs.wait(t, tm, "the prioritized result", func(s snapshot) bool { return idle(s) && s.resSt.CommPriority < 0 })
	block := historyBlock(t, s.screen)
	// A change is marked ┴, or ≈ when its U is not told apart from the
	// result before it (the simulator's priority may leave U as it was).
	if n := strings.Count(block[fracChartRows], "┴") + strings.Count(block[fracChartRows], "≈"); n != 2 {
		t.Errorf("%d markers under the chart, want 2:\n%s", n, strings.Join(block, "\n"))
	}
	if legend := block[fracChartRows+1]; !regexp.MustCompile(`[┴≈] cf  [┴≈] cf p-5`).MatchString(legend) {
		t.Errorf("legend %q does not name both changes", legend)
	}
	if !strings.Contains(block[1], "3 runs") {
		t.Errorf("chart does not count 3 results:\n%s", strings.Join(block, "\n"))
	}
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	fm.rec.all.closeAll() // as Run does once the program ends
	return block
}

// historyBlock cuts the history chart (its rows, markers and legend) out of
// a screen: from its label to the metrics panel's right edge.
func historyBlock(t *testing.T, screen string) []string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	for i, l := range lines {
		r := []rune(l)
		at := slices.Index(r, 'u')
		if !strings.Contains(l, "┤") || at < 0 || !strings.HasPrefix(string(r[at:]), "uplift U ") || i+fracChartLines > len(lines) {
			continue
		}
		end := at + slices.Index(r[at:], '│')
		block := make([]string, fracChartLines)
		for k := range block {
			block[k] = string([]rune(lines[i+k])[at:end])
		}
		return block
	}
	t.Fatalf("no history chart on screen:\n%s", screen)
	return nil
}
