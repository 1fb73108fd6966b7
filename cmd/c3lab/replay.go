package main

import (
	"context"
	"fmt"
	"text/tabwriter"

	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/tui"
)

// replayReport is `c3lab replay --json`.
type replayReport struct {
	Header   any               `json:"header"`
	Complete bool              `json:"complete"`
	Damage   string            `json:"damage,omitempty"`
	Results  []profiler.Result `json:"results"`
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
	damage := ""
	if rec.Damage != nil {
		damage = rec.Damage.Error()
		if !*asJSON {
			fmt.Fprintf(s.errOut, "c3lab: %s is damaged from byte %d on (%s); replaying what came before\n", file, rec.Damage.Offset, rec.Damage.Reason)
		}
	}
	results := b.Results()
	if *asJSON {
		for i := range results {
			results[i].Timeline, results[i].Samples = nil, nil
		}
		return writeJSON(s.out, replayReport{Header: rec.Header, Complete: rec.Complete, Damage: damage, Results: results})
	}
	if len(results) == 0 {
		return fmt.Errorf("%s holds no measurement to replay", file)
	}
	if *asText || !s.terminal {
		h := rec.Header
		fmt.Fprintf(s.out, "recording  %s: c3lab %s on %s, backend %s, %s, started %s\n", file, h.Version, h.Host, h.Backend, deviceSummary(h.DeviceInfos()), h.Created.Format("2006-01-02 15:04:05 MST"))
		tw := tabwriter.NewWriter(s.out, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "#\tSCENARIO\tSTRATEGY\tT_COMP\tT_COMM\tT_C3\t% IDEAL")
		for i, r := range results {
			frac := "n/a"
			if f, ok := r.Fraction(); ok {
				frac = fmt.Sprintf("%.1f", f*100)
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\n", i, r.Scenario.Name, r.Strategy, dur(r.TComp.Median), dur(r.TComm.Median), dur(r.TC3.Median), frac)
		}
		return tw.Flush()
	}
	first := results[0]
	keys, err := tui.LoadUserKeyMap()
	if err != nil {
		return usageError{err}
	}
	cfg := tui.Config{Backend: b, Suite: b.Scenarios(), Start: first.Scenario.Name, Strategy: first.Strategy, Keys: &keys}
	if !*explore {
		cfg.Playback = playbackOf(b)
	}
	return tui.Run(ctx, cfg)
}

// playbackOf lists a recording's results with the times they were recorded.
func playbackOf(b *replay.Backend) *tui.Playback {
	pb := &tui.Playback{}
	for _, e := range b.Recording().Events {
		if e.Kind == recordings.KindResult && e.Result != nil {
			pb.Results = append(pb.Results, *e.Result)
			pb.Times = append(pb.Times, e.Time)
		}
	}
	return pb
}
