package sim

import (
	"bufio"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// blindTwoGPUDir is the two-GPU blind set: pairs from models the suite does
// not use, and the suite's two-GPU stream scenarios frozen as files, with
// the simulator's predictions committed before any of it ran on H200s.
const blindTwoGPUDir = "testdata/blind-h200x2"

// loadBlindTwoGPU loads the set's scenario files: the pairs, then the
// stream scenarios under graphs/.
func loadBlindTwoGPU(t *testing.T) (pairs, graphs []scenarios.Scenario) {
	t.Helper()
	lim := H200().Limits()
	for _, dir := range []string{blindTwoGPUDir, filepath.Join(blindTwoGPUDir, "graphs")} {
		files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(files) == 0 {
			t.Fatalf("no scenario files in %s (%v)", dir, err)
		}
		for _, f := range files {
			sc, err := scenarios.Load(f, lim)
			if err != nil {
				t.Fatal(err)
			}
			if sc.GPUs != 2 {
				t.Errorf("%s runs on %d GPUs; the set is for two", f, sc.GPUs)
			}
			if want := strings.TrimSuffix(filepath.Base(f), ".yaml"); sc.Name != want {
				t.Errorf("%s is named %q; the sweeps match runs to files by name", f, sc.Name)
			}
			if sc.IsGraph() {
				graphs = append(graphs, sc)
			} else {
				pairs = append(pairs, sc)
			}
		}
	}
	return pairs, graphs
}

// TestBlindTwoGPUIsUnseen holds the two-GPU blind set to what makes it
// blind: its pairs' GEMMs are in none of the tables the simulator was
// built from (placements, whole-GPU times, measured launches) nor in any
// built-in scenario, whose sweeps the profile was fitted to; its stream
// scenarios are the suite's own, frozen, which no committed sweep has run;
// and every part of it is swept under the strategies its scripts use.
func TestBlindTwoGPUIsUnseen(t *testing.T) {
	pairs, graphs := loadBlindTwoGPU(t)
	if len(pairs) < 10 || len(graphs) < 12 {
		t.Fatalf("%d pairs and %d stream scenarios; the set has 11 and 13", len(pairs), len(graphs))
	}
	h := H200()
	seen := map[gemmKey]string{}
	for k := range indexGEMMTables(h).measured {
		seen[k] = "the model's measured GEMM tables (placements, times alone, launches)"
	}
	suite := map[string]scenarios.Scenario{}
	for _, name := range scenarios.Names() {
		sc, err := scenarios.Find(name)
		if err != nil {
			t.Fatal(err)
		}
		suite[name] = sc
		for _, c := range scenarioGEMMs(sc) {
			if _, ok := seen[keyOf(c)]; !ok {
				seen[keyOf(c)] = "built-in scenario " + name
			}
		}
	}
	for _, sc := range pairs {
		if _, ok := suite[sc.Name]; ok {
			t.Errorf("pair %s has a built-in scenario's name", sc.Name)
		}
		for _, c := range scenarioGEMMs(sc) {
			if where, ok := seen[keyOf(c)]; ok {
				t.Errorf("pair %s: %v is in %s", sc.Name, c, where)
			}
		}
	}
	for _, sc := range graphs {
		if _, ok := suite[sc.Name]; !ok {
			t.Errorf("stream scenario %s is not a built-in one; the set freezes the suite's", sc.Name)
		}
	}
	parts := readBlindTwoGPUStrategies(t)
	if got := slices.Sorted(maps.Keys(parts)); !slices.Equal(got, []string{"async-tp", "layers", "op-streams", "pairs"}) {
		t.Errorf("strategies.txt has parts %v", got)
	}
	for part, list := range parts {
		if _, err := profiler.ParseGrid(list, h.Limits()); err != nil {
			t.Errorf("strategies.txt, %s: %v", part, err)
		}
	}
}

// readBlindTwoGPUStrategies reads strategies.txt: a part, then its
// comma-separated strategies, per line.
func readBlindTwoGPUStrategies(t *testing.T) map[string][]string {
	t.Helper()
	fh, err := os.Open(filepath.Join(blindTwoGPUDir, "strategies.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	out := map[string][]string{}
	sc := bufio.NewScanner(fh)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		part, list, ok := strings.Cut(line, " ")
		if !ok {
			t.Fatalf("strategies.txt: %q is not a part and a list", line)
		}
		out[part] = strings.Split(list, ",")
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
