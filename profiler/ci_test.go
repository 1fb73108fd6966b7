package profiler

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// dmaStrategy is a strategy whose isolated runs are not the serial
// default's: its results carry the default's repetitions for U.
func dmaStrategy() scenarios.Strategy {
	return scenarios.Strategy{CommEngine: scenarios.EngineDMA}.Normalize()
}

// synthetic builds a result of scenario() under dmaStrategy from times
// drawn by draw (one call per repetition: the mode, whether it is a
// serial-default run, the round), rounds x perRound repetitions per
// mode, and derives its figures and intervals as Measure does.
func synthetic(t testing.TB, rounds, perRound int, draw func(m backends.Mode, def bool, round int) int64) Result {
	t.Helper()
	sc, st := scenario(), dmaStrategy()
	r := Result{Scenario: sc, Strategy: st, Backend: "synthetic",
		Reps: map[backends.Mode][]backends.Rep{}, RoundOf: map[backends.Mode][]int{},
		DefaultReps: map[backends.Mode][]backends.Rep{}, DefaultRoundOf: map[backends.Mode][]int{}}
	for k := range rounds {
		for range perRound {
			for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
				for _, def := range []bool{false, true} {
					v := draw(m, def, k)
					rp := backends.Rep{Wall: v, Compute: v}
					if m == backends.ModeComm {
						rp = backends.Rep{Wall: v, Comm: v}
					}
					if def {
						r.DefaultReps[m] = append(r.DefaultReps[m], rp)
						r.DefaultRoundOf[m] = append(r.DefaultRoundOf[m], k)
					} else {
						r.Reps[m] = append(r.Reps[m], rp)
						r.RoundOf[m] = append(r.RoundOf[m], k)
					}
				}
			}
			w := draw(backends.ModeConcurrent, false, k)
			r.Reps[backends.ModeConcurrent] = append(r.Reps[backends.ModeConcurrent], backends.Rep{Wall: w, Compute: w * 9 / 10, Comm: w})
			r.RoundOf[backends.ModeConcurrent] = append(r.RoundOf[backends.ModeConcurrent], k)
		}
	}
	g, err := sc.Graph(st)
	if err != nil {
		t.Fatal(err)
	}
	dg, err := sc.Graph(SerialDefaultStrategy())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.refigure(g, dg, 0); err != nil {
		t.Fatal(err)
	}
	r.fillUncertainty(g, dg)
	return r
}

// medians of the synthetic times (ns): compute, comm and the default's
// comm alone, and the concurrent run.
const (
	medComp, medComm, medDefComm, medC3 = 1.0e6, 0.8e6, 0.9e6, 1.2e6
)

func median(m backends.Mode, def bool) float64 {
	switch {
	case m == backends.ModeCompute:
		return medComp
	case m == backends.ModeComm && def:
		return medDefComm
	case m == backends.ModeComm:
		return medComm
	}
	return medC3
}

// TestIntervalCoverage checks that the 95 % intervals of T_c3 and of U
// hold the true value about 95 % of the time on data drawn from known
// distributions: normal and lognormal repetitions, with and without a
// drift that moves a whole round.
func TestIntervalCoverage(t *testing.T) {
	const trials = 200
	for _, tc := range []struct {
		name  string
		noise func(rng *rand.Rand, med float64) float64
		drift float64 // sd of a round's log factor, shared by every mode
	}{
		{"normal", func(rng *rand.Rand, med float64) float64 { return med * (1 + 0.03*rng.NormFloat64()) }, 0},
		{"lognormal", func(rng *rand.Rand, med float64) float64 { return med * math.Exp(0.05*rng.NormFloat64()) }, 0},
		{"lognormal, drifting rounds", func(rng *rand.Rand, med float64) float64 { return med * math.Exp(0.03*rng.NormFloat64()) }, 0.02},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(1, 2))
			hitC3, hitU, n := 0, 0, 0
			for range trials {
				drift := make([]float64, DefaultRounds)
				for k := range drift {
					drift[k] = math.Exp(tc.drift * rng.NormFloat64())
				}
				r := synthetic(t, DefaultRounds, 4, func(m backends.Mode, def bool, k int) int64 {
					// With a drift, the truth is the median over rounds
					// too: a round's factor is centered on 1 in log.
					return int64(tc.noise(rng, median(m, def)) * drift[k])
				})
				if r.CI == nil {
					t.Fatalf("no interval: %s", r.NoCI)
				}
				n++
				if r.CI.TC3.Contains(medC3) {
					hitC3++
				}
				if r.CI.U.Contains((medComp + medDefComm) / medC3) {
					hitU++
				}
			}
			for name, hit := range map[string]int{"T_c3": hitC3, "U": hitU} {
				cov := float64(hit) / float64(n)
				t.Logf("%s coverage %.3f", name, cov)
				if cov < 0.90 || cov > 0.99 {
					t.Errorf("%s: the 95 %% interval held the truth in %.1f %% of %d trials, want 90..99 %%", name, 100*cov, n)
				}
			}
		})
	}
}

// TestPairedRoundsNarrowRatio checks that resampling the same rounds for
// the isolated and concurrent runs narrows the interval of a ratio (U)
// when whole rounds drift together: the drift cancels in the ratio. With
// the serial default's rounds relabelled (no longer paired with the
// concurrent run's), the same data give a wider interval.
func TestPairedRoundsNarrowRatio(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	drift := []float64{0.90, 1.10, 0.95, 1.08, 1.00, 0.92}
	r := synthetic(t, len(drift), 5, func(m backends.Mode, def bool, k int) int64 {
		return int64(median(m, def) * drift[k] * (1 + 0.005*rng.NormFloat64()))
	})
	paired := r.CI.U
	un := r
	un.CI, un.NoCI = nil, ""
	un.DefaultRoundOf = map[backends.Mode][]int{}
	for m, rs := range r.DefaultRoundOf {
		for _, k := range rs {
			un.DefaultRoundOf[m] = append(un.DefaultRoundOf[m], len(drift)-1-k)
		}
	}
	g, _ := un.Scenario.Graph(un.Strategy)
	dg, _ := un.Scenario.Graph(SerialDefaultStrategy())
	un.fillUncertainty(g, dg)
	if !paired.Valid() || !un.CI.U.Valid() {
		t.Fatalf("intervals %+v %+v", paired, un.CI.U)
	}
	if paired.HalfWidth()*3 > un.CI.U.HalfWidth() {
		t.Errorf("U ± %.4f paired, ± %.4f unpaired: pairing should cancel the rounds' drift", paired.HalfWidth(), un.CI.U.HalfWidth())
	}
	// The times themselves drift: their intervals stay wide.
	if r.CI.TC3.HalfWidth()/r.TC3.Median < 0.02 {
		t.Errorf("T_c3 ± %.1f%%: a drift of ±10%% between rounds should show", 100*r.CI.TC3.HalfWidth()/r.TC3.Median)
	}
}

// TestIntervalsAreReproducible checks that the same repetitions give the
// same intervals (the seed comes from the data) and other data others.
func TestIntervalsAreReproducible(t *testing.T) {
	gen := func(seed uint64) Result {
		rng := rand.New(rand.NewPCG(seed, 9))
		return synthetic(t, 5, 4, func(m backends.Mode, def bool, _ int) int64 {
			return int64(median(m, def) * (1 + 0.02*rng.NormFloat64()))
		})
	}
	a, b, c := gen(1), gen(1), gen(2)
	ja, _ := json.Marshal(a.CI)
	jb, _ := json.Marshal(b.CI)
	jc, _ := json.Marshal(c.CI)
	if string(ja) != string(jb) {
		t.Errorf("the same data gave two intervals:\n%s\n%s", ja, jb)
	}
	if string(ja) == string(jc) {
		t.Errorf("other data gave the same intervals")
	}
	// Every figure's interval holds numbers, and the JSON round-trips.
	var back Intervals
	if err := json.Unmarshal(ja, &back); err != nil {
		t.Fatal(err)
	}
	for name, iv := range map[string]Interval{"T_comp": back.TComp, "T_comm": back.TComm, "T_c3": back.TC3, "T_serial": back.TSerial,
		"T_ideal": back.TIdeal, "S_ideal": back.SIdeal, "S_real": back.SReal, "F": back.F, "U": back.U,
		"compute slowdown": back.CompSlowdown, "comm slowdown": back.CommSlowdown} {
		if !iv.Valid() {
			t.Errorf("%s: no interval", name)
		}
	}
	if len(back.Ops) != 2 || back.Rounds != 5 || back.Resamples != Resamples || back.Level != 0.95 {
		t.Errorf("intervals %+v", back)
	}
}

// TestNoIntervalSaysWhy checks the results that get no interval, and
// that each says why; and that a result without recorded rounds (an old
// recording) gets them from the protocol's split when it can.
func TestNoIntervalSaysWhy(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	noisy := func(rounds, per int) Result {
		return synthetic(t, rounds, per, func(m backends.Mode, def bool, _ int) int64 {
			return int64(median(m, def) * (1 + 0.02*rng.NormFloat64()))
		})
	}
	refill := func(r Result) Result {
		r.CI, r.NoCI = nil, ""
		r.FillUncertainty()
		return r
	}
	two := noisy(2, 10)
	if two.CI != nil || !strings.Contains(two.NoCI, "2 interleaved round(s)") {
		t.Errorf("two rounds: CI %v, why %q", two.CI, two.NoCI)
	}
	old := noisy(5, 4)
	old.RoundOf, old.DefaultRoundOf = nil, nil
	if got := refill(old); got.CI == nil || got.CI.Rounds != DefaultRounds {
		t.Errorf("an old result of 20 repetitions per mode: CI %+v, why %q; want the protocol's 5 rounds", got.CI, got.NoCI)
	}
	uneven := old
	uneven.Reps = map[backends.Mode][]backends.Rep{}
	for m, rs := range old.Reps {
		uneven.Reps[m] = rs
	}
	uneven.Reps[backends.ModeConcurrent] = uneven.Reps[backends.ModeConcurrent][:7]
	if got := refill(uneven); got.CI != nil || !strings.Contains(got.NoCI, "cannot be told") {
		t.Errorf("uneven counts without rounds: CI %v, why %q", got.CI, got.NoCI)
	}
	det := old
	det.Deterministic, det.Backend = true, "sim"
	if got := refill(det); got.CI != nil || !strings.Contains(got.NoCI, "sim backend is deterministic") {
		t.Errorf("deterministic: CI %v, why %q", got.CI, got.NoCI)
	}
	// On the simulator's stand-in: no interval, and the result says so.
	fb := &fakeBackend{caps: backends.Capabilities{Limits: limits(), Deterministic: true}, flat: true}
	r, err := Measure(context.Background(), fb, scenario(), scenarios.Strategy{}, Options{Reps: 6})
	if err != nil {
		t.Fatal(err)
	}
	if r.CI != nil || !strings.Contains(r.NoCI, "deterministic") {
		t.Errorf("deterministic backend: CI %v, why %q", r.CI, r.NoCI)
	}
}

// driftBackend gives noisy times: each run's repetitions around the
// mode's median, times a factor per round (the same for every run of
// it: a round is perRound calls).
type driftBackend struct {
	fakeBackend
	rng      *rand.Rand
	noise    float64
	perRound int
	calls    int
	drift    float64
	now      time.Time // advanced by step per call
	step     time.Duration
	commMed  float64 // the comm op's median; 0 is medComm
}

func (f *driftBackend) Run(_ context.Context, ex backends.Experiment, _ backends.EventSink) (backends.RunResult, error) {
	if f.calls%f.perRound == 0 {
		f.drift = 1 + 0.02*f.rng.NormFloat64()
	}
	f.calls++
	f.now = f.now.Add(f.step)
	res := backends.RunResult{Mode: ex.Mode}
	for range ex.Reps {
		v := func(med float64) int64 { return int64(med * f.drift * (1 + f.noise*f.rng.NormFloat64())) }
		var r backends.Rep
		switch ex.Mode {
		case backends.ModeCompute:
			c := v(medComp)
			r = backends.Rep{Wall: c, Compute: c}
		case backends.ModeComm:
			med := f.commMed
			if med == 0 {
				med = medComm
			}
			c := v(med)
			r = backends.Rep{Wall: c, Comm: c}
		default:
			w := v(medC3)
			r = backends.Rep{Wall: w, Compute: w * 9 / 10, Comm: w}
		}
		res.Reps = append(res.Reps, r)
	}
	return res, nil
}

// TestMeasureKeepsRounds checks that Measure records the round of every
// repetition, the serial default's included, and gives intervals.
func TestMeasureKeepsRounds(t *testing.T) {
	caps := backends.Capabilities{Limits: limits()}.With(scenarios.CapDMA)
	fb := &driftBackend{fakeBackend: fakeBackend{caps: caps}, rng: rand.New(rand.NewPCG(7, 8)), noise: 0.01, perRound: 5}
	r, err := Measure(context.Background(), fb, scenario(), dmaStrategy(), Options{Reps: 10, Rounds: 4, Warmup: -1})
	if err != nil {
		t.Fatal(err)
	}
	want := []int{0, 0, 0, 1, 1, 1, 2, 2, 3, 3}
	for _, ro := range []map[backends.Mode][]int{r.RoundOf, r.DefaultRoundOf} {
		for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm} {
			if got := ro[m]; !slices.Equal(got, want) {
				t.Errorf("%s rounds %v, want %v", m, got, want)
			}
		}
	}
	if got := r.RoundOf[backends.ModeConcurrent]; !slices.Equal(got, want) {
		t.Errorf("concurrent rounds %v, want %v", got, want)
	}
	if r.CI == nil || r.CI.Rounds != 4 || !r.CI.U.Contains(r.Uplift) || !r.CI.TC3.Contains(r.TC3.Median) {
		t.Errorf("intervals %+v (why none: %q), U %v", r.CI, r.NoCI, r.Uplift)
	}
	if r.Precision != nil {
		t.Errorf("precision %+v without a target", r.Precision)
	}
}

// TestPrecisionStops checks that the adaptive loop stops for each reason
// and says which.
func TestPrecisionStops(t *testing.T) {
	for _, tc := range []struct {
		name    string
		noise   float64
		target  string
		step    time.Duration
		det     bool
		comm0   bool
		stop    string
		reached bool
		rounds  func(int) bool
	}{
		{"reached", 0.01, "5%", 0, false, false, StopReached, true, func(n int) bool { return n == DefaultRounds }},
		{"reached after more rounds", 0.1, "T_c3:6%", 0, false, false, StopReached, true, func(n int) bool { return n > DefaultRounds && n < 12 }},
		{"time cap", 0.3, "U:0.1%", 200 * time.Millisecond, false, false, StopTimeCap, false, func(n int) bool { return n > DefaultRounds && n < 12 }},
		{"round cap", 0.3, "0.1pt", 0, false, false, StopRoundCap, false, func(n int) bool { return n == 12 }},
		{"deterministic", 0, "1pt", 0, true, false, StopDeterministic, true, func(n int) bool { return n == 1 }},
		{"F undefined", 0.01, "1pt", 0, false, true, StopUndefined, false, func(n int) bool { return n == DefaultRounds }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParsePrecision(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			caps := backends.Capabilities{Limits: limits(), Deterministic: tc.det}
			fb := &driftBackend{fakeBackend: fakeBackend{caps: caps}, rng: rand.New(rand.NewPCG(1, 1)), noise: tc.noise, perRound: 3, step: tc.step}
			sc := scenario()
			if tc.comm0 {
				// Next to nothing to communicate: S_ideal is 1, F undefined.
				fb.commMed = 10
			}
			var backend backends.Backend = fb
			if tc.det {
				backend = &fakeBackend{caps: caps, flat: true}
			}
			opt := Options{Reps: 20, Precision: p, TimeCap: 5 * time.Second, MaxRounds: 12, now: func() time.Time { return fb.now }}
			r, err := Measure(context.Background(), backend, sc, scenarios.Strategy{}, opt)
			if err != nil {
				t.Fatal(err)
			}
			out := r.Precision
			if out == nil {
				t.Fatal("no precision outcome")
			}
			if out.Stop != tc.stop || out.Reached != tc.reached || !tc.rounds(out.Rounds) {
				t.Errorf("outcome %+v, want stop %q, reached %v", *out, tc.stop, tc.reached)
			}
			if out.Target != p.String() {
				t.Errorf("target %q, want %q", out.Target, p.String())
			}
			if tc.stop == StopTimeCap && out.Elapsed < 5*time.Second {
				t.Errorf("stopped at %v, before the cap", out.Elapsed)
			}
			if tc.reached && tc.stop == StopReached && (out.HalfWidth == nil || *out.HalfWidth > p.HalfWidth) {
				t.Errorf("reached with half-width %v, target %v", out.HalfWidth, p.HalfWidth)
			}
			if got := len(r.RoundOf[backends.ModeConcurrent]); tc.stop != StopDeterministic && got < out.Rounds {
				t.Errorf("%d concurrent repetitions for %d rounds", got, out.Rounds)
			}
		})
	}
}

// TestPrecisionRelativeCap checks the cap relative to the fixed rounds:
// a target that is never met adds rounds until the next one would end
// past factor x the fixed rounds' time, and no further.
func TestPrecisionRelativeCap(t *testing.T) {
	for _, tc := range []struct {
		factor     float64
		wantRounds int // every call takes one step; a round is 3 calls
	}{
		{2, 2 * DefaultRounds},
		{3, 3 * DefaultRounds},
		{1.5, DefaultRounds + DefaultRounds/2},
	} {
		t.Run(fmt.Sprint(tc.factor), func(t *testing.T) {
			caps := backends.Capabilities{Limits: limits()}
			step := 100 * time.Millisecond
			fb := &driftBackend{fakeBackend: fakeBackend{caps: caps}, rng: rand.New(rand.NewPCG(1, 1)), noise: 0.3, perRound: 3, step: step}
			p, err := ParsePrecision("U:0.01%")
			if err != nil {
				t.Fatal(err)
			}
			opt := Options{Reps: 20, Precision: p, TimeCap: time.Hour, TimeCapFactor: tc.factor, now: func() time.Time { return fb.now }}
			r, err := Measure(context.Background(), fb, scenario(), scenarios.Strategy{}, opt)
			if err != nil {
				t.Fatal(err)
			}
			out := r.Precision
			if out == nil || out.Stop != StopTimeCap || out.Reached {
				t.Fatalf("outcome %+v, want stopped by the time cap", out)
			}
			fixed := time.Duration(3*DefaultRounds) * step
			if want := time.Duration(tc.factor * float64(fixed)); out.Cap != want {
				t.Errorf("cap %v, want %v (%gx the fixed rounds' %v)", out.Cap, want, tc.factor, fixed)
			}
			if out.Elapsed > out.Cap {
				t.Errorf("took %v, past the cap %v", out.Elapsed, out.Cap)
			}
			if out.Rounds != tc.wantRounds {
				t.Errorf("%d rounds, want %d", out.Rounds, tc.wantRounds)
			}
		})
	}
}

func TestParsePrecision(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Precision
		err  string
	}{
		{"1pt", Precision{PrecisionF, 0.01}, ""},
		{"F:0.5pt", Precision{PrecisionF, 0.005}, ""},
		{"2%", Precision{PrecisionTC3, 0.02}, ""},
		{"T_c3:2%", Precision{PrecisionTC3, 0.02}, ""},
		{"u:1%", Precision{PrecisionU, 0.01}, ""},
		{"off", Precision{}, ""},
		{"", Precision{}, ""},
		{"U:1pt", Precision{}, "points are for F"},
		{"F:1%", Precision{}, "give it in points"},
		{"X:1%", Precision{}, "unknown figure"},
		{"1", Precision{}, "want points of F"},
		{"0pt", Precision{}, "above 0"},
		{"-1%", Precision{}, "above 0"},
		{"99%", Precision{}, "at most 50"},
		{"NaN%", Precision{}, "above 0"},
	} {
		got, err := ParsePrecision(tc.in)
		switch {
		case tc.err == "" && (err != nil || got != tc.want):
			t.Errorf("%q: %+v %v, want %+v", tc.in, got, err, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want one saying %q", tc.in, err, tc.err)
		}
		if err == nil && !got.Off() {
			if back, err := ParsePrecision(strings.ReplaceAll(strings.ReplaceAll(got.String(), "pt F", "pt"), "% ", "%")); err == nil && back.HalfWidth != got.HalfWidth {
				t.Errorf("%q prints as %q", tc.in, got.String())
			}
		}
	}
}

// TestWithinNoise checks that F above 100 % whose interval holds 100 %
// is within noise, and that one whose interval lies above is not.
func TestWithinNoise(t *testing.T) {
	f := 1.03
	for _, tc := range []struct {
		iv   *Intervals
		want bool
	}{
		{&Intervals{F: Interval{0.98, 1.07}}, true},
		{&Intervals{F: Interval{1.01, 1.07}}, false},
		{nil, false},
	} {
		r := Result{FractionOfIdeal: &f, CI: tc.iv}
		if got := r.FWithinNoise(); got != tc.want {
			t.Errorf("F %v in %+v: within noise %v, want %v", f, tc.iv, got, tc.want)
		}
	}
	g := 0.9
	if (Result{FractionOfIdeal: &g, CI: &Intervals{F: Interval{0.8, 1.1}}}).FWithinNoise() {
		t.Error("F below 100 % is not past its limit")
	}
}

// BenchmarkBootstrap measures one result's intervals: a sweep of 300
// entries makes 300 of these.
func BenchmarkBootstrap(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	r := synthetic(b, DefaultRounds, 4, func(m backends.Mode, def bool, _ int) int64 {
		return int64(median(m, def) * (1 + 0.02*rng.NormFloat64()))
	})
	g, _ := r.Scenario.Graph(r.Strategy)
	dg, _ := r.Scenario.Graph(SerialDefaultStrategy())
	b.ResetTimer()
	for range b.N {
		r.fillUncertainty(g, dg)
	}
}

// TestResampler checks the exported resampler: its resamples are the
// ones the result's own intervals come from (the same seed gives the same
// T_c3 interval), each holds as many repetitions per mode as the result,
// with figures refigured from them; and it refuses what cannot be
// resampled.
func TestResampler(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	r := synthetic(t, 5, 4, func(m backends.Mode, def bool, _ int) int64 {
		return int64(median(m, def) * (1 + 0.02*rng.NormFloat64()))
	})
	draw, err := Resampler(r)
	if err != nil {
		t.Fatal(err)
	}
	// bootstrap's draws, chunk by chunk, through the exported resampler.
	var tc3 []float64
	for ch := range (Resamples + bootChunk - 1) / bootChunk {
		src := rand.New(rand.NewPCG(seedOf(r), uint64(ch)))
		for range min(bootChunk, Resamples-ch*bootChunk) {
			c := draw(src)
			for m, reps := range r.Reps {
				if len(c.Reps[m]) != len(reps) {
					t.Fatalf("%s: %d repetitions drawn of %d", m, len(c.Reps[m]), len(reps))
				}
			}
			if c.TC3.N != len(r.Reps[backends.ModeConcurrent]) || c.Uplift <= 0 {
				t.Fatalf("a resample's figures were not computed: %+v", c.TC3)
			}
			tc3 = append(tc3, c.TC3.Median)
		}
	}
	if got := percentileInterval(tc3, r.TC3.Median); got != r.CI.TC3 {
		t.Errorf("T_c3 from Resampler's draws %v; the result's interval %v", got, r.CI.TC3)
	}

	few := r
	few.RoundOf = map[backends.Mode][]int{}
	for m, reps := range r.Reps {
		few.RoundOf[m] = make([]int, len(reps)) // all in one round
	}
	few.DefaultRoundOf = nil
	few.DefaultReps = nil
	bare := r
	bare.Reps, bare.RoundOf, bare.DefaultReps, bare.DefaultRoundOf = nil, nil, nil, nil
	for name, in := range map[string]Result{"one round": few, "no repetitions": bare} {
		if _, err := Resampler(in); err == nil || !strings.Contains(err.Error(), "round") {
			t.Errorf("%s: error %v; want one saying the rounds are too few", name, err)
		}
	}
}

// The ops' times inside the concurrent run and the fraction of the
// physical bound have intervals too, holding their point values; the
// bound's comes from resamples refigured with the bound's HBM bandwidth.
func TestIntervalsOfInC3TimesAndBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	r := synthetic(t, DefaultRounds, 4, func(m backends.Mode, def bool, _ int) int64 {
		return int64(median(m, def) * math.Exp(0.02*rng.NormFloat64()))
	})
	g, _ := r.Scenario.Graph(r.Strategy)
	dg, _ := r.Scenario.Graph(SerialDefaultStrategy())
	if err := r.refigure(g, dg, 3.8e12); err != nil {
		t.Fatal(err)
	}
	r.fillUncertainty(g, dg)
	if r.Bound == nil || r.Bound.FractionOfBound == nil {
		t.Fatalf("the synthetic result has no fraction of bound: %+v", r.Bound)
	}
	for name, c := range map[string]struct {
		iv    Interval
		point float64
	}{
		"T_comp in C3":      {r.CI.TCompInC3, r.TCompInC3.Median},
		"T_comm in C3":      {r.CI.TCommInC3, r.TCommInC3.Median},
		"fraction of bound": {r.CI.FBound, *r.Bound.FractionOfBound},
	} {
		if !c.iv.Contains(c.point) || c.iv.HalfWidth() <= 0 {
			t.Errorf("%s: interval %+v does not hold %.4g with a width", name, c.iv, c.point)
		}
	}
}
