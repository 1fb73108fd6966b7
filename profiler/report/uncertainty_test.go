package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

func TestFormatsWithIntervals(t *testing.T) {
	iv := func(lo, hi float64) *profiler.Interval { return &profiler.Interval{Lo: lo, Hi: hi} }
	for _, tc := range []struct{ got, want string }{
		{PercentCI(0.89, iv(0.878, 0.902)), "89.0% ± 1.2"},
		{PercentCI(0.89, nil), "89.0%"},
		{PercentCI(0.89, &profiler.Interval{Lo: math.NaN(), Hi: math.NaN()}), "89.0%"},
		{RatioCI(1.234, iv(1.224, 1.244)), "1.23x ± 0.01"},
		{DurationCI(1.46e6, iv(1.4477e6, 1.4723e6)), "1.46 ms ± 12.3 µs"},
		{UpliftCI(0, iv(1, 2)), NA},
	} {
		if tc.got != tc.want {
			t.Errorf("%q, want %q", tc.got, tc.want)
		}
	}
}

// A fraction of ideal above 100 % reads "within noise" when its interval
// holds 100 %, and as a plain value when the interval lies above.
func TestWithinNoise(t *testing.T) {
	r := profiler.Result{Scenario: scenarios.Builtin()[0]}
	r.TComp, r.TComm, r.TC3 = profiler.Summarize([]int64{3000}), profiler.Summarize([]int64{1000}), profiler.Summarize([]int64{2950})
	r.Derive(0)
	f, _ := r.Fraction()
	if f <= 1 {
		t.Fatalf("the case needs F above 100 %%: %v", f)
	}
	for _, tc := range []struct {
		iv   profiler.Interval
		want string
	}{
		{profiler.Interval{Lo: 0.97, Hi: 1.09}, "106.8% ± 6.0 (within noise)"},
		{profiler.Interval{Lo: 1.02, Hi: 1.08}, "106.8% ± 3.0"},
	} {
		r.CI = &profiler.Intervals{F: tc.iv, U: profiler.Interval{Lo: math.NaN(), Hi: math.NaN()}}
		for _, fig := range Figures(r) {
			if fig.Key == "F" && fig.Value != tc.want {
				t.Errorf("F in %+v reads %q, want %q", tc.iv, fig.Value, tc.want)
			}
		}
	}
	r.CI = nil
	for _, fig := range Figures(r) {
		if fig.Key == "F" && fig.Value != "106.8%" {
			t.Errorf("F without an interval reads %q", fig.Value)
		}
	}
}

func TestUncertaintyNotes(t *testing.T) {
	hw := 0.014
	r := profiler.Result{NoCI: "2 interleaved round(s) were measured; an interval needs at least 3",
		Bimodal:   []profiler.Bimodal{{Time: "T_c3", Modes: [2]profiler.Mode{{Median: 5.85e6, Share: 0.55}, {Median: 6.97e6, Share: 0.45}}, D: 4}},
		Precision: &profiler.PrecisionOutcome{Target: "2% T_c3", Reached: true, Stop: profiler.StopReached, HalfWidth: &hw, Rounds: 7, Elapsed: 3210 * time.Millisecond}}
	got := strings.Join(UncertaintyNotes(r), "\n")
	for _, want := range []string{
		"no interval: 2 interleaved round(s)",
		"T_c3 is bimodal: 5.85 ms (55%) and 6.97 ms (45%); its median lies between the two and describes neither",
		"precision 2% T_c3: reached (± 1.4%) in 7 rounds, 3.2s",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("notes\n%s\nlack %q", got, want)
		}
	}
	r.Precision = &profiler.PrecisionOutcome{Target: "1pt F", Stop: profiler.StopTimeCap, HalfWidth: &hw, Rounds: 40, Elapsed: 30 * time.Second}
	if got := PrecisionNote(*r.Precision); got != "precision 1pt F: not reached (± 1.4pt; time cap) in 40 rounds, 30s" {
		t.Errorf("%q", got)
	}
	r.Precision.Stop = profiler.StopDeterministic
	if got := PrecisionNote(*r.Precision); !strings.Contains(got, "met at once") {
		t.Errorf("%q", got)
	}
	if got := UncertaintyNotes(profiler.Result{Deterministic: true, NoCI: "deterministic"}); len(got) != 0 {
		t.Errorf("a deterministic result's notes %q: the time table says so", got)
	}
}

func TestBoundFractionValue(t *testing.T) {
	frac := func(v float64) *float64 { return &v }
	for _, tc := range []struct {
		name string
		r    profiler.Result
		want string
		ok   bool
	}{
		{"no bound", profiler.Result{}, "", false},
		{"no interval", profiler.Result{Bound: &profiler.Bound{FractionOfBound: frac(0.87)}}, "87.0%", true},
		{"with interval", profiler.Result{Bound: &profiler.Bound{FractionOfBound: frac(0.87)},
			CI: &profiler.Intervals{FBound: profiler.Interval{Lo: 0.85, Hi: 0.89}}}, "87.0% ± 2.0", true},
		{"past 100 % within noise", profiler.Result{Bound: &profiler.Bound{FractionOfBound: frac(1.01)},
			CI: &profiler.Intervals{FBound: profiler.Interval{Lo: 0.98, Hi: 1.04}}}, "101.0% ± 3.0 (within noise)", true},
		{"past 100 % outside its interval", profiler.Result{Bound: &profiler.Bound{FractionOfBound: frac(1.05)},
			CI: &profiler.Intervals{FBound: profiler.Interval{Lo: 1.03, Hi: 1.07}}}, "105.0% ± 2.0", true},
	} {
		got, ok := BoundFractionValue(tc.r)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q, %v; want %q, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
