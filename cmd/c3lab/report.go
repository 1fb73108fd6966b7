package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// writeReport prints a result as the table a person reads.
func writeReport(w io.Writer, r profiler.Result) {
	sc := r.Scenario
	fmt.Fprintf(w, "scenario   %s\n", sc.Name)
	if sc.Source != "" {
		writeHanging(w, "           ", sc.Source)
	}
	if sc.IsGraph() {
		writeHanging(w, "graph      ", graphSummary(sc, r.Strategy))
	} else {
		fmt.Fprintf(w, "ops        %s  +  %s on %s\n", sc.Compute, sc.Comm, plural(sc.GPUs, "GPU"))
	}
	fmt.Fprintf(w, "backend    %s · %s\n", r.Backend, deviceSummary(r.Devices))
	fmt.Fprintf(w, "strategy   %s\n\n", r.Strategy)

	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	switch {
	case r.Deterministic:
		// Every run gives the same numbers: a spread and a run count would
		// suggest noise that does not exist.
		fmt.Fprintf(tw, "time (the %s backend is deterministic: every run takes exactly this long)\n", r.Backend)
	case r.CI != nil:
		fmt.Fprintf(tw, "time\tmedian\t± (%s)\tp10 .. p90\truns\n", report.WholePercent(r.CI.Level))
	default:
		fmt.Fprintln(tw, "time\tmedian\tp10 .. p90\truns")
	}
	var tcomp, tcomm, tc3 *profiler.Interval
	if r.CI != nil {
		tcomp, tcomm, tc3 = &r.CI.TComp, &r.CI.TComm, &r.CI.TC3
	}
	bimodal := map[string]bool{}
	for _, b := range r.Bimodal {
		bimodal[b.Time] = true
	}
	for _, row := range []struct {
		name, key string
		s         profiler.Stat
		iv        *profiler.Interval
	}{
		{"T_comp (alone)", "T_comp", r.TComp, tcomp}, {"T_comm (alone)", "T_comm", r.TComm, tcomm}, {"T_c3 (together)", "T_c3", r.TC3, tc3},
		{"compute in c3", "", r.TCompInC3, nil}, {"comm in c3", "", r.TCommInC3, nil},
	} {
		if r.Deterministic {
			fmt.Fprintf(tw, "%s\t%s\n", row.name, report.Duration(row.s.Median))
			continue
		}
		med := report.Duration(row.s.Median)
		if bimodal[row.key] {
			med += " (bimodal)"
		}
		pm := ""
		if r.CI != nil {
			pm = strings.TrimPrefix(report.PlusMinus(row.iv, report.Duration), " ± ") + "\t"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s%s .. %s\t%d\n", row.name, med, pm, report.Duration(row.s.P10), report.Duration(row.s.P90), row.s.N)
	}
	tw.Flush()
	for _, n := range report.UncertaintyNotes(r) {
		writeHanging(w, "  ", n)
	}

	fmt.Fprintln(w)
	figs := report.Figures(r)
	// The values line up in a column of 8, wider for values with an
	// interval (a longer one, such as an undefined fraction's reason,
	// pushes its own line only).
	col := 8
	if r.CI != nil {
		for _, f := range figs {
			if n := utf8.RuneCountInString(f.Value); n > col && n <= 24 {
				col = n
			}
		}
	}
	for _, f := range figs {
		writeHanging(w, fmt.Sprintf("%-19s%-*s  ", f.Name, col, f.Value), f.Key+" = "+f.Formula)
	}
	if b := r.Bound; b != nil {
		fb, ok := report.BoundFractionValue(r)
		if !ok {
			fb = "undefined (" + r.BoundNote() + ")"
		}
		writeHanging(w, "bound              ", fmt.Sprintf("%s (%s), speedup at most %s", report.Duration(b.TBound), b.By, report.Ratio(b.SBound)))
		writeHanging(w, "fraction of bound  ", fb)
	} else {
		writeHanging(w, "bound              ", "n/a ("+r.BoundNote()+")")
	}
	var sdComp, sdComm *profiler.Interval
	if r.CI != nil {
		sdComp, sdComm = &r.CI.CompSlowdown, &r.CI.CommSlowdown
	}
	fmt.Fprintf(w, "slowdown in c3     compute %s, comm %s\n", report.RatioCI(r.CompSlowdown, sdComp), report.RatioCI(r.CommSlowdown, sdComm))
	fmt.Fprintf(w, "class              %s\n", r.Class)
	if sc.Comm.Collective.IsHostCopy() {
		fmt.Fprintf(w, "copy alone         %s over PCIe per GPU\n", report.Bandwidth(r.AlgBW))
	} else {
		fmt.Fprintf(w, "collective alone   algbw %s, busbw %s\n", report.Bandwidth(r.AlgBW), report.Bandwidth(r.BusBW))
	}
	if sc.Compute.Kind == scenarios.Stream {
		fmt.Fprintf(w, "compute alone      %s of HBM traffic (reads and writes)\n", report.Bandwidth(r.AchievedBW))
	} else {
		fmt.Fprintf(w, "compute alone      %s\n", report.TFLOPs(r.AchievedTFLOPs))
	}

	if sc.IsGraph() {
		writeOpTable(w, r)
	}

	for _, m := range []backends.Mode{backends.ModeConcurrent, backends.ModeCompute, backends.ModeComm} {
		ex := r.Explain[m]
		if len(ex) == 0 {
			continue
		}
		title := map[backends.Mode]string{
			backends.ModeConcurrent: "what held each op back (together)",
			backends.ModeCompute:    "compute alone",
			backends.ModeComm:       "comm alone",
		}[m]
		fmt.Fprintf(w, "\n%s\n", title)
		for _, e := range ex {
			var total int64
			for _, b := range e.Bounds {
				total += b.Nanos
			}
			fmt.Fprintf(w, "  %s\n", e.Label)
			for _, b := range e.Bounds {
				if m != backends.ModeConcurrent && float64(b.Nanos) < 0.05*float64(total) {
					continue
				}
				writeHanging(w, fmt.Sprintf("    %-12s %9s  %4s  ", b.Resource, report.Duration(float64(b.Nanos)), report.WholePercent(float64(b.Nanos)/float64(max(total, 1)))), b.Detail)
			}
		}
	}
}

// deviceSummary is "2 x NVIDIA H200 (simulated)".
func deviceSummary(devs []backends.DeviceInfo) string {
	if len(devs) == 0 {
		return "no devices"
	}
	s := fmt.Sprintf("%d x %s", len(devs), devs[0].Name)
	if devs[0].Simulated {
		s += " (simulated)"
	}
	return s
}

// plural is "1 GPU" or "2 GPUs".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
