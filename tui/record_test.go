package tui

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// testRecorder is a Config.Recorder for tests: a header naming the
// backend and its devices; it never overwrites a file.
func testRecorder(b backends.Backend) func(string, int) (*recordings.Recorder, error) {
	return func(path string, gpus int) (*recordings.Recorder, error) {
		h := recordings.Header{Version: "test", Backend: b.Name(), Devices: recordings.DevicesFromInfo(b.Devices()[:min(gpus, len(b.Devices()))])}
		return recordings.Create(path, h, recordings.Options{})
	}
}

// kinds counts a recording's events by kind and lists its markers.
func kinds(rec *recordings.Recording) (map[recordings.Kind]int, []string) {
	n := map[recordings.Kind]int{}
	var markers []string
	for _, e := range rec.Events {
		n[e.Kind]++
		if e.Kind == recordings.KindMarker {
			markers = append(markers, e.Text)
		}
	}
	return n, markers
}

// autoFile matches the record key's automatic file names.
var autoFile = regexp.MustCompile(`^c3lab-\d{8}-\d{6}(-\d+)?\.c3rec$`)

// TestRecordLabSession records a lab session on the simulator from the
// start (--record), flips a knob, quits with the recording on, and reads
// the file back: header, scenario, both strategies, the knob's marker and
// the results; then plays it back as c3lab replay does.
func TestRecordLabSession(t *testing.T) {
	b := sim.New(sim.H200())
	path := filepath.Join(t.TempDir(), "lab.c3rec")
	cfg := Config{Backend: b, Suite: scenarios.Builtin()[:3], Recorder: testRecorder(b), RecordPath: path}
	tm, obs := startLabWith(t, cfg, 160, 50)

	s := obs.wait(t, tm, "the first measurement", idle)
	if s.rec != path || !strings.Contains(s.screen, "● REC lab.c3rec") {
		t.Fatalf("recording %q; top bar: %s", s.rec, strings.SplitN(s.screen, "\n", 2)[0])
	}
	tm.Type("p")
	s = obs.wait(t, tm, "the prioritized result", func(s snapshot) bool { return idle(s) && s.resSt.CommPriority < 0 })
	want := s.resSt

	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	fm.rec.all.closeAll() // as Run does once the program ends

	rec, err := recordings.ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if !rec.Complete || rec.Damage != nil {
		t.Errorf("complete %v, damage %v", rec.Complete, rec.Damage)
	}
	if h := rec.Header; h.Backend != "sim" || len(h.Devices) == 0 {
		t.Errorf("header %+v", h)
	}
	n, markers := kinds(rec)
	if n[recordings.KindScenario] < 1 || n[recordings.KindStrategy] < 2 || n[recordings.KindResult] < 2 {
		t.Errorf("events by kind: %v", n)
	}
	if len(markers) != 1 || !strings.HasPrefix(markers[0], "key p: comm priority: -") {
		t.Errorf("markers %q, want the p key's", markers)
	}
	if n[recordings.KindError] != 0 {
		t.Errorf("%d errors recorded", n[recordings.KindError])
	}

	// It replays: the results play back, and the replay backend answers
	// the recorded strategy with the recorded figures.
	rb := replay.New(rec)
	results := rb.Results()
	last := results[len(results)-1]
	if last.Strategy != want {
		t.Errorf("last recorded strategy %s, want %s", last.Strategy, want)
	}
	pm := New(Config{Backend: rb, Suite: rb.Scenarios(), Playback: &Playback{Results: results}})
	if pm.result == nil || pm.result.Scenario.Name != results[0].Scenario.Name {
		t.Errorf("playback shows %v", pm.result)
	}
	again, err := profiler.Measure(context.Background(), rb, last.Scenario, last.Strategy, profiler.Options{})
	if err != nil {
		t.Fatalf("measuring the replay: %v", err)
	}
	if a, b := fracText(again), fracText(last); a != b {
		t.Errorf("replayed %s of ideal, recorded %s", a, b)
	}
}

// TestRecordToggle uses the record key: it stops the --record recording,
// starts another at an automatic name with the lab's state in it, and
// stops it; the status line says where each went and how big it is.
func TestRecordToggle(t *testing.T) {
	t.Chdir(t.TempDir())
	fake := newFake()
	cfg := Config{Backend: fake, Suite: testSuite(), Start: "ag-gemm-balanced", Recorder: testRecorder(fake), RecordPath: "given.c3rec"}
	tm, obs := startLabWith(t, cfg, 160, 50)
	obs.wait(t, tm, "the first measurement", func(s snapshot) bool { return idle(s) && s.rec == "given.c3rec" })

	tm.Type("R")
	s := obs.wait(t, tm, "the recording to stop", func(s snapshot) bool { return strings.HasPrefix(s.status.text, "saved the recording") })
	if s.rec != "" || strings.Contains(s.screen, "● REC") {
		t.Errorf("still recording %q after R", s.rec)
	}
	if !regexp.MustCompile(`^saved the recording to given\.c3rec \([0-9.]+ k?B\)$`).MatchString(s.status.text) {
		t.Errorf("status %q", s.status.text)
	}

	tm.Type("R")
	s = obs.wait(t, tm, "a new recording", func(s snapshot) bool { return s.rec != "" })
	first := s.rec
	if !autoFile.MatchString(first) {
		t.Errorf("R recorded to %q, want an automatic name", first)
	}
	if !strings.Contains(s.status.text, "recording to "+first+" (R stops)") || !strings.Contains(s.screen, "● REC "+first) {
		t.Errorf("status %q; top bar: %s", s.status.text, strings.SplitN(s.screen, "\n", 2)[0])
	}
	tm.Type("d")
	obs.wait(t, tm, "the dma result", func(s snapshot) bool { return idle(s) && s.resSt.CommEngine == scenarios.EngineDMA })
	tm.Type("R")
	obs.wait(t, tm, "the recording to stop", func(s snapshot) bool {
		return s.rec == "" && strings.Contains(s.status.text, "saved the recording to "+first)
	})

	tm.Type("R") // again: a new file, whatever the clock says
	s = obs.wait(t, tm, "another recording", func(s snapshot) bool { return s.rec != "" })
	if s.rec == first || !autoFile.MatchString(s.rec) {
		t.Errorf("the second recording went to %q (the first to %q)", s.rec, first)
	}
	tm.Type("q")
	fm := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(Model)
	fm.rec.all.closeAll()

	rec, err := recordings.ReadAll(first)
	if err != nil {
		t.Fatal(err)
	}
	n, markers := kinds(rec)
	// The state on screen when it started (scenario, strategy, result),
	// then the d key's marker, the new strategy and its result.
	if !rec.Complete || n[recordings.KindScenario] != 1 || n[recordings.KindStrategy] != 2 || n[recordings.KindResult] != 2 {
		t.Errorf("complete %v, events by kind %v", rec.Complete, n)
	}
	if len(markers) != 1 || !strings.HasPrefix(markers[0], "key d: comm engine: dma") {
		t.Errorf("markers %q", markers)
	}
	for _, f := range []string{"given.c3rec", s.rec} {
		if r, err := recordings.ReadAll(f); err != nil || !r.Complete {
			t.Errorf("%s: %v", f, err)
		}
	}
}

// TestRecordNeverOverwrites: the automatic name skips existing files, and
// the record key leaves every existing file as it was.
func TestRecordNeverOverwrites(t *testing.T) {
	dir := t.TempDir()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.Local)
	for i, want := range []string{"c3lab-20250102-030405.c3rec", "c3lab-20250102-030405-2.c3rec", "c3lab-20250102-030405-3.c3rec"} {
		got := autoName(dir, at)
		if got != filepath.Join(dir, want) {
			t.Fatalf("step %d: autoName = %s, want %s", i, got, want)
		}
		if err := os.WriteFile(got, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The lab: every name the next seconds could take exists already.
	t.Chdir(t.TempDir())
	now := time.Now()
	var kept []string
	for s := range 5 {
		base := "c3lab-" + now.Add(time.Duration(s)*time.Second).Format("20060102-150405")
		for _, name := range []string{base + ".c3rec", base + "-2.c3rec"} {
			if err := os.WriteFile(name, []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			kept = append(kept, name)
		}
	}
	fake := newFake()
	m := New(Config{Backend: fake, Suite: testSuite(), Recorder: testRecorder(fake)})
	m.cancel()
	m.running = false
	m = feed(t, m, tea.KeyPressMsg{Code: 'R', Text: "R"})
	if m.rec.cur == nil || !strings.HasSuffix(m.rec.cur.Path(), "-3.c3rec") {
		t.Fatalf("recording %q; status %q", m.rec.cur.Path(), m.status.text)
	}
	m.rec.all.closeAll()
	for _, name := range kept {
		if b, err := os.ReadFile(name); err != nil || string(b) != "keep" {
			t.Errorf("%s: %q, %v", name, b, err)
		}
	}
}

// TestRecordFailureStops: when the recorder cannot write (here a pipe
// whose reader went away; a full disk in life), the status line says the
// recording stopped and why, the top bar drops REC, and the lab goes on.
func TestRecordFailureStops(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the broken pipe goes through /proc/self/fd")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	fake := newFake()
	// Recordings are written to regular files only, so the recording
	// starts on one; then the pipe takes the place of its descriptor.
	file := filepath.Join(t.TempDir(), "s.c3rec")
	open := func(path string, _ int) (*recordings.Recorder, error) {
		rec, err := recordings.Create(path, recordings.Header{Backend: "fake"}, recordings.Options{})
		if err == nil {
			err = pipeInto(path, w)
		}
		return rec, err
	}
	m := New(Config{Backend: fake, Suite: testSuite(), Recorder: open, RecordPath: file})
	m.cancel()
	m.running = false
	nm, _ := m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m = nm.(Model)
	rec := m.rec.cur
	if rec == nil {
		t.Fatalf("not recording: %q", m.status.text)
	}
	if !strings.Contains(ansi.Strip(m.View().Content), "● REC") {
		t.Error("no REC in the top bar")
	}
	r.Close()
	if err := rec.Flush(); err == nil {
		t.Fatal("writing to a broken pipe did not fail")
	}
	m = feed(t, m, recTickMsg{rec})
	if m.rec.cur != nil || m.status.kind != statusError || !strings.Contains(m.status.text, "recording stopped: ") || !strings.Contains(m.status.text, "broken pipe") {
		t.Errorf("recording %v, status %+v", m.rec.cur, m.status)
	}
	screen := ansi.Strip(m.View().Content)
	if strings.Contains(screen, "● REC") || !strings.Contains(screen, "error: recording stopped") {
		t.Errorf("screen:\n%s", screen)
	}
	m = press(m, "r")
	if !m.running {
		t.Error("the lab did not go on measuring")
	}
	m.cancel()
}

// feed sends msg to the model and runs the commands it returns, one
// round deep, feeding their messages back.
func feed(t *testing.T, m Model, msg tea.Msg) Model {
	t.Helper()
	nm, cmd := m.Update(msg)
	m = nm.(Model)
	if cmd != nil {
		if next := cmd(); next != nil {
			nm, _ = m.Update(next)
			m = nm.(Model)
		}
	}
	return m
}

// The recording indicator says REC with a glyph and a word, so it reads
// the same without colour.
func TestRecIndicatorNoColor(t *testing.T) {
	st := DefaultStyles(true)
	h := headerState{backend: "fake", devices: "2 x H200", short: "2 x H200", scenario: "s", rec: recForms(st, "a.c3rec", 2048)}
	line := headerLine(st, h, 120)
	var buf bytes.Buffer
	w := &colorprofile.Writer{Forward: &buf, Profile: colorprofile.ASCII}
	if _, err := w.WriteString(line); err != nil {
		t.Fatal(err)
	}
	colour := regexp.MustCompile(`\x1b\[[0-9;]*(3[0-9]|4[0-9]|9[0-7]|10[0-7])(;[0-9;]*)?m`)
	if colour.MatchString(buf.String()) || !strings.Contains(ansi.Strip(buf.String()), "● REC a.c3rec 2.05 kB") {
		t.Errorf("%q", buf.String())
	}
}

// A recording's header lists the devices of the scenario on screen: the
// lab asks its opener for that many, at the start and on the record key.
func TestRecordingAsksForTheScenariosGPUs(t *testing.T) {
	t.Chdir(t.TempDir()) // the record key's automatic names go here
	suite := testSuite()
	suite[1].GPUs = 4
	var asked []int
	open := func(path string, gpus int) (*recordings.Recorder, error) {
		asked = append(asked, gpus)
		return recordings.Create(path, recordings.Header{Backend: "fake"}, recordings.Options{})
	}
	m := New(Config{Backend: newFake(), Suite: suite, Recorder: open, RecordPath: "given.c3rec"})
	m.cancel()
	m.running = false
	defer m.rec.all.closeAll()
	m.active = 1
	m = feed(t, m, tea.KeyPressMsg{Code: 'R', Text: "R"}) // stops the first
	m = feed(t, m, tea.KeyPressMsg{Code: 'R', Text: "R"}) // starts another
	if want := []int{suite[0].GPUs, suite[1].GPUs}; !slices.Equal(asked, want) || m.rec.cur == nil {
		t.Errorf("asked for %v GPUs, want %v (recording %v, status %q)", asked, want, m.rec.cur != nil, m.status.text)
	}
}

// pipeInto makes the process's open descriptor of path (Linux,
// /proc/self/fd) refer to the pipe w instead, so that writes to the file
// go to the pipe.
func pipeInto(path string, w *os.File) error {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return err
	}
	for _, e := range entries {
		if to, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && to == path {
			fd, err := strconv.Atoi(e.Name())
			if err != nil {
				return err
			}
			return syscall.Dup3(int(w.Fd()), fd, 0)
		}
	}
	return fmt.Errorf("%s is not open", path)
}
