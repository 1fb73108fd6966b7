package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/recordings"
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
