package sim

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// Every field of Profile has a provenance entry in the built-in table,
// with a source it allows, a range that holds the built-in value, and a
// fit stage exactly when it is fitted.
func TestH200ProvenanceCoversEveryField(t *testing.T) {
	prov := H200Provenance()
	for _, f := range ProfileFields() {
		p, ok := prov[f]
		if !ok {
			t.Errorf("Profile.%s has no entry in H200Provenance (datasheet, measured, fitted or model)", f)
			continue
		}
		if (p.Source == SourceFitted) != (p.Stage != 0) {
			t.Errorf("%s: source %s with stage %d; a fitted constant has a stage, no other has", f, p.Source, p.Stage)
		}
	}
	for name := range prov {
		found := false
		for _, f := range ProfileFields() {
			found = found || f == name
		}
		if !found {
			t.Errorf("H200Provenance lists %s, which is no Profile field", name)
		}
	}
	// The built-in values lie in their ranges.
	if err := checkProfile(H200(), prov, nil); err != nil {
		t.Errorf("the built-in H200 profile is out of its own ranges: %v", err)
	}
}

// A profile written and read back is the same profile, provenance and fit
// record included, and writing it again gives the same bytes.
func TestProfileFileRoundTrip(t *testing.T) {
	prov := H200Provenance()
	gs := prov["HBMContention"]
	gs.Fit = &Identification{Low: 0.1, High: 0.3, LossRise: 0.02, AtBound: "high", Poor: true, Points: 12}
	prov["HBMContention"] = gs
	in := ProfileFile{Base: "h200", Profile: H200(), Provenance: prov,
		Fit: &FitRecord{Tool: "c3lab calibrate", Sweeps: []string{"a.json"}, Seed: 7, Holdout: 0.3, Starts: 2, Iterations: 10,
			Loss: 0.031, StartLoss: 0.05, Runs: 9, FitSet: []string{"x", "y"}, HeldOut: []string{"z"}}}
	in.Profile.HBMContention = 0.123456789012345
	data := MarshalProfileFile(in, "a test profile\nsecond line")
	out, err := ReadProfileFile(data)
	if err != nil {
		t.Fatalf("reading back: %v\n%s", err, data)
	}
	in.Format = ProfileFormat
	if !reflect.DeepEqual(in, out) {
		t.Errorf("read back differs:\nwrote %+v\nread  %+v\n%s", in, out, data)
	}
	if again := MarshalProfileFile(out, "a test profile\nsecond line"); !bytes.Equal(again, data) {
		t.Errorf("written twice, different bytes:\n%s\n---\n%s", data, again)
	}
	if !strings.HasPrefix(string(data), "# a test profile\n# second line\nformat: 1\n") {
		t.Errorf("header: %q", string(data)[:60])
	}
}

// With a base, a file sets only what differs; without one it must set
// every field.
func TestProfileFileBase(t *testing.T) {
	pf, err := ReadProfileFile([]byte("format: 1\nbase: h200\nprofile:\n  HBMContention: 0.3\n  GEMMEfficiency: {bf16: 0.8}\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := H200()
	want.HBMContention = 0.3
	want.GEMMEfficiency["bf16"] = 0.8
	if !reflect.DeepEqual(pf.Profile, want) {
		t.Errorf("base + overrides = %+v, want %+v", pf.Profile, want)
	}
	_, err = ReadProfileFile([]byte("format: 1\nprofile:\n  Name: \"x\"\n"))
	if err == nil || !strings.Contains(err.Error(), "profile sets no Device") || !strings.Contains(err.Error(), ":2:") {
		t.Errorf("a file without base and without Device: %v", err)
	}
}

// What ReadProfileFile refuses: one line naming the line and the problem.
func TestProfileFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, data string
		want       []string
	}{
		{"unknown key", "format: 1\nbase: h200\nprofile:\n  SMs: 132\n  HBMContension: 0.2\n", []string{"profile:5:", `unknown key "HBMContension" in profile`}},
		{"unknown key, case", "format: 1\nbase: h200\nprofile:\n  hbmcontention: 0.2\n", []string{"profile:4:", "did you mean HBMContention?"}},
		{"unknown top key", "format: 1\nprofiles: {}\n", []string{"profile:2:", `unknown key "profiles"`}},
		{"out of range", "format: 1\nbase: h200\nprofile:\n  HBMContention: 0.9\n", []string{"profile:4:", "HBMContention is 0.9", "allowed 0..0.5"}},
		{"out of range in a map", "format: 1\nbase: h200\nprofile:\n  GEMMEfficiency:\n    bf16: 0.7\n    fp8: 1.5\n", []string{"profile:6:", "GEMMEfficiency.fp8 is 1.5"}},
		{"negative without range", "format: 1\nbase: h200\nprofile:\n  SMs: -3\n", []string{"profile:4:", "SMs is -3"}},
		{"nan", "format: 1\nbase: h200\nprofile:\n  LaunchGap: .nan\n", []string{"profile:4:", "LaunchGap is NaN"}},
		{"wrong type", "format: 1\nbase: h200\nprofile:\n  SMs: lots\n", []string{"profile:4:", "SMs: want an integer", `"lots"`}},
		{"fraction for an int", "format: 1\nbase: h200\nprofile:\n  SMs: 13.5\n", []string{"profile:4:", "want an integer"}},
		{"a list for a number", "format: 1\nbase: h200\nprofile:\n  SMs: [1, 2]\n", []string{"profile:4:", "want a single value, found a list"}},
		{"bad base", "format: 1\nbase: mi300\nprofile: {}\n", []string{"profile:2:", `base "mi300" is no built-in`}},
		{"newer format", "format: 9\nbase: h200\nprofile: {}\n", []string{"profile:1:", "newer", "update c3lab"}},
		{"no format", "base: h200\nprofile: {}\n", []string{"format is 0"}},
		{"no profile", "format: 1\nbase: h200\n", []string{"no profile: section"}},
		{"bad source", "format: 1\nbase: h200\nprofile: {}\nprovenance:\n  SMs: {source: guessed}\n", []string{"profile:5:", `source is "guessed"`}},
		{"provenance of no field", "format: 1\nbase: h200\nprofile: {}\nprovenance:\n  Foo: {source: model}\n", []string{"profile:5:", `"Foo"`}},
		{"twice", "format: 1\nbase: h200\nprofile:\n  SMs: 1\n  SMs: 2\n", []string{"profile:5:"}},
		{"fit set and held out overlap", "format: 1\nbase: h200\nprofile: {}\nfit:\n  fit_set: [a, b]\n  held_out: [b]\n", []string{"profile:6:", "scenario b is both"}},
		{"held-out error negative", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    runs: 4\n    all: {runs: 4, t_c3_median: -0.1, t_c3_p90: 0.2}\n", []string{"profile:5:", "held_out_error: all: an error of -0.1"}},
		{"held-out p90 below median", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    runs: 4\n    all: {runs: 4, t_c3_median: 0.1, t_c3_p90: 0.05}\n", []string{"profile:5:", "p90 below its median"}},
		{"held-out f runs past runs", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    runs: 4\n    all: {runs: 4, f_runs: 5}\n", []string{"profile:5:", "want 0 <= f_runs <= runs"}},
		{"held-out bands overlap", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    runs: 4\n    by_ideal_speedup:\n      - {from: 1, to: 1.5, figures: {runs: 2}}\n      - {from: 1.2, to: 2, figures: {runs: 2}}\n", []string{"profile:5:", "by_ideal_speedup.1: bands overlap"}},
		{"held-out band below 1", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    runs: 4\n    by_ideal_speedup:\n      - {from: 0.5, to: 1.5, figures: {runs: 2}}\n", []string{"profile:5:", "want 1 <= from < to"}},
		{"held-out gpus", "format: 1\nbase: h200\nprofile: {}\nfit:\n  held_out_error:\n    gpus: [0]\n", []string{"profile:5:", "gpus: 0"}},
		{"not yaml", "format: 1\nprofile: [\n", []string{"not valid YAML"}},
		{"anchor", "format: 1\nbase: h200\nprofile:\n  SMs: &a 3\n", []string{"profile:4:", "anchor"}},
		{"empty", "", []string{"one YAML document"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadProfileFile([]byte(tc.data))
			if err == nil {
				t.Fatal("read without an error")
			}
			var pe *ProfileError
			if !errors.As(err, &pe) {
				t.Errorf("error %T, want *ProfileError", err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// LoadProfileFile names the file in its errors.
func TestLoadProfileFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.yaml")
	if err := os.WriteFile(path, []byte("format: 1\nbase: h200\nprofile:\n  Nope: 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadProfileFile(path)
	if err == nil || !strings.HasPrefix(err.Error(), path+":4: ") {
		t.Errorf("error %v, want it to start with %s:4:", err, path)
	}
}

// FuzzReadProfileFile: no input panics, and a file that reads writes back
// to one that reads as the same profile.
func FuzzReadProfileFile(f *testing.F) {
	f.Add(MarshalProfileFile(ProfileFile{Profile: H200(), Provenance: H200Provenance()}, "seed"))
	f.Add([]byte("format: 1\nbase: h200\nprofile:\n  HBMContention: 0.3\n  GEMMEfficiency: {bf16: 0.8}\n"))
	f.Add([]byte("format: 1\nbase: h200\nprofile: {SMs: 1}\nfit: {fit_set: [a], held_out: [b], seed: 3}\n"))
	f.Add([]byte("format: 1\nprofile:\n  - 1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		pf, err := ReadProfileFile(data)
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error of more than one line: %q", err)
			}
			return
		}
		again, err := ReadProfileFile(MarshalProfileFile(pf, "x"))
		if err != nil {
			t.Fatalf("a profile that read does not read back once written: %v\n%s", err, MarshalProfileFile(pf, "x"))
		}
		if !reflect.DeepEqual(pf, again) {
			t.Errorf("read back differs:\n%+v\n%+v", pf, again)
		}
	})
}

// A file's own launch table keeps its entries and gains the base's
// measured launches of the shapes and SM targets it lacks, never the
// base's rule-made ones.
func TestWithMeasuredLaunches(t *testing.T) {
	l := func(m, sms int, src string, tile int) GEMMLaunch {
		return GEMMLaunch{M: m, N: 64, K: 64, DType: scenarios.BF16, SMTarget: sms, GridCTAs: 1, ThreadsPerCTA: 384, CTAsPerSM: 1,
			Persistent: true, TileM: tile, TileN: 64, SplitK: 1, Source: src}
	}
	own := []GEMMLaunch{l(64, 132, LaunchMeasured, 64)}
	base := []GEMMLaunch{
		l(64, 132, LaunchMeasured, 32),  // the file lists it: the file's wins
		l(64, 68, LaunchMeasured, 32),   // another SM target: added
		l(128, 132, LaunchMeasured, 64), // another shape: added
		l(256, 132, LaunchModel, 128),   // the rule's: not added
	}
	got := withMeasuredLaunches(own, base)
	want := []GEMMLaunch{own[0], base[1], base[2]}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
	if len(own) != 1 {
		t.Error("the file's table was changed in place")
	}
}

// The committed fitted profile, which lists the launch table of its fit,
// runs the embedded table's newer measured launches too.
func TestFittedProfileGetsNewerLaunches(t *testing.T) {
	pf, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 8192, N: 28672, K: 1024, DType: scenarios.BF16}
	if got := pf.Profile.gemmLaunch(c, pf.Profile.SMs); got.Source != LaunchMeasured || got.TileM != 192 {
		t.Errorf("the reduction sweep's former GEMM runs %+v; want ncu's 192 x 192 launch", got)
	}
}

// The calibrated profile built into c3lab is the committed file, byte for
// byte, and parses into the profile LoadProfileFile reads from it.
func TestFittedH200IsTheCommittedFile(t *testing.T) {
	data, err := os.ReadFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, fittedH200YAML) {
		t.Fatal("the embedded h200-fit profile differs from profiles/h200-fit.yaml")
	}
	got, err := FittedH200()
	if err != nil {
		t.Fatal(err)
	}
	want, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Each is labelled as it was loaded: by its built-in name, by its path.
	if got.Label() != FittedH200Name || want.Label() != "profiles/h200-fit.yaml" {
		t.Errorf("labels %q and %q", got.Label(), want.Label())
	}
	got.label, want.label = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Error("FittedH200 and LoadProfileFile read different profiles from the same file")
	}
	if got.Fit == nil || got.Profile.Name != "h200" {
		t.Errorf("the built-in fitted profile: name %q, fit record %v; want h200 with its fit record", got.Profile.Name, got.Fit != nil)
	}
}
