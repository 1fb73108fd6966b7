package learn

import (
	"testing"
)

// TestBuiltinLessons parses every built-in lesson: at least the ten the
// course needs, each with a scenario, a figure, a knob that changes the
// strategy and committed H200 runs.
func TestBuiltinLessons(t *testing.T) {
	lim := simLimits()
	ls, err := Builtin(lim, committed(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) < 10 {
		t.Fatalf("%d lessons, want at least 10", len(ls))
	}
	seen := map[string]bool{}
	for _, l := range ls {
		if seen[l.ID] {
			t.Errorf("lesson ID %s twice", l.ID)
		}
		seen[l.ID] = true
		if l.Scenario.Name == "" || !l.Figure.Valid() || l.Title == "" {
			t.Errorf("%s: incomplete: %+v", l.ID, l)
		}
		to, err := l.To.Resolve(lim)
		if err != nil {
			t.Errorf("%s: %v", l.ID, err)
		}
		if l.From != nil {
			from, err := l.From.Resolve(lim)
			if err != nil {
				t.Errorf("%s: %v", l.ID, err)
			}
			if from == to {
				t.Errorf("%s: the knob flips %v to itself", l.ID, from)
			}
		}
		if len(l.H200.Strategies) == 0 {
			t.Errorf("%s: no H200 runs", l.ID)
		}
	}
}
