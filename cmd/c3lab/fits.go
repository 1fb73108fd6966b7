package main

import (
	"errors"

	"github.com/c3lab/c3lab/scenarios"
)

// checkFits refuses, before anything runs, a list of scenarios of which
// some do not fit in the device memory of lim (--gpus grows the buffers of
// all-gathers and reduce-scatters): one line with the first such
// scenario's numbers and how many others do not fit. A strategy that needs
// more than the scenario's own (copy-engine staging) still fails its own
// runs, with the numbers.
func checkFits(list []scenarios.Scenario, lim scenarios.Limits) error {
	var first *scenarios.ValidationError
	others := 0
	for _, sc := range list {
		var ve *scenarios.ValidationError
		if err := scenarios.CheckMemory(sc, sc.Strategy, lim); errors.As(err, &ve) {
			if first == nil {
				first = ve
			} else {
				others++
			}
		}
	}
	switch {
	case first == nil:
		return nil
	case others > 0:
		return badInput("%s on %d GPUs: %s (and %d more scenarios do not fit)", first.Scenario, gpusOf(list, first.Scenario), first.Fields[0].Msg, others)
	}
	return badInput("%s on %d GPUs: %s", first.Scenario, gpusOf(list, first.Scenario), first.Fields[0].Msg)
}

// gpusOf is the GPU count of the scenario named name in list.
func gpusOf(list []scenarios.Scenario, name string) int {
	for _, sc := range list {
		if sc.Name == name {
			return sc.GPUs
		}
	}
	return 0
}
