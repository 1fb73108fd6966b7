package htmlreport

import (
	"io"
	"testing"
)

// fullSuiteSweep is the committed sweep with the most results: the whole
// suite (36 pairs) under 7 strategies on 2 x H200.
const fullSuiteSweep = "../../backends/cuda/results/2026-11-30-h200x2-gated/sweep.json"

// BenchmarkBuildWrite times laying out and rendering the report of the
// full-suite sweep, once it is loaded. (Loading it is compare.Load's work:
// a file of format 1 gets its intervals bootstrapped on the way in.)
func BenchmarkBuildWrite(b *testing.B) {
	ins := load(b, fullSuiteSweep)
	for b.Loop() {
		p, err := Build(ins, Options{})
		if err != nil {
			b.Fatal(err)
		}
		if err := Write(io.Discard, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLoad times loading the largest format-3 sweep committed.
func BenchmarkLoad(b *testing.B) {
	for b.Loop() {
		load(b, sweepPass1)
	}
}
