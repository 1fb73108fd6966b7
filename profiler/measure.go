package profiler

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

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
	// Machine, when set, is read around every run and every
	// DuringInterval during it (Result.Drift) and asked for the engines'
	// use during the runs (Result.TimedUse); nil records neither (no
	// NVML: the simulator, no driver).
	Machine Machine
	// Settle is how long, before the first timed round, the round's runs
	// repeat untimed, so that the GPUs' power limit has taken hold: on an
	// H200 a large GEMM runs its first ~100 ms at 1980 MHz, then at the
	// 700 W limit's 1515-1680 (backends/cuda/results/2026-12-02-h200x1-s6,
	// TestGPUGEMMClockTransient), so without it the first rounds'
	// isolated and concurrent runs are timed at a clock the rest are not.
	// 0 means the backend's (Capabilities.Settle: 300 ms on real GPUs,
	// none on the simulator); a negative value settles nothing.
	Settle time.Duration
	// DuringInterval is how often Machine is read while a run runs, from
	// its own goroutine (Drift.During, Drift.ClockNote): 0 means
	// DefaultDuringInterval, a negative value reads only around the runs.
	DuringInterval time.Duration
	// Precision, when set, makes the measurement adaptive: after Rounds
	// rounds Measure adds rounds (of the same size) until the 95 %
	// interval of the target figure is at most that wide on each side,
	// or TimeCap has passed since it started (DefaultTimeCap when 0), or
	// MaxAdaptiveRounds rounds were made; Result.Precision says which.
	Precision Precision
	TimeCap   time.Duration
	// TimeCapFactor, when above 0, replaces TimeCap with a cap relative
	// to the measurement's own cost: the whole measurement, its first
	// Rounds rounds included, takes at most this multiple of the time
	// those first rounds took (2 doubles a fixed-repetition
	// measurement's time at most). A round that would end past the cap,
	// judged by the rounds' mean time so far, is not started.
	TimeCapFactor float64
	// MaxRounds caps an adaptive measurement's rounds; 0 means
	// MaxAdaptiveRounds.
	MaxRounds int
	// Passes, for Sweep only, splits every measurement of a sweep into
	// this many passes over the whole grid (see DefaultPasses and
	// MergePasses); 0 or 1 measures each in one go. A deterministic
	// backend makes one pass.
	Passes int

	// now is the clock the time cap is read from (time.Now when nil);
	// tests set it.
	now func() time.Time
	// duringAfter waits for the next reading during a run (time.After
	// when nil); tests set it to tick the readings themselves.
	duringAfter func(time.Duration) <-chan time.Time
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
	// SerialDefault and DefaultReps are the serial default's T_serial and
	// its isolated repetitions (Result.SerialDefault, Result.DefaultReps):
	// they hold for every strategy of the scenario.
	SerialDefault float64                          `json:"t_serial_default,omitempty"`
	DefaultReps   map[backends.Mode][]backends.Rep `json:"-"`
	// RoundOf and DefaultRoundOf are the rounds of Reps and DefaultReps
	// (Result.RoundOf, Result.DefaultRoundOf).
	RoundOf        map[backends.Mode][]int `json:"-"`
	DefaultRoundOf map[backends.Mode][]int `json:"-"`
}

// Baseline returns the result's isolated half.
func (r Result) Baseline() Baseline {
	ex := map[backends.Mode][]backends.OpExplanation{}
	reps := map[backends.Mode][]backends.Rep{}
	rounds := map[backends.Mode][]int{}
	for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
		if e, ok := r.Explain[m]; ok {
			ex[m] = e
		}
		reps[m] = r.Reps[m]
		if ro, ok := r.RoundOf[m]; ok {
			rounds[m] = ro
		}
	}
	bl := Baseline{Scenario: r.Scenario, Isolated: r.Strategy.Isolated(), TComp: r.TComp, TComm: r.TComm, Explain: ex, Reps: reps,
		SerialDefault: r.SerialDefault, DefaultReps: r.DefaultReps, DefaultRoundOf: r.DefaultRoundOf}
	if len(rounds) > 0 {
		bl.RoundOf = rounds
	}
	return bl
}

// matches reports whether the baseline holds for a scenario and strategy.
func (bl *Baseline) matches(sc scenarios.Scenario, st scenarios.Strategy) bool {
	if bl == nil {
		return false
	}
	return sameOps(bl.Scenario, sc) && bl.Isolated == st.Isolated()
}

// hasDefault reports whether the baseline holds the scenario's serial
// default, whatever strategy it was measured under.
func (bl *Baseline) hasDefault(sc scenarios.Scenario) bool {
	return bl != nil && bl.SerialDefault > 0 && sameOps(bl.Scenario, sc)
}

// sameOps compares two scenarios but for their strategies.
func sameOps(a, b scenarios.Scenario) bool {
	a.Strategy, b.Strategy = scenarios.Strategy{}, scenarios.Strategy{}
	return a.Equal(b)
}

// sameWork compares two scenarios' names and ops: not their strategies,
// repetition counts or words.
func sameWork(a, b scenarios.Scenario) bool {
	a.Reps, b.Reps = 0, 0
	a.Description, b.Description, a.Source, b.Source = "", "", "", ""
	return sameOps(a, b)
}

// SerialDefaultStrategy is the strategy of the serial default's isolated
// runs: no decomposition, the default implementations (the collective on
// NCCL's SM kernels), nothing shared.
func SerialDefaultStrategy() scenarios.Strategy {
	return scenarios.Strategy{Decompose: 1}.Normalize().Isolated()
}

// IsSerialDefault reports whether strategy st's isolated runs of sc are the
// serial default's: the same implementations, and a decomposition that
// gives the same graph (the scenario's own, 0, is whole when no op of it
// asks for chunks).
func IsSerialDefault(sc scenarios.Scenario, st scenarios.Strategy) bool {
	return SameIsolated(sc, st, SerialDefaultStrategy())
}

// SameIsolated reports whether two strategies run the isolated ops of sc
// alike: the same isolated strategy, taking the scenario's own
// decomposition (0) as whole (1) when no op of it asks for chunks.
func SameIsolated(sc scenarios.Scenario, a, b scenarios.Strategy) bool {
	return isolatedOf(sc, a) == isolatedOf(sc, b)
}

func isolatedOf(sc scenarios.Scenario, st scenarios.Strategy) scenarios.Strategy {
	iso := st.Normalize().Isolated()
	if iso.Decompose == 0 && !ownDecomposition(sc) {
		iso.Decompose = 1
	}
	return iso
}

// ownDecomposition reports whether an op of the scenario asks for chunks.
func ownDecomposition(sc scenarios.Scenario) bool {
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			if o.Decompose > 1 {
				return true
			}
		}
	}
	return false
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
	// ModelError is, for a model's figures (the simulator's), how far the
	// model was from real runs it was not fitted to: the error to read
	// them with where a measurement has its interval. Nil for a
	// measurement, and for a model without held-out figures.
	ModelError *backends.ModelError `json:"model_error,omitempty"`

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
	// DefaultReps are the serial default's isolated repetitions (compute
	// and comm modes, of the undecomposed graph), when the strategy's own
	// isolated runs are not the serial default's; nil otherwise.
	DefaultReps map[backends.Mode][]backends.Rep `json:"default_reps,omitempty"`
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
	// RoundOf gives, per mode, the interleaved round each of Reps was
	// measured in (same order as Reps); nil in results made before
	// rounds were kept, whose rounds are then unknown.
	RoundOf map[backends.Mode][]int `json:"rounds,omitempty"`
	// DefaultRoundOf is RoundOf for DefaultReps.
	DefaultRoundOf map[backends.Mode][]int `json:"default_rounds,omitempty"`
	// PassOfRound gives, for a result merged from a sweep's passes
	// (MergePasses), the pass (from 0) each round number was measured in;
	// nil for a measurement made in one go.
	PassOfRound []int `json:"pass_of_round,omitempty"`
	// Drift is every GPU's state around each run and the isolated and
	// concurrent parts compared (Drift.Flagged), and its state during the
	// runs by mode (Drift.During, Drift.ClockNote); nil without NVML.
	Drift *Drift `json:"drift,omitempty"`
	// TimedUse is what the engines did during the timed repetitions only;
	// nil without a machine record (Options.Machine).
	TimedUse *TimedUse `json:"timed_use,omitempty"`
	// CI holds the confidence intervals of the figures; nil on a
	// deterministic backend and when too few rounds were measured, and
	// NoCI then says why.
	CI   *Intervals `json:"ci,omitempty"`
	NoCI string     `json:"no_ci,omitempty"`
	// Bimodal lists the times whose repetitions fall in two modes (a
	// median between them describes neither): T_comp, T_comm, T_c3, and
	// each op of a graph of more than two ops alone and in C3.
	Bimodal []Bimodal `json:"bimodal,omitempty"`
	// Precision says, for an adaptive measurement (Options.Precision),
	// the target, whether it was reached, and how many rounds and how
	// long it took; nil otherwise.
	Precision *PrecisionOutcome `json:"precision,omitempty"`
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

// Measure runs the scenario's graph (scenarios.Scenario.Graph under st) on
// backend b: its compute ops alone, its communication ops alone, and the
// whole graph together under strategy st, and derives the metrics (each
// op's time alone and in C3 from the repetitions' per-op times, T_serial,
// T_ideal, S_ideal, S_real, F, U). The isolated runs use st.Isolated(): the
// collective's implementation and the decomposition as st picks them, on
// the whole GPU. When those are not the serial default's
// (SerialDefaultStrategy), the serial default's isolated runs are made too,
// in the same rounds, for U; opt.Baseline stands in for either when it
// holds them. The strategy is validated against the backend's limits
// first.
func Measure(ctx context.Context, b backends.Backend, sc scenarios.Scenario, st scenarios.Strategy, opt Options) (Result, error) {
	st = st.Normalize()
	unwatched := b
	// A model's held-out error, asked of the backend itself (the
	// machine watch below wraps it).
	modelErr, _ := b.(backends.ModelErrorReporter)
	b, watch := watchMachine(b, opt.Machine, opt.DuringInterval, opt.duringAfter)
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

	g, err := sc.Graph(st)
	if err != nil {
		return Result{}, err
	}

	// The runs of one round: the isolated runs under st.Isolated(), the
	// serial default's isolated runs when those differ, the concurrent run.
	type run struct {
		mode backends.Mode
		st   scenarios.Strategy
		def  bool // a serial-default run
	}
	reuse := !opt.IsolatedOnly && opt.Baseline.matches(sc, st)
	needDefault := !opt.IsolatedOnly && !IsSerialDefault(sc, st)
	reuseDefault := needDefault && opt.Baseline.hasDefault(sc)
	var dg *scenarios.Graph
	if needDefault && !reuseDefault {
		if dg, err = sc.Graph(SerialDefaultStrategy()); err != nil {
			return Result{}, err
		}
	}
	var plan []run
	if !reuse {
		plan = append(plan, run{backends.ModeCompute, st.Isolated(), false}, run{backends.ModeComm, st.Isolated(), false})
	}
	if dg != nil {
		plan = append(plan, run{backends.ModeCompute, SerialDefaultStrategy(), true}, run{backends.ModeComm, SerialDefaultStrategy(), true})
	}
	if !opt.IsolatedOnly {
		plan = append(plan, run{mode: backends.ModeConcurrent, st: st})
	}
	got := map[backends.Mode][]backends.Rep{}
	defReps := map[backends.Mode][]backends.Rep{}
	roundOf := map[backends.Mode][]int{}
	defRoundOf := map[backends.Mode][]int{}
	explain := map[backends.Mode][]backends.OpExplanation{}
	var lastC3 backends.Collector
	// runRound makes every run of the plan once, n repetitions each (w
	// of warm-up before), as round number round; collect keeps the
	// concurrent run's events.
	runRound := func(round, n, w int, collect bool) error {
		for _, p := range plan {
			m := p.mode
			ex := backends.Experiment{Scenario: sc, Strategy: p.st, Mode: m, Reps: n, Warmup: w}
			var sink backends.EventSink
			var col backends.Collector
			if m == backends.ModeConcurrent && collect {
				sink = &col
			}
			if watch != nil {
				watch.serialDefault = p.def
			}
			rr, err := b.Run(ctx, ex, sink)
			what := string(m)
			if p.def {
				what = "serial-default " + what
			}
			if err != nil {
				return fmt.Errorf("%s run of %s on %s: %w", what, sc.Name, b.Name(), err)
			}
			if len(rr.Reps) != n {
				return fmt.Errorf("%s run of %s on %s returned %d repetitions, want %d", what, sc.Name, b.Name(), len(rr.Reps), n)
			}
			if p.def {
				defReps[m] = append(defReps[m], rr.Reps...)
				defRoundOf[m] = appendRound(defRoundOf[m], round, n)
				continue
			}
			got[m] = append(got[m], rr.Reps...)
			roundOf[m] = appendRound(roundOf[m], round, n)
			if len(rr.Explain) > 0 {
				explain[m] = rr.Explain
			}
			if sink != nil {
				lastC3 = col
			}
		}
		return nil
	}
	clock := opt.now
	if clock == nil {
		clock = time.Now
	}
	started := clock()
	// Settle: the first round's runs, untimed and unrecorded, until the
	// GPUs have been under this load for opt.Settle.
	settle := opt.Settle
	if settle == 0 {
		settle = caps.Settle
	}
	if !caps.Deterministic && settle > 0 {
		n := max(1, reps/rounds)
		// A pass that does not move the clock (a test's fixed clock)
		// ends it: the loop waits on time, not on passes.
		settleStart := clock()
		var last time.Time
		for {
			now := clock()
			if now.Sub(settleStart) >= settle || now.Equal(last) {
				break
			}
			last = now
			for _, p := range plan {
				ex := backends.Experiment{Scenario: sc, Strategy: p.st, Mode: p.mode, Reps: n}
				if _, err := unwatched.Run(ctx, ex, nil); err != nil {
					return Result{}, fmt.Errorf("settling %s on %s before timing: %w", sc.Name, b.Name(), err)
				}
			}
		}
	}
	for round := range rounds {
		n := reps / rounds
		if round < reps%rounds {
			n++
		}
		w := 0
		if round == 0 {
			w = warm
		}
		if err := runRound(round, n, w, round == rounds-1); err != nil {
			return Result{}, err
		}
	}

	// assemble derives the result from the repetitions measured so far.
	assemble := func() (Result, error) {
		r := Result{
			Scenario: sc, Strategy: st, Backend: b.Name(), Devices: devicesOf(b, sc),
			Explain: explain, Reps: maps.Clone(got), RoundOf: maps.Clone(roundOf),
		}
		if reuse {
			for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
				r.Reps[m] = opt.Baseline.Reps[m]
				r.RoundOf[m] = opt.Baseline.RoundOf[m]
			}
			for m, e := range opt.Baseline.Explain {
				explain[m] = e
			}
		}
		switch {
		case reuseDefault:
			r.SerialDefault, r.DefaultReps, r.DefaultRoundOf = opt.Baseline.SerialDefault, opt.Baseline.DefaultReps, opt.Baseline.DefaultRoundOf
		case dg != nil:
			r.DefaultReps, r.DefaultRoundOf = maps.Clone(defReps), maps.Clone(defRoundOf)
		}
		if err := r.refigure(g, dg, caps.HBMBandwidth); err != nil {
			return Result{}, fmt.Errorf("%s on %s: %w", sc.Name, b.Name(), err)
		}
		r.Deterministic = caps.Deterministic && allSame(r.Reps) && allSame(r.DefaultReps)
		if modelErr != nil {
			r.ModelError = modelErr.ModelError(sc, r.IdealSpeedup)
		}
		r.fillUncertainty(g, dg)
		return r, nil
	}
	r, err := assemble()
	if err != nil {
		return Result{}, err
	}
	if !opt.Precision.Off() && !opt.IsolatedOnly {
		// Adaptive repetition: more rounds, of the first rounds' size,
		// until the interval of the target figure is tight enough or the
		// time (or round) cap is reached.
		n := (reps + rounds - 1) / rounds
		capT := opt.TimeCap
		if capT <= 0 {
			capT = DefaultTimeCap
		}
		// A relative cap: the time the fixed rounds took, times the
		// factor; the next round must fit under it.
		if opt.TimeCapFactor > 0 {
			capT = time.Duration(opt.TimeCapFactor * float64(clock().Sub(started)))
		}
		maxRounds := opt.MaxRounds
		if maxRounds <= 0 {
			maxRounds = MaxAdaptiveRounds
		}
		out := &PrecisionOutcome{Target: opt.Precision.String(), Rounds: rounds}
		nextEnds := func() time.Duration {
			el := clock().Sub(started)
			if opt.TimeCapFactor <= 0 {
				return el
			}
			// The mean round so far stands for the next one.
			return el + el/time.Duration(max(out.Rounds, 1))
		}
		for round := rounds; ; round++ {
			hw, ok, why := opt.Precision.Check(r, caps.Deterministic)
			out.HalfWidth = nil
			if !math.IsNaN(hw) {
				out.HalfWidth = &hw
			}
			switch {
			case ok:
				out.Reached, out.Stop = true, why
			case why != "":
				out.Stop = why
			case nextEnds() > capT || clock().Sub(started) >= capT:
				out.Stop = StopTimeCap
			case round >= maxRounds:
				out.Stop = StopRoundCap
			}
			if out.Stop != "" {
				break
			}
			if err := runRound(round, n, 0, false); err != nil {
				return Result{}, err
			}
			out.Rounds = round + 1
			if r, err = assemble(); err != nil {
				return Result{}, err
			}
		}
		if out.Stop != StopDeterministic {
			out.Elapsed, out.Cap = clock().Sub(started), capT
		}
		r.Precision = out
	}
	r.Timeline, r.Samples = lastRep(lastC3)
	watch.finish(&r)
	return r, nil
}

// appendRound appends n repetitions' round number to rs.
func appendRound(rs []int, round, n int) []int {
	for range n {
		rs = append(rs, round)
	}
	return rs
}

// devicesOf is the backend's devices the scenario runs on.
func devicesOf(b backends.Backend, sc scenarios.Scenario) []backends.DeviceInfo {
	devs := b.Devices()
	if len(devs) > sc.GPUs {
		devs = devs[:sc.GPUs]
	}
	return devs
}

// refigure derives every figure of the result from its repetitions
// (Reps, and DefaultReps when set): T_c3, the per-op figures and role
// totals for graph g, the serial default from DefaultReps for graph dg
// (when both are given), then Derive's figures. It is the one definition
// Measure and the bootstrap (fillUncertainty) both use.
func (r *Result) refigure(g, dg *scenarios.Graph, hbmBandwidth float64) error {
	r.TC3 = Summarize(pick(r.Reps[backends.ModeConcurrent], func(r backends.Rep) int64 { return r.Wall }))
	if err := r.fillOps(g); err != nil {
		return err
	}
	if dg != nil && len(r.DefaultReps) > 0 {
		alone, err := isolatedOps(dg, r.DefaultReps)
		if err != nil {
			return fmt.Errorf("serial default: %w", err)
		}
		r.SerialDefault = sumStats(alone).Median
	}
	r.derive(g, hbmBandwidth)
	return nil
}

// fillOps sets the per-op figures (Ops) and the role totals (TComp, TComm,
// TCompInC3, TCommInC3) from the repetitions, for graph g. Each op's time
// alone comes from the isolated run of its role; a role's total is the sum
// over its ops (sumStats). Repetitions without per-op times (recordings
// made before graphs) give the pair's ops as Compute and Comm.
func (r *Result) fillOps(g *scenarios.Graph) error {
	alone, err := isolatedOps(g, r.Reps)
	if err != nil {
		return err
	}
	c3 := r.Reps[backends.ModeConcurrent]
	var inC3 []Stat
	if len(c3) > 0 {
		if inC3, err = opStats(g, c3); err != nil {
			return err
		}
	}
	prev := r.Ops
	r.Ops = make([]OpResult, len(g.Ops))
	var comp, comm, compC3, commC3 []Stat
	for i, o := range g.Ops {
		label := ""
		if len(prev) == len(g.Ops) && prev[i].Name == o.Name && prev[i].Label != "" {
			label = prev[i].Label // the same op's: spares formatting it again (the bootstrap)
		} else {
			label = o.Label()
		}
		or := OpResult{Name: o.Name, Role: o.Role, Label: label, Count: o.Count, TAlone: alone[i]}
		if inC3 != nil {
			or.TInC3 = inC3[i]
			if sd := Slowdown(or.TInC3.Median, or.TAlone.Median); !math.IsNaN(sd) {
				or.Slowdown = sd
			}
		}
		r.Ops[i] = or
		if o.Role == scenarios.RoleComm {
			comm, commC3 = append(comm, or.TAlone), append(commC3, or.TInC3)
		} else {
			comp, compC3 = append(comp, or.TAlone), append(compC3, or.TInC3)
		}
	}
	r.TComp, r.TComm = sumStats(comp), sumStats(comm)
	if inC3 != nil {
		r.TCompInC3, r.TCommInC3 = sumStats(compC3), sumStats(commC3)
	}
	return nil
}

// isolatedOps returns each op's time alone: from the compute-mode
// repetitions for a compute op, the comm-mode ones for a comm op.
func isolatedOps(g *scenarios.Graph, reps map[backends.Mode][]backends.Rep) ([]Stat, error) {
	comp, err := opStats(g, reps[backends.ModeCompute])
	if err != nil {
		return nil, err
	}
	comm, err := opStats(g, reps[backends.ModeComm])
	if err != nil {
		return nil, err
	}
	for i, o := range g.Ops {
		if o.Role == scenarios.RoleComm {
			comp[i] = comm[i]
		}
	}
	return comp, nil
}

// opStats summarizes each op's time over the repetitions (opSeries).
func opStats(g *scenarios.Graph, reps []backends.Rep) ([]Stat, error) {
	per, err := opSeries(g, reps)
	if err != nil {
		return nil, err
	}
	out := make([]Stat, len(g.Ops))
	for i := range per {
		out[i] = Summarize(per[i])
	}
	return out, nil
}

// opSeries is each op's time in each repetition (Rep.Ops). A repetition
// without per-op times stands for the pair: one op per role, timed by
// Compute and Comm; a graph of more ops needs them.
func opSeries(g *scenarios.Graph, reps []backends.Rep) ([][]int64, error) {
	per := make([][]int64, len(g.Ops))
	pair := len(g.OpsOf(scenarios.RoleCompute)) <= 1 && len(g.OpsOf(scenarios.RoleComm)) <= 1
	for _, rp := range reps {
		switch {
		case len(rp.Ops) == len(g.Ops):
			for i, t := range rp.Ops {
				per[i] = append(per[i], t)
			}
		case len(rp.Ops) == 0 && pair:
			for i, o := range g.Ops {
				t := rp.Compute
				if o.Role == scenarios.RoleComm {
					t = rp.Comm
				}
				per[i] = append(per[i], t)
			}
		case len(rp.Ops) == 0:
			return nil, fmt.Errorf("the backend gave no per-op times for a graph of %d ops", len(g.Ops))
		default:
			return nil, fmt.Errorf("a repetition has times for %d ops; the graph has %d", len(rp.Ops), len(g.Ops))
		}
	}
	return per, nil
}

// sumStats is the figures of ops run one after another: each quantile is
// the sum of the ops' (exact for one op; for several the spread is an
// upper bound, as if the ops were slow or fast together), N the fewest
// repetitions. No stats give a zero Stat.
func sumStats(ss []Stat) Stat {
	var out Stat
	for i, s := range ss {
		if i == 0 || s.N < out.N {
			out.N = s.N
		}
		out.Median += s.Median
		out.Min += s.Min
		out.Max += s.Max
		out.P10 += s.P10
		out.P90 += s.P90
	}
	return out
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

// Derive fills every figure computed from the stats: T_serial, T_ideal,
// speedups, fraction of ideal, uplift, slowdowns, class, bandwidths, the
// lead compute op's achieved TFLOP/s (a GEMM) or bytes per second (a
// stream op) and, when concurrent runs exist and hbmBandwidth (bytes/s) is
// known, the bound. Measure calls it; so can anything that builds a Result
// from its own stats (a test fixture, a synthetic session), so the
// definitions live in one place. T_ideal is the list schedule of the
// graph at the ops' isolated times when Ops holds them, max(T_comp,
// T_comm) otherwise (the pair); the serial default is T_serial itself when
// the strategy's isolated runs are the serial default's, and is left as
// set otherwise.
func (r *Result) Derive(hbmBandwidth float64) {
	g, err := r.Scenario.Graph(r.Strategy)
	if err != nil {
		g = nil
	}
	r.derive(g, hbmBandwidth)
}

// derive is Derive for the result's graph g (nil when it has none).
func (r *Result) derive(g *scenarios.Graph, hbmBandwidth float64) {
	tComp, tComm, tC3 := r.TComp.Median, r.TComm.Median, r.TC3.Median
	r.TSerial = tComp + tComm
	r.TIdeal = math.Max(tComp, tComm)
	if g != nil && len(r.Ops) == len(g.Ops) {
		dur := make([]float64, len(g.Ops))
		for i, o := range r.Ops {
			dur[i] = o.TAlone.Median / float64(max(o.Count, 1))
		}
		r.TIdeal = g.ListSchedule(dur).Makespan
	}
	r.IdealSpeedup = SpeedupOver(r.TSerial, r.TIdeal)
	r.Class = Classify(tComp, tComm)
	if IsSerialDefault(r.Scenario, r.Strategy) {
		r.SerialDefault = r.TSerial
	}
	r.FractionOfIdeal, r.Uplift = nil, 0
	if r.TC3.N > 0 {
		r.RealizedSpeedup = SpeedupOver(r.TSerial, tC3)
		if f, ok := FractionOfIdeal(r.RealizedSpeedup, r.IdealSpeedup); ok {
			r.FractionOfIdeal = &f
		}
		r.setUplift()
		r.CompSlowdown = Slowdown(r.TCompInC3.Median, tComp)
		r.CommSlowdown = Slowdown(r.TCommInC3.Median, tComm)
	}
	gpus := r.Scenario.GPUs
	comm, commT := r.Scenario.Comm, tComm
	comp, compT := r.Scenario.Compute, tComp
	if g != nil && len(r.Ops) == len(g.Ops) && r.Scenario.IsGraph() {
		// The lead op of each role: its bytes or FLOPs over its time alone.
		if i := g.OpsOf(scenarios.RoleComm); len(i) > 0 {
			o := g.Ops[i[0]]
			comm, commT = o.Comm, r.Ops[i[0]].TAlone.Median/float64(max(o.Count, 1))
		}
		if i := g.OpsOf(scenarios.RoleCompute); len(i) > 0 {
			o := g.Ops[i[0]]
			comp, compT = o.Compute, r.Ops[i[0]].TAlone.Median/float64(max(o.Count, 1))
		}
	}
	r.AlgBW = AlgBW(comm.SizeBytes(gpus), commT/1e9)
	r.BusBW = BusBW(comm.Collective, gpus, r.AlgBW)
	r.AchievedTFLOPs, r.AchievedBW = 0, 0
	if compT > 0 {
		switch comp.Kind {
		case scenarios.GEMM:
			r.AchievedTFLOPs = comp.FLOPs() / (compT / 1e9) / 1e12
		case scenarios.Stream:
			hbm, _ := HBMBytes(scenarios.Scenario{Compute: comp})
			r.AchievedBW = hbm / (compT / 1e9)
		}
	}
	r.Bound = nil
	if r.TC3.N > 0 {
		bd, ok := ComputeBound(r.Scenario, tComp, tComm, r.RealizedSpeedup, hbmBandwidth)
		if g != nil && r.Scenario.IsGraph() {
			bd, ok = ComputeGraphBound(g, r.TSerial, r.TIdeal, r.RealizedSpeedup, hbmBandwidth)
		}
		if ok {
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

// CompleteV1 fills the figures a result recorded before graphs lacks,
// from what it holds, leaving every recorded figure as it was: the per-op
// figures (from its repetitions, the pair's ops timed by Compute and
// Comm), T_serial and T_ideal (the pair's), and, when its isolated runs
// are the serial default's, the serial default and U (U = S_real then).
// A result on copy engines gets U only from a run of the serial default
// (FillSerialDefault). A result that already has T_serial is left alone.
func (r *Result) CompleteV1() {
	if r.TSerial != 0 {
		return
	}
	if len(r.Ops) == 0 && len(r.Reps) > 0 {
		if g, err := r.Scenario.Graph(r.Strategy); err == nil {
			c := *r
			if c.fillOps(g) == nil {
				r.Ops = c.Ops
			}
		}
	}
	r.TSerial = r.TComp.Median + r.TComm.Median
	r.TIdeal = math.Max(r.TComp.Median, r.TComm.Median)
	if IsSerialDefault(r.Scenario, r.Strategy) {
		r.SerialDefault = r.TSerial
	}
	r.setUplift()
}

// setUplift sets U from the serial default and T_c3, when both are known.
func (r *Result) setUplift() {
	r.Uplift = 0
	if u := SpeedupOver(r.SerialDefault, r.TC3.Median); r.TC3.N > 0 && r.SerialDefault > 0 && !math.IsNaN(u) {
		r.Uplift = u
	}
}

// FillSerialDefault gives results without a serial default (recorded
// before it existed, on copy engines or decomposed) the T_serial of a
// result of the same scenario whose isolated runs are the serial
// default's (the first such, in order), and U from it.
func FillSerialDefault(rs []Result) {
	for i := range rs {
		if rs[i].SerialDefault > 0 {
			continue
		}
		for j := range rs {
			if rs[j].TSerial > 0 && IsSerialDefault(rs[j].Scenario, rs[j].Strategy) && sameWork(rs[j].Scenario, rs[i].Scenario) {
				rs[i].SerialDefault = rs[j].TSerial
				rs[i].setUplift()
				break
			}
		}
	}
}
