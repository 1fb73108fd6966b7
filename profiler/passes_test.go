package profiler

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
)

// passResults draws passes synthetic measurements of rounds rounds of
// perRound repetitions each; level(m, pass) is the log factor of a whole
// pass (what changes between runs of a sweep), sd the repetitions' own
// lognormal noise.
func passResults(t testing.TB, rng *rand.Rand, passes, rounds, perRound int, sd float64, level func(m backends.Mode, pass int) float64) []Result {
	t.Helper()
	var out []Result
	for p := range passes {
		out = append(out, synthetic(t, rounds, perRound, func(m backends.Mode, def bool, _ int) int64 {
			return int64(median(m, def) * math.Exp(level(m, p)+sd*rng.NormFloat64()))
		}))
	}
	return out
}

func TestMergePasses(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	parts := passResults(t, rng, 3, 5, 2, 0.01, func(backends.Mode, int) float64 { return 0 })
	r, err := MergePasses(parts, 0, Precision{})
	if err != nil {
		t.Fatal(err)
	}
	var all []int64
	for _, p := range parts {
		for _, rp := range p.Reps[backends.ModeConcurrent] {
			all = append(all, rp.Wall)
		}
	}
	if got := len(r.Reps[backends.ModeConcurrent]); got != len(all) {
		t.Fatalf("%d concurrent repetitions merged, want %d", got, len(all))
	}
	if want := Summarize(all).Median; r.TC3.Median != want {
		t.Errorf("merged T_c3 %.0f, want the median of every pass's repetitions %.0f", r.TC3.Median, want)
	}
	wantPass := []int{0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2}
	if !slices.Equal(r.PassOfRound, wantPass) {
		t.Errorf("PassOfRound %v, want %v", r.PassOfRound, wantPass)
	}
	rounds := slices.Clone(r.RoundOf[backends.ModeConcurrent])
	if rounds[0] != 0 || rounds[len(rounds)-1] != 14 || !slices.IsSorted(rounds) {
		t.Errorf("concurrent rounds %v: want 0..14 in pass order", rounds)
	}
	if len(r.DefaultRoundOf[backends.ModeComm]) != len(r.DefaultReps[backends.ModeComm]) {
		t.Errorf("the serial default's rounds do not match its repetitions")
	}
	if r.CI == nil || r.CI.Passes != 3 || r.CI.Rounds != 15 {
		t.Fatalf("intervals %+v (%s): want 3 passes of 15 rounds", r.CI, r.NoCI)
	}

	// A pass of another strategy, or one merged already, is refused.
	other := parts[1]
	other.Strategy = SerialDefaultStrategy()
	if _, err := MergePasses([]Result{parts[0], other}, 0, Precision{}); err == nil || !strings.Contains(err.Error(), "pass 2") {
		t.Errorf("merging two strategies: %v, want an error naming pass 2", err)
	}
	if _, err := MergePasses([]Result{r, parts[0]}, 0, Precision{}); err == nil {
		t.Error("merging a merged result again: no error")
	}
	if one, err := MergePasses(parts[:1], 0, Precision{}); err != nil || one.PassOfRound != nil {
		t.Errorf("one pass: %v, PassOfRound %v: want the pass as it is", err, one.PassOfRound)
	}
}

// TestPassesIntervalCoverage checks the intervals of results merged from
// three passes on data with a known truth: with a level that changes
// from pass to pass (sd 2 %, twice the repetitions' noise) the 95 %
// interval of T_c3 and of U must still hold the truth about 95 % of the
// time, where resampling the rounds alone (the passes' labels dropped)
// holds it far less often; without such a level, the passes must not
// widen the interval much.
func TestPassesIntervalCoverage(t *testing.T) {
	const trials = 150
	for _, tc := range []struct {
		name  string
		level float64
	}{{"a level per pass", 0.02}, {"no level", 0}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(7, 8))
			hitC3, hitU, hitPooled := 0, 0, 0
			var widthRatio []float64
			for range trials {
				// One level per pass and mode: isolated and concurrent
				// runs of a pass need not move together.
				lv := map[backends.Mode][]float64{}
				for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
					for range 3 {
						lv[m] = append(lv[m], tc.level*rng.NormFloat64())
					}
				}
				parts := passResults(t, rng, 3, 5, 2, 0.01, func(m backends.Mode, p int) float64 { return lv[m][p] })
				r, err := MergePasses(parts, 0, Precision{})
				if err != nil {
					t.Fatal(err)
				}
				if r.CI.TC3.Contains(medC3) {
					hitC3++
				}
				if r.CI.U.Contains((medComp + medDefComm) / medC3) {
					hitU++
				}
				pooled := r
				pooled.PassOfRound, pooled.CI = nil, nil
				g, _ := pooled.Scenario.Graph(pooled.Strategy)
				dg, _ := pooled.Scenario.Graph(SerialDefaultStrategy())
				pooled.fillUncertainty(g, dg)
				if pooled.CI.TC3.Contains(medC3) {
					hitPooled++
				}
				widthRatio = append(widthRatio, r.CI.TC3.HalfWidth()/pooled.CI.TC3.HalfWidth())
			}
			slices.Sort(widthRatio)
			medRatio := widthRatio[len(widthRatio)/2]
			cov := func(h int) float64 { return float64(h) / trials }
			t.Logf("T_c3 coverage %.3f, U %.3f, rounds alone %.3f; median width vs rounds alone %.2fx", cov(hitC3), cov(hitU), cov(hitPooled), medRatio)
			for name, c := range map[string]float64{"T_c3": cov(hitC3), "U": cov(hitU)} {
				if c < 0.88 || c > 0.995 {
					t.Errorf("%s: the 95 %% interval held the truth in %.1f %% of %d trials, want 88..99.5 %%", name, 100*c, trials)
				}
			}
			if tc.level > 0 && cov(hitPooled) > 0.85 {
				t.Errorf("rounds alone held the truth in %.1f %% of trials: the test's levels are too small to tell", 100*cov(hitPooled))
			}
			if tc.level == 0 && medRatio > 1.4 {
				t.Errorf("without a level per pass the passes widen T_c3's interval %.2fx (median): want at most 1.4x", medRatio)
			}
		})
	}
}

// TestMergePassesPrecisionVerdict checks that a merged result's precision
// outcome is the merged interval's verdict: passes that each reached the
// target but differ by more than it say "passes differ", and passes that
// agree keep "reached".
func TestMergePassesPrecisionVerdict(t *testing.T) {
	prec := Precision{Figure: PrecisionTC3, HalfWidth: 0.01}
	for _, tc := range []struct {
		name    string
		level   func(backends.Mode, int) float64
		reached bool
		stop    string
	}{
		{"passes agree", func(backends.Mode, int) float64 { return 0 }, true, StopReached},
		// The concurrent runs of pass 3 are 10 % slower than the others':
		// every pass is tight, their merge is not.
		{"passes differ", func(m backends.Mode, p int) float64 {
			if m == backends.ModeConcurrent && p == 2 {
				return 0.1
			}
			return 0
		}, false, StopPassesDiffer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(9, 10))
			parts := passResults(t, rng, 3, 5, 2, 0.002, tc.level)
			for i := range parts {
				hw, ok, _ := prec.Check(parts[i], false)
				if !ok {
					t.Fatalf("pass %d alone misses the target (±%.2f %%): the fixture is too noisy", i+1, 100*hw)
				}
				parts[i].Precision = &PrecisionOutcome{Target: prec.String(), Reached: true, Stop: StopReached, Rounds: 5}
			}
			r, err := MergePasses(parts, 0, prec)
			if err != nil {
				t.Fatal(err)
			}
			p := r.Precision
			if p == nil || p.Reached != tc.reached || p.Stop != tc.stop || p.Rounds != 15 {
				t.Fatalf("outcome %+v, want reached %v, stop %q, 15 rounds", p, tc.reached, tc.stop)
			}
			if p.HalfWidth == nil || (*p.HalfWidth <= prec.HalfWidth) != tc.reached {
				t.Errorf("merged half-width %v against the target %v, verdict reached=%v", p.HalfWidth, prec.HalfWidth, p.Reached)
			}
		})
	}
}
