// Package compare is `c3lab compare`: what benchstat is for Go benchmarks,
// for C3 results. It reads two sets of results (sweep files, recordings,
// result JSON), pairs them by scenario and strategy, and says per pair how
// T_c3, the uplift U and the fraction of ideal F changed, with a 95 %
// bootstrap interval over both sides' raw repetitions and a Mann-Whitney U
// test, then sums the pairs up in a geometric mean. Where both sides
// recorded the GPUs' state (Result.Drift), it also says per pair whether
// the machine changed between them (Pair.Machine), and how many
// significant changes came with a changed machine (Summary.Machine).
package compare

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/recordings"
)

// Input kinds, as Source.Kind names them.
const (
	KindSweep     = "sweep"
	KindRecording = "recording"
	KindResults   = "results"
)

// recordingMagic is how a c3lab recording starts (recordings/FORMAT.md).
var recordingMagic = []byte("C3LABREC")

// Source says where one side of a comparison came from.
type Source struct {
	Path string `json:"path"`
	// Kind is sweep, recording or results (result JSON).
	Kind string `json:"kind"`
	// Backend is the backend that measured the results ("sim", "cuda");
	// several joined by "+" when they differ.
	Backend string `json:"backend"`
	// Results is the number of results read.
	Results int `json:"results"`
}

// Entry is one result of an input, with the short name its sweep gave
// the strategy ("comm-first+prio"); Name is empty outside sweeps.
type Entry struct {
	Name   string
	Result profiler.Result
}

// Input is one side of a comparison: every result of a file.
type Input struct {
	Source  Source
	Entries []Entry
	// Notes say what was left out and why (failed sweep entries, a
	// damaged recording).
	Notes []string
}

// Load reads the results at path: a sweep file (`c3lab sweep`, any format
// version), a recording (every result in it), or result JSON (`c3lab run
// --json`, a JSON array of results, or `c3lab replay --json`). Its errors
// name the file.
func Load(path string) (Input, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Input{}, fmt.Errorf("reading results: %w", err)
	}
	if data, err = sweepfile.Inflate(data); err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	var in Input
	if bytes.HasPrefix(data, recordingMagic) {
		in, err = loadRecording(path)
	} else {
		in, err = Parse(data)
	}
	if err != nil {
		return Input{}, fmt.Errorf("%s: %w", path, err)
	}
	in.Source.Path = path
	return in, nil
}

func loadRecording(path string) (Input, error) {
	rec, err := recordings.ReadAll(path)
	if err != nil {
		return Input{}, err
	}
	in := Input{Source: Source{Kind: KindRecording}}
	for _, ev := range rec.Events {
		if ev.Kind == recordings.KindResult && ev.Result != nil {
			in.Entries = append(in.Entries, Entry{Result: *ev.Result})
		}
	}
	if n := len(rec.Damages); n > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("the recording is damaged in %d place(s); the results in its intact frames are compared", n))
	}
	if len(in.Entries) == 0 {
		return Input{}, fmt.Errorf("the recording holds no results")
	}
	in.Source.Backend = backendsOf(in.Entries)
	in.Source.Results = len(in.Entries)
	return in, nil
}

// Parse reads results from JSON: a sweep file, one result (`c3lab run
// --json`), an array of results, or an object whose "results" are results
// (`c3lab replay --json`).
func Parse(data []byte) (Input, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return Input{}, fmt.Errorf("empty file: no results")
	}
	if data[0] == '[' {
		var rs []profiler.Result
		if err := json.Unmarshal(data, &rs); err != nil {
			return Input{}, fmt.Errorf("not c3lab results: %w", err)
		}
		return fromResults(rs)
	}
	var head struct {
		Tool     *string           `json:"tool"`
		Scenario json.RawMessage   `json:"scenario"`
		TC3      json.RawMessage   `json:"t_c3"`
		Results  []json.RawMessage `json:"results"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return Input{}, fmt.Errorf("not c3lab results (neither a sweep file, a recording nor result JSON): %w", err)
	}
	switch {
	case head.Tool != nil && *head.Tool == sweepfile.Tool:
		return fromSweep(data)
	case head.Scenario != nil && head.TC3 != nil:
		var r profiler.Result
		if err := json.Unmarshal(data, &r); err != nil {
			return Input{}, fmt.Errorf("damaged result JSON: %w", err)
		}
		return fromResults([]profiler.Result{r})
	case head.Results != nil && head.Tool == nil:
		var rs struct {
			Results []profiler.Result `json:"results"`
		}
		if err := json.Unmarshal(data, &rs); err != nil {
			return Input{}, fmt.Errorf("damaged results: %w", err)
		}
		return fromResults(rs.Results)
	case head.Tool != nil:
		return Input{}, fmt.Errorf("not c3lab results: written by %q", *head.Tool)
	}
	return Input{}, fmt.Errorf("not c3lab results: neither a sweep file, a recording nor result JSON (c3lab run --json)")
}

func fromSweep(data []byte) (Input, error) {
	f, err := sweepfile.Read(bytes.NewReader(data))
	if err != nil {
		return Input{}, err
	}
	in := Input{Source: Source{Kind: KindSweep}}
	failed := 0
	for _, e := range f.Results {
		if e.Result == nil {
			failed++
			continue
		}
		in.Entries = append(in.Entries, Entry{Name: e.Strategy, Result: *e.Result})
	}
	if failed > 0 {
		in.Notes = append(in.Notes, fmt.Sprintf("%d failed sweep run(s) left out", failed))
	}
	if len(in.Entries) == 0 {
		return Input{}, fmt.Errorf("the sweep holds no results")
	}
	in.Source.Backend = f.Backend
	if in.Source.Backend == "" {
		in.Source.Backend = backendsOf(in.Entries)
	}
	in.Source.Results = len(in.Entries)
	return in, nil
}

func fromResults(rs []profiler.Result) (Input, error) {
	in := Input{Source: Source{Kind: KindResults}}
	for i, r := range rs {
		if r.Scenario.Name == "" {
			return Input{}, fmt.Errorf("result %d names no scenario: not c3lab result JSON", i+1)
		}
		in.Entries = append(in.Entries, Entry{Result: r})
	}
	if len(in.Entries) == 0 {
		return Input{}, fmt.Errorf("no results")
	}
	in.Source.Backend = backendsOf(in.Entries)
	in.Source.Results = len(in.Entries)
	return in, nil
}

// backendsOf names the entries' backends, in order of first appearance.
func backendsOf(es []Entry) string {
	var out string
	seen := map[string]bool{}
	for _, e := range es {
		b := e.Result.Backend
		if b == "" || seen[b] {
			continue
		}
		seen[b] = true
		if out != "" {
			out += "+"
		}
		out += b
	}
	return out
}
