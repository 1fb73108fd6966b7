package main

import (
	"flag"
	"time"

	"github.com/c3lab/c3lab/profiler"
)

// precisionFlags are --precision and --time-cap: adaptive repetition
// (profiler.Options.Precision), with a command's own defaults.
type precisionFlags struct {
	precision *string
	timeCap   *time.Duration
	fs        *flag.FlagSet
}

// register adds the flags with the command's defaults (a precision as
// profiler.ParsePrecision reads it, and the cap per measurement).
func (p *precisionFlags) register(fs *flag.FlagSet, def string, defCap time.Duration, what string) {
	p.fs = fs
	p.precision = fs.String("precision", def,
		"repeat interleaved rounds until the 95% interval of a figure is this tight: 1pt (F within ±1 point), 2% (T_c3 within ±2%), U:1% (U within ±1%), or off (fixed repetitions); the simulator, which is deterministic, meets any at once")
	p.timeCap = fs.Duration("time-cap", defCap, "with --precision, stop adding rounds after this long "+what+" (a Go duration: 30s, 2m)")
}

// options applies the flags to opt, or says in one line what is wrong.
func (p *precisionFlags) options(opt profiler.Options) (profiler.Options, error) {
	pr, err := profiler.ParsePrecision(*p.precision)
	if err != nil {
		return opt, badInput("--%v", err)
	}
	if *p.timeCap <= 0 {
		return opt, badInput("--time-cap is %s; want a positive duration (30s, 2m)", *p.timeCap)
	}
	if pr.Off() && setFlags(p.fs)["time-cap"] {
		return opt, noEffect("time-cap", "with --precision off (it caps the rounds the precision adds); give a --precision or drop --time-cap")
	}
	opt.Precision, opt.TimeCap = pr, *p.timeCap
	return opt, nil
}
