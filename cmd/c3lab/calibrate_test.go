package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
)

// The committed reduction sweep: small enough to calibrate on in a test.
const testSweep = "../../backends/cuda/results/2026-11-30-h200x2-session3/sweep-reductions-run3.json"

// calibrate writes a profile that reads back, the same bytes for the
// same seed; validate scores it with the fit set and the held-out set
// apart; --ratchet passes against its own figures and fails, exit 1 with
// one line per worse figure, for a worse profile; --sim-profile runs it.
func TestCalibrateValidateRatchet(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	for _, out := range []string{a, b} {
		code, stdout, stderr := call(t, "calibrate", "--from", testSweep, "--holdout", "0.3", "--seed", "3", "--starts", "2", "--evals", "5", "--out", out)
		if code != 0 {
			t.Fatalf("calibrate: exit %d\n%s\n%s", code, stdout, stderr)
		}
		for _, w := range []string{"fitted on", "held out", "HBMContention", "identified within", "Wrote " + out} {
			if !strings.Contains(stdout, w) {
				t.Errorf("calibrate's report does not say %q:\n%s", w, stdout)
			}
		}
	}
	da, _ := os.ReadFile(a)
	db, _ := os.ReadFile(b)
	if string(da) != string(db) {
		t.Error("two calibrations with the same data and seed wrote different files")
	}
	// --json: every figure is a JSON number, including a stage-1 map entry
	// the built-in base profile lacks (its start is left out, not NaN).
	code, stdout, stderr := call(t, "calibrate", "--from", testSweep, "--holdout", "0.3", "--seed", "3", "--starts", "2", "--evals", "5", "--json", "--out", filepath.Join(dir, "c.yaml"))
	if code != 0 {
		t.Fatalf("calibrate --json: exit %d\n%s\n%s", code, stdout, stderr)
	}
	var fit struct {
		Constants []struct {
			Field string   `json:"field"`
			Key   string   `json:"key"`
			Start *float64 `json:"start"`
		} `json:"constants"`
	}
	if err := json.Unmarshal([]byte(stdout), &fit); err != nil || len(fit.Constants) == 0 {
		t.Fatalf("calibrate --json: %v\n%s", err, stdout)
	}
	noStart := 0
	for _, c := range fit.Constants {
		if c.Start == nil {
			noStart++
		}
	}
	if noStart == 0 {
		t.Errorf("no constant without a start in the base profile; the case this checks did not come up:\n%s", stdout)
	}
	pf, err := sim.LoadProfileFile(a)
	if err != nil || pf.Fit == nil || len(pf.Fit.HeldOut) == 0 {
		t.Fatalf("the profile: %v, fit %+v", err, pf.Fit)
	}

	// validate: the table, then the figures as JSON.
	code, stdout, stderr = call(t, "validate", "--profile", a, "--against", testSweep)
	if code != 0 {
		t.Fatalf("validate: exit %d\n%s", code, stderr)
	}
	for _, w := range []string{"in-sample", "held-out", "by collective", "by class", "by strategy", "ranking", "T_c3 %", "F points"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("validate's table does not show %q:\n%s", w, stdout)
		}
	}
	code, figures, stderr := call(t, "validate", "--profile", a, "--against", testSweep, "--json")
	if code != 0 || stderr != "" {
		t.Fatalf("validate --json: exit %d, stderr %q", code, stderr)
	}
	var rep struct {
		Split  bool
		Groups []struct{ By, Set string }
	}
	if err := json.Unmarshal([]byte(figures), &rep); err != nil || !rep.Split || len(rep.Groups) == 0 {
		t.Fatalf("validate --json: %v, %+v", err, rep)
	}
	// --runs adds every run's errors to the JSON.
	code, detail, stderr := call(t, "validate", "--profile", a, "--against", testSweep, "--json", "--runs")
	if code != 0 || stderr != "" {
		t.Fatalf("validate --json --runs: exit %d, stderr %q", code, stderr)
	}
	var withRuns struct {
		Runs   int `json:"runs"`
		Detail []struct {
			Scenario, Set string
			C3            *float64 `json:"t_c3"`
		} `json:"runs_detail"`
	}
	if err := json.Unmarshal([]byte(detail), &withRuns); err != nil || len(withRuns.Detail) != withRuns.Runs || withRuns.Runs == 0 {
		t.Fatalf("validate --json --runs: %v; %d runs, %d in the detail", err, withRuns.Runs, len(withRuns.Detail))
	}
	for _, r := range withRuns.Detail {
		if r.Scenario == "" || r.Set == "" || r.C3 == nil {
			t.Errorf("a run's detail lacks its scenario, set or T_c3 error: %+v", r)
		}
	}
	if strings.Contains(figures, "runs_detail") {
		t.Error("validate --json without --runs writes the per-run detail")
	}
	fig := filepath.Join(dir, "fidelity.json")
	if err := os.WriteFile(fig, []byte(figures), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := call(t, "validate", "--profile", a, "--against", testSweep, "--ratchet", fig); code != 0 || !strings.Contains(stdout, "ratchet: no figure worse") {
		t.Errorf("the ratchet fails the profile it was written from: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// A deliberately worse profile: GEMMs 25 % slower.
	worse := filepath.Join(dir, "worse.yaml")
	pf.Profile.GEMMEfficiency["bf16"] *= 0.75
	if err := os.WriteFile(worse, sim.MarshalProfileFile(pf, "worse"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = call(t, "validate", "--profile", worse, "--against", testSweep, "--ratchet", fig)
	if code != 1 {
		t.Fatalf("a worse profile passes the ratchet: exit %d\n%s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	if len(lines) < 2 || !strings.Contains(stderr, "worse: ") || !strings.Contains(lines[len(lines)-1], "fidelity got worse than") {
		t.Errorf("the ratchet's failure:\n%s", stderr)
	}

	// The built-in profile on the calibration's split.
	code, stdout, stderr = call(t, "validate", "--profile", "h200", "--split", a, "--against", testSweep)
	if code != 0 || !strings.Contains(stdout, "held-out") || !strings.Contains(stdout, "profile h200") {
		t.Errorf("validate --split: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// The simulator runs the profile file, and says how far it was from
	// the runs it held out.
	if code, stdout, stderr := call(t, "run", "--backend", "sim", "--sim-profile", a); code != 0 || !strings.Contains(stdout, "T_c3") ||
		!strings.Contains(stdout, "the simulator (") || !strings.Contains(stdout, "in T_c3 at the median") {
		t.Errorf("run --sim-profile: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// validate --record writes the held-out figures calibrate wrote: a
	// copy without them gets them back, byte for byte.
	if pf.Fit.HeldOutError == nil {
		t.Fatal("calibrate wrote no held-out error")
	}
	i := strings.Index(string(da), "  held_out_error:")
	if i < 0 {
		t.Fatalf("no held_out_error in the file:\n%s", da)
	}
	stripped := filepath.Join(dir, "stripped.yaml")
	if err := os.WriteFile(stripped, da[:i], 0o644); err != nil {
		t.Fatal(err)
	}
	if p, err := sim.LoadProfileFile(stripped); err != nil || p.Fit.HeldOutError != nil {
		t.Fatalf("the stripped copy: %v, %+v", err, p.Fit)
	}
	if code, _, stderr := call(t, "validate", "--profile", stripped, "--record"); code != 0 {
		t.Fatalf("validate --record: exit %d\n%s", code, stderr)
	}
	if got, _ := os.ReadFile(stripped); string(got) != string(da) {
		t.Errorf("validate --record wrote\n%s\nwant calibrate's\n%s", got, da)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"validate", "--profile", "h200-fit", "--record"}, "is built in"},
		{[]string{"validate", "--profile", "h200", "--record", "--against", testSweep}, "is built in"},
		{[]string{"validate", "--profile", a, "--record", "--against", testSweep}, "drop --against and --split"},
		{[]string{"validate", "--profile", typoFree(t, dir), "--record", "--against", testSweep}, "records no fit"},
	} {
		code, _, stderr := call(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) || strings.Count(strings.TrimSpace(stderr), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line saying %q", tc.args, code, stderr, tc.want)
		}
	}
}

// typoFree is a hand-written profile file in dir: no fit record.
func typoFree(t *testing.T, dir string) string {
	t.Helper()
	p := filepath.Join(dir, "hand.yaml")
	if err := os.WriteFile(p, []byte("format: 1\nbase: h200\nprofile:\n  SMs: 132\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Bad profile files and bad flags: one line, the file's line number.
func TestCalibrateValidateRefusals(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	if err := os.WriteFile(bad, []byte("format: 1\nbase: h200\nprofile:\n  SMs: 132\n  HBMContention: 3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	typo := filepath.Join(dir, "typo.yaml")
	if err := os.WriteFile(typo, []byte("format: 1\nbase: h200\nprofile:\n  LinkBandwith: 1e9\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	exists := filepath.Join(dir, "exists.yaml")
	if err := os.WriteFile(exists, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"run, out of range", []string{"run", "--backend", "sim", "--sim-profile", bad}, 2, []string{"bad.yaml:5:", "HBMContention is 3", "allowed 0..0.5"}},
		{"run, unknown key", []string{"run", "--backend", "sim", "--sim-profile", typo}, 2, []string{"typo.yaml:4:", `unknown key "LinkBandwith"`}},
		{"run, missing file", []string{"run", "--backend", "sim", "--sim-profile", filepath.Join(dir, "nope.yaml")}, 2, []string{"nope.yaml"}},
		{"validate, bad profile", []string{"validate", "--profile", bad, "--against", testSweep}, 2, []string{"bad.yaml:5:"}},
		{"validate, no sweep", []string{"validate"}, 2, []string{"--against"}},
		{"validate, split without fit", []string{"validate", "--against", testSweep, "--split", typo}, 2, []string{"--split", "typo.yaml:4:"}},
		{"validate, bad ratchet", []string{"validate", "--against", testSweep, "--ratchet", bad}, 2, []string{"--ratchet", "not a c3lab validate report"}},
		{"calibrate, no out", []string{"calibrate", "--from", testSweep}, 2, []string{"--out"}},
		{"calibrate, no sweep", []string{"calibrate", "--out", filepath.Join(dir, "x.yaml")}, 2, []string{"--from"}},
		{"calibrate, holdout", []string{"calibrate", "--from", testSweep, "--out", filepath.Join(dir, "x.yaml"), "--holdout", "1"}, 2, []string{"--holdout is 1"}},
		{"calibrate, starts", []string{"calibrate", "--from", testSweep, "--out", filepath.Join(dir, "x.yaml"), "--starts", "0"}, 2, []string{"--starts is 0"}},
		{"calibrate, out exists", []string{"calibrate", "--from", testSweep, "--out", exists}, 2, []string{"exists", "--force"}},
		{"calibrate, not a sweep", []string{"calibrate", "--from", bad, "--out", filepath.Join(dir, "x.yaml")}, 2, []string{"not a c3lab sweep file"}},
		{"calibrate, twice", []string{"calibrate", "--from", testSweep, testSweep, "--out", filepath.Join(dir, "x.yaml")}, 2, []string{"given twice"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := call(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d; stderr %s", code, tc.code, stderr)
			}
			if n := strings.Count(strings.TrimSpace(stderr), "\n"); n > 0 {
				t.Errorf("more than one line:\n%s", stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q does not say %q", stderr, w)
				}
			}
		})
	}
}

// Without --sim-profile the simulator runs the calibrated H200 built into
// c3lab (h200-fit, with its fit record); "h200" names the hand-set profile
// it was fitted from, and "h200-fit" the calibrated one again. A run on
// each differs, so the default is not the hand-set one.
func TestDefaultSimProfileIsTheCalibratedOne(t *testing.T) {
	for _, tc := range []struct {
		arg    string
		fitted bool
	}{
		{"", true},
		{"h200-fit", true},
		{"h200", false},
	} {
		pf, err := loadSimProfile(tc.arg)
		if err != nil {
			t.Fatalf("%q: %v", tc.arg, err)
		}
		if got := pf.Fit != nil; got != tc.fitted {
			t.Errorf("--sim-profile %q: fitted profile %v; want %v", tc.arg, got, tc.fitted)
		}
	}
	run := func(args ...string) string {
		code, out, errOut := call(t, append([]string{"run", "--backend", "sim", "--scenario", "llama3-70b-tp-qkv-ag-224m-2gpu", "--json"}, args...)...)
		if code != 0 {
			t.Fatalf("run %v: exit %d: %s", args, code, errOut)
		}
		var r struct {
			TC3 struct {
				Median float64 `json:"median_ns"`
			} `json:"t_c3"`
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("run %v: %v", args, err)
		}
		return fmt.Sprint(r.TC3.Median)
	}
	def, fit, hand := run(), run("--sim-profile", "h200-fit"), run("--sim-profile", "h200")
	if def != fit || def == hand {
		t.Errorf("T_c3 by default %s ns, on h200-fit %s, on h200 %s; want the default to be h200-fit's", def, fit, hand)
	}
}
