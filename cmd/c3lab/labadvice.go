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
// The model is built on the first call too, in the goroutine the screen
// runs advice in, so that opening the screen does not wait for a second
// parse of the profile. When the model cannot be built, every call says
// why, and the screen falls back on the rules with that line.
func labAdvisor(be backendFlag, caps backends.Capabilities) tui.Advisor {
	var (
		once     sync.Once
		model    heuristics.Model
		index    heuristics.Measurements
		setupErr error
	)
	return func(ctx context.Context, sc scenarios.Scenario) (heuristics.Advice, error) {
		once.Do(func() {
			var err error
			if model, err = adviceModel("", be); err != nil {
				setupErr = fmt.Errorf("no model: %w", err)
				return
			}
			index, setupErr = heuristics.CommittedMeasurements(caps.Limits.Device)
		})
		if setupErr != nil {
			return heuristics.Advice{}, setupErr
		}
		return heuristics.AdviseModel(ctx, model, sc, caps, heuristics.AdviseOptions{Measured: index})
	}
}
