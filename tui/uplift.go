package tui

import (
	"math"

	"github.com/c3lab/c3lab/profiler"
)

// uplift is the figure strategies of one scenario are compared by: U, the
// uplift over the serial default (profiler.Result.Uplift), one reference
// for every strategy. A result without it (a backend or recording that
// does not fill it yet) falls back to S_real, the realized speedup, which
// is U whenever the strategy leaves the ops' isolated times alone. The
// fraction of ideal is never compared across strategies: each strategy
// has its own ideal. ok is false when neither is known.
func uplift(r profiler.Result) (u float64, ok bool) {
	switch {
	case r.Uplift > 0 && !math.IsInf(r.Uplift, 0):
		return r.Uplift, true
	case r.RealizedSpeedup > 0 && !math.IsInf(r.RealizedSpeedup, 0) && !math.IsNaN(r.RealizedSpeedup):
		return r.RealizedSpeedup, true
	}
	return math.NaN(), false
}
