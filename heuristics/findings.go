package heuristics

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"sync"

	"github.com/goccy/go-yaml"

	"github.com/c3lab/c3lab/scenarios"
)

// findingsFiles holds one findings file per device c3lab measured on.
//
//go:embed findings/*.yaml
var findingsFiles embed.FS

// Findings are the measurements the advice quotes, from runs on one
// device model (findings/*.yaml): each finding is a phrase with its
// numbers and the device they were measured on, and where it comes from.
type Findings struct {
	// Device is the device the runs were made on, as the driver names it.
	Device string `yaml:"device"`
	// DMAMinBytes is the per-rank message from which copy engines are
	// advised for a collective: below it their synchronization overhead
	// outweighs what they save.
	DMAMinBytes scenarios.ByteSize `yaml:"dma_min_bytes"`
	// Quotes maps a finding's id to the finding.
	Quotes map[string]Finding `yaml:"findings"`
}

// Finding is one measured fact: the phrase a reason quotes, and where it
// was measured.
type Finding struct {
	Says   string `yaml:"says"`
	Source string `yaml:"source"`
}

// loadFindings reads every findings file, in file-name order.
func loadFindings() ([]Findings, error) {
	names, err := findingsFiles.ReadDir("findings")
	if err != nil {
		return nil, fmt.Errorf("reading the advice's findings: %w", err)
	}
	var out []Findings
	for _, n := range names {
		p := path.Join("findings", n.Name())
		data, err := findingsFiles.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		var f Findings
		if err := yaml.UnmarshalWithOptions(data, &f, yaml.Strict()); err != nil {
			return nil, fmt.Errorf("%s: %s", p, yaml.FormatError(err, false, false))
		}
		out = append(out, f)
	}
	return out, nil
}

// allFindings reads the embedded files once (they never change): a parse
// takes about 0.3 ms, and the lab's why panel advises on every render.
var allFindings = sync.OnceValues(loadFindings)

// FindingsFor returns the findings the advice quotes on device: its own
// when c3lab measured on it, else c3lab's reference measurements (the
// first file), which name the device they come from. An unreadable file
// (a build that broke them; tests read every one) gives no findings: the
// advice then quotes nothing.
func FindingsFor(device string) Findings {
	all, err := allFindings()
	if err != nil || len(all) == 0 {
		return Findings{}
	}
	if i := slices.IndexFunc(all, func(f Findings) bool { return f.Device == device }); i >= 0 {
		return all[i]
	}
	return all[0]
}

// says is the phrase of finding id, "" when there is none.
func (f Findings) says(id string) string { return f.Quotes[id].Says }

// in is finding id in parentheses after a space, "" when there is none.
func (f Findings) in(id string) string { return f.join(" (", id, ")") }

// join is finding id between before and after, "" when there is none.
func (f Findings) join(before, id, after string) string {
	if s := f.says(id); s != "" {
		return before + s + after
	}
	return ""
}
