package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// backendFlag is the --backend flag shared by the commands that run things,
// with --sim-gpus, the simulated node's size, and --sim-profile, the
// simulator's device profile file.
type backendFlag struct {
	name       string
	simGPUs    int
	simProfile string
	// ctx is the command's context: under a launcher with several ranks
	// on a node it holds the job, and the cuda backend then runs one
	// process per GPU (cudaOptions).
	ctx context.Context
}

func (b *backendFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&b.name, "backend", "auto", "where to run: auto (the GPUs when usable, else the simulator), cuda or sim")
	fs.IntVar(&b.simGPUs, "sim-gpus", 0, "the simulated node's GPU count, 1..8 (1 previews a one-GPU box); 0 = 8")
	fs.StringVar(&b.simProfile, "sim-profile", "", "run the simulator on this device profile: a YAML file (c3lab calibrate writes one) or a built-in name (h200-fit, the calibrated H200; h200, its hand-set base); default h200-fit")
}

// loadSimProfile returns the profile --sim-profile names: a built-in
// profile's name, or a profile file; none is the calibrated H200
// (sim.FittedH200Name), whose held-out error c3lab validate reports. A bad
// file is a usage error of one line that names its line.
func loadSimProfile(arg string) (sim.ProfileFile, error) {
	if arg == "" {
		return sim.FittedH200()
	}
	// A built-in name, unless a file of that name is here.
	if _, err := os.Stat(arg); err != nil {
		if arg == sim.FittedH200Name {
			return sim.FittedH200()
		}
		if p, ok := sim.Profiles()[arg]; ok {
			return sim.ProfileFile{Profile: p}, nil
		}
	}
	pf, err := sim.LoadProfileFile(arg)
	if err != nil {
		return pf, usageError{err}
	}
	return pf, nil
}

// simulator is the simulator of the node --sim-gpus asks for, on the
// profile --sim-profile names.
func (b *backendFlag) simulator() (*sim.Backend, error) {
	pf, err := loadSimProfile(b.simProfile)
	if err != nil {
		return nil, err
	}
	p := pf.Profile
	switch {
	case b.simGPUs < 0 || b.simGPUs > p.MaxGPUs:
		return nil, badInput("--sim-gpus is %d; allowed 1..%d, or 0 for %d", b.simGPUs, p.MaxGPUs, p.MaxGPUs)
	case b.simGPUs > 0:
		p.MaxGPUs = b.simGPUs
	}
	pf.Profile = p
	return sim.NewFromFile(pf), nil
}

// open returns the chosen backend and a note for the user about the choice.
func (b *backendFlag) open() (backends.Backend, string, error) {
	simulated, err := b.simulator()
	if err != nil {
		return nil, "", err
	}
	switch b.name {
	case "auto":
		be, err := cuda.Open(b.cudaOptions())
		if err == nil {
			if b.simGPUs != 0 || b.simProfile != "" {
				be.Close()
				return nil, "", badInput("--sim-gpus and --sim-profile shape the simulator, and this node's GPUs are in use; add --backend sim, or drop them")
			}
			return be, "", nil
		}
		why := "no NVIDIA driver or GPU found"
		if !cuda.IsMissingDriver(err) {
			why = "the GPUs are not usable: " + err.Error()
		}
		return simulated, why + "; using the simulator (" + simProfileName(simulated) + " profile)", nil
	case sim.Name:
		return simulated, "", nil
	case cuda.Name:
		if b.simGPUs != 0 {
			return nil, "", badInput("--sim-gpus sizes the simulator; it has no effect with --backend cuda")
		}
		if b.simProfile != "" {
			return nil, "", badInput("--sim-profile picks the simulator's profile; it has no effect with --backend cuda")
		}
		be, err := cuda.Open(b.cudaOptions())
		if err != nil {
			return nil, "", fmt.Errorf("the cuda backend cannot start: %w (c3lab doctor says more; --backend sim runs the simulator)", err)
		}
		return be, "", nil
	}
	return nil, "", badInput("unknown backend %q; allowed auto, cuda, sim", b.name)
}

// simProfileName names the simulator's device profile for messages ("H200").
func simProfileName(s *sim.Backend) string { return strings.ToUpper(s.Profile().Name) }

// cudaOptions reads the cuda backend's switches from the environment:
// C3LAB_CUDA_GATE=0 turns the start gate off (cuda.Options.Ungated), and
// C3LAB_CUPTI=1 adds CUPTI's copy and kernel records to the timelines
// (cuda.Options.CUPTI).
//
// Under a launcher that starts several ranks on a node, each rank's
// backend is one process per GPU (cuda.Process): it opens its local
// rank's GPU and runs every experiment with the other ranks, through the
// job's group.
func (b *backendFlag) cudaOptions() cuda.Options {
	o := cuda.Options{Ungated: os.Getenv("C3LAB_CUDA_GATE") == "0", CUPTI: os.Getenv("C3LAB_CUPTI") == "1"}
	if b.ctx == nil {
		return o
	}
	if j := jobFrom(b.ctx); j != nil && j.g.Env().LocalWorldSize > 1 {
		o.Process = &cuda.Process{Peers: j.g, Context: b.ctx, LocalRank: j.g.Env().LocalRank}
	}
	return o
}

// openTelling opens the backend and tells the user on w why it was chosen,
// unless quiet (machine-readable output keeps stderr clean).
func (b *backendFlag) openTelling(w io.Writer, quiet bool) (backends.Backend, error) {
	be, note, err := b.open()
	if err == nil && note != "" && !quiet {
		fmt.Fprintln(w, "c3lab:", note)
	}
	return be, err
}

// experimentFlags are the flags of the commands that run one scenario
// under one strategy (run, lab, export): --backend and --sim-gpus, the
// strategy flags, --scenario, and --record for those that record.
type experimentFlags struct {
	backend  backendFlag
	strategy strategyFlags
	record   recordFlags
	scenario string
}

// register adds the flags to fs, the recording flags when recording;
// scenarioUsage is --scenario's help.
func (e *experimentFlags) register(fs *flag.FlagSet, scenarioUsage string, recording bool) {
	e.backend.register(fs)
	e.strategy.register(fs)
	if recording {
		e.record.register(fs)
	}
	fs.StringVar(&e.scenario, "scenario", "", scenarioUsage)
}

// open opens the backend, telling w why it was chosen unless quiet, and
// resolves --scenario and the strategy flags on it (saying on w when the
// scenario was asked for by a former name). The caller closes the
// backend; when open fails, it is closed already.
func (e *experimentFlags) open(w io.Writer, quiet bool) (backends.Backend, scenarios.Scenario, scenarios.Strategy, error) {
	b, err := e.backend.openTelling(w, quiet)
	if err != nil {
		return nil, scenarios.Scenario{}, scenarios.Strategy{}, err
	}
	sc, st, err := e.strategy.experiment(e.scenario, b.Capabilities().Limits)
	if err != nil {
		b.Close()
		return nil, sc, st, err
	}
	noteRenamed(w, e.scenario)
	return b, sc, st, nil
}
