package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// call runs the command line in-process and returns exit code, stdout, stderr.
func call(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := realMain(context.Background(), args, stdio{in: strings.NewReader(""), out: &out, errOut: &errOut})
	return code, out.String(), errOut.String()
}

func TestCommandLine(t *testing.T) {
	first := scenarios.Builtin()[0].Name
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("name: bad\ngpus: 2\ncompute:\n  kind: gemm\n  m: 1024\n  n: 1024\n  k: 1024\n  dtype: bf16\ncomm:\n  collective: all-gather\n  bytes: 64MiB\nstrategy:\n  comm_sms: 12\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join(dir, "good.yaml")
	if err := os.WriteFile(good, []byte("name: mine\ngpus: 2\ncompute:\n  kind: stream\n  bytes: 1GiB\ncomm:\n  collective: all-to-all\n  bytes: 256MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		out    []string // fragments expected on stdout
		errOut []string // fragments expected on stderr
	}{
		{"version", []string{"version"}, 0, []string{"c3lab " + version}, nil},
		{"help", []string{"help"}, 0, []string{"usage: c3lab", "run", "scenarios"}, nil},
		{"top-level --help", []string{"--help"}, 0, []string{"usage: c3lab"}, nil},
		{"run --help", []string{"run", "--help"}, 0, []string{"-comm-sms", "-json"}, nil},
		{"unknown command", []string{"frobnicate"}, 2, nil, []string{`unknown command "frobnicate"`}},
		{"unknown flag", []string{"run", "--frob"}, 2, nil, []string{"flag provided but not defined: -frob"}},
		{"run default", []string{"run", "--backend", "sim"}, 0, []string{"fraction of ideal", "T_c3", first}, nil},
		{"run dma", []string{"run", "--backend", "sim", "--scenario", first, "--comm-engine", "dma"}, 0, []string{"strategy   dma", "copy"}, nil},
		{"run file", []string{"run", "--backend", "sim", "--scenario", good}, 0, []string{"scenario   mine", "all-to-all 256MiB"}, nil},
		{"auto says simulator", []string{"run"}, 0, nil, []string{"using the simulator"}},
		{"bad partition flag", []string{"run", "--backend", "sim", "--comm-sms", "12"}, 2, nil, []string{"steps of 8"}},
		{"bad launch flag", []string{"run", "--backend", "sim", "--launch", "sideways"}, 2, nil, []string{`--launch "sideways" is unknown`}},
		{"bad chunk flag", []string{"run", "--chunk", "lots"}, 2, nil, []string{"not a size"}},
		{"unknown scenario", []string{"run", "--backend", "sim", "--scenario", "llama3-70b-tp8-qkv-ag-224"}, 2, nil, []string{"unknown scenario", "did you mean"}},
		{"bad file", []string{"run", "--backend", "sim", "--scenario", bad}, 2, nil, []string{"bad.yaml:13:", "comm_sms"}},
		{"missing file", []string{"run", "--scenario", filepath.Join(dir, "nope.yaml")}, 2, nil, []string{"nope.yaml"}},
		{"cuda not built", []string{"run", "--backend", "cuda"}, 2, nil, []string{"not part of this build"}},
		{"unknown backend", []string{"run", "--backend", "rocm"}, 2, nil, []string{`unknown backend "rocm"`}},
		{"negative reps", []string{"run", "--reps", "-1"}, 2, nil, []string{"--reps"}},
		{"lab needs a terminal", []string{}, 2, nil, []string{"needs a terminal"}},
		{"show", []string{"scenarios", "show", first}, 0, []string{"name: " + first, "collective:"}, nil},
		{"show unknown", []string{"scenarios", "show", "nope"}, 2, nil, []string{"unknown scenario"}},
		{"show no name", []string{"scenarios", "show"}, 2, nil, []string{"needs a scenario name"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := call(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d\nstdout: %s\nstderr: %s", code, tc.code, out, errOut)
			}
			for _, f := range tc.out {
				if !strings.Contains(out, f) {
					t.Errorf("stdout lacks %q:\n%s", f, out)
				}
			}
			for _, f := range tc.errOut {
				if !strings.Contains(errOut, f) {
					t.Errorf("stderr lacks %q:\n%s", f, errOut)
				}
			}
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 3 {
				t.Errorf("a usage error should be a line or a few, got:\n%s", errOut)
			}
		})
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := call(t, "run", "--json", "--comm-priority", "-5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if errOut != "" {
		t.Errorf("--json should keep stderr quiet, got %q", errOut)
	}
	var r map[string]any
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
	for _, k := range []string{"t_comp", "t_comm", "t_c3", "ideal_speedup", "realized_speedup", "fraction_of_ideal", "compute_slowdown", "comm_slowdown", "class", "busbw", "explain"} {
		if _, ok := r[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	if _, ok := r["timeline"]; ok {
		t.Error("timeline should only come with --timeline")
	}
	_, out, _ = call(t, "run", "--json", "--timeline")
	if !strings.Contains(out, `"timeline"`) || !strings.Contains(out, `"samples"`) {
		t.Error("--timeline did not add spans and samples")
	}
}

func TestScenariosList(t *testing.T) {
	code, out, errOut := call(t, "scenarios", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rows []scenarioRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	if len(rows) < 30 {
		t.Errorf("%d scenarios listed, want at least 30", len(rows))
	}
	classes := map[string]int{}
	for _, r := range rows {
		classes[string(r.Class)]++
		if r.TComp <= 0 || r.TComm <= 0 {
			t.Errorf("%s: isolated times %v / %v", r.Name, r.TComp, r.TComm)
		}
	}
	for _, c := range []string{"gemm-long", "comm-long", "balanced"} {
		if classes[c] == 0 {
			t.Errorf("no %s scenario on the simulator (classes: %v)", c, classes)
		}
	}
	code, text, _ := call(t, "scenarios")
	if code != 0 || strings.Count(text, "\n") != len(rows)+1 {
		t.Errorf("text list has %d lines for %d scenarios", strings.Count(text, "\n"), len(rows))
	}
}

// What `scenarios show` prints is a scenario file the tool reads back.
func TestShowRoundTrips(t *testing.T) {
	lim := sim.H200().Limits()
	for _, sc := range scenarios.Builtin()[:5] {
		_, out, _ := call(t, "scenarios", "show", sc.Name)
		got, err := scenarios.Parse([]byte(out), sc.Name+".yaml", lim)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, out)
		}
		if got.Name != sc.Name || got.Compute != sc.Compute || got.Comm != sc.Comm {
			t.Errorf("%s: read back %+v", sc.Name, got)
		}
	}
}
