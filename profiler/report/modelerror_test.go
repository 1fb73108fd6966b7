package report

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// A model's error reads as the sentence under c3lab run's times, the
// short forms of the panels and the scope line, for each kind of scope.
func TestModelErrorText(t *testing.T) {
	own := backends.ModelError{Profile: "h200-fit", Device: "NVIDIA H200", Scope: "reduce-scatter", Runs: 30,
		TC3Median: 0.044, TC3P90: 0.096, FScope: "S_ideal 1.5 and up", FRuns: 122, FMedian: 3.21, FP90: 9.46}
	all := own
	all.Scope, all.FScope = "all", "all"
	noF := own
	noF.FRuns = 0
	eight := own
	eight.Unvalidated = "no held-out run used 8 GPUs (they used 1, 2)"
	newGEMM := own
	newGEMM.UnmeasuredGEMM, newGEMM.GEMMAloneMedian, newGEMM.GEMMAloneP90 = "gemm 8192x24576x6144 bf16", 0.032, 0.148
	for _, tc := range []struct {
		name              string
		me                backends.ModelError
		note, c3, f, scop string
	}{
		{"own scopes", own,
			"the simulator (h200-fit) was off by 4.4% in T_c3 at the median and 9.6% at p90 on 30 NVIDIA H200 reduce-scatter runs it was not fitted to, and by 3.2 points in F (9.5 at p90) on the 122 held-out runs with S_ideal 1.5 and up (c3lab validate)",
			"model err 4.4%, p90 9.6%", "model err 3 pt, p90 9",
			"T_c3's on 30 held-out NVIDIA H200 reduce-scatter runs, F's on 122 with S_ideal 1.5 and up (h200-fit)"},
		{"all runs", all,
			"the simulator (h200-fit) was off by 4.4% in T_c3 at the median and 9.6% at p90 on 30 NVIDIA H200 runs it was not fitted to, and by 3.2 points in F (9.5 at p90) on the 122 held-out runs (c3lab validate)",
			"model err 4.4%, p90 9.6%", "model err 3 pt, p90 9",
			"T_c3's on 30 held-out NVIDIA H200 runs, F's on 122 (h200-fit)"},
		{"no F", noF,
			"the simulator (h200-fit) was off by 4.4% in T_c3 at the median and 9.6% at p90 on 30 NVIDIA H200 reduce-scatter runs it was not fitted to (c3lab validate)",
			"model err 4.4%, p90 9.6%", "",
			"T_c3's on 30 held-out NVIDIA H200 reduce-scatter runs (h200-fit)"},
		{"unvalidated", eight,
			"; not validated for this run: no held-out run used 8 GPUs (they used 1, 2)",
			"model err 4.4%, p90 9.6%", "model err 3 pt, p90 9",
			"(h200-fit); no held-out run used 8 GPUs (they used 1, 2)"},
		{"a GEMM never timed", newGEMM,
			"(c3lab validate); the model has measured nothing of its gemm 8192x24576x6144 bf16 on an NVIDIA H200 (no time alone, placement or launch), as it had of every held-out run's GEMM: on such GEMMs alone it is 3.2% off at the median, 14.8% at p90",
			"model err 4.4%, p90 9.6%", "model err 3 pt, p90 9",
			"(h200-fit); its gemm 8192x24576x6144 bf16 never measured (such GEMMs alone: 3.2% off, p90 14.8%)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ModelErrorNote(tc.me); !strings.HasSuffix(got, tc.note) {
				t.Errorf("note\n%q\nwant (ending)\n%q", got, tc.note)
			}
			if got := ModelErrorC3(tc.me); got != tc.c3 {
				t.Errorf("T_c3 %q, want %q", got, tc.c3)
			}
			if got := ModelErrorF(tc.me); got != tc.f {
				t.Errorf("F %q, want %q", got, tc.f)
			}
			if got := ModelErrorScope(tc.me); !strings.HasSuffix(got, tc.scop) {
				t.Errorf("scope %q, want (ending) %q", got, tc.scop)
			}
		})
	}
	// The notes of a result (c3lab run, the HTML report) carry it.
	r := profiler.Result{Deterministic: true, ModelError: &own}
	notes := strings.Join(UncertaintyNotes(r), "\n")
	if !strings.Contains(notes, "off by 4.4% in T_c3") {
		t.Errorf("a simulated result's notes do not give its model error:\n%s", notes)
	}
	if notes := UncertaintyNotes(profiler.Result{Deterministic: true}); len(notes) != 0 {
		t.Errorf("a result without a model error has notes %q", notes)
	}
}
