package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// c3lab compare on the package's fixture sweeps (old, and new with one
// entry 5 % slower and one 10 % faster) and on simulator runs: its output,
// flags and exit codes.
func TestCompareCommand(t *testing.T) {
	old := filepath.Join("..", "..", "profiler", "compare", "testdata", "old.json")
	new := filepath.Join("..", "..", "profiler", "compare", "testdata", "new.json")
	h200 := filepath.Join("..", "..", "backends", "cuda", "results", "2026-12-01-h200x1-i16", "sweep-")
	dir := t.TempDir()
	runJSON := filepath.Join(dir, "run.json")
	code, out, errOut := call(t, "run", "--backend", "sim", "--scenario", "llama3-70b-tp-qkv-ag-224m-2gpu", "--reps", "3", "--json")
	if code != 0 {
		t.Fatalf("run --json: %d %s", code, errOut)
	}
	if err := os.WriteFile(runJSON, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "junk.json")
	if err := os.WriteFile(junk, []byte(`{"hello": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    []string
		errOut []string
	}{
		{"table", []string{"compare", old, new}, 0, []string{"▲", "▼", "+3.92% ±", "geomean T_c3", "1 slower, 1 faster"}, nil},
		{"flags after the files", []string{"compare", old, new, "--only-significant", "--chart"}, 0, []string{"comm-first+prio", "█"}, nil},
		{"regression beyond 3%", []string{"compare", "--fail-on-regression", "3%", old, new}, 1, []string{"▲"}, []string{"1 significant regression(s) of T_c3 beyond 3%", "comm-first+prio +3.92%"}},
		{"regression within 5%", []string{"compare", "--fail-on-regression", "5%", old, new}, 0, nil, nil},
		{"regression without %", []string{"compare", old, new, "--fail-on-regression", "0"}, 1, nil, []string{"beyond 0%"}},
		{"reversed: the improvement regresses", []string{"compare", new, old, "--fail-on-regression", "5%"}, 1, nil, []string{"baseline +11.17%"}},
		{"sim run vs sweep", []string{"compare", runJSON, old}, 0, []string{"old  results of 1 result(s) on sim: ", "run.json", "only in new (5, not compared)"}, nil},
		{"sim run vs itself", []string{"compare", runJSON, runJSON, "--fail-on-regression", "0%"}, 0, []string{"exact", "="}, nil},
		{"one file", []string{"compare", old}, 2, nil, []string{"needs two files"}},
		{"three files", []string{"compare", old, new, old}, 2, nil, []string{"got 3"}},
		{"missing file", []string{"compare", old, filepath.Join(dir, "nope.json")}, 2, nil, []string{"nope.json"}},
		{"not results", []string{"compare", old, junk}, 2, nil, []string{"junk.json: not c3lab results"}},
		{"bad percentage", []string{"compare", old, new, "--fail-on-regression", "lots"}, 2, nil, []string{"want a percentage"}},
		{"negative percentage", []string{"compare", old, new, "--fail-on-regression", "-5%"}, 2, nil, []string{"want a percentage"}},
		{"chart with json", []string{"compare", old, new, "--json", "--chart"}, 2, nil, []string{"--chart has no effect"}},
		{"help", []string{"compare", "--help"}, 0, []string{"fail-on-regression", "only-significant", "machine:"}, nil},
		{"H200 sweeps: the machine", []string{"compare", h200 + "fixed-1.json", h200 + "fixed-2.json"}, 0, []string{"      machine: sw-power-cap in old only", "changed machine: 6 of 20 pair(s), 1 of 5 significant change(s)"}, nil},
		{"H200 sweeps: JSON", []string{"compare", h200 + "passes-1.json", h200 + "passes-2.json", "--json"}, 0, []string{`"significant_flagged": 1`, `"reasons": [`, `"throttle_reasons": "sw-power-cap"`}, nil},
		{"H200 sweeps: a regression on a changed machine", []string{"compare", h200 + "passes-2.json", h200 + "passes-1.json", "--fail-on-regression", "0%"}, 1, nil, []string{"1 significant regression(s) of T_c3 beyond 0%, the worst llama3-70b-prefill-ffn-up-kv-reload-h2d-64m-1gpu · baseline +0.10%", "; the machine changed too: sw-power-cap in new only"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := call(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d; want %d\nstdout:\n%s\nstderr:\n%s", code, tc.code, out, errOut)
			}
			mustContain(t, "stdout", out, tc.out...)
			mustContain(t, "stderr", errOut, tc.errOut...)
			if strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("the error is more than one line:\n%s", errOut)
			}
			if a := strings.Join(tc.args, " "); code == 0 && !strings.Contains(a, "--help") && !strings.Contains(a, "--json") {
				for _, l := range strings.Split(out, "\n") {
					if utf8.RuneCountInString(l) > 80 {
						t.Errorf("line wider than 80 columns: %q", l)
					}
				}
			}
		})
	}

	code, out, errOut = call(t, "compare", old, new, "--json", "--only-significant")
	if code != 0 {
		t.Fatalf("--json: %d %s", code, errOut)
	}
	var js struct {
		Pairs   []map[string]any `json:"pairs"`
		Summary struct {
			Pairs int `json:"pairs"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &js); err != nil {
		t.Fatalf("--json: %v\n%s", err, out)
	}
	if len(js.Pairs) != 2 || js.Summary.Pairs != 6 {
		t.Errorf("--json --only-significant: %d pairs, summary of %d; want 2 and 6", len(js.Pairs), js.Summary.Pairs)
	}
}
