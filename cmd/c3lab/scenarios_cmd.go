package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/c3lab/c3lab/profiler"
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
	var rows []scenarioRow
	for _, sc := range scenarios.Builtin() {
		r, err := profiler.Measure(ctx, b, sc, scenarios.Strategy{}, profiler.Options{IsolatedOnly: true, Reps: 5})
		if err != nil {
			return fmt.Errorf("classifying %s: %w", sc.Name, err)
		}
		rows = append(rows, scenarioRow{
			Name: sc.Name, Description: sc.Description, Source: sc.Source, GPUs: sc.GPUs,
			Compute: sc.Compute, Comm: sc.Comm, Class: r.Class,
			TComp: r.TComp.Median, TComm: r.TComm.Median, Backend: b.Name(),
		})
	}
	if *asJSON {
		return writeJSON(s.out, rows)
	}
	tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "NAME\tCLASS (%s)\tT_COMP\tT_COMM\tCOMPUTE\tCOMM\n", b.Name())
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Class, dur(r.TComp), dur(r.TComm), r.Compute, r.Comm)
	}
	return tw.Flush()
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
