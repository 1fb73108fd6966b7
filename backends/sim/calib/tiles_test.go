package calib

import (
	"math"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// Stage 1 recovers the GEMM prologue, tile epilogue and efficiency from
// isolated GEMM times a known profile made.
func TestStage1FitsGEMMTiles(t *testing.T) {
	truth := sim.H200()
	truth.GEMMTiles = true
	truth.GEMMPrologue, truth.GEMMTileEpilogue = 7e-6, 2e-6
	truth.GEMMEfficiency[scenarios.BF16] = 0.8
	b := sim.New(truth)
	var refs []RefGEMM
	for _, s := range [][3]int{{4096, 4096, 4096}, {8192, 8192, 8192}, {16384, 18432, 256}, {8192, 1280, 256},
		{16384, 8192, 1024}, {2048, 6144, 6144}, {64, 28672, 8192}, {128, 32768, 6144}, {8192, 28672, 1024}} {
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: s[0], N: s[1], K: s[2], DType: scenarios.BF16}
		sec, _, err := gemmAlone(b, c)
		if err != nil {
			t.Fatal(err)
		}
		refs = append(refs, RefGEMM{Op: c, Seconds: sec})
	}
	start := sim.H200()
	start.GEMMTiles = true
	start.GEMMPrologue, start.GEMMTileEpilogue = 0, 0
	got, fits, err := Stage1(start, nil, refs, sim.H200Provenance())
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"GEMMPrologue", got.GEMMPrologue, 7e-6}, {"GEMMTileEpilogue", got.GEMMTileEpilogue, 2e-6}, {"GEMMEfficiency[bf16]", got.GEMMEfficiency[scenarios.BF16], 0.8}} {
		if math.Abs(c.got/c.want-1) > 0.05 {
			t.Errorf("%s fitted %.4g; want %.4g", c.name, c.got, c.want)
		}
	}
	n := 0
	for _, f := range fits {
		if f.Field == "GEMMPrologue" || f.Field == "GEMMTileEpilogue" {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d fitted entries for the tile constants; want 2", n)
	}
	// Off, the tile constants are not fitted.
	start.GEMMTiles = false
	if _, fits, err = Stage1(start, nil, refs, sim.H200Provenance()); err != nil {
		t.Fatal(err)
	}
	for _, f := range fits {
		if f.Field == "GEMMPrologue" || f.Field == "GEMMTileEpilogue" {
			t.Errorf("GEMMTiles off, yet %s was fitted", f.Field)
		}
	}
}
