package heuristics

import (
	"context"
	"fmt"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// Prediction is one candidate strategy's figures as a model predicts them.
type Prediction struct {
	Name     string             `json:"name"`
	Strategy scenarios.Strategy `json:"strategy"`
	// TC3 is the predicted concurrent time (ns), Uplift the predicted U
	// over the serial default, SerialDefault the predicted T_serial of
	// the serial default (ns).
	TC3           float64 `json:"t_c3_ns"`
	Uplift        float64 `json:"uplift"`
	SerialDefault float64 `json:"t_serial_default_ns,omitempty"`
	// Err is why the model could not run the candidate.
	Err string `json:"error,omitempty"`
}

// ok reports whether the prediction holds figures.
func (p Prediction) ok() bool { return p.Err == "" && p.TC3 > 0 }

// result is the prediction as a profiler result, for profiler's ranking
// rules (no interval: a model's figures stand for themselves).
func (p Prediction) result() profiler.Result {
	r := profiler.Result{Uplift: p.Uplift}
	if p.ok() {
		r.TC3 = profiler.Stat{N: 1, Median: p.TC3}
	}
	return r
}

// Model predicts a scenario's figures under candidate strategies.
type Model interface {
	// Name names the model for reasons ("the h200 profile").
	Name() string
	// Predict returns one prediction per candidate, in the candidates'
	// order; a candidate the model cannot run has Err set.
	Predict(ctx context.Context, sc scenarios.Scenario, cands []profiler.NamedStrategy) ([]Prediction, error)
}

// BackendModel is a Model that runs the candidates on a backend, one
// repetition each: the simulator on a device profile.
type BackendModel struct {
	Backend backends.Backend
	// Label names the model; empty takes the backend's profile or name.
	Label string
}

// Name implements Model.
func (m BackendModel) Name() string {
	switch {
	case m.Label != "":
		return m.Label
	case m.Backend.Capabilities().Profile != "":
		return "the " + m.Backend.Capabilities().Profile + " profile"
	}
	return m.Backend.Name()
}

// Unmeasured says why the model's prediction for st rests on a constant
// no measurement has set ("" when none does), where the backend can say
// (the simulator); "" otherwise.
func (m BackendModel) Unmeasured(st scenarios.Strategy) string {
	if u, ok := m.Backend.(unmeasured); ok {
		return u.Unmeasured(st)
	}
	return ""
}

// unmeasured is a model or backend that can say why its prediction for a
// strategy rests on a constant no measurement has set ("" when none does).
type unmeasured interface {
	Unmeasured(st scenarios.Strategy) string
}

// ModelError is the backend's error on held-out GPU runs like sc's
// (backends.ModelErrorReporter), nil when it has none.
func (m BackendModel) ModelError(sc scenarios.Scenario) *backends.ModelError {
	if r, ok := m.Backend.(backends.ModelErrorReporter); ok {
		return r.ModelError(sc, 0)
	}
	return nil
}

// Capabilities are the backend's: what the candidates may use.
func (m BackendModel) Capabilities() backends.Capabilities { return m.Backend.Capabilities() }

// Predict implements Model: profiler.Measure with one repetition, no
// warm-up, per candidate.
func (m BackendModel) Predict(ctx context.Context, sc scenarios.Scenario, cands []profiler.NamedStrategy) ([]Prediction, error) {
	out := make([]Prediction, len(cands))
	for i, c := range cands {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out[i] = Prediction{Name: c.Name, Strategy: c.Strategy}
		r, err := profiler.Measure(ctx, m.Backend, sc, c.Strategy, profiler.Options{Reps: 1, Warmup: -1, Rounds: 1})
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case err != nil:
			out[i].Err = err.Error()
		case r.TC3.Median <= 0:
			out[i].Err = "no concurrent time"
		default:
			out[i].TC3, out[i].Uplift, out[i].SerialDefault = r.TC3.Median, r.Uplift, r.SerialDefault
		}
	}
	return out, nil
}

// Rank orders predictions best first by profiler's rules (the higher U,
// else the shorter T_c3; profiler.Leads), failed ones last; equal
// figures keep their order, so the grid's order breaks ties.
func Rank(preds []Prediction) []Prediction {
	out := slices.Clone(preds)
	slices.SortStableFunc(out, func(a, b Prediction) int {
		ra, rb := a.result(), b.result()
		switch {
		case profiler.Leads(ra, rb):
			return -1
		case profiler.Leads(rb, ra):
			return 1
		}
		return 0
	})
	return out
}

// CandidateSet is every sensible named strategy for sc on a device of
// caps: the named strategies of profiler's grids (default, copy-engine,
// decomposition) whose knobs the device has, that are valid on its
// limits and that apply to the scenario (copy engines for reductions only
// where the device adds after them; decomposition only for a scenario
// with dependent ops; no NCCL copy-engine path for host copies; p2p-load
// only for a pair's reduce-scatter or all-reduce on a device with peer
// access), each strategy once under its first name.
func CandidateSet(sc scenarios.Scenario, caps backends.Capabilities) []profiler.NamedStrategy {
	lim := caps.Limits
	knobs := scenarios.StrategyKnobs()
	reduction, host := hasReduction(sc), hasHostCopy(sc)
	var grid []profiler.NamedStrategy
	grid = append(grid, profiler.DefaultGrid(lim)...)
	grid = append(grid, profiler.CopyEngineGrid(lim)...)
	if hasDependency(sc) {
		grid = append(grid, profiler.DecomposeGrid(lim)...)
	}
	if !sc.IsGraph() && sc.Comm.Collective.P2PLoadCovers() && caps.Has(scenarios.CapPeerLoad) {
		grid = append(grid, profiler.PeerLoadGrid(lim)...)
	}
	var out []profiler.NamedStrategy
	for _, c := range grid {
		st := c.Strategy
		if needsMissing(knobs, st, caps) || len(knobs.ValidateStrategy(st, lim)) > 0 {
			continue
		}
		switch {
		case st.CommEngine == scenarios.EngineDMA && reduction && !caps.DMAReductions:
			continue
		case st.CommEngine == scenarios.EngineNCCLCE && host:
			continue
		case st.ComputeSMs > 0 && !reduction:
			// The GEMM partitions leave SMs to a copy-engine reduction's
			// add; without one they only slow the GEMM.
			continue
		}
		if slices.ContainsFunc(out, func(o profiler.NamedStrategy) bool { return o.Strategy.Normalize() == st.Normalize() }) {
			continue
		}
		out = append(out, c)
	}
	return out
}

// needsMissing reports whether st needs a knob caps lacks.
func needsMissing(knobs scenarios.Knobs, st scenarios.Strategy, caps backends.Capabilities) bool {
	for _, n := range knobs.Needs(st) {
		if !caps.Has(n.Cap) {
			return true
		}
	}
	return false
}

// commKinds lists the scenario's communication kinds: the pair's
// collective, or every communication op of its streams.
func commKinds(sc scenarios.Scenario) []scenarios.Collective {
	if !sc.IsGraph() {
		return []scenarios.Collective{sc.Comm.Collective}
	}
	var out []scenarios.Collective
	for _, s := range sc.Streams {
		for _, o := range s.Ops {
			if o.Kind.IsComm() {
				out = append(out, scenarios.Collective(o.Kind))
			}
		}
	}
	return out
}

func hasReduction(sc scenarios.Scenario) bool {
	return slices.ContainsFunc(commKinds(sc), func(c scenarios.Collective) bool { return c != "" && !c.IsPureCopy() })
}

func hasHostCopy(sc scenarios.Scenario) bool {
	return slices.ContainsFunc(commKinds(sc), scenarios.Collective.IsHostCopy)
}

// writesToHost reports whether a communication op of sc copies to host
// memory (d2h, or a swap's d2h half).
func writesToHost(sc scenarios.Scenario) bool {
	return slices.ContainsFunc(commKinds(sc), func(c scenarios.Collective) bool {
		return c == scenarios.DeviceToHost || c == scenarios.HostSwap
	})
}

// hasDependency reports whether an op of sc waits for another.
func hasDependency(sc scenarios.Scenario) bool {
	for _, s := range sc.Streams {
		for _, o := range s.Ops {
			if len(o.After) > 0 {
				return true
			}
		}
	}
	return false
}

// DefaultTopK is how many ranked candidates the advice keeps.
const DefaultTopK = 4

// Ranked is the model's ranking of a scenario's candidates.
type Ranked struct {
	// Model names the model.
	Model string `json:"model"`
	// Predictions are every candidate's, best first.
	Predictions []Prediction `json:"predictions"`
	// ModelError is the model's error on held-out GPU runs like this
	// scenario's, and how often its pick was within a tolerance of the
	// measured best (the simulator on a calibrated profile); nil when the
	// model has none.
	ModelError *backends.ModelError `json:"model_error,omitempty"`
}

// Best is the index of the advised prediction: the first, unless it is
// no better than the default (baseline), which is then advised: never a
// strategy predicted slower than the default. -1 when none ran.
func (r Ranked) Best() int {
	if len(r.Predictions) == 0 || !r.Predictions[0].ok() {
		return -1
	}
	if b := r.Find("baseline"); b > 0 && r.Predictions[b].ok() && !profiler.Leads(r.Predictions[0].result(), r.Predictions[b].result()) {
		return b
	}
	return 0
}

// Find is the index of the named prediction, -1 when absent.
func (r Ranked) Find(name string) int {
	return slices.IndexFunc(r.Predictions, func(p Prediction) bool { return p.Name == name })
}

// RankCandidates predicts every candidate with m and ranks them.
func RankCandidates(ctx context.Context, m Model, sc scenarios.Scenario, cands []profiler.NamedStrategy) (Ranked, error) {
	preds, err := m.Predict(ctx, sc, cands)
	if err != nil {
		return Ranked{}, fmt.Errorf("predicting %s: %w", sc.Name, err)
	}
	if len(preds) != len(cands) {
		return Ranked{}, fmt.Errorf("predicting %s: the model returned %d predictions for %d candidates", sc.Name, len(preds), len(cands))
	}
	out := Ranked{Model: m.Name(), Predictions: Rank(preds)}
	if me, ok := m.(modelErrorer); ok {
		out.ModelError = me.ModelError(sc)
	}
	return out, nil
}

// modelErrorer is a model that knows its error on held-out GPU runs.
type modelErrorer interface {
	ModelError(sc scenarios.Scenario) *backends.ModelError
}
