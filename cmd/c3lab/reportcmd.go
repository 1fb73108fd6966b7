package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/c3lab/c3lab/profiler/htmlreport"
)

// reportSummary is what `c3lab report --json` prints.
type reportSummary struct {
	Out       string               `json:"out"`
	Bytes     int                  `json:"bytes"`
	Inputs    []reportInputSummary `json:"inputs"`
	Timelines int                  `json:"timelines"`
	Why       int                  `json:"why"`
	Compare   bool                 `json:"compare"`
}

type reportInputSummary struct {
	Path       string `json:"path"`
	Kind       string `json:"kind"`
	Backend    string `json:"backend"`
	Results    int    `json:"results"`
	Scenarios  int    `json:"scenarios"`
	Strategies int    `json:"strategies"`
	Simulated  bool   `json:"simulated"`
}

func runHTMLReport(_ context.Context, args []string, s stdio) error {
	fs := newFlags("report", "report IN... --out report.html [--force] [--json]\n"+
		"                    [--timeline SCENARIO[/STRATEGY]]...\n\n"+
		"One self-contained HTML page (no network needed to view it) of sweep files,\n"+
		"result JSON (c3lab run --json) and recordings, in any mix: a scenario x\n"+
		"strategy heatmap of U and F with their intervals, bars per strategy and per\n"+
		"class, zoomable timelines of chosen runs (by default the best and the\n"+
		"default run of each scenario that has spans), the why tables, the devices\n"+
		"and libraries, and for two inputs the comparison of c3lab compare.", s)
	out := fs.String("out", "", "the HTML file to write (required)")
	force := fs.Bool("force", false, "replace the --out file when it exists")
	asJSON := fs.Bool("json", false, "print what was written as JSON")
	var timelines listFlag
	fs.Var(&timelines, "timeline", "draw this run's timeline: SCENARIO or SCENARIO/STRATEGY (repeatable, or comma-separated)")
	files, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return badInput("report needs at least one input: a sweep file, a recording or result JSON (c3lab report --help)")
	}
	if *out == "" {
		return badInput("report needs --out FILE.html, the page to write")
	}
	o := output{path: *out, force: *force, flag: "--out", forceFlag: "--force", what: "the report"}
	if err := checkOutputs(o); err != nil {
		return err
	}
	var ins []htmlreport.Input
	for _, f := range files {
		in, err := htmlreport.Load(f)
		if err != nil {
			return badInput("%v", err)
		}
		ins = append(ins, in)
	}
	page, err := htmlreport.Build(ins, htmlreport.Options{Timelines: timelines})
	if err != nil {
		return badInput("%v", err)
	}
	var buf bytes.Buffer
	if err := htmlreport.Write(&buf, page); err != nil {
		return err
	}
	if err := o.write(func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		return err
	}
	sum := reportSummary{Out: *out, Bytes: buf.Len(), Timelines: len(page.Timelines), Why: len(page.Why), Compare: page.Compare != nil}
	for _, v := range page.Inputs {
		sum.Inputs = append(sum.Inputs, reportInputSummary{v.Path, v.Kind, v.Backend, v.Results, v.Scenarios, v.Strategies, v.Simulated})
	}
	if *asJSON {
		enc := json.NewEncoder(s.out)
		enc.SetIndent("", "  ")
		return enc.Encode(sum)
	}
	fmt.Fprintf(s.out, "wrote %s (%d KiB): %d input(s), %d timeline(s), %d why table(s)%s; open it in a browser, no network needed\n",
		*out, (buf.Len()+1023)/1024, len(ins), sum.Timelines, sum.Why, map[bool]string{true: ", the comparison", false: ""}[sum.Compare])
	return nil
}
