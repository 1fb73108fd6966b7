package htmlreport

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// rgb is a colour.
type rgb struct{ r, g, b float64 }

func (c rgb) hex() string {
	cl := func(v float64) int { return int(math.Round(min(max(v, 0), 255))) }
	return fmt.Sprintf("#%02x%02x%02x", cl(c.r), cl(c.g), cl(c.b))
}

func parseHex(s string) rgb {
	v, _ := strconv.ParseUint(strings.TrimPrefix(s, "#"), 16, 32)
	return rgb{float64(v >> 16 & 0xff), float64(v >> 8 & 0xff), float64(v & 0xff)}
}

// ramp is a colour scale: colours at evenly spaced stops over 0..1.
type ramp []string

// at is the ramp's colour at t (clamped to 0..1), mixed linearly between
// the two nearest stops.
func (r ramp) at(t float64) string {
	if math.IsNaN(t) {
		return missingFill
	}
	t = min(max(t, 0), 1)
	x := t * float64(len(r)-1)
	i := min(int(x), len(r)-2)
	f := x - float64(i)
	a, b := parseHex(r[i]), parseHex(r[i+1])
	return rgb{a.r + f*(b.r-a.r), a.g + f*(b.g-a.g), a.b + f*(b.b-a.b)}.hex()
}

// ink is the text colour that reads on fill: near-black on light fills,
// white on dark ones (by relative luminance).
func ink(fill string) string {
	c := parseHex(fill)
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(c.r) + 0.7152*lin(c.g) + 0.0722*lin(c.b)
	if l > 0.22 {
		return "#111111"
	}
	return "#ffffff"
}

// The scales. U diverges around 1 (as fast as serial): red-brown below,
// white at 1, blue-green above (BrBG-like, readable with the common
// colour-vision deficiencies). F runs 0..100 % of ideal on a viridis-like
// ramp; below 0 (slower than serial) it turns red.
var (
	upliftRamp   = ramp{"#8c510a", "#d8b365", "#f5f5f5", "#5ab4ac", "#01665e"}
	fractionRamp = ramp{"#440154", "#3b528b", "#21918c", "#5ec962", "#fde725"}
	negativeRamp = ramp{"#f4a582", "#b2182b"}
)

// missingFill is the fill of a cell without a value.
const missingFill = "#e4e4e4"

// uScale maps U to 0..1 on a log scale centred on 1, symmetric up to
// span (the largest factor away from 1 shown, at least 1.1).
type uScale struct{ span float64 }

func (s uScale) t(u float64) float64 {
	if u <= 0 || math.IsNaN(u) {
		return math.NaN()
	}
	l := math.Log(s.span)
	return 0.5 + 0.5*min(max(math.Log(u)/l, -1), 1)
}

func (s uScale) fill(u float64) string {
	t := s.t(u)
	if math.IsNaN(t) {
		return missingFill
	}
	return upliftRamp.at(t)
}

// fFill is F's colour: the viridis-like ramp over 0..1 (clamped at 1),
// the red ramp from 0 down to -50 % and below.
func fFill(f float64) string {
	switch {
	case math.IsNaN(f):
		return missingFill
	case f < 0:
		return negativeRamp.at(min(-f/0.5, 1))
	}
	return fractionRamp.at(f)
}

// niceTicks returns about n round values covering lo..hi (1, 2 or 5 times
// a power of ten apart).
func niceTicks(lo, hi float64, n int) []float64 {
	if !(hi > lo) || n < 1 {
		return []float64{lo}
	}
	raw := (hi - lo) / float64(n)
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	step := p
	for _, m := range []float64{1, 2, 5, 10} {
		step = m * p
		if step >= raw {
			break
		}
	}
	var out []float64
	for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
		out = append(out, math.Round(v/step)*step)
	}
	return out
}

// durationTick formats a time axis tick (ns) in the unit of the axis's
// span: "250 µs", "1.5 ms".
func durationTick(ns, span float64) string {
	switch {
	case span >= 5e8:
		return strconv.FormatFloat(ns/1e9, 'f', -1, 64) + " s"
	case span >= 5e5:
		return strconv.FormatFloat(math.Round(ns/1e3)/1e3, 'f', -1, 64) + " ms"
	case span >= 500:
		return strconv.FormatFloat(math.Round(ns)/1e3, 'f', -1, 64) + " µs"
	}
	return strconv.FormatFloat(ns, 'f', -1, 64) + " ns"
}

// num is a number for a data attribute: the shortest form that reads
// back as the same float64.
func num(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// px formats an SVG coordinate with at most two decimals.
func px(v float64) string { return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64) }
