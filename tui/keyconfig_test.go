package tui

import (
	"reflect"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

func TestLoadKeyMap(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		err        string
		check      func(t *testing.T, k KeyMap)
	}{
		{"rebinds one key", "launch: x\n", "", func(t *testing.T, k KeyMap) {
			if !key.Matches(tea.KeyPressMsg{Code: 'x', Text: "x"}, k.Launch) || key.Matches(tea.KeyPressMsg{Code: 'o', Text: "o"}, k.Launch) {
				t.Errorf("launch keys %v", k.Launch.Keys())
			}
			if k.Launch.Help().Key != "x" {
				t.Errorf("help shows %q", k.Launch.Help().Key)
			}
		}},
		{"a list of keys", "quit: [q, ctrl+q]\n", "", func(t *testing.T, k KeyMap) {
			if got := strings.Join(k.Quit.Keys(), ","); got != "q,ctrl+q" {
				t.Errorf("quit keys %s", got)
			}
		}},
		{"swap two keys", "dma: e\ncopy_engines: d\n", "", func(t *testing.T, k KeyMap) {
			if k.DMA.Keys()[0] != "e" || k.CEs.Keys()[0] != "d" {
				t.Errorf("dma %v, copy_engines %v", k.DMA.Keys(), k.CEs.Keys())
			}
		}},
		{"record", "record: ctrl+r\n", "", func(t *testing.T, k KeyMap) {
			if !key.Matches(tea.KeyPressMsg{Code: 'r', Mod: tea.ModCtrl}, k.Record) || key.Matches(tea.KeyPressMsg{Code: 'R', Text: "R"}, k.Record) {
				t.Errorf("record keys %v", k.Record.Keys())
			}
		}},
		{"view keys", "gpu: G\nzoom_in: [\"+\", \"=\"]\nzoom_out: _\nzoom_reset: \"0\"\npan_left: h\npan_right: ';'\n", "", func(t *testing.T, k KeyMap) {
			got := [][]string{k.GPU.Keys(), k.ZoomIn.Keys(), k.ZoomOut.Keys(), k.ZoomReset.Keys(), k.PanLeft.Keys(), k.PanRight.Keys()}
			want := [][]string{{"G"}, {"+", "="}, {"_"}, {"0"}, {"h"}, {";"}}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("view keys %v, want %v", got, want)
			}
		}},
		{"gpu clashes with a knob", "gpu: d\n", `"d" is bound to gpu but is still dma's default`, nil},
		{"record clashes with rerun", "record: r\n", `"r" is bound to record but is still rerun's default`, nil},
		{"unknown action", "lunch: x\n", `unknown action "lunch"`, nil},
		{"key on two actions", "launch: x\npriority: x\n", `"x" is bound to both launch and priority`, nil},
		{"clash with a default", "launch: p\n", `"p" is bound to launch but is still priority's default`, nil},
		{"empty key", "launch: ''\n", "empty key", nil},
		{"not a key", "launch: {a: b}\n", "want a key or a list", nil},
		{"broken yaml", "launch: [x\n", "keys.yaml", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := LoadKeyMap([]byte(tc.file), "keys.yaml", DefaultKeyMap())
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tc.check(t, k)
		})
	}
}

// Every binding of the key map has an action name, so a key file can
// rebind each one; the names are the documented ones.
func TestKeyActionsNameEveryBinding(t *testing.T) {
	var k KeyMap
	named := map[*key.Binding]bool{}
	for _, b := range k.bindingsByAction() {
		named[b] = true
	}
	v := reflect.ValueOf(&k).Elem()
	for i := range v.NumField() {
		if b, ok := v.Field(i).Addr().Interface().(*key.Binding); ok && !named[b] {
			t.Errorf("KeyMap.%s has no action name", v.Type().Field(i).Name)
		}
	}
	want := "advice, close, compose, copy_engines, ctas, decompose, dma, down, gpu, help, launch, live, next_panel, pan_left, pan_right, pick, priority, quit, record, rerun, sms_down, sms_up, sweep, up, zoom_in, zoom_out, zoom_reset"
	if got := strings.Join(KeyActions(), ", "); got != want {
		t.Errorf("actions %s\nwant    %s", got, want)
	}
}

// A rebound key drives the lab.
func TestReboundKeyDrivesTheLab(t *testing.T) {
	k, err := LoadKeyMap([]byte("dma: x\ncopy_engines: d\n"), "keys.yaml", DefaultKeyMap())
	if err != nil {
		t.Fatal(err)
	}
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced", Keys: &k})
	m.cancel()
	m.running = false
	m, _ = key1(m, 'x', "x")
	if m.strategy.CommEngine != "dma" {
		t.Errorf("x (rebound to dma) left the engine at %s", m.strategy.CommEngine)
	}
}
