package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/c3lab/c3lab/scenarios"
)

// strategyFlags are the knobs a user can set on the command line, one
// flag per knob of the knob table (scenarios.StrategyKnobs). Only the
// flags given override the scenario's own strategy.
type strategyFlags struct {
	fs  *flag.FlagSet
	val scenarios.Strategy
	// knobs is the knob table the flags come from; nil is c3lab's.
	knobs scenarios.Knobs
}

// table is the knob table in use.
func (s *strategyFlags) table() scenarios.Knobs {
	if s.knobs == nil {
		return scenarios.StrategyKnobs()
	}
	return s.knobs
}

func (s *strategyFlags) register(fs *flag.FlagSet) {
	s.fs = fs
	for _, k := range s.table() {
		switch p := k.Value(&s.val).(type) {
		case *int:
			fs.IntVar(p, k.Flag, 0, k.Usage)
		case flag.Value:
			fs.Var(p, k.Flag, k.Usage)
		default:
			fs.Func(k.Flag, k.Usage, func(x string) error { return k.Set(&s.val, x) })
		}
	}
}

// knob returns the knob that flag name sets.
func (s *strategyFlags) knob(name string) (scenarios.Knob, bool) {
	for _, k := range s.table() {
		if k.Flag == name {
			return k, true
		}
	}
	return scenarios.Knob{}, false
}

// given lists the strategy flags set on the command line, in order.
func (s *strategyFlags) given() []string {
	var names []string
	s.fs.Visit(func(f *flag.Flag) {
		if _, ok := s.knob(f.Name); ok {
			names = append(names, f.Name)
		}
	})
	return names
}

// apply overrides base with the flags the user set.
func (s *strategyFlags) apply(base scenarios.Strategy) scenarios.Strategy {
	s.fs.Visit(func(f *flag.Flag) {
		if k, ok := s.knob(f.Name); ok {
			k.Copy(&base, s.val)
		}
	})
	return base
}

// experiment resolves --scenario and applies the strategy flags on top of
// the scenario's own strategy, checking the result against the limits.
func (s *strategyFlags) experiment(scenarioArg string, lim scenarios.Limits) (scenarios.Scenario, scenarios.Strategy, error) {
	sc, err := resolveScenario(scenarioArg, lim)
	if err != nil {
		return sc, scenarios.Strategy{}, err
	}
	st := s.apply(sc.Strategy)
	if errs := s.table().ValidateStrategy(st, lim); len(errs) > 0 {
		return sc, st, badInput("strategy: %s", fieldErrors(errs))
	}
	// Knobs that depend on the scenario (the collective) are checked too,
	// and whether the scenario fits this backend at all: a problem outside
	// the strategy (more GPUs than the node has, more memory than a GPU)
	// is the scenario's, whatever the flags.
	withSt := sc
	withSt.Strategy = st
	var ve *scenarios.ValidationError
	if err := s.table().Validate(withSt, lim); errors.As(err, &ve) {
		for _, f := range ve.Fields {
			if !strings.HasPrefix(f.Path, "$.strategy") {
				return sc, st, badInput("scenario %s cannot run here: %s", sc.Name, f.Msg)
			}
		}
		return sc, st, badInput("strategy: %s", fieldErrors(ve.Fields))
	}
	return sc, st, nil
}

// resolveScenario finds a scenario by built-in name or loads it from a file.
// An argument that names an existing file, or ends in .yaml/.yml, is a file.
func resolveScenario(arg string, lim scenarios.Limits) (scenarios.Scenario, error) {
	if arg == "" {
		// The first built-in the backend can run (a one-GPU node runs the
		// host copies, not the collectives that lead the suite).
		if runs, _, _, _ := splitSuite(lim); len(runs) > 0 {
			return runs[0], nil
		}
		return scenarios.Builtin()[0], nil
	}
	ext := strings.ToLower(filepath.Ext(arg))
	if _, err := os.Stat(arg); err == nil || ext == ".yaml" || ext == ".yml" {
		sc, err := scenarios.Load(arg, lim)
		if err != nil {
			return sc, scenarioError(err)
		}
		return sc, nil
	}
	sc, err := scenarios.Find(arg)
	if err != nil {
		return sc, scenarioError(err)
	}
	return sc, nil
}

// scenarioError marks bad scenario names and files as usage errors.
func scenarioError(err error) error {
	var fe *scenarios.FileError
	var ue *scenarios.UnknownError
	var ve *scenarios.ValidationError
	if errors.As(err, &fe) || errors.As(err, &ue) || errors.As(err, &ve) || errors.Is(err, os.ErrNotExist) {
		return usageError{err}
	}
	return err
}

// noteRenamed says, on w, when a scenario argument is a name the built-in
// suite had before (it resolves to the scenario's current name).
func noteRenamed(w io.Writer, arg string) {
	if now, ok := scenarios.Renamed(arg); ok {
		fmt.Fprintf(w, "c3lab: scenario %s is now called %s\n", arg, now)
	}
}

// setFlags returns the flags set on the command line.
func setFlags(fs *flag.FlagSet) map[string]bool {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

// noEffect is the usage error for a flag that would change nothing in the
// combination given: it names the flag and says why and what to do.
func noEffect(name, why string) error {
	return badInput("--%s has no effect %s", name, why)
}

// checkReps refuses a --reps out of range, the same way for every command.
func checkReps(n int) error {
	if n < 0 || n > scenarios.MaxReps {
		return badInput("--reps is %d; allowed 0 (each scenario's own) or 1..%d", n, scenarios.MaxReps)
	}
	return nil
}
