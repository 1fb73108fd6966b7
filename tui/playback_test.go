package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

func playbackModel(t *testing.T) Model {
	t.Helper()
	suite := testSuite()
	var pb Playback
	for i, st := range []scenarios.Strategy{{}, {CommPriority: -5}, dmaStrategy()} {
		pb.Results = append(pb.Results, fixtureResult(suite[0], st))
		pb.Times = append(pb.Times, time.Duration(i)*time.Second)
	}
	m := New(Config{Backend: newFake(), Suite: suite, Playback: &pb})
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	return nm.(Model)
}

func key1(m Model, code rune, text string) (Model, tea.Cmd) {
	nm, cmd := m.Update(tea.KeyPressMsg{Code: code, Text: text})
	return nm.(Model), cmd
}

func TestPlaybackSteps(t *testing.T) {
	m := playbackModel(t)
	if m.running || m.play().idx != 0 || m.result == nil || m.result.Strategy.String() != "baseline" {
		t.Fatalf("start: running %v, idx %d", m.running, m.play().idx)
	}
	m, _ = key1(m, tea.KeyRight, "")
	if m.play().idx != 1 || m.strategy.CommPriority != -5 {
		t.Errorf("after →: idx %d, strategy %s", m.play().idx, m.strategy)
	}
	m, _ = key1(m, tea.KeyEnd, "")
	m, _ = key1(m, tea.KeyLeft, "")
	if m.play().idx != 1 {
		t.Errorf("after end, ←: idx %d, want 1", m.play().idx)
	}
	m, _ = key1(m, tea.KeyHome, "")
	if m.play().idx != 0 {
		t.Errorf("after home: idx %d", m.play().idx)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), "replay 1/3") {
		t.Error("the status line does not show the playback position")
	}
	// Knobs are off: a key that would turn one leaves the strategy alone.
	before := m.strategy
	m, _ = key1(m, 'd', "d")
	if m.strategy != before || !strings.Contains(m.status.text, "playback shows what was recorded") {
		t.Errorf("d in playback: strategy %s, status %q", m.strategy, m.status.text)
	}
}

func TestPlaybackPlays(t *testing.T) {
	m := playbackModel(t)
	m, cmd := key1(m, tea.KeySpace, " ")
	if !m.play().playing || cmd == nil {
		t.Fatalf("space: playing %v, cmd %v", m.play().playing, cmd != nil)
	}
	seq := m.play().seq
	m, _ = key1(m, '}', "}")
	if m.play().speed != 2 {
		t.Errorf("speed %v after }, want 2", m.play().speed)
	}
	nm, _ := m.Update(playTickMsg{seq}) // stale: the speed change re-armed the timer
	m = nm.(Model)
	if m.play().idx != 0 {
		t.Errorf("a stale tick moved playback to %d", m.play().idx)
	}
	nm, cmd = m.Update(playTickMsg{m.play().seq})
	m = nm.(Model)
	if m.play().idx != 1 || cmd == nil {
		t.Errorf("a current tick: idx %d, next tick %v", m.play().idx, cmd != nil)
	}
	nm, cmd = m.Update(playTickMsg{m.play().seq})
	m = nm.(Model)
	if m.play().idx != 2 || cmd != nil || m.play().playing {
		t.Errorf("at the end: idx %d, playing %v, next tick %v", m.play().idx, m.play().playing, cmd != nil)
	}
}

// l turns live mode on: every result schedules the next iteration, which
// reuses the baselines; l again turns it off.
func TestLiveMode(t *testing.T) {
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false
	m.setResult(fixtureResult(m.suite[0], scenarios.Strategy{}))
	m, cmd := key1(m, 'l', "l")
	if !m.liveRun() || cmd == nil || !m.running {
		t.Fatalf("l: live %v, cmd %v, running %v", m.liveRun(), cmd != nil, m.running)
	}
	nm, next := m.Update(resultMsg{seq: m.seq, result: fixtureResult(m.suite[0], scenarios.Strategy{}), took: time.Millisecond})
	m = nm.(Model)
	if next == nil || !strings.HasPrefix(m.status.text, "live · ") {
		t.Errorf("a live result did not schedule the next iteration (status %q)", m.status.text)
	}
	nm, start := m.Update(liveTickMsg{m.seq})
	m = nm.(Model)
	if start == nil || !m.running {
		t.Error("the live tick did not start an iteration")
	}
	if len(m.trail[m.suite[0].Name]) != 1 {
		t.Errorf("repeating a strategy grew the trail to %d points", len(m.trail[m.suite[0].Name]))
	}
	m.running = false
	m, _ = key1(m, 'l', "l")
	if m.liveRun() {
		t.Error("l did not turn live mode off")
	}
	if nm, cmd := m.Update(liveTickMsg{m.seq}); cmd != nil || nm.(Model).running {
		t.Error("a tick after live was turned off started an iteration")
	}
}

// s opens the sweep heatmap: cells are measured one by one off the UI loop,
// arrows move the cursor, enter applies the cell's strategy, esc closes.
func TestSweepGrid(t *testing.T) {
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false
	m.setResult(fixtureResult(m.suite[0], scenarios.Strategy{}))
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m = nm.(Model)
	m, cmd := key1(m, 's', "s")
	if m.grid() == nil || cmd == nil {
		t.Fatal("s did not open the sweep")
	}
	g := m.grid()
	if len(g.rows) != 4 || len(g.cols) != 4 {
		t.Fatalf("grid %dx%d, want 4x4 (partitions x setups) on an H200-like backend", len(g.rows), len(g.cols))
	}
	// Feed results as the commands would, row-major.
	for i := range g.total() {
		r := fixtureResult(m.suite[0], g.strategy(i/len(g.cols), i%len(g.cols)))
		nm, _ = m.Update(gridMsg{grid: g, index: i, r: r})
		m = nm.(Model)
	}
	if g.next != g.total() || !g.cells[3][3].done {
		t.Fatalf("after all results: next %d of %d", g.next, g.total())
	}
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "Sweep · ag-gemm-balanced") || !strings.Contains(screen, "16/16 measured") {
		t.Errorf("the sweep overlay is not on screen:\n%s", screen)
	}
	m, _ = key1(m, tea.KeyDown, "")
	m, _ = key1(m, tea.KeyRight, "")
	want := g.strategy(1, 1)
	m, cmd = key1(m, tea.KeyEnter, "")
	if m.grid() != nil || m.strategy != want || cmd == nil {
		t.Errorf("enter: grid open %v, strategy %s (want %s), cmd %v", m.grid() != nil, m.strategy, want, cmd != nil)
	}
	// A late result of a closed grid is dropped.
	if nm, cmd := m.Update(gridMsg{grid: g, index: 0}); cmd != nil || nm.(Model).grid() != nil {
		t.Error("a closed grid's result reopened or re-armed it")
	}
}

func TestGridGolden(t *testing.T) {
	st := DefaultStyles(true)
	g := newGrid(context.Background(), testSuite()[0], h200Caps())
	for i := range 6 {
		g.cells[i/len(g.cols)][i%len(g.cols)] = gridCell{done: true, upliftEst: upliftAt([]float64{1.08, 1.37, 1.74, 1.75, 0.9, 1.25}[i], true, nil)}
	}
	g.next, g.curR, g.curC = 6, 1, 1
	golden.RequireEqual(t, []byte(ansi.Strip(strings.Join(gridLines(st, g, 200), "\n"))))
}

// n opens the composer on the scenario: edits are validated as they are
// typed, enter adds the scenario to the suite and measures it, ctrl+s
// writes YAML and asks before overwriting.
func TestComposer(t *testing.T) {
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m = nm.(Model)
	m, _ = key1(m, 'n', "n")
	if m.comp() == nil {
		t.Fatal("n did not open the composer")
	}
	// Move to "gemm m" and make it invalid.
	for range 3 {
		m, _ = key1(m, tea.KeyDown, "")
	}
	if m.comp().fields[m.comp().focus].label != "gemm m" {
		t.Fatalf("focused %q", m.comp().fields[m.comp().focus].label)
	}
	m, _ = key1(m, 'x', "x")
	if _, ok := m.comp().errs["$.compute.m"]; !ok {
		t.Fatalf("an m of %q gives no error: %v", m.comp().fields[3].value, m.comp().errs)
	}
	screen := ansi.Strip(m.View().Content)
	if !strings.Contains(screen, "Compose a scenario") || !strings.Contains(screen, "! ") {
		t.Errorf("the composer with its error is not on screen:\n%s", screen)
	}
	m, _ = key1(m, tea.KeyEnter, "")
	if m.comp() == nil {
		t.Fatal("enter closed the composer with an invalid field")
	}
	// Fix it: delete the x.
	m, _ = key1(m, tea.KeyBackspace, "")
	n := len(m.suite)
	m, cmd := key1(m, tea.KeyEnter, "")
	if m.comp() != nil || len(m.suite) != n+1 || !strings.HasSuffix(m.suite[m.active].Name, "-custom") || cmd == nil {
		t.Errorf("enter: composer open %v, suite %d (was %d), active %s, cmd %v", m.comp() != nil, len(m.suite), n, m.suite[m.active].Name, cmd != nil)
	}
}

// TestComposerRefusesWhatDoesNotFit types sizes no GPU holds into the
// composer: each is refused as it is typed, with the device's memory, at
// the field to change, and enter does not measure it.
func TestComposerRefusesWhatDoesNotFit(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fields map[string]string // label -> value
		path   string
	}{
		{"500 GiB per rank", map[string]string{"bytes/rank": "500GiB"}, "$.comm.bytes"},
		{"1 TiB per rank on 8 GPUs", map[string]string{"gpus": "8", "bytes/rank": "1TiB"}, "$.comm.bytes"},
		{"a 1048576^3 GEMM", map[string]string{"gemm m": "1048576", "gemm n": "1048576", "gemm k": "1048576"}, "$.compute"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
			m.cancel()
			m.running = false
			nm, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
			m = nm.(Model)
			m, _ = key1(m, 'n', "n")
			for i, f := range m.comp().fields {
				v, ok := tc.fields[f.label]
				if !ok {
					continue
				}
				for m.comp().focus != i {
					m, _ = key1(m, tea.KeyDown, "")
				}
				for range len(m.comp().input.Value()) {
					m, _ = key1(m, tea.KeyBackspace, "")
				}
				for _, r := range v {
					m, _ = key1(m, r, string(r))
				}
			}
			msg, ok := m.comp().errs[tc.path]
			if !ok || !strings.Contains(msg, "device memory per GPU") || !strings.Contains(msg, "NVIDIA H200 has 141.0 GiB") {
				t.Fatalf("errors %v, want the device memory at %s", m.comp().errs, tc.path)
			}
			n := len(m.suite)
			m, cmd := key1(m, tea.KeyEnter, "")
			if m.comp() == nil || len(m.suite) != n || cmd != nil {
				t.Errorf("enter measured a scenario that does not fit (composer open %v, suite %d, was %d)", m.comp() != nil, len(m.suite), n)
			}
		})
	}
}

func TestComposerSavesYAML(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
	m.cancel()
	m.running = false
	m, _ = key1(m, 'n', "n")
	res, cmd := m.Update(tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	mm := res.(Model)
	if cmd == nil {
		t.Fatalf("ctrl+s gave no save command (note %q)", mm.comp().note)
	}
	saved := cmd().(composerSavedMsg)
	if saved.err != nil {
		t.Fatal(saved.err)
	}
	data, err := os.ReadFile(filepath.Join(dir, saved.path))
	if err != nil || !strings.Contains(string(data), "name: ag-gemm-balanced-custom") {
		t.Fatalf("saved %q: %v", data, err)
	}
	// Again: the file exists, so the save (off the UI loop) comes back
	// and it asks; n keeps it.
	mm = feed(t, mm, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
	if !strings.Contains(mm.comp().note, "overwrite it? y/n") {
		t.Errorf("second save: note %q", mm.comp().note)
	}
	mm, _ = key1(mm, 'n', "n")
	if !strings.Contains(mm.comp().note, "not overwritten") {
		t.Errorf("after n: %q", mm.comp().note)
	}
}

// Recorded NVML telemetry plays back on the utilization panel as the lab
// showed it live: the samples taken during the measurement, or, for one
// measured back to back (live mode), the recent history; notes recorded
// before a result show with it.
func TestPlaybackRecordedTelemetry(t *testing.T) {
	suite := testSuite()
	var pb Playback
	// NVML at 10 Hz on 2 GPUs for 3 s: SMs 80 % busy from 1 s to 1.5 s,
	// 20 % from 2 s on, idle otherwise.
	for i := range 30 {
		at := time.Duration(i+1) * 100 * time.Millisecond
		v := 0.0
		switch {
		case at >= time.Second && at < 1500*time.Millisecond:
			v = 0.8
		case at > 2*time.Second:
			v = 0.2
		}
		b := PlayBatch{At: at}
		for dev := range 2 {
			b.Samples = append(b.Samples, backends.Sample{Rep: -1, Metric: backends.MetricSMUtil, Device: dev, Time: int64(at - 50*time.Millisecond), Value: v})
		}
		pb.Telemetry = append(pb.Telemetry, b)
	}
	for i, c := range []PlayContext{
		{From: 950 * time.Millisecond, Notes: []string{"key d: comm engine: dma"}},
		{From: 1500 * time.Millisecond, BackToBack: true},
	} {
		r := fixtureResult(suite[0], dmaStrategy())
		r.Samples = nil // a GPU run's result: no NVML-type telemetry of its own
		pb.Results = append(pb.Results, r)
		pb.Times = append(pb.Times, []time.Duration{1550 * time.Millisecond, 2950 * time.Millisecond}[i])
		pb.Context = append(pb.Context, c)
	}
	m := New(Config{Backend: newFake(), Suite: suite, Playback: &pb})
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m = nm.(Model)
	for _, tc := range []struct {
		idx          int
		title, sm    string
		status, gpus string
	}{
		{0, "recorded NVML during this measurement", "80%", "key d: comm engine: dma", "GPU 0 of 2"},
		// Back to back: the history up to the result, as live mode.
		{1, "recorded NVML: average", "%", "replay 2/2", "GPU 0 of 2"},
	} {
		m, _ = key1(m, tea.KeyEnd, "")
		if tc.idx == 0 {
			m, _ = key1(m, tea.KeyHome, "")
		}
		title := utilTitle(m.result, m.tel(), m.gpu, len(m.gpus()))
		if !strings.Contains(title, tc.title) || !strings.Contains(title, tc.gpus) {
			t.Errorf("result %d: title %q, want %q on %s", tc.idx, title, tc.title, tc.gpus)
		}
		var sm string
		for _, l := range utilLinesFor(DefaultStyles(true), m.result, m.tel(), 80, 1) {
			if l = ansi.Strip(l); strings.HasPrefix(l, "SMs ") && !strings.HasPrefix(l, "SMs held") {
				sm = l
			}
		}
		if strings.Contains(sm, "n/a") || !strings.Contains(sm, tc.sm) {
			t.Errorf("result %d: SMs row %q, want %s", tc.idx, sm, tc.sm)
		}
		if !strings.Contains(m.status.text, tc.status) {
			t.Errorf("result %d: status %q, want %q", tc.idx, m.status.text, tc.status)
		}
	}
}

// Seeking in a playback (end, home, a step back) leaves the metrics
// panel's history and trail holding exactly the runs recorded up to the
// result shown, as if it had been played through.
func TestPlaybackSeekKeepsTheHistory(t *testing.T) {
	suite := testSuite()
	var pb Playback
	strategies := []scenarios.Strategy{{}, {CommPriority: -5}, dmaStrategy()}
	for i := range 82 {
		st := strategies[min(i, 2)]
		pb.Results = append(pb.Results, fixtureResult(suite[0], st))
		pb.Times = append(pb.Times, time.Duration(i)*100*time.Millisecond)
	}
	m := New(Config{Backend: newFake(), Suite: suite, Playback: &pb})
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	m = nm.(Model)
	name := suite[0].Name
	for _, tc := range []struct {
		key   rune
		runs  int
		trail int // strategies on the trail
	}{
		{tea.KeyEnd, 82, 3},
		{tea.KeyLeft, 81, 3},
		{tea.KeyHome, 1, 1},
		{tea.KeyRight, 2, 2},
		{tea.KeyEnd, 82, 3},
	} {
		m, _ = key1(m, tc.key, "")
		if got := len(m.hist[name]); got != tc.runs {
			t.Errorf("after %s: the history holds %d runs, want %d", tea.Key{Code: tc.key}, got, tc.runs)
		}
		if got := len(m.trail[name]); got != tc.trail {
			t.Errorf("after %s: the trail holds %d strategies, want %d", tea.Key{Code: tc.key}, got, tc.trail)
		}
		if screen := ansi.Strip(m.View().Content); !strings.Contains(screen, fmt.Sprintf("%d run", tc.runs)) {
			t.Errorf("after %s: the metrics panel does not say %d runs", tea.Key{Code: tc.key}, tc.runs)
		}
	}
}
