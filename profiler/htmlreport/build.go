package htmlreport

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// Options say what a report shows beyond what every report holds.
type Options struct {
	// Timelines picks the runs whose timelines are drawn, each
	// "SCENARIO" (every run of it that has spans) or "SCENARIO/STRATEGY"
	// (a sweep's short name or the strategy as c3lab writes it). Empty:
	// the best and the default run of each scenario that has spans.
	Timelines []string
	// MaxTimelines caps the runs chosen when Timelines is empty
	// (DefaultMaxTimelines when 0).
	MaxTimelines int
}

// DefaultMaxTimelines is how many timelines a report draws by default.
const DefaultMaxTimelines = 12

// run is one result of an input, placed in its grid.
type run struct {
	input    int
	scenario string
	// strategy is the run's name: the sweep's short name, else the
	// strategy as c3lab writes it.
	strategy string
	r        *profiler.Result
}

// grid is an input's results by scenario and strategy, in order of first
// appearance. A scenario measured twice under one strategy (a lab
// recording's iterations) keeps its last result.
type grid struct {
	scenarios, strategies []string
	cell                  map[[2]string]*run
	repeated              int
}

func gridOf(i int, in compare.Input) grid {
	g := grid{cell: map[[2]string]*run{}}
	for k := range in.Entries {
		e := &in.Entries[k]
		name := e.Name
		if name == "" {
			name = e.Result.Strategy.Normalize().String()
		}
		sc := e.Result.Scenario.Name
		if !slices.Contains(g.scenarios, sc) {
			g.scenarios = append(g.scenarios, sc)
		}
		if !slices.Contains(g.strategies, name) {
			g.strategies = append(g.strategies, name)
		}
		key := [2]string{sc, name}
		if _, ok := g.cell[key]; ok {
			g.repeated++
		}
		g.cell[key] = &run{input: i, scenario: sc, strategy: name, r: &e.Result}
	}
	return g
}

// entries are the grid's runs as a sweep's entries, scenario by scenario.
func (g grid) entries() []profiler.SweepEntry {
	var out []profiler.SweepEntry
	for _, sc := range g.scenarios {
		for _, st := range g.strategies {
			if c, ok := g.cell[[2]string{sc, st}]; ok {
				out = append(out, profiler.SweepEntry{Scenario: sc, Strategy: st, Result: c.r})
			}
		}
	}
	return out
}

func (g grid) named() []profiler.NamedStrategy {
	out := make([]profiler.NamedStrategy, len(g.strategies))
	for i, s := range g.strategies {
		out[i] = profiler.NamedStrategy{Name: s}
	}
	return out
}

// simulated reports whether an input's results came from the simulator.
func simulated(in Input) bool {
	for _, d := range in.Details.Devices {
		if d.Simulated {
			return true
		}
	}
	for _, e := range in.Entries {
		if e.Result.Backend == "sim" || slices.ContainsFunc(e.Result.Devices, func(d backends.DeviceInfo) bool { return d.Simulated }) {
			return true
		}
	}
	return in.Source.Backend == "sim"
}

// Build lays the report of ins out: every chart's geometry and every
// table's text. An Options.Timelines entry that matches no run with spans
// is an error that names it.
func Build(ins []Input, opt Options) (Page, error) {
	if len(ins) == 0 {
		return Page{}, fmt.Errorf("no inputs")
	}
	p := Page{Title: "c3lab report"}
	grids := make([]grid, len(ins))
	var paths []string
	for i, in := range ins {
		grids[i] = gridOf(i, in.Input)
		paths = append(paths, in.Source.Path)
		p.Inputs = append(p.Inputs, inputView(i, in, grids[i]))
	}
	p.Title = "c3lab report · " + strings.Join(paths, " · ")
	runs, err := chooseRuns(ins, grids, opt)
	if err != nil {
		return Page{}, err
	}
	for k, c := range runs {
		if len(c.r.Timeline) > 0 {
			p.Timelines = append(p.Timelines, timelineView(k, ins[c.input], c))
		}
	}
	for k, c := range whyRuns(grids, runs) {
		p.Why = append(p.Why, whyView(k, ins[c.input], grids[c.input], c))
	}
	if len(ins) == 2 {
		cv := compareView(compare.Compare(ins[0].Input, ins[1].Input, compare.Options{}))
		p.Compare = &cv
	}
	return p, nil
}

// isDefault reports whether a run is under the default strategy.
func isDefault(c *run) bool {
	return c.strategy == "baseline" || c.r.Strategy.Normalize().String() == (scenarios.Strategy{}).Normalize().String()
}

// bestOf is the name of the strategy that ranked first on each scenario
// of a grid.
func bestOf(g grid) map[string]profiler.ScenarioBest {
	out := map[string]profiler.ScenarioBest{}
	for _, b := range profiler.BestPerScenario(g.entries()) {
		out[b.Scenario] = b
	}
	return out
}

// chooseRuns picks the runs whose timelines are drawn.
func chooseRuns(ins []Input, grids []grid, opt Options) ([]*run, error) {
	var out []*run
	add := func(c *run) {
		if c != nil && len(c.r.Timeline) > 0 && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	if len(opt.Timelines) > 0 {
		for _, want := range opt.Timelines {
			sc, st, withSt := strings.Cut(want, "/")
			n := len(out)
			for _, g := range grids {
				for _, s := range g.strategies {
					c := g.cell[[2]string{sc, s}]
					if c == nil || (withSt && s != st && c.r.Strategy.Normalize().String() != st) {
						continue
					}
					add(c)
				}
			}
			if len(out) == n {
				return nil, fmt.Errorf("--timeline %s: no run of that scenario%s has a timeline in the inputs (recordings and results made with spans have them; sweep files do not)",
					want, map[bool]string{true: " and strategy", false: ""}[withSt])
			}
		}
		return out, nil
	}
	most := opt.MaxTimelines
	if most <= 0 {
		most = DefaultMaxTimelines
	}
	eachBestAndDefault(grids, add)
	if len(out) > most {
		out = out[:most]
	}
	return out, nil
}

// eachBestAndDefault gives add, scenario by scenario, each grid's best
// run and its default runs.
func eachBestAndDefault(grids []grid, add func(*run)) {
	for _, g := range grids {
		best := bestOf(g)
		for _, sc := range g.scenarios {
			if b, ok := best[sc]; ok {
				add(g.cell[[2]string{sc, b.Strategy}])
			}
			for _, s := range g.strategies {
				if c := g.cell[[2]string{sc, s}]; c != nil && isDefault(c) {
					add(c)
				}
			}
		}
	}
}

// whyRuns are the runs the why tables explain: those chosen for
// timelines, then the best and the default of every scenario.
func whyRuns(grids []grid, chosen []*run) []*run {
	out := slices.Clone(chosen)
	add := func(c *run) {
		if c != nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	eachBestAndDefault(grids, add)
	return out
}

// deviceRows describe devices, one row per kind of device.
func deviceRows(devs []backends.DeviceInfo) []DeviceRow {
	var out []DeviceRow
	for _, d := range devs {
		row := DeviceRow{
			Name: d.Name, SMs: fmt.Sprint(d.SMs), Memory: report.Size(d.MemoryBytes),
			CopyEngines: fmt.Sprint(d.CopyEngines), HBM: bw(d.HBMBandwidth), Link: bw(d.LinkBandwidth),
			PCIe: bw(d.PCIeLinkBandwidth), Simulated: d.Simulated,
		}
		if d.SMStep > 0 {
			row.SMs += fmt.Sprintf(" (partitions of %d)", d.SMStep)
		}
		if n := len(out); n > 0 && sameRow(out[n-1], row) {
			out[n-1].Count++
			out[n-1].Indices += fmt.Sprintf(", %d", d.Index)
			continue
		}
		row.Count, row.Indices = 1, fmt.Sprint(d.Index)
		out = append(out, row)
	}
	return out
}

func sameRow(a, b DeviceRow) bool {
	a.Count, a.Indices, b.Count, b.Indices = 0, "", 0, ""
	return a == b
}

func bw(v float64) string {
	if v <= 0 {
		return "–"
	}
	return report.Bandwidth(v)
}

func inputView(i int, in Input, g grid) InputView {
	v := InputView{
		ID: fmt.Sprintf("in%d", i+1), N: i + 1, Path: in.Source.Path, Kind: in.Source.Kind,
		Backend: in.Source.Backend, Results: in.Source.Results, Simulated: simulated(in),
		Notes: slices.Clone(in.Notes), Details: in.Details, Devices: deviceRows(in.Details.Devices),
		Scenarios: len(g.scenarios), Strategies: len(g.strategies),
	}
	if g.repeated > 0 {
		v.Notes = append(v.Notes, fmt.Sprintf("%d repeated measurement(s) of a scenario under one strategy: each cell shows the last", g.repeated))
	}
	best := bestOf(g)
	v.HeatU = heatmap(v.ID+"-u", "U", g, best)
	v.HeatF = heatmap(v.ID+"-f", "F", g, best)
	sum := profiler.SummarizeSweep(g.entries(), g.named())
	v.Bars = strategyBars(v.ID, sum)
	v.Classes = classBars(v.ID, sum)
	return v
}

// fractionCI is a result's F interval, nil without one.
func fractionCI(r *profiler.Result) *profiler.Interval {
	if r.CI == nil || !r.CI.F.Valid() {
		return nil
	}
	iv := r.CI.F
	return &iv
}

func upliftCI(r *profiler.Result) *profiler.Interval {
	if r.CI == nil || !r.CI.U.Valid() {
		return nil
	}
	iv := r.CI.U
	return &iv
}

// Heatmap layout.
const (
	cellW, cellH = 96, 36
	charW        = 6.6 // a character of the 11 px monospace labels
)

func heatmap(id, figure string, g grid, best map[string]profiler.ScenarioBest) Heatmap {
	longest := 0
	for _, s := range g.scenarios {
		longest = max(longest, len(s))
	}
	longestSt := 0
	for _, s := range g.strategies {
		longestSt = max(longestSt, len(s))
	}
	h := Heatmap{ID: id, Figure: figure, LabelW: int(float64(longest)*charW) + 16}
	h.HeadH = int(float64(longestSt)*charW*0.6) + 24
	h.Width = h.LabelW + cellW*len(g.strategies) + h.HeadH + 8
	h.Height = h.HeadH + cellH*len(g.scenarios) + 4
	span := 1.1
	if figure == "U" {
		for _, c := range g.cell {
			if u := c.r.Uplift; u > 0 && !math.IsInf(u, 0) {
				span = max(span, u, 1/u)
			}
		}
		h.Title = "U: uplift over the serial default (T_serial of the default / T_c3; > 1x is faster than serial; strategies compare by it)"
	} else {
		h.Title = "F: fraction of ideal (% of this strategy's own ideal speedup realized; 100 % is perfect overlap, < 0 slower than serial)"
	}
	us := uScale{span}
	for j, st := range g.strategies {
		x := h.LabelW + j*cellW + cellW/2
		h.Cols = append(h.Cols, Label{X: x, Y: h.HeadH - 8, Text: st})
	}
	for i, sc := range g.scenarios {
		y := h.HeadH + i*cellH
		h.Rows = append(h.Rows, Label{X: h.LabelW - 8, Y: y + cellH/2 + 4, Text: sc})
		b := best[sc]
		for j, st := range g.strategies {
			c := Cell{X: h.LabelW + j*cellW, Y: y, W: cellW - 2, H: cellH - 2, Scenario: sc, Strategy: st}
			c.TX, c.TY, c.SY = c.X+c.W/2, c.Y+15, c.Y+28
			r, ok := g.cell[[2]string{sc, st}]
			switch {
			case !ok:
				c.Fill, c.Ink, c.Text, c.Missing = missingFill, "#666666", "–", true
				c.Tip = sc + " · " + st + ": not measured"
			default:
				fillCell(&c, figure, r.r, us)
				c.Best = b.Strategy == st
				c.Tied = slices.Contains(b.Tied, st)
			}
			h.Cells = append(h.Cells, c)
		}
	}
	h.Legend = legend(id, figure, us)
	return h
}

func fillCell(c *Cell, figure string, r *profiler.Result, us uScale) {
	tip := []string{c.Scenario + " · " + c.Strategy}
	uText := report.UpliftCI(r.Uplift, upliftCI(r))
	fText := "undefined (nothing to overlap)"
	if f, ok := report.FractionValue(*r); ok {
		fText = f
	}
	tip = append(tip, "U "+uText, "F "+fText, "T_c3 "+report.DurationCI(r.TC3.Median, ciOf(r, func(iv *profiler.Intervals) profiler.Interval { return iv.TC3 })))
	if r.CI != nil {
		tip = append(tip, fmt.Sprintf("95 %% intervals over %d rounds", r.CI.Rounds))
	} else if r.Deterministic {
		tip = append(tip, "deterministic backend: no noise, no interval")
	}
	if r.Backend == "sim" {
		tip = append(tip, "simulated")
	}
	switch figure {
	case "U":
		if r.Uplift > 0 {
			c.Value = num(r.Uplift)
			c.Fill = us.fill(r.Uplift)
			c.Text = report.Ratio(r.Uplift)
			if iv := upliftCI(r); iv != nil {
				c.Sub = report.Ratio(iv.Lo) + "–" + report.Ratio(iv.Hi)
			}
		}
	default:
		if f, ok := r.Fraction(); ok {
			c.Value = num(f)
			c.Fill = fFill(f)
			c.Text = report.Percent(f)
			if iv := fractionCI(r); iv != nil {
				c.Sub = "± " + report.PercentValue(iv.HalfWidth())
			}
			if r.FWithinNoise() {
				c.Sub = "within noise"
			}
		}
	}
	if c.Value == "" {
		c.Fill, c.Text, c.Missing = missingFill, "n/a", true
	}
	c.Ink = ink(c.Fill)
	c.Tip = strings.Join(tip, "\n")
}

func ciOf(r *profiler.Result, pick func(*profiler.Intervals) profiler.Interval) *profiler.Interval {
	if r.CI == nil {
		return nil
	}
	iv := pick(r.CI)
	if !iv.Valid() {
		return nil
	}
	return &iv
}

// legend is a heatmap's colour bar with its ticks.
func legend(id, figure string, us uScale) Legend {
	const w = 320
	l := Legend{ID: id + "-grad", W: w, H: 12}
	if figure == "U" {
		l.Caption = "U (log scale, 1x = serial)"
		for k := range 9 {
			t := float64(k) / 8
			l.Stops = append(l.Stops, Stop{Offset: px(100*t) + "%", Color: upliftRamp.at(t)})
		}
		for _, u := range []float64{1 / us.span, 1 / math.Sqrt(us.span), 1, math.Sqrt(us.span), us.span} {
			l.Ticks = append(l.Ticks, Tick{X: px(us.t(u) * w), Text: report.Ratio(u)})
		}
		return l
	}
	l.Caption = "F (% of ideal; below 0 is slower than serial)"
	// -50 %..0 red, 0..100 % the ramp: a third of the bar for the negative part.
	for k := range 3 {
		t := float64(k) / 2
		l.Stops = append(l.Stops, Stop{Offset: px(100*t/3) + "%", Color: fFill(-0.5 + 0.5*t - 1e-9)})
	}
	for k := range 9 {
		t := float64(k) / 8
		l.Stops = append(l.Stops, Stop{Offset: px(100*(1+2*t)/3) + "%", Color: fFill(t)})
	}
	for _, f := range []float64{-0.5, 0, 0.5, 1} {
		l.Ticks = append(l.Ticks, Tick{X: px((f + 0.5) / 1.5 * w), Text: report.WholePercent(f)})
	}
	return l
}

// Bar chart layout.
const (
	barLabelW, barPlotW, barRowH = 190, 420, 22
)

func strategyBars(id string, sum []profiler.StrategySummary) BarChart {
	bc := BarChart{ID: id + "-bars", LabelW: barLabelW, PlotW: barPlotW}
	lo, hi := 1.0, 1.0
	for _, s := range sum {
		if s.MeanUplift != nil {
			lo, hi = min(lo, *s.MeanUplift), max(hi, *s.MeanUplift)
		}
		if s.MeanUpliftCI != nil {
			lo, hi = min(lo, s.MeanUpliftCI.Lo), max(hi, s.MeanUpliftCI.Hi)
		}
	}
	lo, hi = lo-0.05*(hi-lo)-0.02, hi+0.05*(hi-lo)+0.02
	x := func(v float64) float64 { return float64(barLabelW) + (v-lo)/(hi-lo)*barPlotW }
	bc.RefX, bc.RefLabel = px(x(1)), "1x"
	for k, s := range sum {
		y := 28 + k*barRowH
		b := Bar{Y: y, BY: y + 4, BH: barRowH - 8, Label: s.Strategy, LY: y + barRowH/2 + 4}
		tip := []string{s.Strategy}
		if s.MeanUplift != nil {
			u := *s.MeanUplift
			a, z := x(1), x(u)
			b.X, b.W = px(min(a, z)), px(math.Abs(z-a))
			b.Fill = uScale{max(hi, 1/lo)}.fill(u)
			b.Value = report.Ratio(u)
			b.Data = num(u)
			if iv := s.MeanUpliftCI; iv != nil {
				b.HasCI, b.LoX, b.HiX, b.MidY = true, px(x(iv.Lo)), px(x(iv.Hi)), y+barRowH/2
				b.Value += " (" + report.Ratio(iv.Lo) + "–" + report.Ratio(iv.Hi) + ")"
			}
		} else {
			b.Value = report.NA
		}
		b.Value += fmt.Sprintf(" · %d win(s)", s.Wins)
		if s.Tied > 0 {
			b.Value += fmt.Sprintf(", %d tied", s.Tied)
		}
		tip = append(tip, "geometric mean U "+b.Value, fmt.Sprintf("%d scenario(s) with F, %d failed", s.N, s.Failed))
		b.Tip = strings.Join(tip, "\n")
		b.VX = int(barLabelW+barPlotW) + 8
		bc.Bars = append(bc.Bars, b)
	}
	for _, t := range niceTicks(lo, hi, 6) {
		bc.Ticks = append(bc.Ticks, Tick{X: px(x(t)), Text: report.Ratio(t)})
	}
	bc.Height = 28 + len(sum)*barRowH + 24
	bc.AxisY = bc.Height - 22
	bc.Width = barLabelW + barPlotW + 230
	return bc
}

// The classes, in the order the bars show them, with their colours.
var classes = []struct {
	c     profiler.Class
	color string
}{
	{profiler.GEMMLong, "#4e79a7"},
	{profiler.Balanced, "#9c755f"},
	{profiler.CommLong, "#f28e2b"},
}

func classBars(id string, sum []profiler.StrategySummary) BarChart {
	bc := BarChart{ID: id + "-classes", LabelW: barLabelW, PlotW: barPlotW}
	lo, hi := 0.0, 1.0
	for _, s := range sum {
		for _, v := range s.ByClass {
			lo, hi = min(lo, v), max(hi, v)
		}
	}
	x := func(v float64) float64 { return float64(barLabelW) + (v-lo)/(hi-lo)*barPlotW }
	bc.RefX, bc.RefLabel = px(x(0)), "0 %"
	y := 28
	const sub = 12
	for _, s := range sum {
		first := true
		for _, cl := range classes {
			v, ok := s.ByClass[cl.c]
			if !ok {
				continue
			}
			b := Bar{Y: y, BY: y + 1, BH: sub - 2, LY: y + sub - 1, Class: string(cl.c), Fill: cl.color}
			if first {
				b.Label = s.Strategy
				first = false
			}
			a, z := x(0), x(v)
			b.X, b.W = px(min(a, z)), px(math.Abs(z-a))
			b.Value, b.Data = string(cl.c)+" "+report.Percent(v), num(v)
			b.Tip = s.Strategy + " · " + string(cl.c) + ": mean F " + report.Percent(v)
			b.VX = int(barLabelW+barPlotW) + 8
			bc.Bars = append(bc.Bars, b)
			y += sub
		}
		y += 8
	}
	for _, t := range niceTicks(lo, hi, 6) {
		bc.Ticks = append(bc.Ticks, Tick{X: px(x(t)), Text: report.WholePercent(t)})
	}
	for _, cl := range classes {
		bc.Keys = append(bc.Keys, Key{Text: string(cl.c), Color: cl.color})
	}
	bc.Height = y + 24
	bc.AxisY = bc.Height - 22
	bc.Width = barLabelW + barPlotW + 230
	return bc
}
