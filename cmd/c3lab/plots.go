package main

import (
	"fmt"
	"os"

	"github.com/charmbracelet/x/term"

	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/tui"
)

// plotWidthMax is the widest a terminal plot gets.
const plotWidthMax = 120

// plotStyle is how the plots a command ends with are drawn: w columns
// wide, in colour on a terminal (unless NO_COLOR is set), plain text
// reportWidth wide elsewhere.
func plotStyle(s stdio) (w int, color bool) {
	if !s.terminal {
		return reportWidth, false
	}
	w = reportWidth
	if tw, _, err := term.GetSize(os.Stdout.Fd()); err == nil && tw > 0 {
		w = min(tw, plotWidthMax)
	}
	return w, os.Getenv("NO_COLOR") == ""
}

// sweepHeatmap is the sweep's U by scenario and strategy, as
// tui.UpliftHeatmap draws it; nil when the sweep holds no result.
func sweepHeatmap(f sweepfile.File, w int, color bool) []string {
	var rows, cols []string
	at := map[[2]string]float64{}
	for _, ns := range f.Grid {
		cols = append(cols, ns.Name)
	}
	for _, e := range f.Results {
		if len(rows) == 0 || rows[len(rows)-1] != e.Scenario {
			rows = append(rows, e.Scenario)
		}
		if e.Result != nil {
			at[[2]string{e.Scenario, e.Strategy}] = e.Result.Uplift
		}
	}
	if len(at) == 0 {
		return nil
	}
	cells := make([][]tui.HeatCell, len(rows))
	for i, r := range rows {
		cells[i] = make([]tui.HeatCell, len(cols))
		for j, c := range cols {
			u, ok := at[[2]string{r, c}]
			cells[i][j] = tui.HeatCell{Value: u, OK: ok && u > 0}
		}
	}
	return tui.UpliftHeatmap(rows, cols, cells, w, color)
}

// writeSweepHeatmap ends a sweep's summary with its heatmap.
func writeSweepHeatmap(s stdio, f sweepfile.File) {
	w, color := plotStyle(s)
	writePlot(s, sweepHeatmap(f, w, color))
}

// writePlot writes a plot's lines after a blank line; nothing for none.
func writePlot(s stdio, lines []string) {
	if len(lines) == 0 {
		return
	}
	fmt.Fprintln(s.out)
	for _, l := range lines {
		fmt.Fprintln(s.out, l)
	}
}

// compareChart is T_c3's change per pair, as tui.ChangeChart draws it.
func compareChart(r compare.Report, w int, color bool) []string {
	var cs []tui.Change
	for _, p := range r.Pairs {
		cs = append(cs, tui.Change{
			Group: p.Scenario, Label: p.Name, Ratio: p.TC3.Delta,
			Significant: p.Verdict == compare.Faster || p.Verdict == compare.Slower,
		})
	}
	if len(cs) == 0 {
		return nil
	}
	return tui.ChangeChart("T_c3 change, new vs old", cs, w, color)
}

// writeCompareChart ends a comparison with its change chart.
func writeCompareChart(s stdio, r compare.Report) {
	w, color := plotStyle(s)
	writePlot(s, compareChart(r, w, color))
}
