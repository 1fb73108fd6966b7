package main

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// Graph describes a scenario written as streams (format 2); absent
	// for a one-pair scenario. Compute and Comm are then its lead ops, and
	// T_comp and T_comm sum its compute and its comm ops alone.
	Graph *graphRow `json:"graph,omitempty"`
}

// graphRow is what a scenario written as streams expands to (under its own
// strategy): its ops, their instances, its streams, and the chunk counts
// of its decomposed pairs.
type graphRow struct {
	Ops       int   `json:"ops"`
	Instances int   `json:"instances"`
	Streams   int   `json:"streams"`
	Chunks    []int `json:"decomposed_into,omitempty"`
}

func runScenarios(ctx context.Context, args []string, s stdio) error {
	switch {
	case len(args) > 0 && args[0] == "show":
		return runScenariosShow(args[1:], s)
	case len(args) > 0 && args[0] == "list":
		args = args[1:]
	case len(args) > 0 && args[0] != "" && args[0][0] != '-':
		// c3lab scenarios NAME shows one, as scenarios show NAME does.
		return runScenariosShow(args, s)
	}
	fs := newFlags("scenarios", "scenarios [list] [--backend auto|sim] [--json] | scenarios [show] NAME [--json]", s)
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
	if err := writeScenarioTables(s.out, b.Name(), rows); err != nil {
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
		if g, ok := shapeOf(sc, sc.Strategy); ok {
			row.Graph = &graphRow{Ops: g.ops, Instances: g.instances, Streams: g.streams, Chunks: g.chunks}
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

// writeScenarioTables prints the scenario list as two tables: the pairs
// (one compute op next to one comm op), then the scenarios written as
// streams, each with what its graph holds (ops, instances, streams, and
// the chunks of a decomposed pair). A scenario the backend cannot run
// shows - for its class and times.
func writeScenarioTables(w io.Writer, backend string, rows []scenarioRow) error {
	var pairs, graphs []scenarioRow
	for _, r := range rows {
		if r.Graph != nil {
			graphs = append(graphs, r)
		} else {
			pairs = append(pairs, r)
		}
	}
	measured := func(r scenarioRow) string {
		if !r.Runs {
			return "-\t-\t-"
		}
		return fmt.Sprintf("%s\t%s\t%s", r.Class, report.Duration(r.TComp), report.Duration(r.TComm))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	if len(pairs) > 0 {
		fmt.Fprintf(tw, "NAME\tGPUS\tCLASS (%s)\tT_COMP\tT_COMM\tCOMPUTE\tCOMM\n", backend)
		for _, r := range pairs {
			fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", r.Name, r.GPUs, measured(r), r.Compute, r.Comm)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(graphs) == 0 {
		return nil
	}
	if len(pairs) > 0 {
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "Written as streams (format 2): T_COMP and T_COMM sum the compute and the comm ops alone.")
	fmt.Fprintf(tw, "NAME\tGPUS\tCLASS (%s)\tT_COMP\tT_COMM\tGRAPH\n", backend)
	for _, r := range graphs {
		g := graphShape{ops: r.Graph.Ops, instances: r.Graph.Instances, streams: r.Graph.Streams, chunks: r.Graph.Chunks}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\n", r.Name, r.GPUs, measured(r), g.short())
	}
	return tw.Flush()
}
