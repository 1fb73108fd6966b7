package report

import (
	"fmt"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/numfmt"
)

// ModelErrorNote says, in one sentence, how far a model's figures may be
// from the GPU's: its T_c3 and F errors on held-out runs like this one
// (backends.ModelError), median and p90: "the simulator (h200-fit) was
// off by 4.4% in T_c3 at the median and 9.6% at p90 on 30 NVIDIA H200
// reduce-scatter runs it was not fitted to, and by 3.2 points in F (9.5
// at p90) on the 122 held-out runs with S_ideal 1.5 and up (c3lab
// validate)".
func ModelErrorNote(me backends.ModelError) string {
	s := fmt.Sprintf("the simulator (%s) was off by %s in T_c3 at the median and %s at p90 on %d %s runs it was not fitted to",
		me.Profile, Percent(me.TC3Median), Percent(me.TC3P90), me.Runs, runKind(me))
	if me.FRuns > 0 {
		s += fmt.Sprintf(", and by %s points in F (%s at p90) on the %d held-out runs", numfmt.Fixed(me.FMedian, 1), numfmt.Fixed(me.FP90, 1), me.FRuns)
		if scoped(me.FScope) {
			s += " with " + me.FScope
		}
	}
	s += " (c3lab validate)"
	if me.Unvalidated != "" {
		s += "; not validated for this run: " + me.Unvalidated
	}
	if u := unmeasuredGEMM(me); u != "" {
		s += "; " + u
	}
	return s
}

// unmeasuredGEMM says that the model has no measurement of the run's
// GEMM, as it had of every held-out run's, and how far off it is on such
// GEMMs alone: "the model has measured nothing of its gemm
// 8192x24576x6144 bf16 on an NVIDIA H200 (no time alone, placement or
// launch), as it had of every held-out run's GEMM: on such GEMMs alone it
// is 3.2% off at the median, 14.8% at p90"; "" when it has.
func unmeasuredGEMM(me backends.ModelError) string {
	if me.UnmeasuredGEMM == "" {
		return ""
	}
	return fmt.Sprintf("the model has measured nothing of its %s on an %s (no time alone, placement or launch), as it had of every held-out run's GEMM: on such GEMMs alone it is %s off at the median, %s at p90",
		me.UnmeasuredGEMM, me.Device, Percent(me.GEMMAloneMedian), Percent(me.GEMMAloneP90))
}

// ModelErrorC3 is T_c3's model error in a few words: "model err 4.4%,
// p90 9.6%".
func ModelErrorC3(me backends.ModelError) string {
	return "model err " + numfmt.Fixed(100*me.TC3Median, 1) + "%, p90 " + numfmt.Fixed(100*me.TC3P90, 1) + "%"
}

// ModelErrorF is F's model error in a few words: "model err 11 pt, p90
// 44"; "" when no held-out run had F.
func ModelErrorF(me backends.ModelError) string {
	if me.FRuns == 0 {
		return ""
	}
	return "model err " + numfmt.Fixed(me.FMedian, 0) + " pt, p90 " + numfmt.Fixed(me.FP90, 0)
}

// ModelErrorScope says which runs the model's errors come from: "T_c3's
// on 52 held-out NVIDIA H200 all-gather runs, F's on 44 with S_ideal 1.2
// to 1.5 (h200-fit)".
func ModelErrorScope(me backends.ModelError) string {
	s := fmt.Sprintf("T_c3's on %d held-out %s runs", me.Runs, runKind(me))
	switch {
	case me.FRuns == 0:
	case !scoped(me.FScope):
		s += fmt.Sprintf(", F's on %d", me.FRuns)
	default:
		s += fmt.Sprintf(", F's on %d with %s", me.FRuns, me.FScope)
	}
	s += " (" + me.Profile + ")"
	if me.Unvalidated != "" {
		s += "; " + me.Unvalidated
	}
	if me.UnmeasuredGEMM != "" {
		s += "; its " + me.UnmeasuredGEMM + " never measured (such GEMMs alone: " + Percent(me.GEMMAloneMedian) + " off, p90 " + Percent(me.GEMMAloneP90) + ")"
	}
	return s
}

// runKind is the kind of held-out run T_c3's figures come from: the
// device, and the collective when they are its runs ("NVIDIA H200
// reduce-scatter").
func runKind(me backends.ModelError) string {
	if scoped(me.Scope) {
		return me.Device + " " + me.Scope
	}
	return me.Device
}

// scoped reports whether a ModelError scope names a subset of the
// held-out runs rather than all of them.
func scoped(scope string) bool { return scope != "" && scope != backends.ScopeAll }
