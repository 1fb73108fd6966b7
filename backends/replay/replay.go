// Package replay is a backend that plays a recording back: an experiment is
// answered with the repetitions recorded for the same scenario, strategy and
// mode, and the recorded spans and telemetry are re-emitted, so the
// profiler, the lab and the exporters cannot tell a replay from the run it
// came from. It needs no GPU.
package replay

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// Backend replays one recording.
type Backend struct {
	rec     *recordings.Recording
	results []profiler.Result
	session session
}

// Open reads a recording and returns a backend replaying it. Damage is
// fine: every intact event replays, and the recording's Damages say which
// byte ranges were skipped.
func Open(path string) (*Backend, error) {
	rec, err := recordings.ReadAll(path)
	if err != nil {
		return nil, err
	}
	return New(rec), nil
}

// New replays a recording already in memory.
func New(rec *recordings.Recording) *Backend {
	b := &Backend{rec: rec, session: newSession(rec)}
	for _, m := range b.session.measurements {
		b.results = append(b.results, m.Result)
	}
	// Results recorded before the serial default existed take it from a
	// recorded run of it, so every result has its U.
	profiler.FillSerialDefault(b.results)
	return b
}

// Recording returns the recording being replayed.
func (b *Backend) Recording() *recordings.Recording { return b.rec }

// Results returns every recorded measurement, in recording order.
func (b *Backend) Results() []profiler.Result { return b.results }

// Scenarios returns the recorded scenarios, first appearance first, each
// with the repetition count of its latest recorded run: measuring one at
// its own count (the lab does) gives exactly the recorded repetitions.
func (b *Backend) Scenarios() []scenarios.Scenario {
	var out []scenarios.Scenario
	at := map[string]int{}
	for _, r := range b.results {
		i, seen := at[r.Scenario.Name]
		if !seen {
			i = len(out)
			at[r.Scenario.Name] = i
			out = append(out, r.Scenario)
		}
		if n := RecordedReps(r); n > 0 {
			out[i].Reps = n
		}
	}
	return out
}

// Name implements backends.Backend.
func (b *Backend) Name() string { return "replay" }

// Devices implements backends.Backend: the devices the header lists,
// then any that a recorded run used beyond them (a lab session may move on
// to a scenario on more GPUs than the one it started on), by index.
func (b *Backend) Devices() []backends.DeviceInfo {
	devs := b.rec.Header.DeviceInfos()
	have := map[int]bool{}
	for _, d := range devs {
		have[d.Index] = true
	}
	for _, r := range b.results {
		for _, d := range r.Devices {
			if !have[d.Index] {
				have[d.Index] = true
				devs = append(devs, d)
			}
		}
	}
	slices.SortStableFunc(devs, func(a, c backends.DeviceInfo) int { return cmp.Compare(a.Index, c.Index) })
	return devs
}

// Capabilities implements backends.Backend, derived from what the
// recording holds: the knobs its runs used (profiler.KnobsOf, the table
// Measure checks strategies against, so the two cannot drift apart) and
// no other, and limits that admit every recorded run. The device's facts
// (partition step, priorities, bandwidths) are the recorded devices'; a
// recording made before devices carried them gives what its runs show.
// Run says so when the recording holds no run under a strategy asked for.
func (b *Backend) Capabilities() backends.Capabilities {
	strategies := make([]scenarios.Strategy, len(b.results))
	for i, r := range b.results {
		strategies[i] = r.Strategy
	}
	c := profiler.KnobsOf(strategies...)
	c.Deterministic = true // the same answer every time
	lim := &c.Limits
	lim.Device = "recorded device"
	devs := b.Devices()
	if len(devs) > 0 {
		d := devs[0]
		lim.Device, lim.SMs, lim.CopyEngines = d.Name, d.SMs, d.CopyEngines
		lim.SMStep, lim.HighestPriority, c.HBMBandwidth = d.SMStep, d.HighestPriority, d.HBMBandwidth
	}
	lim.MaxGPUs = len(devs)
	for _, r := range b.results {
		st := r.Strategy
		lim.MaxGPUs = max(lim.MaxGPUs, r.Scenario.GPUs)
		lim.HighestPriority = min(lim.HighestPriority, st.CommPriority)
		lim.CopyEngines = max(lim.CopyEngines, st.CopyEngines)
		if len(devs) == 0 || devs[0].SMStep == 0 {
			for _, sms := range []int{st.CommSMs, st.ComputeSMs} {
				lim.SMStep = gcd(lim.SMStep, sms)
			}
		}
		if st.CommEngine == scenarios.EngineDMA && !r.Scenario.Comm.Collective.IsPureCopy() {
			c.DMAReductions = true
		}
		if len(r.Explain) > 0 {
			c.Explains = true
		}
		if r.Bound != nil && c.HBMBandwidth == 0 {
			c.HBMBandwidth = r.Bound.HBMBandwidth
		}
	}
	for name := range b.rec.Header.Telemetry {
		c.TelemetryNames = append(c.TelemetryNames, name)
	}
	slices.Sort(c.TelemetryNames)
	return c
}

// gcd is the greatest common divisor of two partition sizes (0 counts as
// no partition).
func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// Close implements backends.Backend.
func (b *Backend) Close() error { return nil }

// sameScenario compares the ops of two scenarios, streams included (not
// their strategies or repetition counts).
func sameScenario(a, c scenarios.Scenario) bool {
	a.Strategy, c.Strategy = scenarios.Strategy{}, scenarios.Strategy{}
	a.Reps, c.Reps = 0, 0
	a.Description, c.Description, a.Source, c.Source = "", "", "", ""
	return a.Equal(c)
}

// find returns the recorded repetitions that answer the experiment, and
// the result they belong to: the latest recorded result under the same
// strategy (concurrent) or the same isolated strategy (isolated runs); for
// the serial default's isolated runs also a result's own serial-default
// repetitions (Result.DefaultReps).
func (b *Backend) find(ex backends.Experiment) (*profiler.Result, []backends.Rep, error) {
	want := ex.Strategy.Normalize()
	isDefault := ex.Mode != backends.ModeConcurrent && profiler.IsSerialDefault(ex.Scenario, want)
	for i := len(b.results) - 1; i >= 0; i-- {
		r := &b.results[i]
		if !sameScenario(r.Scenario, ex.Scenario) {
			continue
		}
		got := r.Strategy.Normalize()
		if len(r.Reps[ex.Mode]) > 0 && (ex.Mode == backends.ModeConcurrent && got == want ||
			ex.Mode != backends.ModeConcurrent && profiler.SameIsolated(ex.Scenario, got, want)) {
			return r, r.Reps[ex.Mode], nil
		}
		if isDefault && len(r.DefaultReps[ex.Mode]) > 0 {
			return r, r.DefaultReps[ex.Mode], nil
		}
	}
	var have []string
	for _, r := range b.results {
		if sameScenario(r.Scenario, ex.Scenario) {
			have = append(have, r.Strategy.String())
		}
	}
	if len(have) == 0 {
		return nil, nil, fmt.Errorf("the recording has no run of %s (recorded: %s)", ex.Scenario.Name, strings.Join(b.scenarioNames(), ", "))
	}
	slices.Sort(have)
	have = slices.Compact(have)
	return nil, nil, fmt.Errorf("the recording has no %s run of %s under %s (recorded strategies: %s)", ex.Mode, ex.Scenario.Name, want, strings.Join(have, "; "))
}

func (b *Backend) scenarioNames() []string {
	var out []string
	for _, sc := range b.Scenarios() {
		out = append(out, sc.Name)
	}
	return out
}

// Run implements backends.Backend: the recorded repetitions of the
// matching run, exactly (asking for another count is an error that says
// how many there are: a replay neither repeats nor drops any), its
// explanation, and, for the concurrent mode, its timeline and telemetry as
// the last repetition's events.
func (b *Backend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if ex.Reps < 1 {
		return backends.RunResult{}, fmt.Errorf("reps is %d; want at least 1", ex.Reps)
	}
	if err := ctx.Err(); err != nil {
		return backends.RunResult{}, err
	}
	r, rec, err := b.find(ex)
	if err != nil {
		return backends.RunResult{}, err
	}
	if len(rec) != ex.Reps {
		return backends.RunResult{}, fmt.Errorf("the recording holds %d %s repetitions of %s under %s, not %d: a replay gives exactly the recorded ones (ask for %d)",
			len(rec), ex.Mode, ex.Scenario.Name, r.Strategy, ex.Reps, len(rec))
	}
	res := backends.RunResult{Mode: ex.Mode, Explain: r.Explain[ex.Mode], Reps: slices.Clone(rec)}
	for i := range res.Reps {
		res.Reps[i].Ops = slices.Clone(res.Reps[i].Ops)
	}
	if sink != nil && ex.Mode == backends.ModeConcurrent {
		last := len(rec) - 1
		spans := slices.Clone(r.Timeline)
		for i := range spans {
			spans[i].Rep = last
		}
		samples := slices.Clone(r.Samples)
		for i := range samples {
			samples[i].Rep = last
		}
		sink.Spans(spans)
		sink.Samples(samples)
	}
	return res, nil
}

// RecordedReps is the repetition count of a recorded measurement, for a
// replay that should reproduce its numbers exactly.
func RecordedReps(r profiler.Result) int {
	return len(r.Reps[backends.ModeConcurrent])
}
