package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/scenarios"
)

// TestFlowKnobThatCannotMatter flips knobs that cannot change the scenario
// on this backend: the lab applies them and measures, and says why they
// cannot matter the moment the key is pressed and still once the result
// is in; a knob that matters gets no such note.
func TestFlowKnobThatCannotMatter(t *testing.T) {
	const model = "one copy engine moves 394 GB/s, more than the 373 GB/s of copies NVLink carries"
	for _, tc := range []struct {
		name  string
		keys  []string // pressed first, each waited for
		key   string
		check func(scenarios.Strategy) bool // the strategy the key must apply
		note  string                        // "" when the knob matters
	}{
		{"a CTA cap on a dma all-gather", []string{"d"}, "c",
			func(s scenarios.Strategy) bool { return s.CommCTAs == 8 && s.CommEngine == scenarios.EngineDMA },
			"a CTA cap cannot change a dma all-gather"},
		{"priority on copy engines only", []string{"d"}, "p",
			func(s scenarios.Strategy) bool { return s.CommPriority == -5 }, "a stream priority cannot change a dma all-gather"},
		{"a comm partition for a collective with no kernel", []string{"d"}, "]",
			func(s scenarios.Strategy) bool { return s.CommSMs == 8 }, "the 8-SM comm partition stays idle"},
		{"copy engines, by the backend's model", []string{"d"}, "e",
			func(s scenarios.Strategy) bool { return s.CopyEngines == 1 }, model},
		{"launch order matters", nil, "o",
			func(s scenarios.Strategy) bool { return s.Launch == scenarios.CommFirst }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.delay = 30 * time.Millisecond
			fake.noEffect = func(_ scenarios.Scenario, from, to scenarios.Strategy) string {
				if from.CopyEngines != to.CopyEngines {
					return model
				}
				return ""
			}
			tm, obs := startLab(t, fake, 120, 40)
			s := obs.wait(t, tm, "the first measurement", idle)
			for _, k := range tc.keys {
				seq := s.seq
				tm.Type(k)
				s = obs.wait(t, tm, "the result after "+k, func(s snapshot) bool { return idle(s) && s.seq > seq })
			}
			seq := s.seq
			tm.Type(tc.key)
			s = obs.wait(t, tm, "the key's measurement", func(s snapshot) bool { return s.seq > seq })
			if tc.note != "" && (s.status.kind != statusWarn || !strings.Contains(s.status.text, tc.note) || !strings.Contains(s.status.text, "measuring anyway")) {
				t.Errorf("on the key: status %+v, want a warning with %q", s.status, tc.note)
			}
			s = obs.wait(t, tm, "the key's result", func(s snapshot) bool { return idle(s) && tc.check(s.resSt) })
			switch {
			case tc.note == "" && (s.status.kind != statusInfo || strings.Contains(s.status.text, "cannot")):
				t.Errorf("a knob that matters got the note %+v", s.status)
			case tc.note != "" && (s.status.kind != statusWarn || !strings.Contains(s.status.text, tc.note) || !strings.Contains(s.status.text, s.frac)):
				t.Errorf("with the result: status %+v, want the note and the result (%s)", s.status, s.frac)
			}
			// The next change clears the note.
			tm.Type("r")
			s = obs.wait(t, tm, "the rerun", func(s snapshot) bool { return idle(s) && s.seq > seq+1 })
			if strings.Contains(s.status.text, "cannot") {
				t.Errorf("after a rerun the note stays: %+v", s.status)
			}
			tm.Type("q")
			tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
		})
	}
}
