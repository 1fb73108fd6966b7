// Command c3lab is a terminal lab and profiler for concurrent computation and
// communication (C3) on GPUs. With no arguments it opens the interactive lab;
// subcommands run scenarios and print reports for scripts.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// Exit codes.
const (
	exitOK      = 0
	exitFailure = 1 // the run failed
	exitUsage   = 2 // bad input: flags, scenario files, strategies
	// exitInterrupted is the shell's code for a run stopped by Ctrl-C.
	exitInterrupted = 130
)

// usageError marks errors caused by the user's input (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func badInput(format string, a ...any) error { return usageError{fmt.Errorf(format, a...)} }

// command is one subcommand.
type command struct {
	name, summary string
	run           func(ctx context.Context, args []string, io stdio) error
}

// stdio carries the streams a command writes to, so tests can capture them.
type stdio struct {
	in          io.Reader
	out, errOut io.Writer
	// terminal reports whether in and out are a terminal (the lab needs one).
	terminal bool
}

func commands() []command {
	return []command{
		{"lab", "open the interactive lab (the default when no command is given)", distributed("lab", runLab)},
		{"learn", "guided lessons on C3: predict a figure, flip a knob, run, compare with the H200", runLearn},
		{"run", "run one scenario under one strategy and print the C3 metrics", distributed("run", runRun)},
		{"advise", "suggest a strategy for a scenario, with reasons; --tune measures the candidates", runAdvise},
		{"sweep", "run scenarios under a grid of strategies and write the results", distributed("sweep", runSweep)},
		{"calibrate", "fit the simulator's profile to sweeps, holding scenarios out, and write it", runCalibrate},
		{"validate", "score a simulator profile against sweeps: the error table, in-sample and held out", runValidate},
		{"compare", "compare two sweeps, recordings or result files: each change with its interval", runCompare},
		{"report", "write one self-contained HTML page of sweeps, results and recordings", runHTMLReport},
		{"import", "read PyTorch profiler (Kineto) traces: overlap, ideal vs realized, and a scenario of the step", runImport},
		{"replay", "play a recording back: its results, or the lab fed by it", runReplay},
		{"export", "measure a scenario and write its timeline as pprof, Perfetto or Chrome trace", runExport},
		{"scenarios", "list the built-in scenarios with their class, or show one as YAML", runScenarios},
		{"doctor", "report the driver, libraries, GPUs, links and what c3lab can use here", runDoctor},
		{"version", "print the version", runVersion},
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := realMain(ctx, os.Args[1:], stdio{in: os.Stdin, out: os.Stdout, errOut: os.Stderr, terminal: isTerminal()})
	stop()
	os.Exit(code)
}

// realMain dispatches to a subcommand and maps errors to exit codes, printing
// each error as one line (or one line per problem for scenario files).
func realMain(ctx context.Context, args []string, s stdio) int {
	name := "lab"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		name, args = args[0], args[1:]
	} else if len(args) > 0 && isHelp(args[0]) {
		name = "help"
	}
	if name == "help" {
		printUsage(s.out)
		return exitOK
	}
	for _, c := range commands() {
		if c.name != name {
			continue
		}
		err := c.run(ctx, args, s)
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, flag.ErrHelp):
			return exitOK
		case ctx.Err() != nil && errors.Is(err, context.Canceled):
			fmt.Fprintf(s.errOut, "c3lab %s: interrupted; what was measured or recorded before is kept\n", name)
			return exitInterrupted
		}
		fmt.Fprintf(s.errOut, "c3lab %s: %v\n", name, err)
		var ue usageError
		if errors.As(err, &ue) {
			return exitUsage
		}
		return exitFailure
	}
	fmt.Fprintf(s.errOut, "c3lab: unknown command %q; commands are %s (c3lab help)\n", name, commandNames())
	return exitUsage
}

func isHelp(a string) bool { return a == "-h" || a == "-help" || a == "--help" }

func commandNames() string {
	var n []string
	for _, c := range commands() {
		n = append(n, c.name)
	}
	return strings.Join(n, ", ")
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "c3lab: a lab and profiler for concurrent computation and communication (C3) on GPUs")
	fmt.Fprintln(w, "\nusage: c3lab [command] [flags]\n\ncommands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w, "\nc3lab COMMAND --help shows a command's flags. Without a GPU every command runs on the simulator.")
}

// newFlags makes a subcommand's flag set that reports errors instead of exiting.
func newFlags(name, usage string, s stdio) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintf(s.out, "usage: c3lab %s\n\n", usage)
		fs.SetOutput(s.out)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlagsAllowingArgs parses fs, turning flag errors into usage errors,
// and leaves arguments to the caller (parseFlags refuses them).
func parseFlagsAllowingArgs(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // our own one-line message instead of the flag package's dump
	for _, a := range args {
		if isHelp(a) {
			fs.Usage()
			return flag.ErrHelp
		}
	}
	// The flag package prints the whole usage on a bad value; the user
	// gets the one line below instead.
	usage := fs.Usage
	fs.Usage = func() {}
	err := fs.Parse(args)
	fs.Usage = usage
	if err != nil {
		return badInput("%v (c3lab %s --help lists the flags)", err, fs.Name())
	}
	return nil
}

// parseFlags parses and turns flag errors into usage errors.
func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := parseFlagsAllowingArgs(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return badInput("unexpected argument %q (c3lab %s --help lists the flags)", fs.Arg(0), fs.Name())
	}
	return nil
}
