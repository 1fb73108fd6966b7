package tui

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/scenarios"
)

// graphLab is the lab on a suite of graphScenario(8192) at w x h, with no
// measurement in flight and the composer open on it.
func graphLab(t *testing.T, w, h int) Model {
	t.Helper()
	fake := newFake()
	fake.caps = graphCaps()
	m := New(Config{Backend: fake, Suite: []scenarios.Scenario{graphScenario(8192)}})
	m.cancel()
	m.running = false
	nm, _ := m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	m = nm.(Model)
	m, _ = key1(m, 'n', "n")
	if m.comp() == nil || m.comp().graph == nil {
		t.Fatal("n did not open the stream composer on a scenario written as streams")
	}
	return m
}

// keys sends keys by name: "down", "ctrl+n", "alt+down", or text typed.
func keys(m Model, names ...string) Model {
	for _, k := range names {
		var msg tea.KeyPressMsg
		switch k {
		case "down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown}
		case "up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp}
		case "enter":
			msg = tea.KeyPressMsg{Code: tea.KeyEnter}
		case "backspace":
			msg = tea.KeyPressMsg{Code: tea.KeyBackspace}
		case "alt+up":
			msg = tea.KeyPressMsg{Code: tea.KeyUp, Mod: tea.ModAlt}
		case "alt+down":
			msg = tea.KeyPressMsg{Code: tea.KeyDown, Mod: tea.ModAlt}
		case "ctrl+n", "ctrl+x", "ctrl+t", "ctrl+o", "ctrl+s", "ctrl+u":
			msg = tea.KeyPressMsg{Code: rune(k[5]), Mod: tea.ModCtrl}
		default:
			for _, r := range k {
				nm, _ := m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
				m = nm.(Model)
			}
			continue
		}
		nm, _ := m.Update(msg)
		m = nm.(Model)
	}
	return m
}

// focusOn moves the stream composer's cursor down to the row at.
func focusOn(t *testing.T, m Model, at formFocus) Model {
	t.Helper()
	for range 60 {
		if m.comp().graph.focus == at {
			return m
		}
		m = keys(m, "down")
	}
	t.Fatalf("never reached %+v", at)
	return m
}

// clear empties the focused field.
func clear(m Model) Model {
	for range len(m.comp().input.Value()) {
		m = keys(m, "backspace")
	}
	return m
}

// The stream composer edits a format-2 scenario: its streams and their
// ops (add, remove, reorder), an op's kind, shape, count, chunks and
// dependencies, each change validated as typed, and enter adds the
// scenario it describes.
func TestStreamComposerEdits(t *testing.T) {
	m := graphLab(t, 120, 40)
	cp := m.comp()
	if _, errs := cp.scenario(m.caps.Limits); len(errs) > 0 {
		t.Fatalf("the fixture has problems: %v", errs)
	}
	// The cursor on qkv opens its fields.
	m = focusOn(t, m, formFocus{stream: 1, op: 0, field: opName})
	if got := len(cp.graph.rows()); got != 3+3+4+5 {
		t.Errorf("%d rows with qkv open, want 15", got)
	}
	// A dependency on an op the scenario lacks is an error at after.
	m = focusOn(t, m, formFocus{stream: 1, op: 0, field: opAfter})
	m = keys(clear(m), "agx")
	if e := cp.errs["$.streams[1].ops[0].after[0]"]; !strings.Contains(e, `"agx"`) || !strings.Contains(e, "did you mean ag") {
		t.Errorf("after agx: errors %v", cp.errs)
	}
	// ctrl+o picks from the other ops: ag, mlp (a cycle: mlp runs after
	// qkv on its stream), ar, none, ag.
	m = clear(m)
	for _, want := range []string{"ag", "mlp", "ar", "", "ag"} {
		m = keys(m, "ctrl+o")
		if v := *cp.graph.value(cp.graph.focus); v != want {
			t.Errorf("pick %q, want %q", v, want)
		}
		if cyc := cp.errs["$.streams[1].ops[0].after"]; (want == "mlp") != strings.Contains(cyc, "cycle through qkv, mlp") {
			t.Errorf("after %q: errors %v", want, cp.errs)
		}
	}
	if len(cp.errs) != 0 {
		t.Errorf("after ag: errors %v", cp.errs)
	}
	// Chunks that do not divide the pair are the decomposition's error.
	m = focusOn(t, m, formFocus{stream: 1, op: 0, field: opChunks})
	m = keys(clear(m), "3")
	if e := cp.errs["$.streams[1].ops[0].decompose"]; !strings.Contains(e, "decompose 3 of ag -> qkv") || !strings.Contains(e, "m (8192)") {
		t.Errorf("decompose 3: errors %v", cp.errs)
	}
	m = keys(m, "backspace", "4")
	// A count on a stream, and a shape that does not parse.
	m = focusOn(t, m, formFocus{stream: 1, op: 0, field: opShape})
	m = keys(m, "z")
	if e := cp.errs["$.streams[1].ops[0].shape"]; !strings.Contains(e, "dtype") {
		t.Errorf("shape typo: errors %v", cp.errs)
	}
	m = keys(m, "backspace")
	// ctrl+n adds a GEMM after qkv on the compute stream; alt+up moves it
	// first; ctrl+x removes it again.
	m = keys(m, "ctrl+n")
	ops := cp.graph.streams[1].ops
	if len(ops) != 3 || ops[1].f[opName] != "gemm" || ops[1].f[opKind] != "gemm" || cp.graph.focus != (formFocus{1, 1, opName}) {
		t.Fatalf("after ctrl+n: %+v, focus %+v", ops, cp.graph.focus)
	}
	m = keys(m, "alt+up")
	if cp.graph.streams[1].ops[0].f[opName] != "gemm" || cp.graph.focus.op != 0 {
		t.Errorf("alt+up did not move the new op first: %+v", cp.graph.streams[1].ops)
	}
	m = keys(m, "alt+down", "ctrl+x")
	if names := fmt.Sprint(cp.graph.opNames()); names != "[ag qkv mlp ar]" {
		t.Errorf("after reorder and remove: %s", names)
	}
	// ctrl+t adds a comm stream; ctrl+o on its op's kind cycles kinds.
	m = keys(m, "ctrl+t")
	if len(cp.graph.streams) != 4 || cp.graph.streams[2].name != "comm" {
		t.Fatalf("after ctrl+t: %d streams, the new one %q", len(cp.graph.streams), cp.graph.streams[2].name)
	}
	m = keys(m, "down", "down", "ctrl+o")
	if k := cp.graph.streams[2].ops[0].f[opKind]; k != "reduce-scatter" {
		t.Errorf("ctrl+o on an all-gather's kind gave %q, want reduce-scatter", k)
	}
	// A GEMM needs a GEMM's shape; an unknown kind is named at its field.
	m = keys(clear(m), "gemm")
	if e := cp.errs["$.streams[2].ops[0].shape"]; !strings.Contains(e, "not a GEMM's") {
		t.Errorf("gemm with a size: errors %v", cp.errs)
	}
	m = keys(m, "m")
	if e := cp.errs["$.streams[2].ops[0].kind"]; !strings.Contains(e, `kind "gemmm" is unknown`) {
		t.Errorf("gemmm: errors %v", cp.errs)
	}
	m = keys(clear(m), "all-to-all")
	if len(cp.errs) != 0 {
		t.Fatalf("errors left: %v", cp.errs)
	}
	// enter adds the scenario and measures it.
	m = keys(m, "enter")
	if m.comp() != nil {
		t.Fatalf("enter left the composer open: %q", cp.note)
	}
	sc := m.suite[m.active]
	if sc.Name != "tp-ag-gemm-streams-custom" || len(sc.Streams) != 4 || sc.Streams[1].Ops[0].Decompose != 4 ||
		sc.Streams[2].Ops[0].Kind != scenarios.OpKind(scenarios.AllToAll) || sc.Comm.Collective != scenarios.AllGather {
		t.Errorf("added %+v", sc)
	}
	if _, err := sc.Graph(sc.Strategy); err != nil {
		t.Errorf("the added scenario does not expand: %v", err)
	}
}

// ctrl+s writes a scenario written as streams as format-2 YAML: streams,
// no lead compute and comm.
func TestStreamComposerSaves(t *testing.T) {
	t.Chdir(t.TempDir())
	m := graphLab(t, 120, 40)
	m = focusOn(t, m, formFocus{stream: 2, op: 0, field: opName})
	m = keys(m, "down", "down", "down")
	m = keys(clear(m), "12") // ar's count
	m = feed(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	data, err := os.ReadFile(filepath.Join(".", "tp-ag-gemm-streams-custom.yaml"))
	if err != nil {
		t.Fatalf("%v (status %q)", err, m.status.text)
	}
	y := string(data)
	for _, want := range []string{"streams:", "name: ar", "count: 12", "after:\n    - ag"} {
		if !strings.Contains(y, want) {
			t.Errorf("saved YAML lacks %q:\n%s", want, y)
		}
	}
	if strings.Contains(y, "compute:") || strings.Contains(y, "comm:\n") {
		t.Errorf("saved YAML holds the lead ops:\n%s", y)
	}
}

// A composed scenario keeps the description of the one it started from
// while its streams and GPUs stand; once they are edited, the description
// (which says what the original runs) gives way to where it came from.
func TestStreamComposerDescription(t *testing.T) {
	orig := graphScenario(8192)
	orig.Description = "It runs stream tp (ag) next to stream compute (qkv)."
	for _, tc := range []struct {
		name string
		edit func(Model) Model
		want string
	}{
		{"untouched", func(m Model) Model { return m }, orig.Description},
		{"op added", func(m Model) Model { return keys(m, "ctrl+n") }, "Composed in the lab from " + orig.Name + ", its streams edited."},
		{"gpus changed", func(m Model) Model {
			return keys(clear(focusOn(t, m, formFocus{stream: -1, field: 1})), "4")
		}, "Composed in the lab from " + orig.Name + ", its streams edited."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := newFake()
			fake.caps = graphCaps()
			m := New(Config{Backend: fake, Suite: []scenarios.Scenario{orig}})
			m.cancel()
			m.running = false
			nm, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m, _ = key1(nm.(Model), 'n', "n")
			m = tc.edit(m)
			sc, _ := m.comp().scenario(m.caps.Limits)
			if sc.Description != tc.want {
				t.Errorf("description %q, want %q", sc.Description, tc.want)
			}
		})
	}
}

// Removing every op of a stream leaves it empty, which validation names
// at the stream; the last stream cannot be removed.
func TestStreamComposerRemoves(t *testing.T) {
	m := graphLab(t, 120, 40)
	cp := m.comp()
	m = focusOn(t, m, formFocus{stream: 2, op: 0, field: opName})
	m = keys(m, "ctrl+x")
	if e := cp.errs["$.streams[2].ops"]; !strings.Contains(e, "no ops") {
		t.Errorf("empty stream: errors %v", cp.errs)
	}
	m = keys(m, "ctrl+x", "ctrl+x", "ctrl+x")
	if len(cp.graph.streams) != 1 || !strings.Contains(cp.note, "needs a stream") {
		t.Errorf("%d streams left, note %q", len(cp.graph.streams), cp.note)
	}
}

// TestStreamComposerGolden renders the stream composer from the fixture at
// 80, 120 and 200 columns: as it opens, with the qkv op open, and with an
// error at a dependency.
func TestStreamComposerGolden(t *testing.T) {
	for _, tc := range []struct {
		name string
		prep func(t *testing.T, m Model) Model
	}{
		{"open", func(t *testing.T, m Model) Model { return m }},
		{"op", func(t *testing.T, m Model) Model {
			return focusOn(t, m, formFocus{stream: 1, op: 0, field: opKind})
		}},
		{"error", func(t *testing.T, m Model) Model {
			m = focusOn(t, m, formFocus{stream: 1, op: 0, field: opAfter})
			return keys(m, "x")
		}},
	} {
		for _, w := range []int{80, 120, 200} {
			t.Run(fmt.Sprintf("%s_%d", tc.name, w), func(t *testing.T) {
				m := tc.prep(t, graphLab(t, w, 50))
				lines := m.comp().View(&m)
				golden.RequireEqual(t, plain(t, lines, ansi.StringWidth(lines[0])))
			})
		}
	}
}

// On a small terminal the stream composer scrolls: the screen fits, and
// the row under the cursor stays in view.
func TestStreamComposerScrolls(t *testing.T) {
	for _, size := range [][2]int{{80, 24}, {60, 16}, {120, 40}} {
		m := graphLab(t, size[0], size[1])
		m = focusOn(t, m, formFocus{stream: 2, op: 0, field: opAfter})
		checkScreen(t, m.View().Content, size[0], size[1])
		screen := ansi.Strip(m.View().Content)
		if !strings.Contains(screen, "▸     after") {
			t.Errorf("%dx%d: the cursor's row is not on screen:\n%s", size[0], size[1], screen)
		}
	}
}
