package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
)

// backendFlag is the --backend flag shared by the commands that run things.
type backendFlag struct{ name string }

func (b *backendFlag) register(fs *flag.FlagSet) {
	fs.StringVar(&b.name, "backend", "auto", "where to run: auto (a GPU when one is usable, else the simulator) or sim")
}

// open returns the chosen backend and a note for the user about the choice.
func (b *backendFlag) open() (backends.Backend, string, error) {
	switch b.name {
	case "auto":
		// The real NVIDIA backend is not part of this build yet, so auto
		// always lands on the simulator; say so.
		return sim.New(sim.H200()), "no GPU backend in this build: using the simulator (H200 profile)", nil
	case "sim":
		return sim.New(sim.H200()), "", nil
	case "cuda":
		return nil, "", badInput("the cuda backend is not part of this build yet; use --backend sim")
	}
	return nil, "", badInput("unknown backend %q; allowed auto, sim", b.name)
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
