// Package htmlreport is `c3lab report`: one self-contained HTML page of
// sweeps, result files and recordings, in any mix, with no network access
// needed to view it. The page holds a scenario x strategy heatmap of U and
// F with their intervals, per-strategy and per-class bars, zoomable
// timelines of chosen runs, the why tables (what bounded each op, and the
// heuristics' advice), the devices and libraries the results came from,
// and for two inputs the comparison of profiler/compare.
//
// The charts are SVG generated from Go through html/template: the page
// needs no chart library (nothing to pin, nothing to fetch), every value
// from an input file is escaped by the template, and the output is
// deterministic, so golden files test it. A little inline script of its
// own zooms and pans the timelines; without script the page still shows
// everything, tooltips included (SVG titles).
package htmlreport

import (
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/compare"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/recordings"
)

// Input is one file of a report: its results, loaded as compare loads
// them, and what the file says of where they were measured.
type Input struct {
	compare.Input
	Details Details
}

// Details say where an input's results were measured.
type Details struct {
	// Date is when the sweep ran or the recording started (RFC 3339);
	// Host the machine; Build the c3lab that wrote the file.
	Date, Host, Build string
	// Reps and Passes are a sweep's repetitions and passes (0: unknown).
	Reps, Passes int
	// Devices are the devices the results ran on.
	Devices []backends.DeviceInfo
	// Driver is the GPU driver's version; Libraries the libraries c3lab
	// loaded, with their versions, sorted by name.
	Driver    string
	Libraries []Library
	// Profile is the simulator's device profile, when simulated.
	Profile string
}

// Library is a loaded library and its version.
type Library struct{ Name, Version string }

// Load reads the results at path with compare.Load (a sweep file, a
// recording or result JSON) and the details its header holds. Its errors
// name the file.
func Load(path string) (Input, error) {
	in, err := compare.Load(path)
	if err != nil {
		return Input{}, err
	}
	out := Input{Input: in}
	switch in.Source.Kind {
	case compare.KindSweep:
		d, err := sweepHeader(path)
		if err != nil {
			return Input{}, fmt.Errorf("%s: %w", path, err)
		}
		out.Details = d
	case compare.KindRecording:
		h, err := recordingHeader(path)
		if err != nil {
			return Input{}, fmt.Errorf("%s: %w", path, err)
		}
		out.Details = headerDetails(h)
	}
	if len(out.Details.Devices) == 0 && len(in.Entries) > 0 {
		out.Details.Devices = in.Entries[0].Result.Devices
	}
	return out, nil
}

// recordingHeader reads a recording's header only.
func recordingHeader(path string) (recordings.Header, error) {
	r, err := recordings.Open(path)
	if err != nil {
		return recordings.Header{}, err
	}
	defer r.Close()
	return r.Header(), nil
}

// sweepHeader reads what a sweep file says of where it ran, not its
// results (compare.Load has read them, and brought them up to date).
func sweepHeader(path string) (Details, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Details{}, err
	}
	if data, err = sweepfile.Inflate(data); err != nil {
		return Details{}, err
	}
	var f struct {
		C3lab   sweepfile.Build       `json:"c3lab"`
		Date    string                `json:"date"`
		Host    string                `json:"host"`
		Devices []backends.DeviceInfo `json:"devices"`
		CUDA    any                   `json:"cuda"`
		Reps    int                   `json:"reps"`
		Passes  int                   `json:"passes"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return Details{}, fmt.Errorf("damaged c3lab sweep file: %w", err)
	}
	d := Details{Date: f.Date, Host: f.Host, Reps: f.Reps, Passes: f.Passes, Devices: f.Devices}
	d.Build = buildString(f.C3lab)
	d.Driver, d.Libraries = cudaLibraries(f.CUDA)
	return d, nil
}

// cudaLibraries reads the driver and the libraries from the doctor's
// report a sweep on GPUs keeps (plain JSON values).
func cudaLibraries(cuda any) (driver string, libs []Library) {
	if m, ok := cuda.(map[string]any); ok {
		if v, ok := m["cuda_driver_api"].(string); ok {
			driver = "CUDA driver API " + v
		}
		if list, ok := m["libraries"].([]any); ok {
			for _, l := range list {
				lm, ok := l.(map[string]any)
				if !ok {
					continue
				}
				name, _ := lm["name"].(string)
				ver, _ := lm["version"].(string)
				if found, ok := lm["found"].(bool); ok && !found {
					ver = "not found"
				}
				if name != "" {
					libs = append(libs, Library{name, ver})
				}
			}
		}
	}
	sort.Slice(libs, func(i, j int) bool { return libs[i].Name < libs[j].Name })
	return driver, libs
}

func buildString(b sweepfile.Build) string {
	s := b.Version
	if b.Revision != "" {
		s += " (" + b.Revision + ")"
	}
	if b.Go != "" {
		s += " · " + b.Go
	}
	if b.Platform != "" {
		s += " · " + b.Platform
	}
	return s
}

func headerDetails(h recordings.Header) Details {
	d := Details{Host: h.Host, Build: h.Version, Devices: h.DeviceInfos(), Profile: h.Profile}
	if !h.Created.IsZero() {
		d.Date = h.Created.UTC().Format("2006-01-02T15:04:05Z")
	}
	libs := map[string]string{}
	for _, dev := range h.Devices {
		if dev.Driver != "" && d.Driver == "" {
			d.Driver = "driver " + dev.Driver
		}
		maps.Copy(libs, dev.Libraries)
	}
	for _, k := range slices.Sorted(maps.Keys(libs)) {
		d.Libraries = append(d.Libraries, Library{k, libs[k]})
	}
	return d
}
