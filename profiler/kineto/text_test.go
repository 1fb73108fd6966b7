package kineto

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestGoldenReports renders the fixtures' reports at several widths.
func TestGoldenReports(t *testing.T) {
	var reps []*Report
	for _, f := range []string{"synthetic-tp2-rank0.json", "synthetic-tp2-rank1.json"} {
		tr, err := ReadFile(fixture(t, f))
		if err != nil {
			t.Fatal(err)
		}
		tr.File = f // the golden files do not depend on where the tests run
		reps = append(reps, mustAnalyze(t, tr, Select{Step: "3"}))
	}
	for _, w := range []int{80, 100, 140} {
		var b strings.Builder
		if err := WriteText(&b, reps, w); err != nil {
			t.Fatal(err)
		}
		for i, l := range strings.Split(b.String(), "\n") {
			if n := utf8.RuneCountInString(l); n > w {
				t.Errorf("width %d: line %d has %d columns: %q", w, i+1, n, l)
			}
		}
		golden(t, fmt.Sprintf("synthetic-tp2-step3-w%d.txt", w), b.String())
	}
	var b strings.Builder
	if err := WriteJSON(&b, reps); err != nil {
		t.Fatal(err)
	}
	var back struct {
		Format string `json:"format"`
		Ranks  []struct {
			Rank    int      `json:"rank"`
			Overlap *float64 `json:"overlap"`
			Classes []struct {
				Key string `json:"key"`
			} `json:"classes"`
		} `json:"ranks"`
	}
	if err := json.Unmarshal([]byte(b.String()), &back); err != nil {
		t.Fatal(err)
	}
	if back.Format != "c3lab-import/1" || len(back.Ranks) != 2 || back.Ranks[1].Rank != 1 || back.Ranks[0].Overlap == nil || len(back.Ranks[0].Classes) != 7 {
		t.Errorf("JSON: %s", b.String())
	}
	golden(t, "synthetic-tp2-step3.json", b.String())
}
