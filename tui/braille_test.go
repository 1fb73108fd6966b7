package tui

import (
	"math"
	"slices"
	"testing"
)

// TestBrailleChart checks tiny charts dot by dot.
func TestBrailleChart(t *testing.T) {
	nan := math.NaN()
	for _, tc := range []struct {
		name   string
		vals   []float64
		lo, hi float64
		w, h   int
		mode   brailleMode
		want   []string
	}{
		{"rising line over two rows", []float64{0, 1, 2, 3, 4, 5, 6, 7}, 0, 7, 4, 2, brailleLine, []string{"  ⡠⠊", "⡠⠊  "}},
		{"flat line", []float64{0.5, 0.5, 0.5, 0.5}, 0, 1, 2, 1, brailleLine, []string{"⠒⠒"}},
		{"gap breaks the line", []float64{0, nan, 1, 1}, 0, 1, 2, 1, brailleLine, []string{"⡀⠉"}},
		{"out of range clamps to the edges", []float64{-5, 5}, 0, 1, 1, 1, brailleLine, []string{"⡸"}},
		{"falling line joins downwards", []float64{1, 0}, 0, 1, 1, 1, brailleLine, []string{"⢱"}},
		{"more data than width keeps the newest", []float64{1, 1, 1, 0, 0}, 0, 1, 2, 1, brailleLine, []string{"⠉⣆"}},
		{"less data than width pads on the left", []float64{1}, 0, 1, 2, 1, brailleLine, []string{" ⠈"}},
		{"all gaps is blank", []float64{nan, nan}, 0, 1, 1, 1, brailleLine, []string{" "}},
		{"empty range draws at the bottom", []float64{3, 3}, 3, 3, 1, 1, brailleLine, []string{"⣀"}},
		{"area fills from the bottom", []float64{0, 0.5, 1, 0.25}, 0, 1, 2, 1, brailleArea, []string{"⢠⣇"}},
		{"area over two rows", []float64{0.1, 1}, 0, 1, 1, 2, brailleArea, []string{"⢸", "⣸"}},
		{"area clamps and gaps", []float64{2, nan, -1, 0.01}, 0, 1, 2, 1, brailleArea, []string{"⡇⢀"}},
		{"no width", []float64{1}, 0, 1, 0, 1, brailleLine, nil},
		{"no height", []float64{1}, 0, 1, 1, 0, brailleLine, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := brailleChart(tc.vals, tc.lo, tc.hi, tc.w, tc.h, tc.mode)
			if !slices.Equal(got, tc.want) {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestBrailleChartWrappers checks the two named forms pick their modes.
func TestBrailleChartWrappers(t *testing.T) {
	vals := []float64{0.2, 0.9, 0.4}
	if got, want := brailleLines(vals, 0, 1, 3, 2), brailleChart(vals, 0, 1, 3, 2, brailleLine); !slices.Equal(got, want) {
		t.Errorf("brailleLines = %q, want %q", got, want)
	}
	if got, want := brailleFill(vals, 0, 1, 3, 2), brailleChart(vals, 0, 1, 3, 2, brailleArea); !slices.Equal(got, want) {
		t.Errorf("brailleFill = %q, want %q", got, want)
	}
}

// BenchmarkBrailleChart draws 240 samples on a 120x4 line chart.
func BenchmarkBrailleChart(b *testing.B) {
	vals := make([]float64, 240)
	for i := range vals {
		vals[i] = 0.5 + 0.5*math.Sin(float64(i)/9)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = brailleLines(vals, 0, 1, 120, 4)
	}
}
