package htmlreport

import "github.com/c3lab/c3lab/profiler/report"

// Page is a report laid out: what the template draws.
type Page struct {
	Title     string
	Inputs    []InputView
	Timelines []TimelineView
	Why       []WhyView
	// Compare is the comparison of two inputs; nil otherwise.
	Compare *CompareView
}

// InputView is one input's section: where it came from and its charts.
type InputView struct {
	ID                  string
	N                   int
	Path, Kind, Backend string
	Results             int
	Scenarios           int
	Strategies          int
	Simulated           bool
	Notes               []string
	Details             Details
	Devices             []DeviceRow
	HeatU, HeatF        Heatmap
	Bars, Classes       BarChart
}

// DeviceRow is a kind of device of an input, Count of them.
type DeviceRow struct {
	Name, Indices, SMs, Memory, CopyEngines, HBM, Link, PCIe string
	Count                                                    int
	Simulated                                                bool
}

// Label is a text at a place.
type Label struct {
	X, Y int
	Text string
}

// Tick is an axis tick: its x and its text.
type Tick struct {
	X    string
	Text string
}

// Stop is a colour gradient's stop.
type Stop struct{ Offset, Color string }

// Legend is a colour bar.
type Legend struct {
	ID, Caption string
	W, H        int
	Stops       []Stop
	Ticks       []Tick
}

// Heatmap is a scenario x strategy grid of one figure.
type Heatmap struct {
	ID, Figure, Title            string
	Width, Height, LabelW, HeadH int
	Cols, Rows                   []Label
	Cells                        []Cell
	Legend                       Legend
}

// Cell is one heatmap cell.
type Cell struct {
	X, Y, W, H, TX, TY, SY int
	Scenario, Strategy     string
	// Value is the figure as a number (data-value), Text and Sub what
	// the cell reads: the value and its interval.
	Value, Text, Sub, Tip string
	Fill, Ink             string
	Best, Tied, Missing   bool
}

// BarChart is a chart of horizontal bars.
type BarChart struct {
	ID                           string
	Width, Height, LabelW, PlotW int
	AxisY                        int
	RefX, RefLabel               string
	Bars                         []Bar
	Ticks                        []Tick
	Keys                         []Key
}

// Key is a legend entry.
type Key struct{ Text, Color string }

// Bar is one bar, with its interval's whisker when HasCI.
type Bar struct {
	Y, BY, BH, LY, VX, MidY int
	X, W, LoX, HiX          string
	HasCI                   bool
	Label, Value, Tip, Data string
	Fill, Class             string
}

// TimelineView is one run's timeline.
type TimelineView struct {
	ID, Scenario, Strategy, Input string
	Simulated                     bool
	U, TC3                        string
	Width, Height, LabelW, PlotW  int
	AxisY, ClipH                  int
	// Dur is the timeline's length in ns.
	Dur   string
	Rows  []Label
	Spans []SpanView
	Ticks []Tick
}

// SpanView is one kernel or copy of a timeline; S and E are its start
// and end in ns from the timeline's start.
type SpanView struct {
	X, W, S, E           string
	Y, H                 int
	Fill, Name, Kind, Op string
	Tip                  string
}

// WhyView is one run's why tables.
type WhyView struct {
	ID, Scenario, Strategy, Input string
	// Role says whether the run is the scenario's default or best.
	Role, Class, U string
	Simulated      bool
	Figures        []report.Figure
	Ops            []report.OpRow
	Bounds         []BoundGroup
	NoBounds       string
	Advice         string
	Reasons        []string
	AdviceInForce  bool
	Notes          []string
}

// BoundGroup is the bounds of one mode's run.
type BoundGroup struct {
	Title string
	Ops   []BoundOp
}

// BoundOp is one op's bounds.
type BoundOp struct {
	Label, Op string
	Rows      []BoundRow
}

// BoundRow is a resource an op was bounded by, how long and why.
type BoundRow struct{ Resource, Time, Share, Detail string }

// CompareView is the comparison of two inputs.
type CompareView struct {
	Old, New, Summary string
	Notes             []string
	LabelW            int
	MidX              string
	Rows              []CompareRow
	Chart             BarChart
}

// CompareRow is one pair's line.
type CompareRow struct {
	Scenario, Name, Old, New, Change, CI, P, Verdict, Notes, Data string
}
