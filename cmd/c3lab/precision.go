package main

import (
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/c3lab/c3lab/profiler"
)

// precisionFlags are --precision and --time-cap: adaptive repetition
// (profiler.Options.Precision), with a command's own defaults; and
// --settle, how long the load runs untimed first (profiler.Options.Settle).
type precisionFlags struct {
	precision *string
	timeCap   *timeCap
	settle    *settleFlag
	fs        *flag.FlagSet
}

// settleFlag is --settle: "auto" (the backend's: 300ms on GPUs, none on
// the simulator), "off", or a Go duration.
type settleFlag struct{ d time.Duration }

// String is the value as Set reads it.
func (f *settleFlag) String() string {
	switch {
	case f == nil || f.d == 0:
		return "auto"
	case f.d < 0:
		return "off"
	}
	return f.d.String()
}

// Set reads auto, off or a positive duration.
func (f *settleFlag) Set(v string) error {
	switch v {
	case "auto":
		f.d = 0
		return nil
	case "off", "0", "0s":
		f.d = -1
		return nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want auto, off or a positive duration (300ms, 1s)", v)
	}
	f.d = d
	return nil
}

// timeCap is --time-cap: an absolute cap (a Go duration: 30s, 2m) or one
// relative to the measurement's fixed rounds (a multiple: 2x).
type timeCap struct {
	abs    time.Duration
	factor float64
}

// String is the cap as Set reads it.
func (c *timeCap) String() string {
	if c == nil {
		return ""
	}
	if c.factor > 0 {
		return strconv.FormatFloat(c.factor, 'g', 4, 64) + "x"
	}
	return c.abs.String()
}

// Set reads a duration (30s) or a multiple of the fixed rounds' time
// (2x, from above 1 to 100).
func (c *timeCap) Set(s string) error {
	s = strings.TrimSpace(s)
	if m, ok := strings.CutSuffix(strings.ToLower(s), "x"); ok {
		f, err := strconv.ParseFloat(m, 64)
		if err != nil || math.IsNaN(f) || f <= 1 || f > 100 {
			return fmt.Errorf("%q: a multiple of the fixed rounds' time must be a number above 1 and at most 100 (2x)", s)
		}
		*c = timeCap{factor: f}
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return fmt.Errorf("%q: want a positive duration (30s, 2m) or a multiple of the fixed rounds' time (2x)", s)
	}
	*c = timeCap{abs: d}
	return nil
}

// register adds the flags with the command's defaults (a precision as
// profiler.ParsePrecision reads it, and the cap per measurement).
func (p *precisionFlags) register(fs *flag.FlagSet, def string, defCap timeCap, what string) {
	p.fs = fs
	p.precision = fs.String("precision", def,
		"repeat interleaved rounds until the 95% interval of a figure is this tight: 1pt (F within ±1 point), 2% (T_c3 within ±2%), U:1% (U within ±1%), or off (fixed repetitions); the simulator, which is deterministic, meets any at once")
	p.timeCap = &defCap
	fs.Var(p.timeCap, "time-cap", "with --precision, stop adding rounds after this long "+what+": a Go duration (30s, 2m), or a multiple of the time the fixed rounds took (2x: at most twice a fixed-repetition measurement)")
	p.settle = &settleFlag{}
	fs.Var(p.settle, "settle", "run each measurement's load untimed this long before timing, so that the GPUs' power limit has taken hold (an H200 keeps 1980 MHz for a load's first ~100 ms): auto (300ms on GPUs, none on the simulator), off, or a duration")
}

// options applies the flags to opt, or says in one line what is wrong.
func (p *precisionFlags) options(opt profiler.Options) (profiler.Options, error) {
	pr, err := profiler.ParsePrecision(*p.precision)
	if err != nil {
		return opt, badInput("--%v", err)
	}
	if pr.Off() && setFlags(p.fs)["time-cap"] {
		return opt, noEffect("time-cap", "with --precision off (it caps the rounds the precision adds); give a --precision or drop --time-cap")
	}
	opt.Precision, opt.TimeCap, opt.TimeCapFactor = pr, p.timeCap.abs, p.timeCap.factor
	if p.settle != nil {
		opt.Settle = p.settle.d
	}
	return opt, nil
}
