package learn

import (
	"fmt"

	"github.com/c3lab/c3lab/heuristics"
)

// H200Device is the device name of the committed H200 measurements.
const H200Device = "NVIDIA H200"

// Committed holds the committed measurements of one device: the runs
// lessons show beside the learner's.
type Committed struct {
	m heuristics.Measurements
}

// CommittedH200 is the committed index of H200 runs
// (heuristics/measured/h200.json).
func CommittedH200() (Committed, error) {
	m, err := heuristics.CommittedMeasurements(H200Device)
	if err != nil {
		return Committed{}, fmt.Errorf("the committed H200 measurements: %w", err)
	}
	return Committed{m: m}, nil
}

// Has reports whether scenario was measured under strategy, in source or
// (source empty) in any committed sweep.
func (c Committed) Has(scenario, strategy, source string) bool {
	_, ok := c.Run(scenario, strategy, source)
	return ok
}

// Run is the committed run of scenario under strategy: from source, or
// (source empty) from the first sweep that measured it.
func (c Committed) Run(scenario, strategy, source string) (heuristics.Measurement, bool) {
	for _, x := range c.m.Of(scenario, strategy) {
		if source == "" || x.Source == source {
			return x, true
		}
	}
	return heuristics.Measurement{}, false
}
