package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/c3lab/c3lab/scenarios/learn"
)

// TestLearnCommand checks the commands around the lessons: the list in
// text and JSON with the progress kept, resetting one lesson and all, a
// teacher's file, and the usage errors.
func TestLearnCommand(t *testing.T) {
	state := t.TempDir()
	t.Setenv("XDG_STATE_HOME", state)
	path, err := learn.StatePath()
	if err != nil {
		t.Fatal(err)
	}
	pred, ans := 40.0, 99.3
	p := learn.NewProgress().With("02-starvation", learn.Record{State: learn.StateDone, Figure: learn.FigF, Prediction: &pred, Answer: &ans, Backend: "sim"}).With("03-priority", learn.Record{State: learn.StateSkipped})
	if err := learn.SaveProgress(path, p); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := call(t, "learn", "--list")
	if code != exitOK {
		t.Fatalf("learn --list: %d %s", code, errOut)
	}
	mustContain(t, "the list", out, "What C3 is, and the ideal", "done", "40.0 %", "99.3 % (sim)", "skipped", "Dependent overlap by decomposition")

	code, out, _ = call(t, "learn", "--list", "--json")
	var rows []lessonRow
	if err := json.Unmarshal([]byte(out), &rows); code != exitOK || err != nil {
		t.Fatalf("learn --list --json: %d %v\n%s", code, err, out)
	}
	if len(rows) < 10 || rows[1].State != "done" || *rows[1].Answer != 99.3 || rows[2].State != "skipped" || rows[0].State != "new" || rows[1].To == nil {
		t.Errorf("rows %+v", rows[:3])
	}

	if code, out, errOut := call(t, "learn", "--reset", "2"); code != exitOK {
		t.Fatalf("learn --reset 2: %d %s %s", code, out, errOut)
	}
	got, _ := learn.LoadProgress(path)
	if got.Of("02-starvation").State != learn.StateNew || got.Of("03-priority").State != learn.StateSkipped {
		t.Errorf("after --reset 2: %+v", got)
	}
	if code, _, _ := call(t, "learn", "--reset"); code != exitOK {
		t.Fatal("learn --reset failed")
	}
	if got, _ := learn.LoadProgress(path); len(got.Lessons) != 0 {
		t.Errorf("after --reset: %+v", got)
	}

	files, err := learn.BuiltinFiles()
	if err != nil {
		t.Fatal(err)
	}
	mine := filepath.Join(t.TempDir(), "mine.yaml")
	if err := os.WriteFile(mine, files["05-cta-caps"], 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = call(t, "learn", "--list", "--file", mine)
	mustContain(t, "a teacher's lesson", out, "CTA caps")
	if code != exitOK {
		t.Errorf("learn --file: %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("title: x\nfigure: G\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"learn", "--list", "--file", bad}, "bad.yaml:2:9"},
		{[]string{"learn", "--json"}, "--json goes with --list"},
		{[]string{"learn", "--reset", "99"}, "no lesson 99"},
		{[]string{"learn", "extra"}, "unexpected argument"},
		{[]string{"learn"}, "need a terminal"},
		// A broken file or lesson name says so before the terminal does.
		{[]string{"learn", "--file", bad}, "bad.yaml:2:9"},
		{[]string{"learn", "--lesson", "99"}, "no lesson 99"},
	} {
		code, _, errOut := call(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d", tc.args, code, exitUsage)
		}
		mustContain(t, "the error", errOut, tc.want)
	}
}
