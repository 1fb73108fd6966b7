package tui

import (
	"strings"
	"testing"

	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// TestBoundReason checks that the metrics panel gives the true reason for
// a missing fraction of bound, at both panel widths.
func TestBoundReason(t *testing.T) {
	sc := testSuite()[3] // a stream op next to an all-gather: HBM-heavy
	stat := func(ns int64) profiler.Stat { return profiler.Summarize([]int64{ns}) }
	hc, hm := profiler.HBMBytes(sc)
	const bw = 4e12
	tHBM := int64((hc + hm) / bw * 1e9) // the pair's HBM time
	for _, tc := range []struct {
		name             string
		tComp, tComm, c3 int64
		bw               float64
		want             string
	}{
		{"no bandwidth", 600_000, 700_000, 900_000, 0, "no HBM bandwidth"},
		{"bound of 1x", tHBM / 2, tHBM / 2, tHBM, bw, "bound 1.00x"},
		{"bound below 1x", tHBM / 4, tHBM / 4, tHBM / 2, bw, "bound 0.50x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := profiler.Result{Scenario: sc, TComp: stat(tc.tComp), TComm: stat(tc.tComm), TC3: stat(tc.c3),
				TCompInC3: stat(tc.tComp), TCommInC3: stat(tc.tComm)}
			r.Derive(tc.bw)
			for _, w := range []int{38, 70} {
				text := ansi.Strip(strings.Join(metricsLines(DefaultStyles(true), &r, nil, w), "\n"))
				if !strings.Contains(text, tc.want) {
					t.Errorf("width %d: the metrics panel does not say %q:\n%s", w, tc.want, text)
				}
				if tc.bw > 0 && strings.Contains(text, "no HBM bandwidth") {
					t.Errorf("width %d: the bandwidth is known but the panel says it is not:\n%s", w, text)
				}
			}
		})
	}
}

// TestStreamOpThroughput checks that the metrics panel reports a stream
// op's isolated throughput in bytes per second, a GEMM's in TFLOP/s.
func TestStreamOpThroughput(t *testing.T) {
	for _, tc := range []struct {
		sc        int // in testSuite
		want, not string
	}{
		{0, "TFLOP/s", "GB/s HBM"},
		{3, "GB/s HBM", "TFLOP/s"},
	} {
		sc := testSuite()[tc.sc]
		r := fixtureResult(sc, scenarios.Strategy{})
		for _, w := range []int{38, 70} {
			text := ansi.Strip(strings.Join(metricsLines(DefaultStyles(true), &r, nil, w), "\n"))
			if !strings.Contains(text, tc.want) || strings.Contains(text, tc.not) {
				t.Errorf("%s (%s), width %d: want %q and no %q:\n%s", sc.Name, sc.Compute.Kind, w, tc.want, tc.not, text)
			}
		}
	}
}
