package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/charmbracelet/x/term"

	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/tui"
)

func isTerminal() bool {
	return term.IsTerminal(os.Stdin.Fd()) && term.IsTerminal(os.Stdout.Fd())
}

func runLab(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("lab", "[lab] [--scenario NAME|FILE] [--backend auto|sim] [--record FILE] [strategy flags]", s)
	var be backendFlag
	var sf strategyFlags
	var rf recordFlags
	be.register(fs)
	sf.register(fs)
	rf.register(fs)
	scenarioArg := fs.String("scenario", "", "the scenario to start with: a built-in name or a YAML file")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := rf.check(); err != nil {
		return err
	}
	if !s.terminal {
		return badInput("the lab needs a terminal; for a text report use c3lab run (or c3lab run --json)")
	}
	b, _, err := be.open()
	if err != nil {
		return err
	}
	defer b.Close()
	sc, st, err := sf.experiment(*scenarioArg, b.Capabilities().Limits)
	if err != nil {
		return err
	}
	noteRenamed(s.errOut, *scenarioArg)
	// The list holds what this backend can run; the note says what it
	// left out (on a one-GPU node, the collectives).
	suite, left := runnableSuite(b)
	listNote := ""
	if _, gpus, other, _ := splitSuite(b.Capabilities().Limits); gpus+other > 0 {
		listNote = fmt.Sprintf("%d more cannot run here", gpus+other)
		if other == 0 {
			listNote = fmt.Sprintf("%d need more GPUs", gpus)
		}
	}
	if !contains(suite, sc.Name) {
		suite = append([]scenarios.Scenario{sc}, suite...)
	}
	keys, err := tui.LoadUserKeyMap()
	if err != nil {
		return usageError{err}
	}
	recs := &labRecordings{flags: rf, b: b}
	cfg := tui.Config{Backend: b, Suite: suite, Start: sc.Name, Strategy: st, Keys: &keys, Recorder: recs.open, RecordPath: rf.path, Note: left, ListNote: listNote}
	if b.Capabilities().LocalGPUs {
		// Live engine telemetry from NVML while the lab runs on the GPUs;
		// after the lab, sampling stops and the sampler is freed.
		live, stop, err := sampleNVML(ctx, b, 4)
		if err != nil {
			cfg.Note = strings.TrimPrefix(cfg.Note+"; live telemetry off: "+err.Error(), "; ")
		} else {
			defer stop()
			cfg.Telemetry = live
		}
	}
	err = tui.Run(ctx, cfg)
	return errors.Join(err, recs.report(s.errOut))
}

func contains(suite []scenarios.Scenario, name string) bool {
	for _, s := range suite {
		if s.Name == name {
			return true
		}
	}
	return false
}
