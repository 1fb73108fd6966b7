package tui

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// The decompose key cycles 0 -> 2 -> 4 -> 8 -> 1 -> 0 on a scenario with a
// decomposable pair, skips a chunk count that does not divide the pair,
// and refuses on a one-pair scenario, on a graph without a pair and on a
// backend that cannot decompose.
func TestTurnDecompose(t *testing.T) {
	caps := graphCaps()
	noPair := graphScenario(8192)
	noPair.Streams[1].Ops[0].After = nil
	for _, tc := range []struct {
		name string
		sc   scenarios.Scenario
		from int
		want int    // the new Decompose
		err  string // or the error's words
		note string // words the note must hold
	}{
		{"own -> 2", graphScenario(8192), 0, 2, "", "2 chunks"},
		{"2 -> 4", graphScenario(8192), 2, 4, "", "4 chunks"},
		{"4 -> 8", graphScenario(8192), 4, 8, "", "8 chunks"},
		{"8 -> whole", graphScenario(8192), 8, 1, "", "whole pairs"},
		{"whole -> own", graphScenario(8192), 1, 0, "", "the scenario's own"},
		{"off the cycle -> own", graphScenario(8192), 16, 0, "", "the scenario's own"},
		{"4 -> whole, 8 does not divide", graphScenario(8196), 4, 1, "", "8 chunks do not divide"},
		{"one pair", testSuite()[0], 0, 0, "one compute op next to one collective", ""},
		{"graph without a pair", noPair, 0, 0, "has no pair to decompose", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := scenarios.Strategy{Decompose: tc.from}
			got, note, err := turnIn(scenarios.StrategyKnobs(), knobChunks, from, tc.sc, caps, "fake")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err %v, want one saying %q", err, tc.err)
				}
				if got != from.Normalize() {
					t.Errorf("a refused key changed the strategy to %s", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Decompose != tc.want || !strings.Contains(note, tc.note) {
				t.Errorf("decompose %d, note %q; want %d and a note saying %q", got.Decompose, note, tc.want, tc.note)
			}
			if _, err := tc.sc.Graph(got); err != nil {
				t.Errorf("turned into a strategy the scenario cannot expand under: %v", err)
			}
		})
	}
	if _, _, err := turnIn(scenarios.StrategyKnobs(), knobChunks, scenarios.Strategy{}, graphScenario(8192), h200Caps(), "fake"); err == nil || !strings.Contains(err.Error(), "cannot decompose") {
		t.Errorf("a backend without the capability: %v", err)
	}
}

// withLead names the first compute and the first comm op of the streams.
func TestWithLead(t *testing.T) {
	sc := graphScenario(8192)
	if sc.Compute.M != 8192 || sc.Compute.Kind != scenarios.GEMM || sc.Comm.Collective != scenarios.AllGather || sc.Comm.Bytes != 64<<20 {
		t.Errorf("lead ops %s and %s", sc.Compute, sc.Comm)
	}
	pair := testSuite()[0]
	if !withLead(pair).Equal(pair) {
		t.Error("withLead changed a one-pair scenario")
	}
}
