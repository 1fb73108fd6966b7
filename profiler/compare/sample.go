package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// figures are the three figures compare reports for one result.
type figures struct {
	TC3, U, F float64
}

// pointFigures are the figures a result holds, NaN for an undefined one:
// the result's own, or a bootstrap resample's (profiler.Resampler's, whose
// figures profiler computed from the resampled repetitions, the one
// definition).
func pointFigures(r profiler.Result) figures {
	f := figures{TC3: math.NaN(), U: math.NaN(), F: math.NaN()}
	if r.TC3.N > 0 && r.TC3.Median > 0 {
		f.TC3 = r.TC3.Median
	}
	if r.Uplift > 0 {
		f.U = r.Uplift
	}
	if v, ok := r.Fraction(); ok {
		f.F = v
	}
	return f
}

// sampler draws the figures of bootstrap resamples of one result, from
// profiler.Resampler: the rounds resampled with replacement, then the
// repetitions of each run within each drawn round, as the result's own
// intervals are.
type sampler func(rng *rand.Rand) figures

// newSampler prepares result r for resampling. It fails when r has no
// concurrent repetitions or profiler cannot resample them.
func newSampler(r profiler.Result) (sampler, error) {
	if len(r.Reps[backends.ModeConcurrent]) == 0 {
		return nil, fmt.Errorf("no concurrent repetitions")
	}
	draw, err := profiler.Resampler(r)
	if err != nil {
		return nil, err
	}
	return func(rng *rand.Rand) figures { return pointFigures(draw(rng)) }, nil
}

// hasNoise reports whether a result's repetitions differ: a result whose
// repetitions are all alike (the simulator's) has no noise to resample.
func hasNoise(r profiler.Result) bool {
	for _, reps := range []map[backends.Mode][]backends.Rep{r.Reps, r.DefaultReps} {
		for _, rs := range reps {
			for _, rp := range rs {
				if rp.Wall != rs[0].Wall || rp.Compute != rs[0].Compute || rp.Comm != rs[0].Comm || !slices.Equal(rp.Ops, rs[0].Ops) {
					return true
				}
			}
		}
	}
	return false
}
