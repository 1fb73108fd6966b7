package compare

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/recordings"
)

func near(a, b, rel float64) bool {
	return math.Abs(a-b) <= rel*math.Max(math.Abs(a), math.Abs(b))
}

// The sampler draws, for every kind of result, resamples whose T_c3, U
// (from its own T_serial or the serial default's runs) and F are defined
// and centred on the result's own: profiler computes both.
func TestSamplerMatchesResult(t *testing.T) {
	in := fixture(t, 1, 0.01, 10, nil, scPair, scGraph)
	for _, e := range in.Entries {
		r := e.Result
		s, err := newSampler(r)
		if err != nil {
			t.Fatalf("%s %s: %v", r.Scenario.Name, e.Name, err)
		}
		rng := rand.New(rand.NewPCG(1, 2))
		var tc3, u, f []float64
		for range 400 {
			d := s(rng)
			tc3, u, f = append(tc3, d.TC3), append(u, d.U), append(f, d.F)
		}
		want := pointFigures(r)
		for _, c := range []struct {
			name  string
			draws []float64
			want  float64
			tol   float64 // relative; absolute for F, a fraction
		}{{"T_c3", tc3, want.TC3, 0.01}, {"U", u, want.U, 0.01}, {"F", f, want.F, 0.02}} {
			v := finiteSorted(c.draws)
			if math.IsNaN(c.want) || len(v) != len(c.draws) {
				t.Errorf("%s %s: %s %v, %d of %d draws defined", r.Scenario.Name, e.Name, c.name, c.want, len(v), len(c.draws))
				continue
			}
			m := quantile(v, 0.5)
			if c.name == "F" && math.Abs(m-c.want) > c.tol || c.name != "F" && !near(m, c.want, c.tol) {
				t.Errorf("%s %s: %s draws centred on %v, the result says %v", r.Scenario.Name, e.Name, c.name, m, c.want)
			}
		}
		if e.Name == "dma" && len(r.DefaultReps) == 0 {
			t.Errorf("%s dma: U should come from the serial default's own runs", r.Scenario.Name)
		}
	}
}

// The same results on both sides: nothing changes significantly, every
// interval holds no change, the geomean is 1.
func TestNoChange(t *testing.T) {
	in := fixture(t, 2, 0.01, 20, nil, scPair, scPair2, scGraph)
	rep := Compare(in, in, Options{})
	if len(rep.Pairs) != len(in.Entries) || len(rep.OnlyOld)+len(rep.OnlyNew) != 0 {
		t.Fatalf("%d pairs, %d+%d unpaired; want %d pairs", len(rep.Pairs), len(rep.OnlyOld), len(rep.OnlyNew), len(in.Entries))
	}
	for _, p := range rep.Pairs {
		if p.Verdict != Same || p.TC3.Delta != 1 || !p.TC3.CI.Contains(1) || !p.U.CI.Contains(1) || !p.F.CI.Contains(0) {
			t.Errorf("%s %s: %s, T_c3 %v %v, U %v, F %v; want no change", p.Scenario, p.Name, p.Verdict, p.TC3.Delta, p.TC3.CI, p.U.CI, p.F.CI)
		}
		if p.P != 1 || p.NOld != 20 || p.NNew != 20 {
			t.Errorf("%s %s: p %v n %d+%d; want 1 and 20+20", p.Scenario, p.Name, p.P, p.NOld, p.NNew)
		}
	}
	g := rep.Summary.GeomeanTC3
	if g.Delta != 1 || !g.CI.Contains(1) || g.Significant || rep.Summary.Same != len(rep.Pairs) {
		t.Errorf("summary %+v", rep.Summary)
	}
}

// T_c3 5 % slower on some entries, new draws of the noise everywhere: those
// entries are significant regressions near +5 %, the rest are not, and
// the geomean says about 5 % over the share of entries slowed.
func TestRealChange(t *testing.T) {
	old := fixture(t, 3, 0.01, 20, nil, scPair, scPair2, scGraph)
	slow := map[int]float64{0: 1.05, 4: 1.05, 8: 1.05}
	new := fixture(t, 1003, 0.01, 20, slow, scPair, scPair2, scGraph)
	rep := Compare(old, new, Options{})
	for i, p := range rep.Pairs {
		if _, slowed := slow[i]; slowed {
			if p.Verdict != Slower || !near(p.TC3.Delta, 1.05, 0.02) || p.P >= 0.01 || p.TC3.CI.Lo <= 1.02 {
				t.Errorf("%s %s slowed 5 %%: %s, change %v %v, p %v", p.Scenario, p.Name, p.Verdict, p.TC3.Delta, p.TC3.CI, p.P)
			}
			if !p.U.Significant || p.U.Delta >= 1 {
				t.Errorf("%s %s slowed 5 %%: U %v %v should fall significantly", p.Scenario, p.Name, p.U.Delta, p.U.CI)
			}
			continue
		}
		if p.Verdict != Same {
			t.Errorf("%s %s unchanged: %s, change %v %v, p %v", p.Scenario, p.Name, p.Verdict, p.TC3.Delta, p.TC3.CI, p.P)
		}
	}
	s := rep.Summary
	if s.Slower != 3 || s.Faster != 0 {
		t.Errorf("%d slower, %d faster; want 3 and 0", s.Slower, s.Faster)
	}
	want := math.Pow(1.05, 3.0/9)
	if !near(s.GeomeanTC3.Delta, want, 0.01) || !s.GeomeanTC3.CI.Contains(want) {
		t.Errorf("geomean T_c3 %v %v; want about %v", s.GeomeanTC3.Delta, s.GeomeanTC3.CI, want)
	}
	if got := rep.Regressions(0.03); len(got) != 3 {
		t.Errorf("%d regressions beyond 3 %%; want 3", len(got))
	}
	if got := rep.Regressions(0.10); len(got) != 0 {
		t.Errorf("%d regressions beyond 10 %%; want none", len(got))
	}
}

// Noise only: the same distribution, different draws. At the 5 % level a
// few trials may show a change; most must not.
func TestNoiseOnly(t *testing.T) {
	if testing.Short() {
		t.Skip("many measurements")
	}
	sc := builtin(t, scPair)
	st := fixStrategies()[0].st
	const trials = 60
	sig, covered := 0, 0
	for i := range trials {
		a := measure(t, newNoisy(uint64(10_000+i), 0.02, 0), sc, st, 20)
		b := measure(t, newNoisy(uint64(20_000+i), 0.02, 0), sc, st, 20)
		rep := Compare(Input{Entries: []Entry{{Result: a}}}, Input{Entries: []Entry{{Result: b}}}, Options{Seed: uint64(i)})
		p := rep.Pairs[0]
		if p.TC3.Significant {
			sig++
		}
		if p.TC3.CI.Contains(1) {
			covered++
		}
	}
	t.Logf("noise only: %d of %d trials significant, no change inside the interval in %d", sig, trials, covered)
	if sig > trials/10 {
		t.Errorf("%d of %d noise-only trials significant; want at most %d", sig, trials, trials/10)
	}
	if covered < trials*85/100 {
		t.Errorf("the interval held no change in %d of %d trials; want about 95 %%", covered, trials)
	}
}

// The simulator is deterministic: the change is exact, no interval, no
// p-value; any change is significant, none is no change.
func TestDeterministicExact(t *testing.T) {
	old := fixture(t, 0, 0, 3, nil, scPair)
	same := Compare(old, old, Options{})
	for _, p := range same.Pairs {
		if !p.TC3.Exact || p.TC3.Significant || p.Verdict != Same || !math.IsNaN(p.P) || p.mark() != markEqual {
			t.Errorf("%s %s: %+v; want an exact no change", p.Scenario, p.Name, p.TC3)
		}
	}
	new := fixture(t, 0, 0, 3, map[int]float64{1: 1.02}, scPair)
	rep := Compare(old, new, Options{})
	p := rep.Pairs[1]
	if !p.TC3.Exact || !p.TC3.Significant || p.Verdict != Slower || !near(p.TC3.Delta, 1.02, 1e-6) || p.TC3.CI.Lo != p.TC3.Delta {
		t.Errorf("%s %s: %+v; want exactly 2 %% slower", p.Scenario, p.Name, p.TC3)
	}
	if rep.Summary.Slower != 1 || !rep.Summary.GeomeanTC3.Exact {
		t.Errorf("summary %+v", rep.Summary)
	}
	if n := len(rep.Regressions(0.01)); n != 1 {
		t.Errorf("%d regressions beyond 1 %%; want 1", n)
	}
	if n := len(rep.Regressions(0.05)); n != 0 {
		t.Errorf("%d regressions beyond 5 %%; want 0", n)
	}
}

// Every input kind loads, and any two pair up: a sweep file, a recording
// and result JSON (one result, an array, replay's object).
func TestMixedInputKinds(t *testing.T) {
	in := fixture(t, 4, 0.01, 6, nil, scPair)
	dir := t.TempDir()
	sweep := filepath.Join(dir, "sweep.json")
	writeSweep(t, sweep, in)

	rec := filepath.Join(dir, "lab.c3rec")
	rw, err := recordings.Create(rec, recordings.Header{Version: "test", Backend: "sim"}, recordings.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range in.Entries {
		rw.Scenario(e.Result.Scenario)
		rw.Strategy(e.Result.Strategy)
		rw.Result(e.Result)
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(dir, "run.json")
	writeJSONFile(t, one, in.Entries[1].Result)
	var rs []profiler.Result
	for _, e := range in.Entries {
		rs = append(rs, e.Result)
	}
	arr := filepath.Join(dir, "array.json")
	writeJSONFile(t, arr, rs)
	replay := filepath.Join(dir, "replay.json")
	writeJSONFile(t, replay, map[string]any{"header": map[string]string{}, "complete": true, "results": rs})

	want := map[string]struct {
		kind string
		n    int
	}{sweep: {KindSweep, 3}, rec: {KindRecording, 3}, one: {KindResults, 1}, arr: {KindResults, 3}, replay: {KindResults, 3}}
	loaded := map[string]Input{}
	for path, w := range want {
		got, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(path), err)
		}
		if got.Source.Kind != w.kind || got.Source.Results != w.n || got.Source.Backend != "sim" {
			t.Errorf("%s: %+v; want %s of %d on sim", filepath.Base(path), got.Source, w.kind, w.n)
		}
		loaded[path] = got
	}
	for _, c := range []struct {
		a, b  string
		pairs int
	}{{sweep, rec, 3}, {rec, arr, 3}, {one, sweep, 1}, {replay, one, 1}} {
		rep := Compare(loaded[c.a], loaded[c.b], Options{Resamples: 200})
		if len(rep.Pairs) != c.pairs {
			t.Errorf("%s vs %s: %d pairs; want %d", filepath.Base(c.a), filepath.Base(c.b), len(rep.Pairs), c.pairs)
		}
		for _, p := range rep.Pairs {
			if p.TC3.Delta != 1 || p.Verdict != Same {
				t.Errorf("%s vs %s: %s %s changed: %v", filepath.Base(c.a), filepath.Base(c.b), p.Scenario, p.Name, p.TC3.Delta)
			}
		}
		if c.pairs == 1 && len(rep.OnlyOld)+len(rep.OnlyNew) != 2 {
			t.Errorf("%s vs %s: unpaired %v %v; want the other two", filepath.Base(c.a), filepath.Base(c.b), rep.OnlyOld, rep.OnlyNew)
		}
	}
	// The sweep's names show; a recording has none, so its pairs show the
	// strategy's canonical string.
	rep := Compare(loaded[sweep], loaded[sweep], Options{Resamples: 100})
	if rep.Pairs[1].Name != "comm-first+prio" {
		t.Errorf("sweep vs sweep names %q", rep.Pairs[1].Name)
	}
	rep = Compare(loaded[sweep], loaded[rec], Options{Resamples: 100})
	if rep.Pairs[1].Name != in.Entries[1].Result.Strategy.String() {
		t.Errorf("sweep vs recording names %q", rep.Pairs[1].Name)
	}
}

func writeJSONFile(t *testing.T, path string, v any) {
	t.Helper()
	data, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Bad input is an error that names the file, never a panic.
func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{
		"empty.json":   "",
		"text.json":    "hello",
		"other.json":   `{"tool": "something else"}`,
		"object.json":  `{"a": 1}`,
		"noname.json":  `[{"t_c3": {}}]`,
		"newer.json":   `{"tool": "c3lab sweep", "format": 99}`,
		"nosweep.json": `{"tool": "c3lab sweep", "format": 2, "results": []}`,
		"badrec.c3rec": "C3LABREC\x02\x00\x00\x00garbage",
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := Load(path); err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s: error %v; want one naming the file", name, err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing.json")); err == nil {
		t.Error("a missing file loads")
	}
}

// Format-1 sweeps (written before graphs) load brought up to date: two
// committed one-GPU sweeps of the same suite pair up, with U on both sides.
func TestFormat1Sweeps(t *testing.T) {
	root := "../../backends/cuda/results/"
	a, err := Load(root + "2026-12-01-h200x1/sweep-host.json")
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(root + "2026-12-01-h200x1-i14/sweep-host.json")
	if err != nil {
		t.Fatal(err)
	}
	rep := Compare(a, b, Options{Resamples: 200})
	if len(rep.Pairs) < 10 {
		t.Fatalf("%d pairs; want the suite's", len(rep.Pairs))
	}
	withU := 0
	for _, p := range rep.Pairs {
		if !p.TC3.CI.Valid() || p.NOld == 0 {
			t.Errorf("%s %s: no interval (%v)", p.Scenario, p.Name, p.Notes)
		}
		if p.U.Known() {
			withU++
		}
	}
	if withU == 0 || rep.Summary.NU == 0 {
		t.Error("no pair has U on both sides: the format-1 upgrade did not fill it")
	}
}

// A result without repetitions (an early sweep) pairs, with its point
// change and no interval, and says why.
func TestNoRepetitions(t *testing.T) {
	in := fixture(t, 5, 0.01, 6, nil, scPair)
	bare := Input{}
	for _, e := range in.Entries {
		r := e.Result
		r.Reps, r.RoundOf, r.DefaultReps = nil, nil, nil
		bare.Entries = append(bare.Entries, Entry{Name: e.Name, Result: r})
	}
	rep := Compare(in, bare, Options{Resamples: 100})
	for _, p := range rep.Pairs {
		if p.TC3.Delta != 1 || p.TC3.CI.Valid() || p.TC3.Significant || len(p.Notes) == 0 || p.NNew != 0 {
			t.Errorf("%s %s: %+v, notes %v", p.Scenario, p.Name, p.TC3, p.Notes)
		}
	}
	if rep.Summary.GeomeanTC3.CI.Valid() {
		t.Error("the geomean has an interval though no pair has one")
	}
}

// Duplicates keep the last; unpaired entries are listed.
func TestPairing(t *testing.T) {
	in := fixture(t, 6, 0.01, 6, nil, scPair)
	dup := Input{Entries: append(append([]Entry{}, in.Entries...), in.Entries[0])}
	rep := Compare(dup, Input{Entries: in.Entries[:2]}, Options{Resamples: 100})
	if len(rep.Pairs) != 2 || len(rep.OnlyOld) != 1 || len(rep.OnlyNew) != 0 || len(rep.Notes) != 1 {
		t.Errorf("pairs %d, only old %v, only new %v, notes %v", len(rep.Pairs), rep.OnlyOld, rep.OnlyNew, rep.Notes)
	}
}

func TestMannWhitney(t *testing.T) {
	seq := func(a, b int) []float64 {
		var v []float64
		for i := a; i <= b; i++ {
			v = append(v, float64(i))
		}
		return v
	}
	for _, c := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"3 below 3", seq(1, 3), seq(4, 6), 0.1},
		{"5 below 5", seq(1, 5), seq(6, 10), 2.0 / 252},
		{"interleaved", []float64{1, 3, 5}, []float64{2, 4, 6}, 0.7},
		{"all alike", []float64{2, 2, 2}, []float64{2, 2}, 1},
		// Ties: the normal approximation (scipy's, with both corrections).
		{"ties", []float64{1, 2, 2, 3, 3}, []float64{3, 4, 4, 5, 6}, 0.019244},
		{"empty", nil, seq(1, 3), math.NaN()},
	} {
		got := MannWhitney(c.x, c.y)
		if math.IsNaN(c.want) != math.IsNaN(got) || (!math.IsNaN(c.want) && math.Abs(got-c.want) > 1e-5) {
			t.Errorf("%s: p %v; want %v", c.name, got, c.want)
		}
	}
	// Large samples: the approximation stays close to the exact test.
	x, y := seq(1, 25), seq(20, 44)
	ex := MannWhitney(x, y)
	if ex <= 0 || ex > 1e-6 {
		t.Errorf("25 vs 25 shifted: p %v", ex)
	}
}

// The table and the chart at 80 columns, against golden files; every line
// fits.
func TestGolden80(t *testing.T) {
	old, err := Load("testdata/old.json")
	if *update || err != nil {
		writeSweep(t, "testdata/old.json", fixture(t, 7, 0.01, 10, nil, scPair, scPair2))
		writeSweep(t, "testdata/new.json", fixture(t, 1007, 0.01, 10, map[int]float64{1: 1.05, 3: 0.9}, scPair, scPair2))
		if old, err = Load("testdata/old.json"); err != nil {
			t.Fatal(err)
		}
	}
	new, err := Load("testdata/new.json")
	if err != nil {
		t.Fatal(err)
	}
	old.Source.Path, new.Source.Path = "old.json", "new.json"
	rep := Compare(old, new, Options{})
	var b bytes.Buffer
	if err := WriteTable(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n")
	if err := WriteChart(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	b.WriteString("\n--only-significant\n")
	if err := WriteTable(&b, rep.OnlySignificant(), 80); err != nil {
		t.Fatal(err)
	}
	checkGolden80(t, b.Bytes(), "testdata/compare.golden", "Golden80")
	if rep.Summary.Slower != 1 || rep.Summary.Faster != 1 {
		t.Errorf("fixture: %d slower, %d faster; want 1 and 1", rep.Summary.Slower, rep.Summary.Faster)
	}

	// JSON: every pair, nulls for what is unknown, the summary.
	b.Reset()
	if err := WriteJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	var js struct {
		Pairs []struct {
			Verdict string `json:"verdict"`
			TC3     struct {
				Change *float64 `json:"change"`
				Lo, Hi *float64
			} `json:"t_c3"`
			P *float64 `json:"p"`
		} `json:"pairs"`
		Summary struct {
			Slower int `json:"slower"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(b.Bytes(), &js); err != nil {
		t.Fatal(err)
	}
	if len(js.Pairs) != len(rep.Pairs) || js.Summary.Slower != 1 || js.Pairs[1].Verdict != "slower" || js.Pairs[1].TC3.Lo == nil || js.Pairs[1].P == nil {
		t.Errorf("JSON: %s", b.String())
	}
}

// A result's rounds are resampled whole, as profiler resamples them:
// a noisy result with its five rounds gives draws; one whose repetitions
// all sit in one round gives none, and says why.
func TestResampleRounds(t *testing.T) {
	r := fixture(t, 8, 0.01, 12, nil, scPair).Entries[2].Result
	if !hasNoise(r) || r.CI == nil || r.CI.Rounds != 5 {
		t.Fatalf("fixture: noise %v, intervals %+v; want five rounds", hasNoise(r), r.CI)
	}
	s, err := newSampler(r)
	if err != nil {
		t.Fatal(err)
	}
	rng := newNoisy(1, 0, 0).rng
	seen := map[float64]bool{}
	for range 50 {
		seen[s(rng).TC3] = true
	}
	if len(seen) < 2 || len(r.Reps[backends.ModeConcurrent]) != 12 {
		t.Fatalf("%d distinct T_c3 in 50 draws", len(seen))
	}
	one := r
	one.RoundOf = map[backends.Mode][]int{}
	for m, reps := range r.Reps {
		one.RoundOf[m] = make([]int, len(reps))
	}
	one.DefaultRoundOf = nil
	one.DefaultReps = nil
	if _, err := newSampler(one); err == nil || !strings.Contains(err.Error(), "round") {
		t.Errorf("one round: error %v; want one saying why", err)
	}
}
