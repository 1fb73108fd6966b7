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

// strategyFlags are the knobs a user can set on the command line. Only the
// flags given override the scenario's own strategy.
type strategyFlags struct {
	fs  *flag.FlagSet
	val scenarios.Strategy
}

func (s *strategyFlags) register(fs *flag.FlagSet) {
	s.fs = fs
	v := &s.val
	fs.Func("launch", "launch order: compute-first (plain C3) or comm-first", func(x string) error {
		v.Launch = scenarios.LaunchOrder(x)
		return nil
	})
	fs.IntVar(&v.CommPriority, "comm-priority", 0, "comm stream priority, CUDA convention: 0 lowest .. -5 highest on H200")
	fs.IntVar(&v.CommSMs, "comm-sms", 0, "confine the collective to an SM partition of this size (steps of 8); 0 = none")
	fs.IntVar(&v.ComputeSMs, "compute-sms", 0, "confine the compute op to an SM partition of this size; 0 = the rest")
	fs.IntVar(&v.CommCTAs, "comm-ctas", 0, "cap the collective's CTAs (NCCL channels); 0 = library default")
	fs.IntVar(&v.GEMMSMTarget, "gemm-sm-target", 0, "size the GEMM for this many SMs (cuBLASLt SM count target); 0 = off")
	fs.Func("comm-engine", "what carries the collective: sm (NCCL kernels), dma (c3lab's copy-engine collectives) or nccl-ce (NCCL 2.28's copy-engine path; all-gather, all-to-all)", func(x string) error {
		v.CommEngine = scenarios.CommEngine(x)
		return nil
	})
	fs.IntVar(&v.CopyEngines, "copy-engines", 0, "copy engines a dma collective uses; 0 = all")
	fs.Var(&v.ChunkBytes, "chunk", "split dma transfers into chunks of this size, e.g. 4MiB; 0 = one piece per engine")
}

// given lists the strategy flags set on the command line, in order.
func (s *strategyFlags) given() []string {
	var names []string
	s.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "launch", "comm-priority", "comm-sms", "compute-sms", "comm-ctas", "gemm-sm-target", "comm-engine", "copy-engines", "chunk":
			names = append(names, f.Name)
		}
	})
	return names
}

// apply overrides base with the flags the user set.
func (s *strategyFlags) apply(base scenarios.Strategy) scenarios.Strategy {
	s.fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "launch":
			base.Launch = s.val.Launch
		case "comm-priority":
			base.CommPriority = s.val.CommPriority
		case "comm-sms":
			base.CommSMs = s.val.CommSMs
		case "compute-sms":
			base.ComputeSMs = s.val.ComputeSMs
		case "comm-ctas":
			base.CommCTAs = s.val.CommCTAs
		case "gemm-sm-target":
			base.GEMMSMTarget = s.val.GEMMSMTarget
		case "comm-engine":
			base.CommEngine = s.val.CommEngine
		case "copy-engines":
			base.CopyEngines = s.val.CopyEngines
		case "chunk":
			base.ChunkBytes = s.val.ChunkBytes
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
	if errs := scenarios.ValidateStrategy(st, lim); len(errs) > 0 {
		return sc, st, badInput("strategy: %s", fieldErrors(errs))
	}
	// Knobs that depend on the scenario (the collective) are checked too,
	// and whether the scenario fits this backend at all: a problem outside
	// the strategy (more GPUs than the node has, more memory than a GPU)
	// is the scenario's, whatever the flags.
	withSt := sc
	withSt.Strategy = st
	var ve *scenarios.ValidationError
	if err := scenarios.Validate(withSt, lim); errors.As(err, &ve) {
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
