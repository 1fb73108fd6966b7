package heuristics

import (
	"embed"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"

	"github.com/c3lab/c3lab/profiler"
)

// committedFiles holds one index of committed measurements per device
// (measured/*.json), made from the sweeps it names by
// C3LAB_UPDATE_MEASURED=1 go test ./heuristics -run TestCommittedMeasurements.
//
//go:embed measured/*.json
var committedFiles embed.FS

// CommittedFile is an index of committed sweeps' measurements: per
// scenario and strategy, the measured T_c3 and U with their intervals.
type CommittedFile struct {
	Device string         `json:"device"`
	Sweeps []string       `json:"sweeps"`
	Runs   []CommittedRun `json:"runs"`
}

// CommittedRun is one measured (scenario, strategy) of a committed sweep.
type CommittedRun struct {
	Scenario string             `json:"scenario"`
	Strategy string             `json:"strategy"`
	Source   string             `json:"source"`
	TC3      float64            `json:"t_c3_ns"`
	TC3CI    *profiler.Interval `json:"t_c3_ci,omitempty"`
	Uplift   float64            `json:"uplift,omitempty"`
	UpliftCI *profiler.Interval `json:"uplift_ci,omitempty"`
}

// IndexOf is the index of m's measurements, made on device from sweeps.
func IndexOf(device string, sweeps []string, m Measurements) CommittedFile {
	f := CommittedFile{Device: device, Sweeps: sweeps}
	for _, src := range sweeps {
		for _, name := range sortedKeys(m) {
			for _, x := range m[name] {
				if x.Source != src {
					continue
				}
				u, t := profiler.RemeasuredOf(x.Result).UpliftCI, profiler.RemeasuredOf(x.Result).TC3CI
				f.Runs = append(f.Runs, CommittedRun{Scenario: name, Strategy: x.Strategy, Source: src,
					TC3: x.Result.TC3.Median, TC3CI: t, Uplift: x.Result.Uplift, UpliftCI: u})
			}
		}
	}
	return f
}

// Measurements are the index's runs as measurements: each result holds
// T_c3, U and their intervals only.
func (f CommittedFile) Measurements() Measurements {
	m := Measurements{}
	nan := profiler.Interval{Lo: math.NaN(), Hi: math.NaN()}
	for _, r := range f.Runs {
		res := profiler.Result{TC3: profiler.Stat{N: 1, Median: r.TC3}, Uplift: r.Uplift}
		if r.TC3CI != nil || r.UpliftCI != nil {
			res.CI = &profiler.Intervals{TC3: nan, U: nan}
			if r.TC3CI != nil {
				res.CI.TC3 = *r.TC3CI
			}
			if r.UpliftCI != nil {
				res.CI.U = *r.UpliftCI
			}
		}
		m[r.Scenario] = append(m[r.Scenario], Measurement{Scenario: r.Scenario, Strategy: r.Strategy, Source: r.Source, Result: res})
	}
	return m
}

// CommittedMeasurements returns the committed measurements made on
// device, nil when c3lab has none for it.
func CommittedMeasurements(device string) (Measurements, error) {
	names, err := committedFiles.ReadDir("measured")
	if err != nil {
		return nil, fmt.Errorf("reading the committed measurements: %w", err)
	}
	for _, n := range names {
		p := path.Join("measured", n.Name())
		data, err := committedFiles.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var f CommittedFile
		if err := json.Unmarshal(data, &f); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
		if f.Device == device {
			return f.Measurements(), nil
		}
	}
	return nil, nil
}

func sortedKeys(m Measurements) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
