package main

import (
	"context"
	"fmt"
	"sync"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/tui"
)

// labAdvisor is the advisor of the lab, of replay --lab and of the
// lessons' why panel: what `c3lab advise` gives without --model, --top or
// --measured, that is heuristics.AdviseModel with the simulator on
// --sim-profile's profile (else the calibrated H200), the committed
// measurements of the device (read on first use) and the default top k.
// When the model cannot be built, every call says why, and the screen
// falls back on the rules with that line.
func labAdvisor(be backendFlag, caps backends.Capabilities) tui.Advisor {
	model, err := adviceModel("", be)
	if err != nil {
		return func(context.Context, scenarios.Scenario) (heuristics.Advice, error) {
			return heuristics.Advice{}, fmt.Errorf("no model: %w", err)
		}
	}
	var (
		once     sync.Once
		index    heuristics.Measurements
		indexErr error
	)
	return func(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
		once.Do(func() { index, indexErr = heuristics.CommittedMeasurements(caps.Limits.Device) })
		if indexErr != nil {
			return heuristics.Advice{}, indexErr
		}
		return heuristics.AdviseModel(ctx, model, sc, caps, heuristics.AdviseOptions{Measured: index})
	}
}
