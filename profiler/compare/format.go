package compare

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/numfmt"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// DefaultWidth is the width the table and the chart fit.
const DefaultWidth = 80

// Markers of the table and the chart.
const (
	markSlower  = "▲"
	markFaster  = "▼"
	markSame    = "~"
	markEqual   = "="
	markUnknown = "?"
)

// mark is a pair's marker: its verdict, "=" for an exact no change.
func (p Pair) mark() string {
	if p.Verdict == Same && p.TC3.Exact {
		return markEqual
	}
	switch p.Verdict {
	case Slower:
		return markSlower
	case Faster:
		return markFaster
	case Same:
		return markSame
	}
	return markUnknown
}

// OnlySignificant returns the report with only the pairs whose T_c3
// changed significantly; the summary stays that of every pair.
func (r Report) OnlySignificant() Report {
	var ps []Pair
	for _, p := range r.Pairs {
		if p.Verdict == Faster || p.Verdict == Slower {
			ps = append(ps, p)
		}
	}
	r.Pairs = ps
	return r
}

// Regressions returns the pairs whose T_c3 is significantly slower by more
// than limit (a fraction: 0.05 is 5 %), worst first.
func (r Report) Regressions(limit float64) []Pair {
	var out []Pair
	for _, p := range r.Pairs {
		if p.Verdict == Slower && p.TC3.Delta-1 > limit {
			out = append(out, p)
		}
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].TC3.Delta > out[j-1].TC3.Delta; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// formatDelta is a change for people: a ratio as a signed percentage
// ("+5.02%"), a difference of F in points ("+1.3pt").
func formatDelta(f Figure, d float64) string {
	switch {
	case math.IsNaN(d) || math.IsInf(d, 0):
		return report.NA
	case f.Ratio():
		return signed(100*(d-1), 2) + "%"
	}
	return signed(100*d, 1) + "pt"
}

// formatHalf is the "± x" of a change's interval, in the change's unit.
func formatHalf(f Figure, c Change) string {
	h := c.CI.HalfWidth()
	if f.Ratio() {
		return "± " + numfmt.Fixed(100*h, 2) + "%"
	}
	return "± " + numfmt.Fixed(100*h, 1) + "pt"
}

// formatChange is a pair's change with its interval: "+5.02% ± 0.81%";
// an exact change or one without an interval is the change alone.
func formatChange(f Figure, c Change) string {
	s := formatDelta(f, c.Delta)
	if c.Known() && c.CI.Valid() && !c.Exact {
		s += " " + formatHalf(f, c)
	}
	return s
}

func signed(v float64, prec int) string {
	s := numfmt.Fixed(v, prec)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// formatValue is a figure's value: a time, a ratio or a percentage.
func formatValue(f Figure, v float64) string {
	switch f {
	case Uplift:
		return report.Ratio(v)
	case Fraction:
		return report.Percent(v)
	}
	return report.Duration(v)
}

// formatP is a pair's p-value column.
func formatP(p Pair) string {
	switch {
	case p.TC3.Exact:
		return "exact"
	case math.IsNaN(p.P):
		return "-"
	}
	return numfmt.Fixed(p.P, 3)
}

func width(s string) int { return utf8.RuneCountInString(s) }

// fit cuts s to w columns, ending it with "…" when cut.
func fit(s string, w int) string {
	if width(s) <= w {
		return s
	}
	if w <= 1 {
		return string([]rune(s)[:max(w, 0)])
	}
	return string([]rune(s)[:w-1]) + "…"
}

func pad(s string, w int, right bool) string {
	n := w - width(s)
	if n <= 0 {
		return s
	}
	if right {
		return strings.Repeat(" ", n) + s
	}
	return s + strings.Repeat(" ", n)
}

// sourceLine says what one side is, in w columns: a path too long loses
// its start.
func sourceLine(side string, s Source, w int) string {
	what := fmt.Sprintf("%s of %d result(s)", s.Kind, s.Results)
	if s.Backend != "" {
		what += " on " + s.Backend
	}
	head := side + "  " + what + ": "
	path := s.Path
	if room := w - width(head); width(path) > room && room > 1 {
		r := []rune(path)
		path = "…" + string(r[len(r)-room+1:])
	}
	return head + path
}

// WriteTable writes the comparison as a table w columns wide: per
// scenario, a row per strategy with T_c3 old and new, the change with
// the half-width of its interval, the Mann-Whitney p-value, the
// repetitions on each side and a marker; then the legend, the summary,
// the unpaired results and the notes.
func WriteTable(out io.Writer, r Report, w int) error {
	if w <= 0 {
		w = DefaultWidth
	}
	var b strings.Builder
	line := func(s string) { b.WriteString(strings.TrimRight(fit(s, w), " ") + "\n") }
	line(sourceLine("old", r.Old, w))
	line(sourceLine("new", r.New, w))
	b.WriteString("\n")

	head := [6]string{"strategy", "old T_c3", "new T_c3", "change", "p", "n"}
	rows := make([][6]string, len(r.Pairs))
	wd := [6]int{}
	for i := range head {
		wd[i] = width(head[i])
	}
	for i, p := range r.Pairs {
		rows[i] = [6]string{p.Name, formatValue(TC3, p.TC3.Old), formatValue(TC3, p.TC3.New),
			formatChange(TC3, p.TC3), formatP(p), fmt.Sprintf("%d+%d", p.NOld, p.NNew)}
		for j, c := range rows[i] {
			wd[j] = max(wd[j], width(c))
		}
	}
	// Indent, gaps, the marker: the strategy column takes what is left.
	fixed := 2 + 2*6 + 1
	for j := 1; j < 6; j++ {
		fixed += wd[j]
	}
	wd[0] = max(min(wd[0], w-fixed), 8)
	row := func(c [6]string, mark string) string {
		s := "  " + pad(fit(c[0], wd[0]), wd[0], false)
		for j := 1; j < 6; j++ {
			s += "  " + pad(c[j], wd[j], true)
		}
		return s + "  " + mark
	}
	if len(r.Pairs) == 0 {
		line("no pairs to show")
	} else {
		line(row(head, ""))
	}
	scen := ""
	for i, p := range r.Pairs {
		if p.Scenario != scen || i == 0 {
			scen = p.Scenario
			line(scen)
		}
		line(row(rows[i], p.mark()))
		for _, n := range p.Notes {
			line("      note: " + n)
		}
		if p.Machine != nil && p.Machine.Flagged {
			head := "      machine: "
			if p.Machine.During {
				head = "      machine during the runs: "
			}
			for _, l := range wrapList(head, p.Machine.Reasons, w) {
				line(l)
			}
		}
	}
	b.WriteString("\n")
	pct := numfmt.Fixed(100*r.Level, 0)
	line(fmt.Sprintf("T_c3: the concurrent run's median. change: new vs old, ± half its %s %% interval", pct))
	line(fmt.Sprintf("(bootstrap over rounds and repetitions). %s slower, %s faster: the interval", markSlower, markFaster))
	line(fmt.Sprintf("excludes no change and Mann-Whitney p < %s; %s not significant.", numfmt.Fixed(r.Alpha, 2), markSame))
	line(fmt.Sprintf("exact: no noise on either side (the simulator): the change is exact, %s none.", markEqual))
	if m := r.Summary.Machine; m != nil && m.Pairs > 0 {
		th := m.Thresholds
		line(fmt.Sprintf("machine: the GPU's mean state in the concurrent runs moved beyond %g %% of SM", th.SMClockPct))
		line(fmt.Sprintf("or %g %% of memory clock, %g C, or a throttle reason on one side only.", th.MemClockPct, th.TempC))
	}
	b.WriteString("\n")
	writeSummary(&b, r, w)
	_, err := io.WriteString(out, b.String())
	return err
}

func writeSummary(b *strings.Builder, r Report, w int) {
	line := func(s string) { b.WriteString(strings.TrimRight(fit(s, w), " ") + "\n") }
	s := r.Summary
	gm := func(label string, f Figure, c Change, n int) {
		if n == 0 {
			line(fmt.Sprintf("%-13s n/a (no pair has it on both sides)", label))
			return
		}
		line(fmt.Sprintf("%-13s %s -> %s  %s  over %d pair(s)", label, formatValue(f, c.Old), formatValue(f, c.New), formatChange(f, c)+exactWord(c), n))
	}
	gm("geomean T_c3", TC3, s.GeomeanTC3, s.NTC3)
	gm("geomean U", Uplift, s.GeomeanU, s.NU)
	counts := fmt.Sprintf("%d pair(s): %d slower, %d faster, %d without a significant change", s.Pairs, s.Slower, s.Faster, s.Same)
	if s.Unknown > 0 {
		counts += fmt.Sprintf(", %d without T_c3", s.Unknown)
	}
	line(counts)
	writeMachine(line, s.Machine, w)
	for _, u := range []struct {
		side string
		ks   []Key
	}{{"old", r.OnlyOld}, {"new", r.OnlyNew}} {
		if len(u.ks) == 0 {
			continue
		}
		line(fmt.Sprintf("only in %s (%d, not compared):", u.side, len(u.ks)))
		for _, k := range u.ks {
			line("  " + k.Scenario + " · " + k.Strategy)
		}
	}
	for _, n := range r.Notes {
		line("note: " + n)
	}
}

func exactWord(c Change) string {
	if c.Exact {
		return " (exact)"
	}
	return ""
}

// WriteChart writes a bar per pair for T_c3's change, w columns wide,
// grouped by scenario: left of the axis faster, right slower, scaled to
// the largest change shown; a significant change is drawn "█", one
// within noise "░".
func WriteChart(out io.Writer, r Report, w int) error {
	if w <= 0 {
		w = DefaultWidth
	}
	var b strings.Builder
	line := func(s string) { b.WriteString(strings.TrimRight(fit(s, w), " ") + "\n") }
	scale := 0.0
	for _, p := range r.Pairs {
		if p.TC3.Known() {
			scale = math.Max(scale, math.Abs(p.TC3.Delta-1))
		}
	}
	const valW = 8
	labelW := 22
	half := max((w-2-labelW-1-1-1-valW)/2, 4)
	line(fmt.Sprintf("T_c3 change, new vs old: faster %s left, slower %s right; █ significant, ░ not", markFaster, markSlower))
	if scale == 0 {
		scale = 1 // nothing changed: bars of nothing
	}
	axis := strings.Repeat(" ", 2+labelW+1) + pad(formatDelta(TC3, 1-scale), half, false) + "0" + pad(formatDelta(TC3, 1+scale), half, true)
	line(axis)
	scen := ""
	for i, p := range r.Pairs {
		if p.Scenario != scen || i == 0 {
			scen = p.Scenario
			line(scen)
		}
		left, right := strings.Repeat(" ", half), strings.Repeat(" ", half)
		val := report.NA
		if p.TC3.Known() {
			d := p.TC3.Delta - 1
			cells := math.Abs(d) / scale * float64(half)
			if d < 0 {
				left = pad(barCells(cells, half, p.TC3.Significant, true), half, true)
			} else {
				right = pad(barCells(cells, half, p.TC3.Significant, false), half, false)
			}
			val = formatDelta(TC3, p.TC3.Delta)
		}
		line("  " + pad(fit(p.Name, labelW), labelW, false) + " " + left + "│" + right + " " + val)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// barCells draws cells (up to max) cells of bar with half-cell resolution:
// "█" for a significant change, "░" (whole cells) for one within noise. A
// left bar grows from the axis to the left, its half cell on the far end.
func barCells(cells float64, most int, significant, left bool) string {
	cells = math.Min(cells, float64(most))
	if !significant {
		return strings.Repeat("░", int(math.Round(cells)))
	}
	halves := int(math.Round(cells * 2))
	full := strings.Repeat("█", halves/2)
	if halves%2 == 0 {
		return full
	}
	if left {
		return "▐" + full
	}
	return full + "▌"
}

// jsonNum is a number written as null when it is not one (NaN, infinite).
type jsonNum float64

// MarshalJSON implements json.Marshaler.
func (n jsonNum) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// MarshalJSON writes a change with unknown numbers as null: old, new,
// change (new / old for T_c3 and U, new - old for F), lo and hi (its
// interval), exact and significant.
func (c Change) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Old         jsonNum `json:"old"`
		New         jsonNum `json:"new"`
		Change      jsonNum `json:"change"`
		Lo          jsonNum `json:"lo"`
		Hi          jsonNum `json:"hi"`
		Exact       bool    `json:"exact"`
		Significant bool    `json:"significant"`
	}{jsonNum(c.Old), jsonNum(c.New), jsonNum(c.Delta), jsonNum(c.CI.Lo), jsonNum(c.CI.Hi), c.Exact, c.Significant})
}

// MarshalJSON writes a pair; an unknown p-value is null.
func (p Pair) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Scenario string   `json:"scenario"`
		Strategy string   `json:"strategy"`
		Name     string   `json:"name"`
		Verdict  Verdict  `json:"verdict"`
		TC3      Change   `json:"t_c3"`
		U        Change   `json:"uplift"`
		F        Change   `json:"fraction_of_ideal"`
		P        jsonNum  `json:"p"`
		NOld     int      `json:"n_old"`
		NNew     int      `json:"n_new"`
		Notes    []string `json:"notes,omitempty"`
		Machine  *Machine `json:"machine,omitempty"`
	}{p.Scenario, p.Strategy, p.Name, p.Verdict, p.TC3, p.U, p.F, jsonNum(p.P), p.NOld, p.NNew, p.Notes, p.Machine})
}

// WriteJSON writes the report as indented JSON.
func WriteJSON(out io.Writer, r Report) error {
	type summary struct {
		Pairs      int             `json:"pairs"`
		Slower     int             `json:"slower"`
		Faster     int             `json:"faster"`
		Same       int             `json:"same"`
		Unknown    int             `json:"unknown"`
		GeomeanTC3 Change          `json:"geomean_t_c3"`
		NTC3       int             `json:"geomean_t_c3_pairs"`
		GeomeanU   Change          `json:"geomean_uplift"`
		NU         int             `json:"geomean_uplift_pairs"`
		Machine    *MachineSummary `json:"machine,omitempty"`
	}
	s := r.Summary
	pairs := r.Pairs
	if pairs == nil {
		pairs = []Pair{}
	}
	enc := json.NewEncoder(out)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Old       Source   `json:"old"`
		New       Source   `json:"new"`
		Level     float64  `json:"level"`
		Resamples int      `json:"resamples"`
		Alpha     float64  `json:"alpha"`
		Pairs     []Pair   `json:"pairs"`
		OnlyOld   []Key    `json:"only_old,omitempty"`
		OnlyNew   []Key    `json:"only_new,omitempty"`
		Summary   summary  `json:"summary"`
		Notes     []string `json:"notes,omitempty"`
	}{r.Old, r.New, r.Level, r.Resamples, r.Alpha, pairs, r.OnlyOld, r.OnlyNew,
		summary{s.Pairs, s.Slower, s.Faster, s.Same, s.Unknown, s.GeomeanTC3, s.NTC3, s.GeomeanU, s.NU, s.Machine}, r.Notes})
}

// writeMachine writes the machine summary: each side's state over the
// concurrent runs of the pairs with a record on both, how they differ,
// and how many significant changes came with a changed machine; nothing
// when no pair has a record.
func writeMachine(line func(string), m *MachineSummary, w int) {
	if m == nil {
		return
	}
	if m.Pairs > 0 {
		switch {
		case m.During:
			line("machine, concurrent runs (NVML read during the runs):")
		default:
			line("machine, concurrent runs (NVML at each run's start and end):")
		}
		if m.DuringPairs > 0 && !m.During {
			line(fmt.Sprintf("  (%d of %d pair(s) compared by NVML read during their runs, marked", m.DuringPairs, m.Pairs))
			line("  \"machine during the runs\"; a side of the others has no such readings)")
		}
		multi := len(m.Old) > 1 || len(m.New) > 1
		for _, side := range []struct {
			name string
			gs   []GPUState
		}{{"old", m.Old}, {"new", m.New}} {
			for _, g := range side.gs {
				dev := ""
				if multi {
					dev = fmt.Sprintf("GPU %d  ", g.Device)
				}
				line("  " + side.name + "  " + dev + formatState(g))
			}
		}
		if m.Flagged {
			for _, l := range wrapList("  over all pairs: ", m.Reasons, w) {
				line(l)
			}
		}
		sig := fmt.Sprintf("%d of %d significant change(s)", m.SignificantFlagged, m.Significant)
		if m.SignificantUnrecorded > 0 {
			sig += fmt.Sprintf(" (%d more without a record)", m.SignificantUnrecorded)
		}
		line(fmt.Sprintf("  changed machine: %d of %d pair(s), %s", m.FlaggedPairs, m.Pairs, sig))
	}
	if m.OneSided > 0 {
		line(fmt.Sprintf("machine: %d pair(s) have a machine record on one side only; not compared", m.OneSided))
	}
}

// formatState is one GPU's state: "SM 1952 MHz  mem 3201 MHz  310 W
// 47.3 C  throttle: sw-power-cap".
func formatState(g GPUState) string {
	num := func(v float64, prec int, unit string) string {
		if math.IsNaN(v) {
			return report.NA + " " + unit
		}
		return numfmt.Fixed(v, prec) + " " + unit
	}
	return "SM " + num(g.SMClockMHz, 0, "MHz") + "  mem " + num(g.MemClockMHz, 0, "MHz") + "  " +
		num(g.PowerW, 0, "W") + "  " + num(g.TempC, 1, "C") + "  throttle: " + telemetry.ThrottleNames(g.Throttle)
}

// MarshalJSON writes one GPU's state; a field never read is null, the
// throttle reasons are the mask and its names.
func (g GPUState) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Device      int     `json:"device"`
		Readings    int     `json:"readings"`
		SMClockMHz  jsonNum `json:"sm_clock_mhz"`
		MemClockMHz jsonNum `json:"mem_clock_mhz"`
		PowerW      jsonNum `json:"power_w"`
		TempC       jsonNum `json:"temp_c"`
		Throttle    uint64  `json:"throttle"`
		Reasons     string  `json:"throttle_reasons"`
	}{g.Device, g.Readings, jsonNum(g.SMClockMHz), jsonNum(g.MemClockMHz), jsonNum(g.PowerW), jsonNum(g.TempC), g.Throttle, telemetry.ThrottleNames(g.Throttle)})
}

// MarshalJSON writes a machine comparison: which readings (during the
// runs or around them), old, new (a state per GPU), flagged and the
// reasons.
func (m Machine) MarshalJSON() ([]byte, error) {
	return json.Marshal(machineJSON(m))
}

type machineJSONT struct {
	// Readings is "during" when the states are the readings during the
	// runs, "around" when they are those at each run's start and end.
	Readings string     `json:"readings"`
	Old      []GPUState `json:"old"`
	New      []GPUState `json:"new"`
	Flagged  bool       `json:"flagged"`
	Reasons  []string   `json:"reasons,omitempty"`
}

func machineJSON(m Machine) machineJSONT {
	src := "around"
	if m.During {
		src = "during"
	}
	return machineJSONT{src, nonNil(m.Old), nonNil(m.New), m.Flagged, m.Reasons}
}

func nonNil(gs []GPUState) []GPUState {
	if gs == nil {
		return []GPUState{}
	}
	return gs
}

// MarshalJSON writes the machine summary: the overall comparison (old,
// new, flagged, reasons), the thresholds and the counts.
func (m MachineSummary) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		machineJSONT
		Thresholds            profiler.DriftThresholds `json:"thresholds"`
		Pairs                 int                      `json:"pairs"`
		DuringPairs           int                      `json:"during_pairs"`
		Flagged               int                      `json:"flagged_pairs"`
		Significant           int                      `json:"significant"`
		SignificantFlagged    int                      `json:"significant_flagged"`
		SignificantUnrecorded int                      `json:"significant_unrecorded"`
		OneSided              int                      `json:"one_sided"`
	}{machineJSON(m.Machine), m.Thresholds, m.Pairs, m.DuringPairs, m.FlaggedPairs, m.Significant, m.SignificantFlagged, m.SignificantUnrecorded, m.OneSided})
}

// wrapList joins items with ", " after head, in lines of w columns at
// most, each further line indented under the first item; an item too long
// for a line is cut by the caller's fit.
func wrapList(head string, items []string, w int) []string {
	var out []string
	cur := head
	indent := strings.Repeat(" ", width(head))
	for i, it := range items {
		sep := ""
		if i < len(items)-1 {
			sep = ","
		}
		switch {
		case cur == head || cur == indent:
			cur += it + sep
		case width(cur)+1+width(it)+width(sep) <= w:
			cur += " " + it + sep
		default:
			out = append(out, cur)
			cur = indent + it + sep
		}
	}
	return append(out, cur)
}
