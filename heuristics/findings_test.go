package heuristics

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// Every findings file holds exactly the findings the advice quotes, each
// with a phrase and where it was measured: a finding the code quotes and a
// file lacks would silently drop from a reason.
func TestFindingsFilesHoldWhatTheAdviceQuotes(t *testing.T) {
	src, err := os.ReadFile("advise.go")
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	for _, m := range regexp.MustCompile(`f\.(?:in|says)\("([^"]+)"\)|f\.join\("[^"]*", "([^"]+)"`).FindAllStringSubmatch(string(src), -1) {
		used[m[1]+m[2]] = true
	}
	if len(used) < 10 {
		t.Fatalf("found only %d quoted findings in advise.go: %v", len(used), slices.Sorted(maps.Keys(used)))
	}
	all, err := loadFindings()
	if err != nil || len(all) == 0 {
		t.Fatalf("findings: %v, %v", all, err)
	}
	for _, f := range all {
		if f.Device == "" || f.DMAMinBytes <= 0 {
			t.Errorf("findings of %q: device or dma_min_bytes missing", f.Device)
		}
		for id := range used {
			if q, ok := f.Quotes[id]; !ok || q.Says == "" || q.Source == "" {
				t.Errorf("findings of %s: %s is missing, or lacks its phrase or its source", f.Device, id)
			}
		}
		for id := range f.Quotes {
			if !used[id] {
				t.Errorf("findings of %s: %s is quoted nowhere", f.Device, id)
			}
		}
	}
}

// A device c3lab measured on gets its own findings; any other the
// reference ones, which say which device they come from; with no findings
// the advice still reads as a sentence, only without the figures.
func TestFindingsFor(t *testing.T) {
	all, err := loadFindings()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if got := FindingsFor(f.Device); got.Device != f.Device {
			t.Errorf("FindingsFor(%q) gave %q's", f.Device, got.Device)
		}
	}
	if got := FindingsFor("Some Future GPU"); got.Device != all[0].Device {
		t.Errorf("an unknown device got %q's findings, want the reference %q", got.Device, all[0].Device)
	}
	sc := scenario(bigGEMM, scenarios.ReduceScatter, 224<<20)
	caps := sim.New(sim.H200()).Capabilities()
	with, without := advise(sc, caps, all[0]), advise(sc, caps, Findings{DMAMinBytes: all[0].DMAMinBytes})
	if with.Strategy != without.Strategy {
		t.Errorf("the findings changed the advice: %s against %s", with.Strategy, without.Strategy)
	}
	for _, r := range without.Reasons {
		if strings.Contains(r, "()") || strings.Contains(r, "  ") || strings.Contains(r, strings.TrimPrefix(all[0].Device, "NVIDIA ")) {
			t.Errorf("reason without findings reads badly or still quotes one: %q", r)
		}
	}
	if strings.Join(with.Reasons, " ") == strings.Join(without.Reasons, " ") {
		t.Error("the findings changed no reason")
	}
}
