package tui

import "github.com/c3lab/c3lab/scenarios"

// withLead returns a format-2 scenario with its Compute and Comm set to
// its lead ops, the first compute op and the first communication op of
// its streams, in stream order: what the panels that name one pair (the
// list, the header, the knobs that look at the collective) show. A
// one-pair scenario is returned as it is.
func withLead(sc scenarios.Scenario) scenarios.Scenario {
	if !sc.IsGraph() {
		return sc
	}
	sc.Compute, sc.Comm = scenarios.ComputeOp{}, scenarios.CommOp{}
	var haveComp, haveComm bool
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			switch {
			case o.Kind.IsCompute() && !haveComp:
				sc.Compute, haveComp = o.AsCompute(), true
			case o.Kind.IsComm() && !haveComm:
				sc.Comm, haveComm = o.AsComm(), true
			}
		}
	}
	return sc
}
