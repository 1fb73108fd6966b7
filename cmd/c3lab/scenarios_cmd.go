package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// scenarioRow is one line of `c3lab scenarios --json`.
type scenarioRow struct {
	Name        string              `json:"name"`
	Description string              `json:"description,omitempty"`
	Source      string              `json:"source,omitempty"`
	GPUs        int                 `json:"gpus"`
	Compute     scenarios.ComputeOp `json:"compute"`
	Comm        scenarios.CommOp    `json:"comm"`
	Class       profiler.Class      `json:"class"`
	TComp       float64             `json:"t_comp_ns"`
	TComm       float64             `json:"t_comm_ns"`
	Backend     string              `json:"backend"`
	// Runs is false for a scenario this backend cannot run (more GPUs
	// than the node has, say); Why then says why, and no class is given.
	Runs bool   `json:"runs_here"`
	Why  string `json:"why,omitempty"`
}

func runScenarios(ctx context.Context, args []string, s stdio) error {
	if len(args) > 0 && args[0] == "show" {
		return runScenariosShow(args[1:], s)
	}
	if len(args) > 0 && args[0] == "list" {
		args = args[1:]
	}
	fs := newFlags("scenarios", "scenarios [list] [--backend auto|sim] [--json] | scenarios show NAME [--json]", s)
	var be backendFlag
	be.register(fs)
	asJSON := fs.Bool("json", false, "print the list as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	b, err := be.openTelling(s.errOut, *asJSON)
	if err != nil {
		return err
	}
	defer b.Close()
	rows, skipped, err := scenarioRows(ctx, b)
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(s.out, rows)
	}
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tGPUS\tCLASS (%s)\tT_COMP\tT_COMM\tCOMPUTE\tCOMM\n", b.Name())
	for _, r := range rows {
		if !r.Runs {
			fmt.Fprintf(tw, "%s\t%d\t-\t-\t-\t%s\t%s\n", r.Name, r.GPUs, r.Compute, r.Comm)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.GPUs, r.Class, report.Duration(r.TComp), report.Duration(r.TComm), r.Compute, r.Comm)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if skipped > 0 {
		_, note := runnableSuite(b)
		fmt.Fprintf(s.out, "\n%s\n", note)
	}
	return nil
}

// scenarioRows classifies every built-in scenario on b, and lists those b
// cannot run (more GPUs than the node has, say) with the reason; skipped
// counts them.
func scenarioRows(ctx context.Context, b backends.Backend) (rows []scenarioRow, skipped int, err error) {
	lim := b.Capabilities().Limits
	for _, sc := range scenarios.Builtin() {
		row := scenarioRow{
			Name: sc.Name, Description: sc.Description, Source: sc.Source, GPUs: sc.GPUs,
			Compute: sc.Compute, Comm: sc.Comm, Backend: b.Name(),
		}
		if why := runsHere(sc, lim); why != "" {
			row.Why = why
			rows = append(rows, row)
			skipped++
			continue
		}
		r, err := profiler.Measure(ctx, b, sc, scenarios.Strategy{}, profiler.Options{IsolatedOnly: true, Reps: 5})
		if err != nil {
			return nil, 0, fmt.Errorf("classifying %s: %w", sc.Name, err)
		}
		row.Runs, row.Class, row.TComp, row.TComm = true, r.Class, r.TComp.Median, r.TComm.Median
		rows = append(rows, row)
	}
	return rows, skipped, nil
}

// runsHere returns "" when the backend whose limits are lim can run sc,
// else the first reason it cannot.
func runsHere(sc scenarios.Scenario, lim scenarios.Limits) string {
	var ve *scenarios.ValidationError
	if err := scenarios.Validate(sc, lim); errors.As(err, &ve) && len(ve.Fields) > 0 {
		return ve.Fields[0].Msg
	} else if err != nil {
		return err.Error()
	}
	return ""
}

// runnableSuite splits the built-in suite by whether backend b can run
// each scenario; note says, in one line, what was left out, why, and where
// it runs ("" when nothing was).
func runnableSuite(b backends.Backend) (runs []scenarios.Scenario, note string) {
	lim := b.Capabilities().Limits
	runs, gpus, other, why := splitSuite(lim)
	var parts []string
	if gpus > 0 {
		parts = append(parts, fmt.Sprintf("%d need more GPUs than this %d-GPU node has", gpus, lim.MaxGPUs))
	}
	if other > 0 {
		parts = append(parts, fmt.Sprintf("%d cannot run here for another reason (%s)", other, why))
	}
	if len(parts) == 0 {
		return runs, ""
	}
	where := "--backend sim runs them on a simulated node"
	if b.Capabilities().Profile != "" { // the simulator, which --sim-gpus sizes
		where = "--sim-gpus 2 or more (0 for the default 8) runs those that need more GPUs"
	}
	return runs, fmt.Sprintf("%d of the %d built-in scenarios cannot run here: %s; %s",
		gpus+other, len(runs)+gpus+other, strings.Join(parts, ", "), where)
}

// splitSuite splits the built-in suite for a backend of limits lim: the
// scenarios it runs, how many need more GPUs than it has, how many it
// cannot run for another reason, and the first such reason.
func splitSuite(lim scenarios.Limits) (runs []scenarios.Scenario, gpus, other int, why string) {
	for _, sc := range scenarios.Builtin() {
		var ve *scenarios.ValidationError
		err := scenarios.Validate(sc, lim)
		switch {
		case err == nil:
			runs = append(runs, sc)
		case errors.As(err, &ve) && len(ve.Fields) > 0 && ve.Fields[0].Path == "$.gpus":
			gpus++
		default:
			other++
			if why == "" {
				why = runsHere(sc, lim)
			}
		}
	}
	return runs, gpus, other, why
}

func runScenariosShow(args []string, s stdio) error {
	fs := newFlags("scenarios show", "scenarios show NAME [--json]", s)
	asJSON := fs.Bool("json", false, "print the scenario as JSON instead of YAML")
	// The name may come before or after the flags.
	var name string
	if len(args) > 0 && args[0] != "" && args[0][0] != '-' {
		name, args = args[0], args[1:]
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if name == "" {
		return badInput("scenarios show needs a scenario name (c3lab scenarios lists them)")
	}
	sc, err := scenarios.Find(name)
	if err != nil {
		return scenarioError(err)
	}
	noteRenamed(s.errOut, name)
	if *asJSON {
		return writeJSON(s.out, sc)
	}
	out, err := scenarios.Marshal(sc)
	if err != nil {
		return fmt.Errorf("writing %s as YAML: %w", name, err)
	}
	_, err = s.out.Write(out)
	return err
}
