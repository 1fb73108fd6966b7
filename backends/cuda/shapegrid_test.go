package cuda

import (
	"slices"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// The grid's shapes file reads, lists every shape on the whole GPU and at
// 68 SMs, and holds no GEMM of the built-in scenarios, so that it can join
// a calibration without leaking a held-out scenario's time.
// The random second set (gemm-shapes-grid-b.txt) holds none of the first
// set's shapes either, and its fp8 shapes have every dimension a multiple
// of 16.
func TestGEMMShapeGridFile(t *testing.T) {
	read := func(path string) []gemmShape {
		shapes, err := readGEMMShapes(path)
		if err != nil {
			t.Fatal(err)
		}
		return shapes
	}
	first := read(packageFile(gemmGridFile))
	second := read(packageFile(gemmGridFileB))
	op := func(sh gemmShape) scenarios.ComputeOp {
		return scenarios.ComputeOp{Kind: scenarios.GEMM, M: sh.m, N: sh.n, K: sh.k, DType: sh.dtype}
	}
	inFirst := map[scenarios.ComputeOp]bool{}
	for _, sh := range first {
		inFirst[op(sh)] = true
	}
	suite := suiteGEMMs()
	for _, tc := range []struct {
		name     string
		shapes   []gemmShape
		notFirst bool
	}{{gemmGridFile, first, false}, {gemmGridFileB, second, true}} {
		if len(tc.shapes) < 100 {
			t.Fatalf("%s: %d entries, want the whole list (make_gemm_grid.py)", tc.name, len(tc.shapes))
		}
		perTarget := map[int]int{}
		for _, sh := range tc.shapes {
			g := op(sh)
			if slices.Contains(suite, g) {
				t.Errorf("%s: %s is a GEMM of the suite", tc.name, g)
			}
			if tc.notFirst && inFirst[g] {
				t.Errorf("%s: %s is in the first grid", tc.name, g)
			}
			if g.DType == scenarios.FP8 && (g.M%16 != 0 || g.N%16 != 0 || g.K%16 != 0) {
				t.Errorf("%s: %s: an fp8 GEMM wants every dimension a multiple of 16", tc.name, g)
			}
			if _, _, err := gridPlacement(sh.smTarget, 132); err != nil {
				t.Errorf("%s: %s: %v", tc.name, g, err)
			}
			perTarget[sh.smTarget]++
		}
		if perTarget[0] != perTarget[68] || len(perTarget) != 2 {
			t.Errorf("%s: entries per SM target %v, want every shape at 0 and 68", tc.name, perTarget)
		}
	}
}

func TestGridPlacement(t *testing.T) {
	for _, tc := range []struct {
		target, sms, commSMs int
		name                 string
		bad                  bool
	}{
		{0, 132, 0, "full", false},
		{68, 132, 64, "rest-of-64", false},
		{132, 132, 0, "", true},
		{-4, 132, 0, "", true},
	} {
		st, name, err := gridPlacement(tc.target, tc.sms)
		if (err != nil) != tc.bad || st.CommSMs != tc.commSMs || name != tc.name {
			t.Errorf("gridPlacement(%d, %d) = %+v %q %v", tc.target, tc.sms, st, name, err)
		}
	}
}
