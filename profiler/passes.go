package profiler

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// DefaultPasses is the number of passes a sweep on a noisy backend makes
// over its grid (Sweep): each measurement is split into that many parts,
// taken minutes apart with every scenario prepared afresh in between, so
// that its interval holds what changes between runs of the same sweep
// (buffer placement, host memory, the GPU's state), not only the noise
// of a few seconds of rounds.
const DefaultPasses = 3

// MergePasses joins the measurements of one scenario under one strategy
// made in separate passes into one result: their repetitions, rounds
// renumbered in pass order (PassOfRound says which pass each round is
// of), the machine state of every run, and the precision outcome; the
// timeline, samples and timed use are the last pass's. Figures and
// intervals are derived again from all repetitions, the intervals
// resampling passes, then rounds, then repetitions (Resampler).
// hbmBandwidth is the backend's (for the bound); prec the precision the
// passes were measured to (off: none).
func MergePasses(parts []Result, hbmBandwidth float64, prec Precision) (Result, error) {
	switch len(parts) {
	case 0:
		return Result{}, fmt.Errorf("no passes to merge")
	case 1:
		return parts[0], nil
	}
	first := parts[0]
	out := parts[len(parts)-1]
	out.Reps, out.RoundOf = map[backends.Mode][]backends.Rep{}, map[backends.Mode][]int{}
	out.DefaultReps, out.DefaultRoundOf = nil, nil
	out.PassOfRound = nil
	var drift *Drift
	var outcome *PrecisionOutcome
	next := 0
	for p, r := range parts {
		if r.Scenario.Name != first.Scenario.Name || r.Strategy != first.Strategy || r.Backend != first.Backend {
			return Result{}, fmt.Errorf("pass %d measured %s under %s on %s, pass 1 %s under %s on %s", p+1, r.Scenario.Name, r.Strategy, r.Backend, first.Scenario.Name, first.Strategy, first.Backend)
		}
		if len(r.PassOfRound) > 0 {
			return Result{}, fmt.Errorf("pass %d of %s is itself merged from passes", p+1, r.Scenario.Name)
		}
		ro, why := roundsFor(r.Reps, r.RoundOf)
		if why != "" {
			return Result{}, fmt.Errorf("pass %d of %s: %s", p+1, r.Scenario.Name, why)
		}
		dro, why := roundsFor(r.DefaultReps, r.DefaultRoundOf)
		if why != "" {
			return Result{}, fmt.Errorf("pass %d of %s, serial default: %s", p+1, r.Scenario.Name, why)
		}
		rounds := 0
		for _, m := range []map[backends.Mode][]int{ro, dro} {
			for _, rs := range m {
				for _, k := range rs {
					rounds = max(rounds, k+1)
				}
			}
		}
		for m, reps := range r.Reps {
			out.Reps[m] = append(out.Reps[m], reps...)
			for _, k := range ro[m] {
				out.RoundOf[m] = append(out.RoundOf[m], k+next)
			}
		}
		if len(r.DefaultReps) > 0 {
			if out.DefaultReps == nil {
				out.DefaultReps, out.DefaultRoundOf = map[backends.Mode][]backends.Rep{}, map[backends.Mode][]int{}
			}
			for m, reps := range r.DefaultReps {
				out.DefaultReps[m] = append(out.DefaultReps[m], reps...)
				for _, k := range dro[m] {
					out.DefaultRoundOf[m] = append(out.DefaultRoundOf[m], k+next)
				}
			}
		}
		for range rounds {
			out.PassOfRound = append(out.PassOfRound, p)
		}
		if r.Drift != nil {
			if drift == nil {
				drift = &Drift{}
			}
			if drift.DuringIntervalNs == 0 {
				drift.DuringIntervalNs = r.Drift.DuringIntervalNs
			}
			for _, run := range r.Drift.Runs {
				run.Round += next
				drift.Runs = append(drift.Runs, run)
			}
		}
		if r.Precision != nil {
			if outcome == nil {
				outcome = &PrecisionOutcome{Target: r.Precision.Target, Reached: true, Stop: StopReached}
			}
			outcome.Rounds += r.Precision.Rounds
			outcome.Elapsed += r.Precision.Elapsed
			outcome.Cap += r.Precision.Cap
			if !r.Precision.Reached {
				outcome.Reached, outcome.Stop = false, r.Precision.Stop
			}
		}
		next += rounds
	}
	g, err := out.Scenario.Graph(out.Strategy)
	if err != nil {
		return Result{}, fmt.Errorf("%s: %w", out.Scenario.Name, err)
	}
	var dg *scenarios.Graph
	if len(out.DefaultReps) > 0 {
		if dg, err = out.Scenario.Graph(SerialDefaultStrategy()); err != nil {
			return Result{}, fmt.Errorf("%s, serial default: %w", out.Scenario.Name, err)
		}
	}
	if err := out.refigure(g, dg, hbmBandwidth); err != nil {
		return Result{}, fmt.Errorf("%s: %w", out.Scenario.Name, err)
	}
	out.Deterministic = false
	out.fillUncertainty(g, dg)
	if drift != nil {
		drift.Check(DefaultDriftThresholds())
		out.Drift = drift
	}
	if outcome != nil && !prec.Off() {
		// Reached or not is the merged interval's verdict: passes that
		// each met the target may differ by more than it, and passes
		// that each fell short may meet it together.
		outcome.HalfWidth = nil
		hw, ok, why := prec.Check(out, false)
		if !math.IsNaN(hw) {
			outcome.HalfWidth = &hw
		}
		switch {
		case ok:
			outcome.Reached, outcome.Stop = true, StopReached
		case outcome.Reached && why == "":
			outcome.Reached, outcome.Stop = false, StopPassesDiffer
		case outcome.Reached:
			outcome.Reached, outcome.Stop = false, why
		}
	}
	out.Precision = outcome
	out.Explain = maps.Clone(out.Explain)
	return out, nil
}

// passesOf returns, for a result merged from passes, the rounds (indexes
// into ids, the sorted round numbers) of each pass in pass order; nil
// when the result holds fewer than two passes or PassOfRound does not
// cover its rounds.
func passesOf(r Result, ids []int) [][]int {
	if len(r.PassOfRound) == 0 {
		return nil
	}
	var out [][]int
	for i, id := range ids {
		if id < 0 || id >= len(r.PassOfRound) {
			return nil
		}
		p := r.PassOfRound[id]
		if p < 0 {
			return nil
		}
		for len(out) <= p {
			out = append(out, nil)
		}
		out[p] = append(out[p], i)
	}
	out = slices.DeleteFunc(out, func(rs []int) bool { return len(rs) == 0 })
	if len(out) < 2 {
		return nil
	}
	return out
}
