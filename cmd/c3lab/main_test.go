package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/sweepfile"
	"github.com/c3lab/c3lab/scenarios"
)

// call runs the command line in-process and returns exit code, stdout, stderr.
// mustContain reports each of wants that got (named what in the
// message: stdout, output...) lacks.
func mustContain(t *testing.T, what, got string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(got, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, got)
		}
	}
}

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
		{"bad partition flag", []string{"run", "--backend", "sim", "--comm-sms", "12"}, 2, nil, []string{"steps of 8"}},
		{"bad launch flag", []string{"run", "--backend", "sim", "--launch", "sideways"}, 2, nil, []string{`--launch "sideways" is unknown`}},
		{"bad chunk flag", []string{"run", "--chunk", "lots"}, 2, nil, []string{"not a size"}},
		{"unknown scenario", []string{"run", "--backend", "sim", "--scenario", "llama3-70b-tp-qkv-ag-22"}, 2, nil, []string{"unknown scenario", "did you mean"}},
		{"bad file", []string{"run", "--backend", "sim", "--scenario", bad}, 2, nil, []string{"bad.yaml:13:", "comm_sms"}},
		{"missing file", []string{"run", "--scenario", filepath.Join(dir, "nope.yaml")}, 2, nil, []string{"nope.yaml"}},
		{"cuda without a GPU", []string{"run", "--backend", "cuda"}, 1, nil, []string{"cuda backend cannot start", "--backend sim"}},
		{"unknown backend", []string{"run", "--backend", "rocm"}, 2, nil, []string{`unknown backend "rocm"; allowed auto, cuda, sim`}},
		// A one-GPU node, simulated: the host copies run, the collectives say why not.
		{"one GPU: run default", []string{"run", "--backend", "sim", "--sim-gpus", "1"}, 0, []string{"llama3-70b-ffn-gate-up-act-offload-d2h-112m", "d2h 112MiB on 1 GPU", "copy alone"}, nil},
		{"one GPU: a collective", []string{"run", "--backend", "sim", "--sim-gpus", "1", "--scenario", "llama3-70b-tp-qkv-ag-224m"}, 2, nil, []string{"scenario llama3-70b-tp-qkv-ag-224m-2gpu cannot run here: gpus is 2 but NVIDIA H200 has only 1 GPU here"}},
		{"one GPU: the list", []string{"scenarios", "--backend", "sim", "--sim-gpus", "1"}, 0, []string{"h2d 128MiB", "61 of the 73 built-in scenarios cannot run here"}, nil},
		{"--sim-gpus out of range", []string{"run", "--backend", "sim", "--sim-gpus", "9"}, 2, nil, []string{"--sim-gpus is 9; allowed 1..8"}},
		{"--sim-gpus with cuda", []string{"run", "--backend", "cuda", "--sim-gpus", "1"}, 2, nil, []string{"--sim-gpus sizes the simulator; it has no effect with --backend cuda"}},
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
			mustContain(t, "stdout", out, tc.out...)
			mustContain(t, "stderr", errOut, tc.errOut...)
			if tc.code == 2 && strings.Count(strings.TrimSpace(errOut), "\n") > 3 {
				t.Errorf("a usage error should be a line or a few, got:\n%s", errOut)
			}
		})
	}
}

// Without a GPU, auto falls back to the simulator and says why.
func TestAutoFallsBackToTheSimulator(t *testing.T) {
	if cuda.Probe().Usable {
		t.Skip("this machine has usable GPUs: auto picks them")
	}
	code, _, errOut := call(t, "run")
	if code != 0 || !strings.Contains(errOut, "no NVIDIA driver or GPU found; using the simulator") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}

func TestRunJSON(t *testing.T) {
	code, out, errOut := call(t, "run", "--backend", "sim", "--json", "--comm-priority", "-5")
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
	_, out, _ = call(t, "run", "--backend", "sim", "--json", "--timeline")
	if !strings.Contains(out, `"timeline"`) || !strings.Contains(out, `"samples"`) {
		t.Error("--timeline did not add spans and samples")
	}
}

func TestScenariosList(t *testing.T) {
	code, out, errOut := call(t, "scenarios", "--backend", "sim", "--json")
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
	// The JSON says what each scenario written as streams expands to, and
	// nothing of a graph for a pair.
	graphs := 0
	for _, r := range rows {
		sc, err := scenarios.Find(r.Name)
		if err != nil {
			t.Fatal(err)
		}
		if (r.Graph != nil) != sc.IsGraph() {
			t.Errorf("%s: graph %+v, written as streams %v", r.Name, r.Graph, sc.IsGraph())
			continue
		}
		if r.Graph == nil {
			continue
		}
		graphs++
		g, err := sc.Graph(sc.Strategy)
		if err != nil {
			t.Fatal(err)
		}
		if r.Graph.Ops != len(g.Ops) || r.Graph.Instances != len(g.Instances) || r.Graph.Streams != len(g.Streams) {
			t.Errorf("%s: graph %+v; the scenario expands to %d ops, %d instances, %d streams", r.Name, r.Graph, len(g.Ops), len(g.Instances), len(g.Streams))
		}
	}
	if graphs == 0 {
		t.Error("no scenario written as streams in the list")
	}
	// Two tables: the pairs, then a blank line, a note and the scenarios
	// written as streams, each under its header.
	code, text, _ := call(t, "scenarios", "--backend", "sim")
	if code != 0 || strings.Count(text, "\n") != len(rows)+4 {
		t.Errorf("text list has %d lines for %d scenarios", strings.Count(text, "\n"), len(rows))
	}
}

// What `scenarios show` prints is a scenario file the tool reads back.
func TestShowRoundTrips(t *testing.T) {
	lim := sim.H200().Limits()
	suite := scenarios.Builtin()
	some := suite[:5]
	for _, sc := range suite {
		if sc.IsGraph() {
			some = append(some[:5:5], sc)
			break
		}
	}
	for _, sc := range some {
		_, out, _ := call(t, "scenarios", "show", sc.Name)
		got, err := scenarios.Parse([]byte(out), sc.Name+".yaml", lim)
		if err != nil {
			t.Fatalf("%s: %v\n%s", sc.Name, err, out)
		}
		if got.Name != sc.Name || got.Compute != sc.Compute || got.Comm != sc.Comm || len(got.Streams) != len(sc.Streams) {
			t.Errorf("%s: read back %+v", sc.Name, got)
		}
		// c3lab scenarios NAME shows the same.
		if _, short, _ := call(t, "scenarios", sc.Name); short != out {
			t.Errorf("scenarios %s prints\n%s\nscenarios show %s prints\n%s", sc.Name, short, sc.Name, out)
		}
	}
}

func TestSweepWritesAResultFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	names := scenarios.Names()[0] + "," + scenarios.Names()[1]
	code, stdout, errOut := call(t, "sweep", "--backend", "sim", "--scenarios", names, "--strategies", "baseline,comm-first+prio", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(stdout, "comm-first+prio") || !strings.Contains(errOut, "sweep 4/4") {
		t.Errorf("stdout %q stderr %q", stdout, errOut)
	}
	f := readSweepFile(t, out)
	if len(f.Results) != 4 || len(f.Summary) != 2 || f.Backend != "sim" || f.Date == "" {
		t.Errorf("file: %d results, %d summaries, backend %q", len(f.Results), len(f.Summary), f.Backend)
	}
	// Each scenario's best was measured again, and the summary says so;
	// on the simulator each result says why it has no interval and that
	// the precision was met at once.
	if len(f.Best) != 2 || f.Format != sweepfile.Version {
		t.Fatalf("file format %d, bests %+v", f.Format, f.Best)
	}
	for _, b := range f.Best {
		if b.Remeasured == nil || b.Remeasured.Err != "" || b.Remeasured.Uplift != b.Uplift {
			t.Errorf("%s: re-measured %+v; the simulator gives the selected U %v again", b.Scenario, b.Remeasured, b.Uplift)
		}
		if !strings.Contains(stdout, b.Scenario) {
			t.Errorf("the summary does not name %s's best", b.Scenario)
		}
	}
	for _, e := range f.Results {
		if r := e.Result; r == nil || r.CI != nil || !strings.Contains(r.NoCI, "deterministic") || r.Precision == nil || r.Precision.Stop != profiler.StopDeterministic || r.Precision.Target != "2pt F" {
			t.Errorf("%s · %s: %+v", e.Scenario, e.Strategy, e.Result)
		}
	}
	if !strings.Contains(stdout, "best per scenario: U measured again in fresh rounds") || !strings.Contains(errOut, "measuring each scenario's best strategy again") {
		t.Errorf("stdout %q stderr %q", stdout, errOut)
	}
	code, _, errOut = call(t, "sweep", "--backend", "sim", "--scenarios", names, "--out", out)
	if code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("overwriting without --force: exit %d, %q", code, errOut)
	}
	code, _, errOut = call(t, "sweep", "--backend", "sim", "--strategies", "nope", "--out", filepath.Join(t.TempDir(), "x.json"))
	if code != 2 || !strings.Contains(errOut, `unknown strategy "nope"`) {
		t.Errorf("bad strategy: exit %d, %q", code, errOut)
	}
}

// readSweepFile reads a sweep's --out file.
func readSweepFile(t *testing.T, path string) sweepfile.File {
	t.Helper()
	f, err := sweepfile.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// --collectives keeps the scenarios of the named collectives only.
func TestSweepCollectivesFilter(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, _, errOut := call(t, "sweep", "--backend", "sim", "--collectives", "all-reduce", "--strategies", "baseline", "--reps", "1", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f := readSweepFile(t, out)
	want := 0
	for _, sc := range scenarios.Builtin() {
		if sc.Comm.Collective == scenarios.AllReduce {
			want++
		}
	}
	if want == 0 || len(f.Results) != want {
		t.Fatalf("%d results, want the suite's %d all-reduces", len(f.Results), want)
	}
	for _, e := range f.Results {
		if sc, err := scenarios.Find(e.Scenario); err != nil || sc.Comm.Collective != scenarios.AllReduce {
			t.Errorf("%s is not an all-reduce", e.Scenario)
		}
	}
	for _, tc := range []struct{ arg, want string }{
		{"all-gathr", `unknown collective "all-gathr"`},
	} {
		code, _, errOut := call(t, "sweep", "--backend", "sim", "--collectives", tc.arg, "--out", filepath.Join(t.TempDir(), "x.json"))
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("--collectives %s: exit %d, %q", tc.arg, code, errOut)
		}
	}
	code, _, errOut = call(t, "sweep", "--backend", "sim", "--scenarios", scenarios.Names()[0], "--collectives", "all-to-all", "--out", filepath.Join(t.TempDir(), "y.json"))
	if code != 2 || !strings.Contains(errOut, "no scenario") {
		t.Errorf("an empty selection: exit %d, %q", code, errOut)
	}
}

// --gpus runs every scenario on that many GPUs; out of 2..8 it is refused.
func TestSweepGPUs(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sweep.json")
	code, _, errOut := call(t, "sweep", "--backend", "sim", "--gpus", "8", "--collectives", "all-to-all", "--strategies", "dma-prio", "--reps", "1", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f := readSweepFile(t, out)
	if len(f.Results) == 0 {
		t.Fatal("no results")
	}
	for _, e := range f.Results {
		if e.Result == nil || e.Result.Scenario.GPUs != 8 {
			t.Errorf("%s: %+v, want a result on 8 GPUs", e.Scenario, e.Result)
			continue
		}
		// Its description says what ran: 8 GPUs, 7 peers each (a stream
		// scenario: its streams on each of 8 GPUs).
		if d := e.Result.Scenario.Description; e.Result.Scenario.IsGraph() && !strings.Contains(d, "on each of 8 GPUs") ||
			!e.Result.Scenario.IsGraph() && (!strings.Contains(d, "over 8 GPUs") || !strings.Contains(d, "7 peers")) {
			t.Errorf("%s on 8 GPUs is described as %q", e.Scenario, d)
		}
	}
	for _, n := range []string{"1", "9"} {
		code, _, errOut := call(t, "sweep", "--backend", "sim", "--gpus", n, "--out", filepath.Join(t.TempDir(), "x.json"))
		if code != 2 || !strings.Contains(errOut, "allowed 2..8") {
			t.Errorf("--gpus %s: exit %d, %q", n, code, errOut)
		}
	}
}

func TestDoctorWithoutGPU(t *testing.T) {
	if cuda.Probe().Usable {
		t.Skip("this machine has usable GPUs")
	}
	code, out, _ := call(t, "doctor")
	if code != 0 || !strings.Contains(out, "MISSING") || !strings.Contains(out, "c3lab uses the simulator") {
		t.Errorf("exit %d:\n%s", code, out)
	}
	code, out, _ = call(t, "doctor", "--json")
	var r doctorReport
	if err := json.Unmarshal([]byte(out), &r); code != 0 || err != nil || r.Backend != "sim" || r.CUDA.Usable {
		t.Errorf("exit %d, err %v, report %+v", code, err, r)
	}
}

func TestExport(t *testing.T) {
	dir := t.TempDir()
	pp, pf, ch := filepath.Join(dir, "a.pb.gz"), filepath.Join(dir, "a.pftrace"), filepath.Join(dir, "a.json")
	code, out, errOut := call(t, "export", "--backend", "sim", "--comm-engine", "dma", "--pprof", pp, "--perfetto", pf, "--chrome", ch)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, p := range []string{pp, pf, ch} {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 || !strings.Contains(out, "wrote "+p) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if code, _, errOut := call(t, "export", "--backend", "sim", "--pprof", pp); code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("overwrite without --force: exit %d, %q", code, errOut)
	}
	if code, _, errOut := call(t, "export", "--backend", "sim"); code != 2 || !strings.Contains(errOut, "nothing to export") {
		t.Errorf("no output: exit %d, %q", code, errOut)
	}
	if code, _, errOut := call(t, "export", "--backend", "sim", "--chrome", filepath.Join(dir, "no", "such", "dir.json")); code != 2 || !strings.Contains(errOut, "dir.json") {
		t.Errorf("unwritable path: exit %d, %q", code, errOut)
	}
}

// A session recorded with --record replays to the same numbers and exports.
func TestRecordReplayExport(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "s.c3rec")
	code, runOut, errOut := call(t, "run", "--backend", "sim", "--comm-priority", "-5", "--record", rec, "--json")
	if code != 0 {
		t.Fatalf("run --record: exit %d: %s", code, errOut)
	}
	var ran map[string]any
	if err := json.Unmarshal([]byte(runOut), &ran); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := call(t, "replay", rec, "--json")
	if code != 0 {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	var rep struct {
		Complete bool             `json:"complete"`
		Results  []map[string]any `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Complete || len(rep.Results) != 1 {
		t.Fatalf("replay: complete %v, %d results", rep.Complete, len(rep.Results))
	}
	for _, k := range []string{"fraction_of_ideal", "t_c3", "realized_speedup"} {
		if a, b := fmt.Sprint(ran[k]), fmt.Sprint(rep.Results[0][k]); a != b {
			t.Errorf("%s: run %s, replay %s", k, a, b)
		}
	}
	code, text, _ := call(t, "replay", rec)
	if code != 0 || !strings.Contains(text, "prio=-5") {
		t.Errorf("replay as text: exit %d\n%s", code, text)
	}
	pf := filepath.Join(dir, "r.pftrace")
	if code, _, errOut := call(t, "export", "--from", rec, "--perfetto", pf); code != 0 {
		t.Errorf("export --from: exit %d: %s", code, errOut)
	}
	if code, _, errOut := call(t, "run", "--backend", "sim", "--record", rec); code != 2 || !strings.Contains(errOut, "exists") {
		t.Errorf("recording over an existing file: exit %d, %q", code, errOut)
	}
	garbage := filepath.Join(dir, "junk")
	os.WriteFile(garbage, []byte("not a recording at all"), 0o644)
	if code, _, errOut := call(t, "replay", garbage); code != 2 || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
		t.Errorf("replaying junk: exit %d, %q", code, errOut)
	}
}

func TestAdvise(t *testing.T) {
	code, out, errOut := call(t, "advise", "--backend", "sim", "--scenario", "llama3-70b-fsdp-ffn-up-ag-224m", "--tune", "--reps", "3")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	// The model ranks the copy-engine strategies first for a 224 MiB
	// all-gather, and the baseline last.
	mustContain(t, "output", out, "advice    dma", "predicted by the calibrated h200 profile (h200-fit): T_c3", "the default (baseline) is predicted at", "copy engines", "<- advice", "<- best", "baseline")
	code, out, _ = call(t, "advise", "--backend", "sim", "--json")
	var rep adviseReport
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Advice.Reasons) == 0 || len(rep.Advice.Predictions) == 0 || rep.Advice.Predictions[0].Uplift <= 0 {
		t.Errorf("exit %d, err %v, report %+v", code, err, rep)
	}
}

// Input that would be ignored or misread is refused with one line naming
// the flag and why, exit 2, before anything is measured: --reps outside
// its range (the same for every command), repeated scenarios or
// strategies, and flags that have no effect in the combination given.
func TestUselessOrBadFlagsAreRefused(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir) // a sweep that ran by mistake writes its default file here
	rec := filepath.Join(dir, "s.c3rec")
	if code, _, errOut := call(t, "run", "--backend", "sim", "--record", rec, "--json"); code != 0 {
		t.Fatalf("recording a session: exit %d: %s", code, errOut)
	}
	first, second := scenarios.Names()[0], scenarios.Names()[1]
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte("name: "+first+"\ngpus: 2\ncompute:\n  kind: stream\n  bytes: 1GiB\ncomm:\n  collective: all-to-all\n  bytes: 256MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func() string { return filepath.Join(t.TempDir(), "out.json") }
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"sweep negative reps", []string{"sweep", "--backend", "sim", "--reps", "-5", "--out", out()}, "--reps is -5; allowed 0 (each scenario's own) or 1..100000"},
		{"sweep too many reps", []string{"sweep", "--backend", "sim", "--reps", "100001", "--out", out()}, "--reps is 100001; allowed 0"},
		{"run negative reps", []string{"run", "--backend", "sim", "--reps", "-1"}, "--reps is -1; allowed 0 (each scenario's own) or 1..100000"},
		{"run too many reps", []string{"run", "--backend", "sim", "--reps", "100001"}, "--reps is 100001; allowed 0"},
		{"export negative reps", []string{"export", "--backend", "sim", "--reps", "-1", "--chrome", out()}, "--reps is -1; allowed 0"},
		{"advise negative reps", []string{"advise", "--backend", "sim", "--tune", "--reps", "-1"}, "--reps is -1; allowed 0"},
		{"sweep a scenario twice", []string{"sweep", "--backend", "sim", "--scenarios", first + "," + second + "," + first, "--out", out()}, "--scenarios names " + first + " twice"},
		{"sweep a file and a built-in of one name", []string{"sweep", "--backend", "sim", "--scenarios", first + "," + mine, "--out", out()}, "--scenarios names " + first + " twice"},
		{"sweep a strategy twice", []string{"sweep", "--backend", "sim", "--strategies", "baseline,dma,baseline", "--out", out()}, `--strategies names "baseline" twice`},
		{"sweep a missing scenario file", []string{"sweep", "--backend", "sim", "--scenarios", filepath.Join(dir, "nope.yaml"), "--out", out()}, "nope.yaml"},
		{"sweep --force without --out", []string{"sweep", "--backend", "sim", "--force"}, "--force has no effect without --out"},
		{"sweep --record-overwrite without --record", []string{"sweep", "--backend", "sim", "--record-overwrite", "--out", out()}, "--record-overwrite has no effect without --record"},
		{"run --record-overwrite without --record", []string{"run", "--backend", "sim", "--record-overwrite"}, "--record-overwrite has no effect without --record"},
		{"lab --record-overwrite without --record", []string{"lab", "--backend", "sim", "--record-overwrite"}, "--record-overwrite has no effect without --record"},
		{"run --timeline without --json", []string{"run", "--backend", "sim", "--timeline"}, "--timeline has no effect without --json"},
		{"advise --reps without --tune", []string{"advise", "--backend", "sim", "--reps", "3"}, "--reps has no effect without --tune"},
		{"export --from with a strategy flag", []string{"export", "--from", rec, "--comm-sms", "32", "--chrome", out()}, "--comm-sms has no effect with --from"},
		{"export --from with --scenario", []string{"export", "--from", rec, "--scenario", first, "--chrome", out()}, "--scenario has no effect with --from"},
		{"export --from with --backend", []string{"export", "--from", rec, "--backend", "sim", "--chrome", out()}, "--backend has no effect with --from"},
		{"export --from with --reps", []string{"export", "--from", rec, "--reps", "3", "--chrome", out()}, "--reps has no effect with --from"},
		{"export --index without --from", []string{"export", "--backend", "sim", "--index", "0", "--chrome", out()}, "--index has no effect without --from"},
		{"export --index below 0", []string{"export", "--from", rec, "--index", "-2", "--chrome", out()}, "--index is -2"},
		{"replay --json --text", []string{"replay", rec, "--json", "--text"}, "--json and --text"},
		{"replay --lab --text", []string{"replay", rec, "--lab", "--text"}, "--text and --lab"},
		{"replay --lab without a terminal", []string{"replay", rec, "--lab"}, "--lab needs a terminal"},
		{"run --precision without a unit", []string{"run", "--backend", "sim", "--precision", "2"}, `--precision "2": want points of F (1pt), percent of T_c3 (2%)`},
		{"run --precision of F in percent", []string{"run", "--backend", "sim", "--precision", "F:1%"}, "give it in points"},
		{"sweep --precision too loose", []string{"sweep", "--backend", "sim", "--precision", "80%", "--out", out()}, "at most 50"},
		{"sweep --time-cap 0", []string{"sweep", "--backend", "sim", "--time-cap", "0s", "--out", out()}, `"0s": want a positive duration (30s, 2m) or a multiple of the fixed rounds' time (2x)`},
		{"run --time-cap below 1x", []string{"run", "--backend", "sim", "--time-cap", "0.5x"}, "a multiple of the fixed rounds' time must be a number above 1"},
		{"run --time-cap not a multiple", []string{"run", "--backend", "sim", "--time-cap", "twox"}, "must be a number above 1"},
		{"run --time-cap not a duration", []string{"run", "--backend", "sim", "--time-cap", "soon"}, "want a positive duration"},
		{"run --settle not a duration", []string{"run", "--backend", "sim", "--settle", "soon"}, `"soon": want auto, off or a positive duration`},
		{"sweep --settle negative", []string{"sweep", "--backend", "sim", "--settle", "-1s", "--out", out()}, "want auto, off or a positive duration"},
		{"run --reps not a number", []string{"run", "--backend", "sim", "--reps", "abc"}, `invalid value "abc" for flag -reps`},
		{"run --time-cap with --precision off", []string{"run", "--backend", "sim", "--precision", "off", "--time-cap", "1m"}, "--time-cap has no effect with --precision off"},
		{"advise --precision without --tune", []string{"advise", "--backend", "sim", "--precision", "1pt"}, "--precision has no effect without --tune"},
		{"advise --time-cap without --tune", []string{"advise", "--backend", "sim", "--time-cap", "1m"}, "--time-cap has no effect without --tune"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, errOut := call(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d; stderr %q", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("stderr %q; want one line containing %q", errOut, tc.want)
			}
			if stdout != "" || strings.Contains(errOut, "sweep 0/") {
				t.Errorf("something ran: stdout %q, stderr %q", stdout, errOut)
			}
		})
	}
}

// sweep --scenarios takes scenario files as run --scenario does, next to
// built-in names.
func TestSweepScenarioFiles(t *testing.T) {
	dir := t.TempDir()
	mine := filepath.Join(dir, "mine.yaml")
	if err := os.WriteFile(mine, []byte("name: mine\ngpus: 2\ncompute:\n  kind: stream\n  bytes: 1GiB\ncomm:\n  collective: all-to-all\n  bytes: 256MiB\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.json")
	code, _, errOut := call(t, "sweep", "--backend", "sim", "--scenarios", mine+","+scenarios.Names()[0], "--strategies", "baseline", "--reps", "1", "--out", out, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f := readSweepFile(t, out)
	var got []string
	for _, e := range f.Results {
		got = append(got, e.Scenario)
	}
	if want := []string{"mine", scenarios.Names()[0]}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("swept %v, want %v", got, want)
	}
}

// Ctrl-C (a cancelled context) ends a command with one line and exit 130.
func TestInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var out, errOut bytes.Buffer
	code := realMain(ctx, []string{"sweep", "--backend", "sim", "--out", filepath.Join(t.TempDir(), "s.json")}, stdio{in: strings.NewReader(""), out: &out, errOut: &errOut})
	if code != exitInterrupted || !strings.Contains(errOut.String(), "interrupted") {
		t.Errorf("exit %d, stderr %q", code, errOut.String())
	}
}

// The sessions recorded on the H200 node (recordings/samples) replay here,
// without a GPU, complete and undamaged, with the flags before or after
// the file.
func TestH200SamplesReplay(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("..", "..", "recordings", "samples", "*.c3rec"))
	if len(files) == 0 {
		t.Fatal("no sample recordings under recordings/samples")
	}
	for _, f := range files {
		code, out, errOut := call(t, "replay", "--json", f)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", f, code, errOut)
		}
		var rep struct {
			Complete bool             `json:"complete"`
			Results  []map[string]any `json:"results"`
		}
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !rep.Complete || len(rep.Results) < 3 {
			t.Errorf("%s: complete %v, %d results", f, rep.Complete, len(rep.Results))
		}
		// h200xN-...: recorded on N H200s, as the header must say.
		var n int
		if _, err := fmt.Sscanf(filepath.Base(f), "h200x%d-", &n); err != nil {
			t.Fatalf("%s: a sample's name starts h200xN- (the GPUs it ran on): %v", f, err)
		}
		code, text, errOut := call(t, "replay", f, "--text")
		if code != 0 || !strings.Contains(text, fmt.Sprintf("backend cuda, %d x NVIDIA H200", n)) {
			t.Errorf("%s as text: exit %d, %s\n%s", f, code, errOut, text)
		}
	}
}
