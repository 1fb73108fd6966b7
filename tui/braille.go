package tui

import (
	"math"
	"strings"
)

// brailleMode says how a braille chart draws each sample.
type brailleMode int

// The braille chart modes.
const (
	// brailleLine draws one dot per sample and joins it to the previous
	// sample with a vertical run of dots in its own column.
	brailleLine brailleMode = iota
	// brailleArea fills every dot from the bottom up to the sample; a
	// sample at or below the range's minimum draws nothing.
	brailleArea
)

// brailleBits are the dot bits of a braille cell (U+2800 plus the bits), by
// dot column (left, right) and dot row (top to bottom).
var brailleBits = [2][4]byte{
	{0x01, 0x02, 0x04, 0x40},
	{0x08, 0x10, 0x20, 0x80},
}

// brailleLines draws vals as a line chart w cells wide and h rows tall;
// see brailleChart.
func brailleLines(vals []float64, lo, hi float64, w, h int) []string {
	return brailleChart(vals, lo, hi, w, h, brailleLine)
}

// brailleFill draws vals as an area chart w cells wide and h rows tall;
// see brailleChart.
func brailleFill(vals []float64, lo, hi float64, w, h int) []string {
	return brailleChart(vals, lo, hi, w, h, brailleArea)
}

// brailleChart draws vals on a w x h grid of braille cells: each cell holds
// 2 samples side by side and 4 levels, so the chart shows the 2w most
// recent samples (the newest at the right edge, padding on the left) at 4h
// levels between lo and hi. Values outside [lo, hi] are clamped to the
// edge; NaN is a gap. A cell without dots is a space. It returns h lines
// of exactly w cells, top first (nil when w or h is not positive).
func brailleChart(vals []float64, lo, hi float64, w, h int, mode brailleMode) []string {
	if w <= 0 || h <= 0 {
		return nil
	}
	n := 2 * w
	if len(vals) > n {
		vals = vals[len(vals)-n:]
	}
	pad := n - len(vals)
	rows := 4 * h
	cells := make([]byte, w*h)
	dot := func(x, level int) {
		r := rows - 1 - level // dot row from the top
		cells[(r/4)*w+x/2] |= brailleBits[x%2][r%4]
	}
	prev := -1 // the previous sample's level; -1 after a gap
	for i, v := range vals {
		x := pad + i
		if math.IsNaN(v) {
			prev = -1
			continue
		}
		f := 0.0
		if hi > lo {
			f = min(max((v-lo)/(hi-lo), 0), 1)
		}
		switch mode {
		case brailleArea:
			// Levels 1..rows; 0 (nothing) only at or below lo.
			top := int(math.Round(f * float64(rows)))
			if f > 0 {
				top = max(top, 1)
			}
			for l := range top {
				dot(x, l)
			}
		default:
			l := int(math.Round(f * float64(rows-1)))
			a, b := l, l
			if prev >= 0 && prev < l {
				a = prev + 1
			} else if prev > l {
				b = prev - 1
			}
			for k := a; k <= b; k++ {
				dot(x, k)
			}
			prev = l
		}
	}
	out := make([]string, h)
	var sb strings.Builder
	for r := range h {
		sb.Reset()
		for _, c := range cells[r*w : (r+1)*w] {
			if c == 0 {
				sb.WriteByte(' ')
			} else {
				sb.WriteRune(rune(0x2800) + rune(c))
			}
		}
		out[r] = sb.String()
	}
	return out
}
