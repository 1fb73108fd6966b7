package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/backends/sim"
)

// backendFlag is the --backend flag shared by the commands that run things.
type backendFlag struct{ name string }

func (b *backendFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&b.name, "backend", "auto", "where to run: auto (the GPUs when usable, else the simulator), cuda or sim")
}

// open returns the chosen backend and a note for the user about the choice.
func (b *backendFlag) open() (backends.Backend, string, error) {
	switch b.name {
	case "auto":
		be, err := cuda.Open(cudaOptions())
		if err == nil {
			return be, "", nil
		}
		why := "no NVIDIA driver or GPU found"
		if !cuda.IsMissingDriver(err) {
			why = "the GPUs are not usable: " + err.Error()
		}
		return sim.New(sim.H200()), why + "; using the simulator (H200 profile)", nil
	case "sim":
		return sim.New(sim.H200()), "", nil
	case "cuda":
		be, err := cuda.Open(cudaOptions())
		if err != nil {
			return nil, "", fmt.Errorf("the cuda backend cannot start: %w (c3lab doctor says more; --backend sim runs the simulator)", err)
		}
		return be, "", nil
	}
	return nil, "", badInput("unknown backend %q; allowed auto, cuda, sim", b.name)
}

// cudaOptions reads the cuda backend's switches from the environment:
// C3LAB_CUDA_GATE=0 turns the start gate off (cuda.Options.Ungated), and
// C3LAB_CUPTI=1 adds CUPTI's copy records to the timelines
// (cuda.Options.CUPTI).
func cudaOptions() cuda.Options {
	return cuda.Options{Ungated: os.Getenv("C3LAB_CUDA_GATE") == "0", CUPTI: os.Getenv("C3LAB_CUPTI") == "1"}
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
