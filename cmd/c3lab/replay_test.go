package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends/replay"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/tui"
)

// sampleLab is the lab session recorded on 2 x H200 (read only).
var sampleLab = filepath.Join("..", "..", "recordings", "samples", "h200x2-lab.c3rec")

// damagedCopy copies a recording to a temporary file with bits flipped at
// the given fractions of its size.
func damagedCopy(t *testing.T, src string, at ...float64) string {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range at {
		b[int(f*float64(len(b)))] ^= 0x08
	}
	path := filepath.Join(t.TempDir(), "damaged.c3rec")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A damaged recording replays everything intact around the damage: one
// line per damaged range on stderr, the ranges in --json.
func TestReplayDamagedRanges(t *testing.T) {
	for _, tc := range []struct {
		name string
		at   []float64
	}{
		{"one flipped bit", []float64{0.5}},
		{"two flipped bits", []float64{0.3, 0.7}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := damagedCopy(t, sampleLab, tc.at...)
			rec, err := recordings.ReadAll(path)
			if err != nil {
				t.Fatal(err)
			}
			results := 0
			for _, e := range rec.Events {
				if e.Kind == recordings.KindResult {
					results++
				}
			}
			// A flip loses one frame: one result, or a second of live
			// mode's results batched together.
			if len(rec.Damages) != len(tc.at) || results < 82-10*len(tc.at) {
				t.Fatalf("the reader found %d damaged ranges, %d results; want %d ranges and most of the 82 results", len(rec.Damages), results, len(tc.at))
			}
			code, out, errOut := call(t, "replay", "--text", path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			lines := strings.Split(strings.TrimSpace(errOut), "\n")
			if len(lines) != len(rec.Damages) {
				t.Errorf("stderr has %d lines for %d damaged ranges:\n%s", len(lines), len(rec.Damages), errOut)
			}
			for i, d := range rec.Damages {
				if i < len(lines) && !strings.Contains(lines[i], fmt.Sprintf("bytes %d..%d", d.Offset, d.End)) {
					t.Errorf("line %q does not name the range %d..%d", lines[i], d.Offset, d.End)
				}
			}
			if rows := strings.Count(out, "llama3-405b-tp8-qkv-ag-224m"); rows != results {
				t.Errorf("--text shows %d results, the recording holds %d intact", rows, results)
			}

			code, out, errOut = call(t, "replay", "--json", path)
			var rep struct {
				Damage []struct {
					Offset int64  `json:"offset"`
					End    int64  `json:"end"`
					Reason string `json:"reason"`
				} `json:"damage"`
				Results []json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
				t.Fatalf("--json: exit %d, %v: %s", code, err, errOut)
			}
			if len(rep.Results) != results || len(rep.Damage) != len(rec.Damages) {
				t.Fatalf("--json: %d results, %d ranges; want %d, %d", len(rep.Results), len(rep.Damage), results, len(rec.Damages))
			}
			for i, d := range rec.Damages {
				if got := rep.Damage[i]; got.Offset != d.Offset || got.End != d.End || got.Reason != d.Reason {
					t.Errorf("--json range %d: %+v, want %d..%d %s", i, got, d.Offset, d.End, d.Reason)
				}
			}
		})
	}
}

// The H200 lab sample holds 10,224 NVML samples and 3 markers beside its
// 82 results: replay --text and --json say so.
func TestReplaySaysWhatTheRecordingHolds(t *testing.T) {
	code, out, errOut := call(t, "replay", "--text", sampleLab)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	mustContain(t, "--text", out,
		"telemetry  10224 samples of 13 metrics on GPUs 0, 1",
		"marker  key o: launch order: comm-first",
		"marker  key p: comm priority: -5 (highest)",
		"marker  key d: comm engine: dma (copy engines, no SMs)",
	)
	code, out, errOut = call(t, "replay", "--json", sampleLab)
	var rep struct {
		Telemetry struct {
			Samples int      `json:"samples"`
			Metrics []string `json:"metrics"`
			Devices []int    `json:"devices"`
		} `json:"telemetry"`
		Notes []struct {
			TimeNS int64  `json:"t_ns"`
			Kind   string `json:"kind"`
			Text   string `json:"text"`
		} `json:"notes"`
	}
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil {
		t.Fatalf("--json: exit %d, %v: %s", code, err, errOut)
	}
	if rep.Telemetry.Samples != 10224 || len(rep.Telemetry.Metrics) != 13 || fmt.Sprint(rep.Telemetry.Devices) != "[0 1]" {
		t.Errorf("--json telemetry %+v", rep.Telemetry)
	}
	if len(rep.Notes) != 3 || rep.Notes[0].Kind != "marker" || rep.Notes[0].TimeNS <= 0 || !strings.HasPrefix(rep.Notes[0].Text, "key o") {
		t.Errorf("--json notes %+v", rep.Notes)
	}
}

// export --from writes the NVML telemetry recorded during the measurement
// as counter tracks, in its units, next to the timeline.
func TestExportFromRecordingHasCounters(t *testing.T) {
	dir := t.TempDir()
	chrome, pf := filepath.Join(dir, "t.json"), filepath.Join(dir, "t.pftrace")
	for _, index := range []string{"0", "81"} {
		code, _, errOut := call(t, "export", "--from", sampleLab, "--index", index, "--chrome", chrome, "--perfetto", pf, "--force")
		if code != 0 {
			t.Fatalf("--index %s: exit %d: %s", index, code, errOut)
		}
		b, err := os.ReadFile(chrome)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Events []struct {
				Name string         `json:"name"`
				Ph   string         `json:"ph"`
				PID  int            `json:"pid"`
				Args map[string]any `json:"args"`
			} `json:"traceEvents"`
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		counters := map[string]bool{}
		for _, e := range tr.Events {
			if e.Ph == "C" {
				counters[fmt.Sprintf("%d %s", e.PID, e.Name)] = true
			}
		}
		for _, want := range []string{"0 sm_util (%)", "1 sm_util (%)", "0 power_w (W)", "1 link_tx_bytes_s (GB/s)"} {
			if !counters[want] {
				t.Errorf("--index %s: the Chrome trace has no %q counter; it has %v", index, want, counters)
			}
		}
		p, err := os.ReadFile(pf)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(p), "sm_util (%)") || !strings.Contains(string(p), "power_w (W)") {
			t.Errorf("--index %s: the Perfetto trace has no counter track for the recorded telemetry", index)
		}
	}
}

// Played back in the lab, the H200 lab sample shows its recorded NVML
// telemetry on the utilization panel (numbers, not n/a) and the markers
// recorded before each result on the status line.
func TestReplayLabShowsRecordedTelemetry(t *testing.T) {
	b, err := replay.Open(sampleLab)
	if err != nil {
		t.Fatal(err)
	}
	m := tui.New(tui.Config{Backend: b, Suite: b.Scenarios(), Playback: playbackOf(b)})
	var model tea.Model = m
	model, _ = model.Update(tea.WindowSizeMsg{Width: 160, Height: 50})
	screen := func() string { return ansi.Strip(model.View().Content) }
	// The NVML rows, labels padded to 10 cells ("SMs held" is not one).
	row := regexp.MustCompile(`│(SMs       |tensor    |HBM       |NVLink TX |NVLink RX )[^│]*`)
	check := func(when string) {
		t.Helper()
		s := screen()
		rows := row.FindAllString(s, -1)
		if len(rows) != 5 {
			t.Fatalf("%s: %d NVML rows on the utilization panel:\n%s", when, len(rows), s)
		}
		for _, r := range rows {
			if strings.Contains(r, "n/a") || !regexp.MustCompile(`[0-9]+(%| GB/s)`).MatchString(r) {
				t.Errorf("%s: utilization row without a number: %q", when, r)
			}
		}
		if !strings.Contains(s, "recorded NVML") {
			t.Errorf("%s: the utilization panel does not say it shows recorded NVML:\n%s", when, s)
		}
	}
	check("the first result")
	model, _ = model.Update(tea.KeyPressMsg{Code: tea.KeyRight})
	check("the second result")
	if s := screen(); !strings.Contains(s, "key o: launch order: comm-first") {
		t.Errorf("the markers before the second result are not shown:\n%s", s)
	}
	model, _ = model.Update(tea.KeyPressMsg{Code: tea.KeyEnd})
	check("the last result")
}
