package profiler

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Options tune the measurement protocol.
type Options struct {
	// Reps is the number of timed repetitions per mode; 0 takes the
	// scenario's own (scenarios.Scenario.RepsOrDefault).
	Reps int
	// Warmup is the number of untimed repetitions per mode before timing;
	// a negative value means none, 0 means DefaultWarmup.
	Warmup int
	// Rounds splits the repetitions into this many interleaved rounds of
	// compute, comm and concurrent runs, so drift (clocks, temperature)
	// touches all three alike; 0 means DefaultRounds.
	Rounds int
	// IsolatedOnly skips the concurrent run: only T_comp, T_comm, the class
	// and the bandwidths are filled in (what listing a suite needs).
	IsolatedOnly bool
	// Baseline, when it matches the scenario and the strategy's isolated
	// form, stands in for the isolated runs: only the concurrent run is
	// made (what live mode does between strategy changes).
	Baseline *Baseline
	// Knobs is the knob table the strategy is validated and checked
	// against (what the backend must be able to do); nil is
	// scenarios.StrategyKnobs().
	Knobs scenarios.Knobs
}

// Baseline is the isolated half of a measurement, reusable while the
// scenario and the collective's implementation stay the same.
type Baseline struct {
	Scenario scenarios.Scenario `json:"-"`
	Isolated scenarios.Strategy `json:"isolated_strategy"`
	TComp    Stat               `json:"t_comp"`
	TComm    Stat               `json:"t_comm"`
	Explain  map[backends.Mode][]backends.OpExplanation
	Reps     map[backends.Mode][]backends.Rep
}

// Baseline returns the result's isolated half.
func (r Result) Baseline() Baseline {
	ex := map[backends.Mode][]backends.OpExplanation{}
	reps := map[backends.Mode][]backends.Rep{}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
		if e, ok := r.Explain[m]; ok {
			ex[m] = e
		}
		reps[m] = r.Reps[m]
	}
	return Baseline{Scenario: r.Scenario, Isolated: r.Strategy.Isolated(), TComp: r.TComp, TComm: r.TComm, Explain: ex, Reps: reps}
}

// matches reports whether the baseline holds for a scenario and strategy.
func (bl *Baseline) matches(sc scenarios.Scenario, st scenarios.Strategy) bool {
	if bl == nil {
		return false
	}
	a, b := bl.Scenario, sc
	a.Strategy, b.Strategy = scenarios.Strategy{}, scenarios.Strategy{}
	return a.Equal(b) && bl.Isolated == st.Isolated()
}

// Protocol defaults.
const (
	DefaultWarmup = 3
	DefaultRounds = 5
)

// Result is everything one measurement of a scenario under a strategy
// yields. Times are nanoseconds.
type Result struct {
	Scenario scenarios.Scenario    `json:"scenario"`
	Strategy scenarios.Strategy    `json:"strategy"`
	Backend  string                `json:"backend"`
	Devices  []backends.DeviceInfo `json:"devices"`

	// TComp and TComm are the isolated runs; TC3 is the concurrent run's wall time.
	TComp Stat `json:"t_comp"`
	TComm Stat `json:"t_comm"`
	TC3   Stat `json:"t_c3"`
	// TCompInC3 and TCommInC3 are each op's own time inside the concurrent run.
	TCompInC3 Stat `json:"t_comp_in_c3"`
	TCommInC3 Stat `json:"t_comm_in_c3"`
	// Deterministic is set when the backend gives identical numbers for
	// identical runs (the simulator) and every repetition did: the stats'
	// spread (P10 .. P90) is then no measure of noise, there is none.
	Deterministic bool `json:"deterministic"`

	// TSerial is every op alone, one after another (T_comp + T_comm: the
	// medians of the isolated runs); TIdeal the makespan of the graph's
	// list schedule at the ops' isolated times (scenarios.Graph.ListSchedule;
	// max(T_comp, T_comm) for one pair). Nanoseconds.
	TSerial float64 `json:"t_serial,omitempty"`
	TIdeal  float64 `json:"t_ideal,omitempty"`
	// SerialDefault is T_serial of the scenario under the serial default:
	// no decomposition and the default implementations (the collective on
	// NCCL's SM kernels), the one reference of every strategy of a
	// scenario. Uplift is U = SerialDefault / T_c3; strategies are ranked
	// by it (or by T_c3), never by F across strategies.
	SerialDefault float64 `json:"t_serial_default,omitempty"`
	Uplift        float64 `json:"uplift,omitempty"`
	// Ops holds per-op figures of the graph, in Graph.Ops order.
	Ops []OpResult `json:"ops,omitempty"`

	IdealSpeedup    float64 `json:"ideal_speedup"`
	RealizedSpeedup float64 `json:"realized_speedup"`
	// FractionOfIdeal is nil when undefined (ideal speedup of 1).
	FractionOfIdeal *float64 `json:"fraction_of_ideal"`
	CompSlowdown    float64  `json:"compute_slowdown"`
	CommSlowdown    float64  `json:"comm_slowdown"`
	Class           Class    `json:"class"`

	// AlgBW and BusBW are the isolated collective's bandwidths (bytes/s).
	AlgBW float64 `json:"algbw"`
	BusBW float64 `json:"busbw"`
	// AchievedTFLOPs is the isolated GEMM's throughput (TFLOP/s); 0 (null
	// in JSON) for a stream op, which does no tensor work.
	AchievedTFLOPs float64 `json:"achieved_tflops"`
	// AchievedBW is the isolated stream op's memory throughput: the bytes
	// it reads and writes per second; 0 (null in JSON) for a GEMM.
	AchievedBW float64 `json:"achieved_bw"`
	// Bound is the physical bound on the concurrent run; nil when the
	// backend does not know its HBM bandwidth or no concurrent run was made.
	Bound *Bound `json:"bound,omitempty"`

	// Explain holds, per mode, what bounded each op (when the backend can tell).
	Explain map[backends.Mode][]backends.OpExplanation `json:"explain,omitempty"`
	// Reps are the raw repetition times per mode, as the backend reported
	// them (the stats above derive from them; replays feed them back).
	Reps map[backends.Mode][]backends.Rep `json:"reps,omitempty"`
	// Timeline and Samples are the spans and telemetry of one concurrent repetition.
	Timeline []backends.Span   `json:"timeline,omitempty"`
	Samples  []backends.Sample `json:"samples,omitempty"`
}

// OpResult is one graph op's figures: its time alone and inside the
// concurrent run, each the sum over its instances (Rep.Ops).
type OpResult struct {
	Name  string         `json:"name"`
	Role  scenarios.Role `json:"role"`
	Label string         `json:"label"`
	Count int            `json:"count"`
	// TAlone is the op's time in its isolated run, TInC3 in the concurrent
	// run; Slowdown is TInC3 / TAlone (medians).
	TAlone   Stat    `json:"t_alone"`
	TInC3    Stat    `json:"t_in_c3"`
	Slowdown float64 `json:"slowdown,omitempty"`
}

// Fraction returns the fraction of ideal and whether it is defined.
func (r Result) Fraction() (float64, bool) {
	if r.FractionOfIdeal == nil {
		return math.NaN(), false
	}
	return *r.FractionOfIdeal, true
}

// Measure runs the scenario's compute op alone, its collective alone, and
// both together under strategy st on backend b, and derives the metrics.
// The isolated runs use st.Isolated(): the collective's implementation as st
// picks it, on the whole GPU. The strategy is validated against the
// backend's limits first.
func Measure(ctx context.Context, b backends.Backend, sc scenarios.Scenario, st scenarios.Strategy, opt Options) (Result, error) {
	st = st.Normalize()
	caps := b.Capabilities()
	knobs := opt.Knobs
	if knobs == nil {
		knobs = scenarios.StrategyKnobs()
	}
	if err := knobs.Validate(withStrategy(sc, st), caps.Limits); err != nil {
		return Result{}, err
	}
	if err := CheckKnobs(knobs, st, caps, b.Name()); err != nil {
		return Result{}, err
	}
	reps := opt.Reps
	if reps <= 0 {
		reps = sc.RepsOrDefault()
	}
	warm := opt.Warmup
	switch {
	case warm == 0:
		warm = DefaultWarmup
	case warm < 0:
		warm = 0
	}
	rounds := opt.Rounds
	if rounds <= 0 {
		rounds = DefaultRounds
	}
	// A deterministic backend gives the same numbers every time: one round
	// and no warm-up lose nothing.
	if caps.Deterministic {
		rounds, warm = 1, 0
	}
	rounds = min(rounds, reps)

	modes := []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent}
	reuse := !opt.IsolatedOnly && opt.Baseline.matches(sc, st)
	switch {
	case opt.IsolatedOnly:
		modes = modes[:2]
	case reuse:
		modes = modes[2:]
	}
	got := map[backends.Mode][]backends.Rep{}
	explain := map[backends.Mode][]backends.OpExplanation{}
	var lastC3 backends.Collector
	for round := range rounds {
		n := reps / rounds
		if round < reps%rounds {
			n++
		}
		for _, m := range modes {
			w := 0
			if round == 0 {
				w = warm
			}
			mst := st
			if m != backends.ModeConcurrent {
				mst = st.Isolated()
			}
			ex := backends.Experiment{Scenario: sc, Strategy: mst, Mode: m, Reps: n, Warmup: w}
			var sink backends.EventSink
			var col backends.Collector
			if m == backends.ModeConcurrent && round == rounds-1 {
				sink = &col
			}
			rr, err := b.Run(ctx, ex, sink)
			if err != nil {
				return Result{}, fmt.Errorf("%s run of %s on %s: %w", m, sc.Name, b.Name(), err)
			}
			if len(rr.Reps) != n {
				return Result{}, fmt.Errorf("%s run of %s on %s returned %d repetitions, want %d", m, sc.Name, b.Name(), len(rr.Reps), n)
			}
			got[m] = append(got[m], rr.Reps...)
			if len(rr.Explain) > 0 {
				explain[m] = rr.Explain
			}
			if sink != nil {
				lastC3 = col
			}
		}
	}

	devs := b.Devices()
	if len(devs) > sc.GPUs {
		devs = devs[:sc.GPUs]
	}
	r := Result{
		Scenario: sc, Strategy: st, Backend: b.Name(), Devices: devs,
		TComp:     Summarize(pick(got[backends.ModeCompute], func(r backends.Rep) int64 { return r.Compute })),
		TComm:     Summarize(pick(got[backends.ModeComm], func(r backends.Rep) int64 { return r.Comm })),
		TC3:       Summarize(pick(got[backends.ModeConcurrent], func(r backends.Rep) int64 { return r.Wall })),
		TCompInC3: Summarize(pick(got[backends.ModeConcurrent], func(r backends.Rep) int64 { return r.Compute })),
		TCommInC3: Summarize(pick(got[backends.ModeConcurrent], func(r backends.Rep) int64 { return r.Comm })),
		Explain:   explain,
		Reps:      got,
	}
	if reuse {
		r.TComp, r.TComm = opt.Baseline.TComp, opt.Baseline.TComm
		for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
			r.Reps[m] = opt.Baseline.Reps[m]
		}
		for m, e := range opt.Baseline.Explain {
			r.Explain[m] = e
		}
	}
	r.Timeline, r.Samples = lastRep(lastC3)
	r.Deterministic = caps.Deterministic && allSame(r.Reps)
	r.Derive(caps.HBMBandwidth)
	return r, nil
}

// allSame reports whether every mode's repetitions are identical: what a
// deterministic backend gives, unless it replays a recording's noise.
func allSame(reps map[backends.Mode][]backends.Rep) bool {
	for _, rs := range reps {
		for _, r := range rs {
			if !slices.Equal(r.Ops, rs[0].Ops) || r.Wall != rs[0].Wall || r.Compute != rs[0].Compute || r.Comm != rs[0].Comm {
				return false
			}
		}
	}
	return true
}

// Derive fills every figure computed from the stats: speedups, fraction of
// ideal, slowdowns, class, bandwidths, the compute op's achieved TFLOP/s
// (a GEMM) or bytes per second (a stream op) and, when concurrent
// runs exist and hbmBandwidth (bytes/s) is known, the bound. Measure calls it;
// so can anything that builds a Result from its own stats (a test fixture, a
// synthetic session), so the definitions live in one place.
func (r *Result) Derive(hbmBandwidth float64) {
	tComp, tComm, tC3 := r.TComp.Median, r.TComm.Median, r.TC3.Median
	r.IdealSpeedup = IdealSpeedup(tComp, tComm)
	r.Class = Classify(tComp, tComm)
	if r.TC3.N > 0 {
		r.RealizedSpeedup = RealizedSpeedup(tComp, tComm, tC3)
		if f, ok := FractionOfIdeal(r.RealizedSpeedup, r.IdealSpeedup); ok {
			r.FractionOfIdeal = &f
		}
		r.CompSlowdown = Slowdown(r.TCompInC3.Median, tComp)
		r.CommSlowdown = Slowdown(r.TCommInC3.Median, tComm)
	}
	gpus := r.Scenario.GPUs
	r.AlgBW = AlgBW(r.Scenario.Comm.SizeBytes(gpus), tComm/1e9)
	r.BusBW = BusBW(r.Scenario.Comm.Collective, gpus, r.AlgBW)
	if c := r.Scenario.Compute; tComp > 0 {
		switch c.Kind {
		case scenarios.GEMM:
			r.AchievedTFLOPs = c.FLOPs() / (tComp / 1e9) / 1e12
		case scenarios.Stream:
			hbm, _ := HBMBytes(scenarios.Scenario{Compute: c})
			r.AchievedBW = hbm / (tComp / 1e9)
		}
	}
	if r.TC3.N > 0 {
		if bd, ok := ComputeBound(r.Scenario, tComp, tComm, r.RealizedSpeedup, hbmBandwidth); ok {
			r.Bound = &bd
		}
	}
}

func withStrategy(sc scenarios.Scenario, st scenarios.Strategy) scenarios.Scenario {
	sc.Strategy = st
	return sc
}

// CheckKnobs refuses a strategy that needs something the backend (named
// backend, for the message) cannot do, naming the knob and its setting.
func CheckKnobs(ks scenarios.Knobs, st scenarios.Strategy, c backends.Capabilities, backend string) error {
	for _, n := range ks.Needs(st) {
		if !c.Has(n.Cap) {
			return fmt.Errorf("the %s backend cannot %s, which %s %s asks for; leave %s unset or pick another backend",
				backend, n.Cap, n.Knob.Key, n.Knob.Text(st.Normalize()), n.Knob.Key)
		}
	}
	return nil
}

// KnobsOf returns the capabilities the strategies need (under c3lab's
// knob table): what any of them asks of a backend, and nothing else.
// Measure accepts each of them on a backend that has at least these.
func KnobsOf(sts ...scenarios.Strategy) backends.Capabilities {
	var c backends.Capabilities
	ks := scenarios.StrategyKnobs()
	for _, st := range sts {
		for _, n := range ks.Needs(st) {
			c = c.With(n.Cap)
		}
	}
	return c
}

func pick(reps []backends.Rep, f func(backends.Rep) int64) []int64 {
	out := make([]int64, 0, len(reps))
	for _, r := range reps {
		out = append(out, f(r))
	}
	return out
}

// lastRep keeps the spans and samples of the last repetition in a collector.
func lastRep(c backends.Collector) ([]backends.Span, []backends.Sample) {
	last := -1
	for _, s := range c.SpanList {
		last = max(last, s.Rep)
	}
	var spans []backends.Span
	for _, s := range c.SpanList {
		if s.Rep == last {
			spans = append(spans, s)
		}
	}
	var samples []backends.Sample
	for _, s := range c.SampleList {
		if s.Rep == last {
			samples = append(samples, s)
		}
	}
	return spans, samples
}
