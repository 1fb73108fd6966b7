package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/tui"
)

// replayReport is `c3lab replay --json`.
type replayReport struct {
	Header   any  `json:"header"`
	Complete bool `json:"complete"`
	// Damage lists the damaged byte ranges the replay skipped.
	Damage []damageReport `json:"damage,omitempty"`
	// Telemetry sums up the telemetry recorded beside the results (a GPU
	// node's NVML samples); absent when there is none.
	Telemetry *telemetryReport `json:"telemetry,omitempty"`
	// Notes are the markers and errors the session recorded.
	Notes   []noteReport      `json:"notes,omitempty"`
	Results []profiler.Result `json:"results"`
}

// telemetryReport sums up a recording's telemetry stream.
type telemetryReport struct {
	Samples int      `json:"samples"`
	Metrics []string `json:"metrics"`
	Devices []int    `json:"devices"`
	// FromNS and ToNS are when the first and last batches were recorded
	// (nanoseconds into the recording).
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
}

// noteReport is one marker or error, when it was recorded.
type noteReport struct {
	TimeNS int64  `json:"t_ns"`
	Kind   string `json:"kind"` // marker or error
	Text   string `json:"text"`
}

// recordedTelemetry sums up the telemetry recorded beside the results; nil
// when there is none.
func recordedTelemetry(b *replay.Backend) *telemetryReport {
	tel := b.Telemetry()
	if len(tel) == 0 {
		return nil
	}
	rep := &telemetryReport{FromNS: int64(tel[0].At), ToNS: int64(tel[len(tel)-1].At)}
	metrics, devices := map[string]bool{}, map[int]bool{}
	for _, bt := range tel {
		rep.Samples += len(bt.Samples)
		for _, s := range bt.Samples {
			metrics[s.Metric], devices[s.Device] = true, true
		}
	}
	rep.Metrics = slices.Sorted(maps.Keys(metrics))
	rep.Devices = slices.Sorted(maps.Keys(devices))
	return rep
}

// notesOf lists a recording's markers and errors.
func notesOf(b *replay.Backend) []noteReport {
	var out []noteReport
	for _, n := range b.Notes() {
		out = append(out, noteReport{TimeNS: int64(n.At), Kind: n.Kind.String(), Text: n.Text})
	}
	return out
}

// damageReport is one damaged byte range of a recording, [offset, end).
type damageReport struct {
	Offset int64 `json:"offset"`
	End    int64 `json:"end"`
	// FramesLost is how many frames the range held, when the reader could
	// tell; absent when it could not.
	FramesLost int    `json:"frames_lost,omitempty"`
	Reason     string `json:"reason"`
}

// damageLine says, in one line, that a byte range of file was skipped.
func damageLine(file string, d *recordings.DamageError) string {
	lost := "an unknown number of frames lost"
	switch {
	case d.Frames == 1:
		lost = "1 frame lost"
	case d.Frames > 1:
		lost = fmt.Sprintf("%d frames lost", d.Frames)
	}
	return fmt.Sprintf("c3lab: %s: bytes %d..%d are damaged (%s; %s) and skipped; everything else is read", file, d.Offset, d.End, d.Reason, lost)
}

func runReplay(ctx context.Context, args []string, s stdio) error {
	fs := newFlags("replay", "replay FILE [--json | --text | --lab]", s)
	asJSON := fs.Bool("json", false, "print the recorded results as JSON")
	asText := fs.Bool("text", false, "print the recorded results as a table instead of opening the lab")
	explore := fs.Bool("lab", false, "open the lab on the recording to flip between its recorded strategies (instead of playing it back)")
	// FILE may come before or after the flags.
	var file string
	for i, a := range args {
		if a != "" && a[0] != '-' {
			file, args = a, append(append([]string{}, args[:i]...), args[i+1:]...)
			break
		}
	}
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if file == "" {
		return badInput("replay needs a recording file (c3lab run --record FILE makes one)")
	}
	// The outputs are exclusive: one would silently win over another.
	var modes []string
	for _, m := range []struct {
		name string
		on   bool
	}{{"--json", *asJSON}, {"--text", *asText}, {"--lab", *explore}} {
		if m.on {
			modes = append(modes, m.name)
		}
	}
	if len(modes) > 1 {
		return badInput("%s and %s are different outputs; pick one", modes[0], modes[1])
	}
	if *explore && !s.terminal {
		return badInput("--lab needs a terminal; without one, replay prints the recorded results (--text or --json)")
	}
	b, err := replay.Open(file)
	if err != nil {
		return usageError{fmt.Errorf("reading %s: %w", file, err)}
	}
	rec := b.Recording()
	var damage []damageReport
	for _, d := range rec.Damages {
		damage = append(damage, damageReport{Offset: d.Offset, End: d.End, FramesLost: d.Frames, Reason: d.Reason})
		if !*asJSON {
			fmt.Fprintln(s.errOut, damageLine(file, d))
		}
	}
	results := b.Results()
	for i := range results {
		// Recorded before intervals: compute them from the repetitions.
		results[i].FillUncertainty()
	}
	if *asJSON {
		for i := range results {
			results[i].Timeline, results[i].Samples = nil, nil
		}
		return writeJSON(s.out, replayReport{Header: rec.Header, Complete: rec.Complete, Damage: damage,
			Telemetry: recordedTelemetry(b), Notes: notesOf(b), Results: results})
	}
	if len(results) == 0 {
		return fmt.Errorf("%s holds no measurement to replay", file)
	}
	if *asText || !s.terminal {
		h := rec.Header
		fmt.Fprintf(s.out, "recording  %s: c3lab %s on %s, backend %s, %s, started %s\n", file, h.Version, h.Host, h.Backend, deviceSummary(b.Devices()), h.Created.Format("2006-01-02 15:04:05 MST"))
		if err := writeReplayTable(s.out, results); err != nil {
			return err
		}
		if t := recordedTelemetry(b); t != nil {
			gpus := make([]string, len(t.Devices))
			for i, d := range t.Devices {
				gpus[i] = strconv.Itoa(d)
			}
			fmt.Fprintf(s.out, "telemetry  %d samples of %d metrics on GPUs %s, recorded from %s to %s (the lab's utilization panel plays them back; export --from writes them as counters)\n",
				t.Samples, len(t.Metrics), strings.Join(gpus, ", "), at(t.FromNS), at(t.ToNS))
		}
		for _, n := range notesOf(b) {
			fmt.Fprintf(s.out, "%-9s  %-6s  %s\n", at(n.TimeNS), n.Kind, n.Text)
		}
		return nil
	}
	first := results[0]
	keys, err := tui.LoadUserKeyMap()
	if err != nil {
		return usageError{err}
	}
	// The why panel advises as the lab does: the built-in model's ranking
	// (c3lab advise without flags), computed here on the CPU.
	cfg := tui.Config{Backend: b, Suite: b.Scenarios(), Start: first.Scenario.Name, Strategy: first.Strategy, Keys: &keys,
		Advisor: labAdvisor(backendFlag{}, b.Capabilities())}
	if !*explore {
		cfg.Playback = playbackOf(b)
	}
	return tui.Run(ctx, cfg)
}

// playbackOf lists a recording's results with the times they were
// recorded, what was noted before each, and the telemetry recorded beside
// them.
func playbackOf(b *replay.Backend) *tui.Playback {
	pb := &tui.Playback{}
	for _, m := range b.Measurements() {
		c := tui.PlayContext{From: m.From, BackToBack: m.BackToBack}
		for _, n := range m.Notes {
			text := n.Text
			if n.Kind == recordings.KindError {
				text = "error: " + text
			}
			c.Notes = append(c.Notes, text)
		}
		r := m.Result
		r.FillUncertainty()
		pb.Results = append(pb.Results, r)
		pb.Times = append(pb.Times, m.At)
		pb.Context = append(pb.Context, c)
	}
	for _, bt := range b.Telemetry() {
		pb.Telemetry = append(pb.Telemetry, tui.PlayBatch{At: bt.At, Samples: bt.Samples})
	}
	return pb
}

// writeReplayTable prints recorded results as a table, one line each.
func writeReplayTable(w io.Writer, results []profiler.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tSCENARIO\tSTRATEGY\tT_COMP\tT_COMM\tT_C3\tU\t% IDEAL")
	for i, r := range results {
		frac := "n/a"
		if f, ok := report.FractionValue(r); ok {
			frac = strings.Replace(f, "%", "", 1)
		}
		var u *profiler.Interval
		if r.CI != nil {
			u = &r.CI.U
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i, r.Scenario.Name, r.Strategy, report.Duration(r.TComp.Median), report.Duration(r.TComm.Median), report.Duration(r.TC3.Median), report.UpliftCI(r.Uplift, u), frac)
	}
	return tw.Flush()
}

// at formats a time into the recording ("11.417 s").
func at(ns int64) string { return fmt.Sprintf("%.3f s", float64(ns)/1e9) }
