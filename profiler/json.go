package profiler

import (
	"encoding/json"
	"math"
)

// MarshalJSON writes the result with undefined ratios (NaN: an isolated
// time of zero, a run that was not made) as null, which encoding/json
// cannot do for a float64 on its own, and adds fraction_within_noise
// (FWithinNoise) when it holds.
func (r Result) MarshalJSON() ([]byte, error) {
	type plain Result
	return json.Marshal(struct {
		plain
		IdealSpeedup    *float64 `json:"ideal_speedup"`
		RealizedSpeedup *float64 `json:"realized_speedup"`
		CompSlowdown    *float64 `json:"compute_slowdown"`
		CommSlowdown    *float64 `json:"comm_slowdown"`
		AlgBW           *float64 `json:"algbw"`
		BusBW           *float64 `json:"busbw"`
		AchievedTFLOPs  *float64 `json:"achieved_tflops"`
		AchievedBW      *float64 `json:"achieved_bw"`
		// FWithinNoise: F is above 100 % only within its interval.
		FWithinNoise bool `json:"fraction_within_noise,omitempty"`
	}{
		plain:           plain(r),
		IdealSpeedup:    finite(r.IdealSpeedup),
		RealizedSpeedup: finite(r.RealizedSpeedup),
		CompSlowdown:    finite(r.CompSlowdown),
		CommSlowdown:    finite(r.CommSlowdown),
		AlgBW:           finite(r.AlgBW),
		BusBW:           finite(r.BusBW),
		AchievedTFLOPs:  finite(r.AchievedTFLOPs),
		AchievedBW:      finite(r.AchievedBW),
		FWithinNoise:    r.FWithinNoise(),
	})
}

// finite returns nil for NaN, infinities and unset (zero) values.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 {
		return nil
	}
	return &x
}
