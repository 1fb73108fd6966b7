// Package knobtest holds a dummy strategy knob for tests that show a new
// knob reaches every place the knob table feeds: flags, scenario files,
// validation, the lab's help and the backends' refusal.
package knobtest

import (
	"fmt"

	"github.com/c3lab/c3lab/scenarios"
)

// Key, Flag, Action and KeyName name the dummy knob in a scenario file,
// on the command line, in the lab's key file and on the keyboard; Need is
// the capability no backend has.
const (
	Key     = "dummy_depth"
	Flag    = "dummy-depth"
	Action  = "dummy"
	KeyName = "x"
	Need    = scenarios.Capability("pipeline dummy stages")
	// Max is the largest depth its validation allows.
	Max = 8
)

// Knob returns the dummy knob, a whole number 0..Max, and where its
// setting is kept. Strategy has no field for it, so its Value points at
// the returned variable whatever the strategy: one setting per table,
// which is all a test needs.
func Knob() (scenarios.Knob, *int) {
	depth := new(int)
	return scenarios.Knob{
		Key: Key, Flag: Flag, Usage: "stages of the dummy pipeline; 0 = off",
		Examples: []string{"3"},
		Value:    func(*scenarios.Strategy) any { return depth },
		Needs: func(scenarios.Strategy) scenarios.Capability {
			if *depth != 0 {
				return Need
			}
			return ""
		},
		Check: func(_ scenarios.Strategy, _ scenarios.Limits) []string {
			if *depth < 0 || *depth > Max {
				return []string{fmt.Sprintf("%s is %d; allowed 0 (off) or 1..%d", Key, *depth, Max)}
			}
			return nil
		},
		Show: func(scenarios.Strategy) string {
			if *depth == 0 {
				return ""
			}
			return fmt.Sprintf("dummy=%d", *depth)
		},
		Setting: func(scenarios.Strategy, scenarios.Limits) string { return fmt.Sprintf("%d stages", *depth) },
		Keys: []scenarios.KnobKey{{Action: Action, Key: KeyName, Needs: Need,
			Help: func(scenarios.Limits) string { return "dummy pipeline depth" }}},
	}, depth
}

// Table returns a copy of c3lab's knob table with the dummy knob added,
// and where the dummy's setting is kept.
func Table() (scenarios.Knobs, *int) {
	k, depth := Knob()
	return append(scenarios.StrategyKnobs(), k), depth
}
