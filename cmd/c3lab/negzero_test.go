package main

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// negZero matches a minus sign in front of a number that reads as zero
// ("-0", "-0.0%", "-0.00x"), which no printer may write.
var negZero = regexp.MustCompile(`-0(\.0+)?($|[^0-9.])`)

// tinyNegatives round to zero at every precision the printers use.
var tinyNegatives = []float64{math.Copysign(0, -1), -1e-12, -0.00004, -0.0004}

// TestNoNegativeZero feeds the command's printers values that round to
// zero from below, and the negative zero itself (profiler/report tests the
// formatters they share with the lab).
func TestNoNegativeZero(t *testing.T) {
	for _, v := range tinyNegatives {
		f := v
		sc := scenarios.Builtin()[0]
		r := profiler.Result{
			Scenario: sc, Backend: "sim",
			IdealSpeedup: 1 + v, RealizedSpeedup: 1 + v, FractionOfIdeal: &f,
			CompSlowdown: 1 + v, CommSlowdown: 1 + v, AlgBW: v, BusBW: v, AchievedTFLOPs: v,
			Bound: &profiler.Bound{TBound: v, By: "hbm", SBound: 1 + v, FractionOfBound: &f},
		}
		var report bytes.Buffer
		writeReport(&report, r)
		var summary bytes.Buffer
		writeSummary(stdio{out: &summary}, sweepfile.File{Summary: []profiler.StrategySummary{{
			Strategy: "baseline", MeanFraction: &f, MeanFractionOfBound: &f,
			ByClass: map[profiler.Class]float64{profiler.Balanced: v}, N: 1,
		}}})
		var tune bytes.Buffer
		writeTrials(&tune, []heuristics.Trial{{Name: "baseline", Fraction: &f, TC3: v}}, -1)
		var replay bytes.Buffer
		writeReplayTable(&replay, []profiler.Result{r})
		for name, out := range map[string]string{"run": report.String(), "sweep": summary.String(), "advise --tune": tune.String(), "replay --text": replay.String()} {
			for _, line := range strings.Split(out, "\n") {
				if negZero.MatchString(line) {
					t.Errorf("%s with %g prints a negative zero: %q", name, v, line)
				}
			}
		}
	}
}

// When Tune answers with the baseline because the measured best was
// slower again, the table marks the answer and prints why.
func TestWriteTrialsPrintsTheFallback(t *testing.T) {
	var b strings.Builder
	writeTrials(&b, []heuristics.Trial{
		{Name: "sms", TC3: 900, Uplift: 2, Remeasured: &profiler.Remeasured{TC3: 1600, Uplift: 1.1}},
		{Name: "baseline", TC3: 1500, Uplift: 1.2, Fallback: "sms, measured again in fresh rounds (U 1.10x), is slower than the baseline"},
	}, 1)
	out := b.String()
	mustContain(t, "output", out, "<- answer", "answer: baseline, the default: sms, measured again", "sms measured again in fresh rounds")
}
