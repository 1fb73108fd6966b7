package tui

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/exp/teatest/v2"
)

// TestFlowSweepCompletes runs the lab's sweep heatmap to the end: the
// status line follows its progress and, once every cell is measured, says
// the sweep is done and which cell did best, not "sweeping".
func TestFlowSweepCompletes(t *testing.T) {
	fake := newFake()
	fake.delay = 5 * time.Millisecond
	tm, obs := startLab(t, fake, 120, 40)
	obs.wait(t, tm, "the first measurement", idle)
	tm.Type("s")
	s := obs.wait(t, tm, "the sweep to start", func(s snapshot) bool { return strings.Contains(s.screen, "Sweep · ag-gemm-balanced") })
	total := newGrid(t.Context(), testSuite()[0], fake.caps).total()
	if total != 16 {
		t.Fatalf("the fake's grid has %d cells, want 16", total)
	}
	s = obs.wait(t, tm, "a cell or more", func(s snapshot) bool { return strings.Contains(s.status.text, "/16 measured") })
	if !strings.Contains(s.status.text, "sweeping") {
		t.Errorf("status while sweeping: %q", s.status.text)
	}
	s = obs.wait(t, tm, "the last cell", func(s snapshot) bool { return strings.Contains(s.screen, "16/16 measured") })
	s = obs.wait(t, tm, "the status to follow", func(s snapshot) bool { return strings.Contains(s.status.text, "16/16") })
	if strings.Contains(s.status.text, "sweeping") || !strings.Contains(s.status.text, "sweep done") || !strings.Contains(s.status.text, "best") {
		t.Errorf("status after the last cell: %q", s.status.text)
	}
	if !strings.Contains(s.screen, "sweep done") {
		t.Errorf("the screen does not say the sweep is done:\n%s", s.screen)
	}
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEscape})
	tm.Type("q")
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
}
