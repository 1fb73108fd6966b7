// Package sweepfile is the file `c3lab sweep` writes: the results of a
// sweep with what is needed to know where they came from. It has a format
// version; readers take every version up to this package's and refuse a
// newer one, saying so.
package sweepfile

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
)

// Version is the format version Write writes and the newest Read reads.
// Files written before the format had a version are version 1. Version 2
// added the graph metrics (T_serial, T_ideal, per-op figures), the uplift
// U over the serial default, the summary's mean U and wins, and the best
// strategy per scenario (Best), by which strategies are compared.
// Version 3 added the 95 % intervals of every figure and the rounds of the
// repetitions (profiler.Result.CI, RoundOf), bimodal times, the
// precision an adaptive measurement reached, ties (a best whose interval
// overlaps another's, the summary's tied counts, its mean U's interval)
// and each best measured again in fresh rounds (ScenarioBest.Remeasured).
// Read brings a version-1 file's results up to version 2 (UpgradeV1), and
// an older file's up to version 3 but for the re-measured bests, which
// only a new sweep makes (UpgradeV2).
const Version = 3

// Tool is what a sweep file's tool field says.
const Tool = "c3lab sweep"

// Build is the c3lab build that wrote a file.
type Build struct {
	Version  string `json:"version"`
	Revision string `json:"revision,omitempty"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// File is a sweep's results file.
type File struct {
	// Format is the file's format version (Version when written; 0, which
	// reads as 1, in files written before the field existed).
	Format  int                   `json:"format,omitempty"`
	Tool    string                `json:"tool"`
	C3lab   Build                 `json:"c3lab"`
	Date    string                `json:"date"`
	Host    string                `json:"host"`
	Backend string                `json:"backend"`
	Devices []backends.DeviceInfo `json:"devices"`
	// CUDA and NVML are the doctor's reports of the node when the sweep
	// ran on GPUs (the cuda backend's report and NVML's view); read back
	// they are plain JSON values.
	CUDA any `json:"cuda,omitempty"`
	NVML any `json:"nvml,omitempty"`
	Reps int `json:"reps"`
	// Passes is the number of passes the sweep made over its grid
	// (profiler.Options.Passes); 0 in files made before passes.
	Passes  int                        `json:"passes,omitempty"`
	Grid    []profiler.NamedStrategy   `json:"strategies"`
	Summary []profiler.StrategySummary `json:"summary"`
	// Best is the strategy that ranked first on each scenario (by U,
	// profiler.BestPerScenario).
	Best    []profiler.ScenarioBest `json:"best,omitempty"`
	Results []profiler.SweepEntry   `json:"results"`
	// Incomplete says why the sweep stopped early, when it did.
	Incomplete string `json:"incomplete,omitempty"`
	// Skipped says which built-in scenarios the backend could not run and
	// were left out of a whole-suite sweep (a one-GPU node's collectives).
	Skipped string `json:"skipped,omitempty"`
}

// Write writes f as indented JSON in the current format version.
func Write(w io.Writer, f File) error {
	f.Format, f.Tool = Version, Tool
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(f)
}

// Read reads a sweep file of any version up to Version. A file of a newer
// version, or one that is not a sweep file, is an error that says so.
func Read(r io.Reader) (File, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return File{}, err
	}
	if data, err = Inflate(data); err != nil {
		return File{}, err
	}
	// The version first: a newer file may not decode as this one does.
	var head struct {
		Format *int   `json:"format"`
		Tool   string `json:"tool"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return File{}, fmt.Errorf("not a c3lab sweep file: %w", err)
	}
	if head.Tool != Tool {
		return File{}, fmt.Errorf("not a c3lab sweep file (its tool is %q, want %q)", head.Tool, Tool)
	}
	format := 1
	if head.Format != nil {
		format = *head.Format
	}
	switch {
	case format > Version:
		return File{}, fmt.Errorf("written by a newer c3lab (sweep format %d); this c3lab reads formats up to %d: update c3lab to read it", format, Version)
	case format < 1:
		return File{}, fmt.Errorf("damaged c3lab sweep file: format %d (formats start at 1)", format)
	}
	var f File
	if err := json.Unmarshal(data, &f); err != nil {
		return File{}, fmt.Errorf("damaged c3lab sweep file (format %d): %w", format, err)
	}
	f.Format = format
	if format == 1 {
		UpgradeV1(&f)
	}
	if format < 3 {
		UpgradeV2(&f)
	}
	return f, nil
}

// UpgradeV1 fills what a version-1 file lacks from what it holds: each
// result's T_serial and T_ideal (the pair's), its serial default and U,
// then the summary's mean U and wins and the best strategy per scenario.
// The serial default is a result's own T_serial when its isolated runs
// are the serial default's (as Measure has it), else that of the first
// such result of the same scenario in the sweep. A scenario swept with no
// such result keeps U unknown (0), and is ranked by T_c3.
func UpgradeV1(f *File) {
	var rs []profiler.Result
	var at []int
	for i, e := range f.Results {
		if e.Result != nil {
			e.Result.CompleteV1()
			rs, at = append(rs, *e.Result), append(at, i)
		}
	}
	profiler.FillSerialDefault(rs)
	for k, i := range at {
		*f.Results[i].Result = rs[k]
	}
	f.Summary = profiler.SummarizeSweep(f.Results, f.Grid)
	f.Best = profiler.BestPerScenario(f.Results)
}

// UpgradeV2 gives a file written before intervals each result's
// intervals and bimodal times, from its repetitions (their rounds taken
// from the protocol's split, profiler.Result.FillUncertainty), then ranks
// again with them: the summary's wins and ties and the best strategy per
// scenario, whose ties may now show.
func UpgradeV2(f *File) {
	for _, e := range f.Results {
		if e.Result != nil {
			e.Result.FillUncertainty()
		}
	}
	f.Summary = profiler.SummarizeSweep(f.Results, f.Grid)
	f.Best = profiler.BestPerScenario(f.Results)
}

// gzipMagic opens every gzip stream.
const gzipMagic = "\x1f\x8b"

// Inflate returns data as it is, or decompressed when it is gzip: sweep
// files of a whole suite hold every repetition and compress about ten
// times, so they may be kept as name.json.gz, and every reader takes
// either.
func Inflate(data []byte) ([]byte, error) {
	if !bytes.HasPrefix(data, []byte(gzipMagic)) {
		return data, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("damaged gzip sweep file: %w", err)
	}
	defer zr.Close()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("damaged gzip sweep file: %w", err)
	}
	return out, nil
}

// Load reads the sweep file at path; its errors name the file.
func Load(path string) (File, error) {
	fh, err := os.Open(path)
	if err != nil {
		return File{}, err
	}
	defer fh.Close()
	f, err := Read(fh)
	if err != nil {
		return File{}, fmt.Errorf("%s: %w", path, err)
	}
	return f, nil
}
