package compare

import "testing"

// BenchmarkCompareH200Sweeps compares the two committed one-GPU sweeps
// (20 pairs, 20 + 20 repetitions each, 1000 resamples a pair): the
// bootstrap is most of compare's time.
func BenchmarkCompareH200Sweeps(b *testing.B) {
	const dir = "../../backends/cuda/results/2026-12-01-h200x1-i16/"
	old, err := Load(dir + "sweep-fixed-1.json")
	if err != nil {
		b.Fatal(err)
	}
	new, err := Load(dir + "sweep-fixed-2.json")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if r := Compare(old, new, Options{}); len(r.Pairs) != 20 {
			b.Fatalf("%d pairs, want 20", len(r.Pairs))
		}
	}
}
