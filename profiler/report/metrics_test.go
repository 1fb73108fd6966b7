package report

import (
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// The figures of a pair under the default strategy: the paper's, with U
// the same as S_real; a result with no serial default says U is unknown.
func TestFiguresOfAPair(t *testing.T) {
	r := profiler.Result{Scenario: scenarios.Builtin()[0]}
	r.TComp, r.TComm, r.TC3 = profiler.Summarize([]int64{3000}), profiler.Summarize([]int64{1000}), profiler.Summarize([]int64{3200})
	r.Derive(0)
	got := map[string]string{}
	for _, f := range Figures(r) {
		got[f.Key] = f.Value
	}
	want := map[string]string{"T_serial": "4.00 µs", "T_ideal": "3.00 µs", "S_ideal": "1.33x", "S_real": "1.25x", "F": "75.0%", "U": "1.25x"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	r.Strategy.CommEngine = scenarios.EngineDMA
	r.SerialDefault = 0
	r.Derive(0)
	for _, f := range Figures(r) {
		if f.Key == "U" && f.Value != NA {
			t.Errorf("U without a serial default reads %q, want %s", f.Value, NA)
		}
	}
}
