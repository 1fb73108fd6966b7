package learn

import (
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// simLimits are the simulated H200 node's limits, which the built-in
// lessons are checked against.
func simLimits() scenarios.Limits {
	return sim.New(sim.DefaultProfile()).Capabilities().Limits
}

func committed(t testing.TB) Committed {
	t.Helper()
	c, err := CommittedH200()
	if err != nil {
		t.Fatal(err)
	}
	return c
}
