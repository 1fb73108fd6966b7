package main

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/exp/golden"
)

// TestOutputGolden checks what the command line prints for scenarios
// written as streams, on the deterministic simulator, against golden files
// (`go test ./cmd/c3lab -run TestOutputGolden -update` rewrites them): the
// run report of a decomposed TP pair, of a scenario file, of a layer whose
// dependencies do not fit a column, and of a pair; the JSON of a run; the
// scenario list; one scenario as YAML. Every line of a text report fits
// in 80 columns.
func TestOutputGolden(t *testing.T) {
	const decomp = "llama3-70b-tp-qkv-ag-gemm-decomp4-2gpu"
	for _, tc := range []struct {
		name string
		args []string
		// narrow: every line fits in reportWidth columns.
		narrow bool
	}{
		{"run_decomposed", []string{"run", "--backend", "sim", "--scenario", decomp}, true},
		{"run_file", []string{"run", "--backend", "sim", "--scenario", "../../scenarios/testdata/v2/layer-16-ops.yaml"}, true},
		{"run_bucketed", []string{"run", "--backend", "sim", "--scenario", "llama3-8b-dp-backward-bucketed-ar-2gpu"}, true},
		{"run_pair", []string{"run", "--backend", "sim", "--scenario", "llama3-70b-tp-qkv-ag-224m-2gpu"}, true},
		{"run_decomposed_json", []string{"run", "--backend", "sim", "--scenario", decomp, "--reps", "3", "--json"}, false},
		{"scenarios", []string{"scenarios", "--backend", "sim"}, false},
		{"scenarios_show", []string{"scenarios", "show", decomp}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := call(t, tc.args...)
			if code != 0 {
				t.Fatalf("%v: exit %d: %s", tc.args, code, errOut)
			}
			if tc.narrow {
				for _, l := range strings.Split(out, "\n") {
					if n := utf8.RuneCountInString(l); n > reportWidth {
						t.Errorf("a line of %d columns, past %d: %q", n, reportWidth, l)
					}
				}
			}
			golden.RequireEqual(t, []byte(out))
		})
	}
}
