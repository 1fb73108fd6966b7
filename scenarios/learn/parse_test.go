package learn

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// lessonText is a valid lesson file the problem tests break.
const lessonText = `title: A lesson
scenario: llama3-70b-tp-qkv-ag-224m-2gpu
intro: |
  Some teaching.
question: What % of ideal?
figure: F
from: baseline
knob: launch the collective first
to:
  launch: comm-first
explain: Because.
h200:
  strategies: [baseline, comm-first+prio]
`

// TestParseProblems checks each broken lesson is refused with the
// problem at its line.
func TestParseProblems(t *testing.T) {
	tests := []struct {
		name, old, new string
		line           int
		msg            string
	}{
		{"unknown field", "figure: F\n", "figure: F\nfigur: F\n", 7, `unknown field "figur"`},
		{"bad figure", "figure: F", "figure: G", 6, `unknown figure "G"`},
		{"bad scenario", "scenario: llama3-70b-tp-qkv-ag-224m-2gpu", "scenario: nope", 2, `no built-in scenario "nope"`},
		{"bad strategy name", "from: baseline", "from: fastest", 7, "fastest"},
		{"bad knob", "  launch: comm-first", "  lunch: comm-first", 10, `unknown knob "lunch"`},
		{"bad knob value", "  launch: comm-first", "  launch: sideways", 10, "sideways"},
		{"missing title", "title: A lesson\n", "", 1, `missing field "title"`},
		{"h200 run not committed", "[baseline, comm-first+prio]", "[baseline, dma-gemm-112]", 13, "no run of llama3-70b-tp-qkv-ag-224m-2gpu under dma-gemm-112"},
		{"twice", "figure: F\n", "figure: F\nfigure: U\n", 7, "already defined"},
		{"inline scenario problem", "scenario: llama3-70b-tp-qkv-ag-224m-2gpu\n",
			"scenario_yaml: |\n  name: mine\n  gpus: 2\n  compute: {kind: gemm, m: 64, n: 64, k: 64, dtype: bf17}\n  comm: {collective: all-gather, bytes: 1MiB}\n", 5, "bf17"},
		{"syntax", "title: A lesson", "title: [A lesson", 2, "invalid YAML"},
		{"empty", lessonText, "", 1, "empty"},
	}
	lim, refs := simLimits(), committed(t)
	if _, err := Parse([]byte(lessonText), "x", "x.yaml", lim, refs); err != nil {
		t.Fatalf("the unbroken lesson: %v", err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := strings.Replace(lessonText, tc.old, tc.new, 1)
			_, err := Parse([]byte(data), "x", "x.yaml", lim, refs)
			var fe *scenarios.FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, want a *scenarios.FileError", err)
			}
			found := false
			for _, p := range fe.Problems {
				if p.Line == tc.line && strings.Contains(p.Msg, tc.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("want a problem at line %d containing %q; got:\n%v", tc.line, tc.msg, err)
			}
		})
	}
}

// TestLoadTeacherFile loads a lesson from disk: its ID is the file's name.
func TestLoadTeacherFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "my-lesson.yaml")
	if err := os.WriteFile(p, []byte(lessonText), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := Load(p, simLimits(), committed(t))
	if err != nil {
		t.Fatal(err)
	}
	if l.ID != "my-lesson" || l.To.Knobs.Launch != scenarios.CommFirst || l.From == nil || l.From.Name != "baseline" {
		t.Errorf("loaded %+v", l)
	}
	if _, err := Load(filepath.Dir(p), simLimits(), committed(t)); err == nil {
		t.Error("a directory loaded as a lesson")
	}
}

// FuzzParse feeds Parse the built-in lessons and their breakages: it must
// never panic, a refusal must be a *scenarios.FileError of one-line
// problems at positive lines, and an accepted lesson must be complete.
func FuzzParse(f *testing.F) {
	files, err := BuiltinFiles()
	if err != nil {
		f.Fatal(err)
	}
	breaks := []struct{ old, new string }{
		{"figure: ", "figure: x"}, {"\n  ", "\n\t"}, {": ", ":"}, {"\n", "\n---\n"},
		{"h200:", "h200: 5"}, {"strategies: [", "strategies: [["}, {"to: ", "to: {launch: "},
		{"|", ">"}, {"scenario: ", "scenario_yaml: "},
	}
	f.Add([]byte(lessonText))
	for _, data := range files {
		f.Add(data)
		f.Add(data[:len(data)/2])
		for _, b := range breaks {
			f.Add(bytes.Replace(data, []byte(b.old), []byte(b.new), 1))
		}
	}
	for _, s := range []string{"", "~", "- a", "{", "[[[[[[[[[[[[[[[[[[[[", "a: &a [*a]", "\x00", "title: |\n  \x01"} {
		f.Add([]byte(s))
	}
	lim := simLimits()
	refs, err := CommittedH200()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := Parse(data, "f", "f.yaml", lim, refs)
		if err != nil {
			var fe *scenarios.FileError
			if !errors.As(err, &fe) || len(fe.Problems) == 0 {
				t.Fatalf("refusal is not a *FileError with problems: %v", err)
			}
			for _, p := range fe.Problems {
				if p.Line < 1 || p.Col < 1 || strings.Contains(p.Msg, "\n") {
					t.Fatalf("bad problem %+v", p)
				}
			}
			return
		}
		if l.Title == "" || l.Scenario.Name == "" || !l.Figure.Valid() || l.Knob == "" || len(l.H200.Strategies) == 0 {
			t.Fatalf("accepted an incomplete lesson: %+v", l)
		}
		if _, err := l.To.Resolve(lim); err != nil {
			t.Fatalf("accepted a strategy that does not resolve: %v", err)
		}
	})
}

// TestInlineStreamScenario reads a lesson whose scenario is written out
// as streams of ops, next to a committed H200 run of a named scenario.
func TestInlineStreamScenario(t *testing.T) {
	text := strings.Replace(lessonText, "scenario: llama3-70b-tp-qkv-ag-224m-2gpu\n", `scenario_yaml: |
  name: my-ag-gemm-decomp2
  gpus: 2
  streams:
    - name: tp
      ops:
        - {name: ag, kind: all-gather, bytes: 64MiB}
    - name: compute
      ops:
        - {name: qkv, kind: gemm, m: 8192, n: 5120, k: 8192, dtype: bf16, after: [ag], decompose: 2}
`, 1)
	text = strings.Replace(text, "h200:\n", "h200:\n  scenario: llama3-70b-tp-qkv-ag-224m-2gpu\n", 1)
	l, err := Parse([]byte(text), "x", "x.yaml", simLimits(), committed(t))
	if err != nil {
		t.Fatal(err)
	}
	if l.Scenario.Name != "my-ag-gemm-decomp2" || len(l.Scenario.Streams) != 2 || l.H200.Scenario != "llama3-70b-tp-qkv-ag-224m-2gpu" {
		t.Errorf("read %+v", l)
	}
	// Without a committed scenario named, the reference is the inline one,
	// which no H200 ran.
	text = strings.Replace(text, "  scenario: llama3-70b-tp-qkv-ag-224m-2gpu\n", "", 1)
	if _, err := Parse([]byte(text), "x", "x.yaml", simLimits(), committed(t)); err == nil || !strings.Contains(err.Error(), "no run of my-ag-gemm-decomp2") {
		t.Errorf("an uncommitted reference passed: %v", err)
	}
}
