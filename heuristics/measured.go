package heuristics

import (
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// Measurement is one measured run of a scenario under a named strategy,
// from a sweep file.
type Measurement struct {
	// Scenario is the scenario's current name (a former name renamed).
	Scenario string `json:"scenario"`
	// Strategy is the sweep grid's name of the strategy.
	Strategy string `json:"strategy"`
	// Source is the sweep file it comes from.
	Source string `json:"source"`
	// Result is the measured result.
	Result profiler.Result `json:"-"`
}

// Measurements index sweeps' runs by scenario (current name) and
// strategy name, in file order.
type Measurements map[string][]Measurement

// CurrentName is a scenario's name in the current suite: the suite's
// rename of a former name, else the name itself.
func CurrentName(name string) string {
	if now, ok := scenarios.Renamed(name); ok {
		return now
	}
	return name
}

// Add indexes the measured runs of sweep f, read from source: each
// result with a concurrent time, under the scenario's current name.
func (m Measurements) Add(source string, f sweepfile.File) {
	grid := map[string]scenarios.Strategy{}
	for _, g := range f.Grid {
		grid[g.Name] = g.Strategy
	}
	for _, e := range f.Results {
		if e.Result == nil || e.Err != "" || e.Result.TC3.N == 0 || e.Result.TC3.Median <= 0 {
			continue
		}
		r := *e.Result
		if st, ok := grid[e.Strategy]; ok {
			r.Strategy = st
		}
		name := CurrentName(e.Scenario)
		m[name] = append(m[name], Measurement{Scenario: name, Strategy: e.Strategy, Source: source, Result: r})
	}
}

// Of returns the measurements of a scenario under a named strategy.
func (m Measurements) Of(scenario, strategy string) []Measurement {
	var out []Measurement
	for _, x := range m[CurrentName(scenario)] {
		if x.Strategy == strategy {
			out = append(out, x)
		}
	}
	return out
}

// BestIn is the measured best of scenario in source: the highest U
// (profiler.Leads), and whether there is one.
func (m Measurements) BestIn(scenario, source string) (Measurement, bool) {
	var best Measurement
	found := false
	for _, x := range m[CurrentName(scenario)] {
		if x.Source != source {
			continue
		}
		if !found || profiler.Leads(x.Result, best.Result) {
			best, found = x, true
		}
	}
	return best, found
}
