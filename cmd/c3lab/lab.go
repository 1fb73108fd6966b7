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
	var ef experimentFlags
	ef.backend.ctx = ctx // under a launcher: one process per GPU
	ef.register(fs, "the scenario to start with: a built-in name or a YAML file", true)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if err := ef.record.check(); err != nil {
		return err
	}
	j := jobFrom(ctx)
	if j != nil && j.g.Rank() != 0 {
		return followLab(ctx, &ef, j.g, s)
	}
	if j != nil {
		// However the lab ends, even before it opens, the others leave.
		defer j.end()
	}
	if !s.terminal {
		return badInput("the lab needs a terminal; for a text report use c3lab run (or c3lab run --json)")
	}
	// Quiet: the lab takes the screen, and its header names the backend
	// and says when the devices are simulated.
	b, sc, st, err := ef.open(s.errOut, true)
	if err != nil {
		return err
	}
	defer b.Close()
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
	recs := &labRecordings{flags: ef.record, b: b}
	var ranks tui.Ranks
	if j != nil {
		// Rank 0 of a job: the lab runs under the context before the
		// group's, so that a lost rank is named before the lab ends.
		ctx = j.parent
		recs.world = j.g.Size()
		ranks = &labRanks{g: j.g, recs: recs}
	}
	cfg := tui.Config{Backend: b, Suite: suite, Start: sc.Name, Strategy: st, Keys: &keys, Recorder: recs.open, RecordPath: ef.record.path, Note: left, ListNote: listNote,
		Advisor: labAdvisor(ef.backend, b.Capabilities()), Ranks: ranks}
	// One NVML sampler feeds both the live engine view and the machine
	// record (each measurement's drift check and the engines' use during
	// its timed repetitions): two samplers reading GPM at once crashed
	// inside NVML on an H200. Off the node's GPUs or without NVML there is
	// neither, and nothing is claimed.
	machine, live, closeMachine, err := openLabMachine(b, 4)
	if err != nil {
		cfg.Note = strings.TrimPrefix(cfg.Note+"; live telemetry off: "+err.Error(), "; ")
	}
	defer closeMachine()
	if machine != nil {
		cfg.Machine = machine
		cfg.Telemetry = live
	}
	err = tui.Run(ctx, cfg)
	if j != nil {
		err = errors.Join(err, j.end())
	}
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
