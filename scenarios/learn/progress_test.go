package learn

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestStatePath follows XDG_STATE_HOME, and ~/.local/state without it.
func TestStatePath(t *testing.T) {
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if p, _ := StatePath(); p != "/x/state/c3lab/learn.json" {
		t.Errorf("with XDG_STATE_HOME: %s", p)
	}
	t.Setenv("XDG_STATE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if p, _ := StatePath(); p != "/home/u/.local/state/c3lab/learn.json" {
		t.Errorf("without it: %s", p)
	}
}

// TestProgressRoundTrip saves and loads progress, resets one lesson and
// refuses damaged files and directories.
func TestProgressRoundTrip(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "c3lab", "learn.json")
	p, err := LoadProgress(path)
	if err != nil || len(p.Lessons) != 0 {
		t.Fatalf("no file: %v %v", p, err)
	}
	pred, ans := 40.0, 63.5
	p = p.With("a", Record{State: StateDone, Figure: FigF, Prediction: &pred, Answer: &ans}).With("b", Record{State: StateSkipped})
	if err := SaveProgress(path, p); err != nil {
		t.Fatal(err)
	}
	got, err := LoadProgress(path)
	if err != nil {
		t.Fatal(err)
	}
	if r := got.Of("a"); r.State != StateDone || *r.Prediction != 40 || *r.Answer != 63.5 || got.Of("b").State != StateSkipped {
		t.Errorf("round trip: %+v", got)
	}
	if got.Without("a").Of("a").State != StateNew || got.Of("a").State != StateDone {
		t.Error("Without changed the original or kept the lesson")
	}
	ls := []Lesson{{ID: "a"}, {ID: "b"}, {ID: "c"}}
	if n := got.Next(ls); n != 2 {
		t.Errorf("next lesson %d, want 2", n)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("temporary files left: %v", entries)
	}
	if err := os.WriteFile(path, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadProgress(path); err == nil || !strings.Contains(err.Error(), "--reset") {
		t.Errorf("damaged file: %v", err)
	}
	if _, err := LoadProgress(dir); err == nil {
		t.Error("a directory loaded as progress")
	}
	if err := SaveProgress(filepath.Dir(path), p); err == nil {
		t.Error("saved over a directory")
	}
}

// TestFigures reads predictions and formats answers per figure.
func TestFigures(t *testing.T) {
	tests := []struct {
		f       Figure
		text    string
		want    float64
		bad     bool
		answer  float64
		format  string
		closeTo bool
	}{
		{FigF, "63 %", 63, false, 60, "60.0 %", true},
		{FigF, "20", 20, false, 60, "60.0 %", false},
		{FigU, "1.5x", 1.5, false, 1.49, "1.49x", true},
		{FigU, "abc", 0, true, 1, "1.00x", false},
		{FigIdeal, "", 0, true, 1.8, "1.80x", false},
		{FigCompSlowdown, "NaN", 0, true, 1.3, "1.30x", false},
	}
	for _, tc := range tests {
		v, err := tc.f.ParsePrediction(tc.text)
		if (err != nil) != tc.bad || (!tc.bad && v != tc.want) {
			t.Errorf("%s %q: %v %v", tc.f, tc.text, v, err)
		}
		if got := tc.f.Format(tc.answer); got != tc.format {
			t.Errorf("%s format %v: %s, want %s", tc.f, tc.answer, got, tc.format)
		}
		if !tc.bad && tc.f.Close(v, tc.answer) != tc.closeTo {
			t.Errorf("%s: %v close to %v: %v", tc.f, v, tc.answer, !tc.closeTo)
		}
	}
}
