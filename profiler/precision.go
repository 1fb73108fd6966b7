package profiler

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Figures a precision target can be set on.
const (
	PrecisionF   = "F"
	PrecisionTC3 = "T_c3"
	PrecisionU   = "U"
)

// Adaptive repetition limits.
const (
	// DefaultTimeCap is how long an adaptive measurement may run when
	// Options.TimeCap is 0.
	DefaultTimeCap = 30 * time.Second
	// MaxAdaptiveRounds is the most rounds an adaptive measurement makes.
	MaxAdaptiveRounds = 100
)

// Why an adaptive measurement stopped (PrecisionOutcome.Stop).
const (
	StopReached       = "reached"
	StopDeterministic = "deterministic backend"
	StopUndefined     = "figure undefined"
	StopTimeCap       = "time cap"
	StopRoundCap      = "round cap"
	// StopPassesDiffer: every pass of a sweep reached the target on its
	// own, and their merged interval, which holds how far the passes
	// differ, is still wider than the target. More rounds within a pass
	// do not narrow that; more passes do.
	StopPassesDiffer = "passes differ"
)

// Precision is a target half-width of a figure's 95 % interval: for F in
// its own unit (0.01 is one point of percentage), for T_c3 and U relative
// to the figure (0.01 is 1 %). The zero Precision is none: a fixed
// number of rounds.
type Precision struct {
	Figure    string  `json:"figure"`
	HalfWidth float64 `json:"half_width"`
}

// Off reports whether no target is set.
func (p Precision) Off() bool { return p.HalfWidth <= 0 }

// String is the target as ParsePrecision reads it: "1pt F", "2% T_c3",
// or "off".
func (p Precision) String() string {
	if p.Off() {
		return "off"
	}
	if p.Figure == PrecisionF {
		return strconv.FormatFloat(100*p.HalfWidth, 'g', 4, 64) + "pt F"
	}
	return strconv.FormatFloat(100*p.HalfWidth, 'g', 4, 64) + "% " + p.Figure
}

// ParsePrecision reads a precision target: "1pt" (F within ±1 point),
// "2%" (T_c3 within ±2 %), or either after a figure and a colon:
// "F:1pt", "T_c3:2%", "U:1%". "off" (or "") is no target. The value lies
// in (0, 50].
func ParsePrecision(s string) (Precision, error) {
	s = strings.TrimSpace(s)
	if s == "" || strings.EqualFold(s, "off") {
		return Precision{}, nil
	}
	fig, val := "", s
	if i := strings.IndexByte(s, ':'); i >= 0 {
		fig, val = strings.TrimSpace(s[:i]), strings.TrimSpace(s[i+1:])
		switch strings.ToLower(fig) {
		case "f":
			fig = PrecisionF
		case "t_c3", "tc3":
			fig = PrecisionTC3
		case "u":
			fig = PrecisionU
		default:
			return Precision{}, fmt.Errorf("precision %q: unknown figure %q; allowed F, T_c3, U", s, fig)
		}
	}
	var num string
	switch {
	case strings.HasSuffix(val, "pt"):
		num = strings.TrimSuffix(val, "pt")
		if fig == "" {
			fig = PrecisionF
		}
		if fig != PrecisionF {
			return Precision{}, fmt.Errorf("precision %q: points are for F; give %s in percent (%s:1%%)", s, fig, fig)
		}
	case strings.HasSuffix(val, "%"):
		num = strings.TrimSuffix(val, "%")
		if fig == "" {
			fig = PrecisionTC3
		}
		if fig == PrecisionF {
			return Precision{}, fmt.Errorf("precision %q: F is a percentage already; give it in points (1pt)", s)
		}
	default:
		return Precision{}, fmt.Errorf("precision %q: want points of F (1pt), percent of T_c3 (2%%), FIGURE:VALUE (U:1%%) or off", s)
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || math.IsNaN(v) || v <= 0 || v > 50 {
		return Precision{}, fmt.Errorf("precision %q: the value must be a number above 0 and at most 50", s)
	}
	return Precision{Figure: fig, HalfWidth: v / 100}, nil
}

// PrecisionOutcome is what an adaptive measurement reached.
type PrecisionOutcome struct {
	// Target is the precision asked for (Precision.String).
	Target string `json:"target"`
	// Reached says whether the interval got that tight; Stop why the
	// measurement stopped (StopReached, StopDeterministic,
	// StopUndefined, StopTimeCap, StopRoundCap).
	Reached bool   `json:"reached"`
	Stop    string `json:"stop"`
	// HalfWidth is the half-width reached, in the target's unit (nil
	// when there was no interval).
	HalfWidth *float64 `json:"half_width,omitempty"`
	// Rounds is the number of interleaved rounds made; Elapsed the time
	// the measurement took (0 on a deterministic backend, which adds no
	// rounds and whose result does not depend on when it ran).
	Rounds  int           `json:"rounds"`
	Elapsed time.Duration `json:"elapsed_ns,omitempty"`
	// Cap is the time cap the measurement ran under (for a relative
	// cap, Options.TimeCapFactor, the time it came to); for passes
	// merged, their sum.
	Cap time.Duration `json:"cap_ns,omitempty"`
}

// Check returns the half-width the result's interval of the target figure
// reaches (in the target's unit; NaN when it has none), whether that
// meets the target, and, when the measurement should stop, why (""
// while more rounds may help). On a deterministic backend the target is
// met at once.
func (p Precision) Check(r Result, deterministicBackend bool) (hw float64, ok bool, stop string) {
	if deterministicBackend || r.Deterministic {
		return 0, true, StopDeterministic
	}
	var point float64
	var iv Interval
	defined := r.TC3.N > 0
	switch p.Figure {
	case PrecisionF:
		point, defined = r.Fraction()
		if r.CI != nil {
			iv = r.CI.F
		}
	case PrecisionU:
		point, defined = r.Uplift, defined && r.Uplift > 0
		if r.CI != nil {
			iv = r.CI.U
		}
	default:
		point = r.TC3.Median
		if r.CI != nil {
			iv = r.CI.TC3
		}
	}
	if !defined {
		return math.NaN(), false, StopUndefined
	}
	if r.CI == nil || !iv.Valid() {
		return math.NaN(), false, ""
	}
	hw = iv.HalfWidth()
	if p.Figure != PrecisionF {
		hw /= math.Abs(point)
	}
	if hw <= p.HalfWidth {
		return hw, true, StopReached
	}
	return hw, false, ""
}
