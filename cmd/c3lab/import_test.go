package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

const importFixtures = "../../profiler/kineto/testdata/"

func TestImportReport(t *testing.T) {
	r0, r1 := importFixtures+"synthetic-tp2-rank0.json", importFixtures+"synthetic-tp2-rank1.json"
	code, out, errOut := call(t, "import", r0, r1, "--step", "3")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "stdout", out, "rank 0 of 2", "rank 1 of 2", "ProfilerStep#3", "overlap", "48.6%", "HTA's", "exposed comm", "T_serial", "T_ideal", "T_c3", "of ideal", "gemm 8192x4096x8192 bf16", "memset ×1")

	code, out, errOut = call(t, "import", "--json", r0, "--window", "0ms..0.5ms")
	if code != exitOK {
		t.Fatalf("--json: exit %d: %s", code, errOut)
	}
	var rep struct {
		Format string `json:"format"`
		Ranks  []struct {
			Selection  string `json:"selection"`
			ComputeOps int    `json:"compute_ops"`
			CommOps    int    `json:"comm_ops"`
		} `json:"ranks"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output does not read: %v\n%s", err, out)
	}
	if rep.Format != "c3lab-import/1" || len(rep.Ranks) != 1 || rep.Ranks[0].ComputeOps != 2 || rep.Ranks[0].CommOps != 1 || !strings.HasPrefix(rep.Ranks[0].Selection, "window") {
		t.Errorf("JSON %+v", rep)
	}
}

func TestImportScenario(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "step.yaml")
	code, _, errOut := call(t, "import", importFixtures+"synthetic-tp2-rank1.json", "--step", "4", "--scenario", out, "--name", "my-step")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "stderr", errOut, "wrote "+out, "my-step", "left out 1 activities")
	sc, err := scenarios.Load(out, scenarios.Limits{})
	if err != nil {
		t.Fatalf("the written scenario does not load: %v", err)
	}
	if sc.Name != "my-step" || sc.GPUs != 2 || len(sc.Streams) != 3 {
		t.Errorf("scenario %+v", sc)
	}
	// It runs, and refuses to be overwritten without --force.
	if code, _, errOut := call(t, "run", "--scenario", out, "--backend", "sim", "--reps", "2"); code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	code, _, errOut = call(t, "import", importFixtures+"synthetic-tp2-rank1.json", "--scenario", out)
	if code != exitUsage || !strings.Contains(errOut, "--force") {
		t.Errorf("overwrite: exit %d: %s", code, errOut)
	}
	if code, _, errOut := call(t, "import", importFixtures+"synthetic-tp2-rank1.json", "--step", "3", "--scenario", out, "--force", "--json"); code != exitOK || errOut != "" {
		t.Errorf("--force --json: exit %d, stderr %q", code, errOut)
	}
	if code, _, errOut := call(t, "import", importFixtures+"synthetic-tp2-rank1.json", "--scenario", dir); code != exitUsage {
		t.Errorf("a folder: exit %d: %s", code, errOut)
	}
}

func TestImportRefusals(t *testing.T) {
	dir := t.TempDir()
	trunc := filepath.Join(dir, "cut.json")
	data, err := os.ReadFile(importFixtures + "synthetic-tp2-rank0.json")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(trunc, data[:len(data)/2], 0o644)
	f := importFixtures + "synthetic-tp2-rank0.json"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "at least one trace"},
		{[]string{trunc}, "ends early"},
		{[]string{filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{f, "--step", "3", "--window", "1ms..2ms"}, "give one"},
		{[]string{f, "--step", "12"}, "its steps are 3, 4"},
		{[]string{f, "--window", "5ms..2ms"}, "ends before it starts"},
		{[]string{f, "--name", "x"}, "--name"},
		{[]string{f, "--scenario", filepath.Join(dir, "s.yaml"), "--rank", "5"}, "no trace given is of rank 5"},
	} {
		code, _, errOut := call(t, append([]string{"import"}, tc.args...)...)
		if code == exitOK || !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
			t.Errorf("import %v: exit %d, stderr %q; want one line saying %q", tc.args, code, errOut, tc.want)
		}
	}
}

// TestImportRecordReplayCompare: the step recorded on the trace replays
// like any recording and pairs, in compare, with c3lab's run of the
// scenario written from it.
func TestImportRecordReplayCompare(t *testing.T) {
	dir := t.TempDir()
	rec, yaml, run := filepath.Join(dir, "step.c3rec"), filepath.Join(dir, "step.yaml"), filepath.Join(dir, "run.json")
	code, _, errOut := call(t, "import", importFixtures+"synthetic-tp2-rank0.json", "--step", "3", "--record", rec, "--scenario", yaml)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "stderr", errOut, "recorded "+rec, "replay "+rec+" --lab")
	code, out, errOut := call(t, "replay", rec, "--text")
	if code != exitOK {
		t.Fatalf("replay: exit %d: %s", code, errOut)
	}
	mustContain(t, "replay", out, "kineto-trace", "import-synthetic-tp2-rank0-step3", "1.69 ms", "33.4", "imported from")
	code, out, errOut = call(t, "run", "--scenario", yaml, "--backend", "sim", "--reps", "2", "--json")
	if code != exitOK {
		t.Fatalf("run: exit %d: %s", code, errOut)
	}
	if err := os.WriteFile(run, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = call(t, "compare", rec, run)
	if code != exitOK {
		t.Fatalf("compare: exit %d: %s", code, errOut)
	}
	mustContain(t, "compare", out, "import-synthetic-tp2-rank0-step3", "baseline", "1 pair(s)")
	if code, _, errOut := call(t, "import", importFixtures+"synthetic-tp2-rank0.json", "--record", rec); code != exitUsage || !strings.Contains(errOut, "--record-overwrite") {
		t.Errorf("re-record: exit %d: %s", code, errOut)
	}
}
