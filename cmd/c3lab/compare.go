package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/report"
)

// regressionFlag is --fail-on-regression: a percentage ("5%", "0.5%", "5").
type regressionFlag struct {
	set   bool
	limit float64 // a fraction
}

func (f *regressionFlag) String() string {
	if !f.set {
		return ""
	}
	return strconv.FormatFloat(100*f.limit, 'g', -1, 64) + "%"
}

func (f *regressionFlag) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%")), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return fmt.Errorf("want a percentage of 0 or more, such as 5%%, not %q", s)
	}
	f.set, f.limit = true, v/100
	return nil
}

func runCompare(_ context.Context, args []string, s stdio) error {
	fs := newFlags("compare", "compare OLD NEW [--json] [--only-significant] [--chart]\n"+
		"                     [--fail-on-regression X%]\n\n"+
		"OLD and NEW are sweep files (c3lab sweep), recordings, or result JSON\n"+
		"(c3lab run --json), in any mix. Results pair by scenario and strategy; per\n"+
		"pair, T_c3's change with its 95 % interval (bootstrap over rounds and\n"+
		"repetitions) and Mann-Whitney p-value; U's and F's changes too in --json.\n"+
		"Where both sides recorded the GPUs' state (NVML, c3lab on CUDA), a pair whose\n"+
		"concurrent runs saw other clocks, temperature or throttle reasons is marked\n"+
		"\"machine:\": its change may be the machine's, not the strategy's.", s)
	asJSON := fs.Bool("json", false, "print the comparison as JSON")
	onlySig := fs.Bool("only-significant", false, "show only pairs whose T_c3 changed significantly (the summary is of all)")
	chart := fs.Bool("chart", false, "after the table, draw a bar per pair of T_c3's change")
	var fail regressionFlag
	fs.Var(&fail, "fail-on-regression", "exit 1 when a T_c3 is significantly slower by more than this (5%; 0% for any)")
	files, err := parseWithArgs(fs, args)
	if err != nil {
		return err
	}
	if len(files) != 2 {
		return badInput("compare needs two files, OLD and NEW; got %d (c3lab compare --help)", len(files))
	}
	if *asJSON && *chart {
		return noEffect("chart", "with --json (the chart is for people); drop one of them")
	}
	var in [2]compare.Input
	for i, path := range files {
		if in[i], err = compare.Load(path); err != nil {
			return badInput("%v", err)
		}
	}
	rep := compare.Compare(in[0], in[1], compare.Options{})
	shown := rep
	if *onlySig {
		shown = rep.OnlySignificant()
	}
	if *asJSON {
		err = compare.WriteJSON(s.out, shown)
	} else {
		err = compare.WriteTable(s.out, shown, compare.DefaultWidth)
		if err == nil && *chart && len(shown.Pairs) > 0 {
			fmt.Fprintln(s.out)
			err = compare.WriteChart(s.out, shown, compare.DefaultWidth)
		} else if err == nil {
			writeCompareChart(s, shown)
		}
	}
	if err != nil {
		return err
	}
	if !fail.set {
		return nil
	}
	if bad := rep.Regressions(fail.limit); len(bad) > 0 {
		worst := bad[0]
		machine := ""
		if worst.Machine != nil && worst.Machine.Flagged {
			machine = "; the machine changed too: " + strings.Join(worst.Machine.Reasons, ", ")
		}
		return fmt.Errorf("%d significant regression(s) of T_c3 beyond %s, the worst %s · %s %s (%s -> %s)%s",
			len(bad), fail.String(), worst.Scenario, worst.Name, fmtPct(worst.TC3.Delta),
			report.Duration(worst.TC3.Old), report.Duration(worst.TC3.New), machine)
	}
	return nil
}

func fmtPct(ratio float64) string { return fmt.Sprintf("%+.2f%%", 100*(ratio-1)) }

// parseWithArgs parses flags that may come before, between or after the
// positional arguments, which it returns.
func parseWithArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parseFlagsAllowingArgs(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
