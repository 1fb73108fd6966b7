package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// TestReportBoundReason checks that the run report gives the true reason
// for a missing fraction of bound.
func TestReportBoundReason(t *testing.T) {
	sc := scenarios.Scenario{Name: "pair", GPUs: 2,
		Compute: scenarios.ComputeOp{Kind: scenarios.Stream, Bytes: 1 << 30},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 30}}
	stat := func(ns int64) profiler.Stat { return profiler.Summarize([]int64{ns}) }
	hc, hm := profiler.HBMBytes(sc)
	const bw = 4e12
	tHBM := int64((hc + hm) / bw * 1e9)
	for _, tc := range []struct {
		name             string
		tComp, tComm, c3 int64
		bw               float64
		want             string
	}{
		{"no bandwidth", 600_000, 700_000, 900_000, 0, "bound              n/a (no HBM bandwidth known)"},
		{"bound of 1x", tHBM / 2, tHBM / 2, tHBM, bw, "fraction of bound undefined (the bound is 1x: moving both ops' HBM bytes"},
		{"bound below 1x", tHBM / 4, tHBM / 4, tHBM / 2, bw, "fraction of bound undefined (the bound is below 1x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := profiler.Result{Scenario: sc, TComp: stat(tc.tComp), TComm: stat(tc.tComm), TC3: stat(tc.c3),
				TCompInC3: stat(tc.tComp), TCommInC3: stat(tc.tComm)}
			r.Derive(tc.bw)
			var out bytes.Buffer
			writeReport(&out, r)
			if !strings.Contains(out.String(), tc.want) {
				t.Errorf("the report does not say %q:\n%s", tc.want, out.String())
			}
		})
	}
}
