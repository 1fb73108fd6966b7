package compare

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// state is one GPU's NVML reading.
func state(dev int, sm, mem, temp float64, thr uint64) telemetry.GPUState {
	return telemetry.GPUState{Device: dev, SMClockMHz: sm, MemClockMHz: mem, PowerW: 400, TempC: temp, Throttle: thr}
}

// h200 is an H200 at full clocks, cool and unthrottled.
func h200(dev int) telemetry.GPUState { return state(dev, 1980, 3201, 40, 0) }

// withDrift gives r a machine record of 5 rounds: the isolated runs read
// iso at their start and end, the concurrent runs con (a state per GPU).
func withDrift(r profiler.Result, iso, con []telemetry.GPUState) profiler.Result {
	d := &profiler.Drift{}
	for k := range 5 {
		for _, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
			s := iso
			if m == backends.ModeConcurrent {
				s = con
			}
			d.Runs = append(d.Runs, profiler.DriftRun{Round: k, Mode: m, Start: s, End: s})
		}
	}
	d.Check(profiler.DefaultDriftThresholds())
	r.Drift = d
	return r
}

// drifted returns in with the machine record of entry i set to con in its
// concurrent runs (the isolated ones at full clocks); entries not in con
// keep none.
func drifted(in Input, con map[int][]telemetry.GPUState) Input {
	out := in
	out.Entries = append([]Entry(nil), in.Entries...)
	for i, s := range con {
		out.Entries[i].Result = withDrift(out.Entries[i].Result, []telemetry.GPUState{h200(0)}, s)
	}
	return out
}

func gpus(s ...telemetry.GPUState) []telemetry.GPUState { return s }

// The machine states of a pair's two sides: the same machine is not
// flagged, a clock, temperature or throttle change beyond the thresholds
// is, with the reason.
func TestMachinePair(t *testing.T) {
	th := profiler.DefaultDriftThresholds()
	missSM := state(0, 0, 3201, 40, 0)
	missSM.Missing = []string{"sm_clock"}
	tests := []struct {
		name     string
		old, new []telemetry.GPUState
		want     []string // the reasons; none: not flagged
	}{
		{"same machine", gpus(h200(0)), gpus(h200(0)), nil},
		{"SM clock within 2 %", gpus(h200(0)), gpus(state(0, 1950, 3201, 40, 0)), nil},
		{"SM clock down 3 %", gpus(h200(0)), gpus(state(0, 1920, 3201, 40, 0)), []string{"SM clock -3.0 %"}},
		{"SM clock up in new", gpus(state(0, 1800, 3201, 40, 0)), gpus(h200(0)), []string{"SM clock +10.0 %"}},
		{"memory clock", gpus(h200(0)), gpus(state(0, 1980, 2619, 40, 0)), []string{"memory clock -18.2 %"}},
		{"temperature 5 C", gpus(h200(0)), gpus(state(0, 1980, 3201, 45, 0)), nil},
		{"temperature 6 C", gpus(h200(0)), gpus(state(0, 1980, 3201, 46, 0)), []string{"temperature +6 C"}},
		{"power cap in new only", gpus(h200(0)), gpus(state(0, 1980, 3201, 40, 4)), []string{"sw-power-cap in new only"}},
		{"thermal in old only", gpus(state(0, 1980, 3201, 40, 32)), gpus(h200(0)), []string{"sw-thermal in old only"}},
		{"same throttle both", gpus(state(0, 1980, 3201, 40, 4)), gpus(state(0, 1980, 3201, 40, 4)), nil},
		{"idle is no throttle", gpus(state(0, 1980, 3201, 40, 1)), gpus(h200(0)), nil},
		{"clock drop and power cap", gpus(h200(0)), gpus(state(0, 1930, 3201, 40, 4)), []string{"SM clock -2.5 %", "sw-power-cap in new only"}},
		{"unread SM clock is no drop", gpus(h200(0)), gpus(missSM), nil},
		{"two GPUs, one changed", gpus(h200(0), h200(1)), gpus(h200(0), state(1, 1900, 3201, 40, 4)), []string{"GPU 1 SM clock -4.0 %", "GPU 1 sw-power-cap in new only"}},
		{"a GPU in old only", gpus(h200(0), h200(1)), gpus(h200(0)), []string{"GPU 1 in old only"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := profiler.Result{}
			o := withDrift(r, tt.old, tt.old).Drift.ModeStates(backends.ModeConcurrent)
			n := withDrift(r, tt.new, tt.new).Drift.ModeStates(backends.ModeConcurrent)
			m := compareMachine(o, n, th)
			if m.Flagged != (len(tt.want) > 0) || strings.Join(m.Reasons, "; ") != strings.Join(tt.want, "; ") {
				t.Errorf("flagged %v, reasons %q; want %q", m.Flagged, m.Reasons, tt.want)
			}
			if len(m.Old) != len(tt.old) || len(m.New) != len(tt.new) || m.Old[0].Readings != 10 {
				t.Errorf("states %+v -> %+v", m.Old, m.New)
			}
		})
	}
}

// Only the concurrent runs count: the isolated runs' state (which
// Drift.Check compares within a result) does not flag a pair.
func TestMachineConcurrentOnly(t *testing.T) {
	r := profiler.Result{}
	old := withDrift(r, gpus(h200(0)), gpus(h200(0)))
	new := withDrift(r, gpus(state(0, 1500, 3201, 70, 4)), gpus(h200(0)))
	m := compareMachine(concurrentSums(old), concurrentSums(new), profiler.DefaultDriftThresholds())
	if m.Flagged {
		t.Errorf("flagged on the isolated runs: %q", m.Reasons)
	}
}

// A real change that comes with a clock drop is counted as one that
// coincides with a changed machine; a pair flagged without a significant
// change, and a significant change on an unchanged machine, are not.
func TestMachineSummary(t *testing.T) {
	old := fixture(t, 7, 0.01, 10, nil, scPair, scPair2)
	new := fixture(t, 1007, 0.01, 10, map[int]float64{1: 1.05, 3: 0.9}, scPair, scPair2)
	same, slow := gpus(h200(0), h200(1)), gpus(h200(0), state(1, 1900, 3201, 40, 4))
	all := func(s []telemetry.GPUState) map[int][]telemetry.GPUState {
		m := map[int][]telemetry.GPUState{}
		for i := range old.Entries {
			m[i] = s
		}
		return m
	}
	newCon := all(same)
	newCon[1] = slow // the 5 % slower pair, on a slower GPU 1
	newCon[2] = slow // no change of T_c3, on a slower GPU 1
	rep := Compare(drifted(old, all(same)), drifted(new, newCon), Options{})
	s := rep.Summary
	m := s.Machine
	if m == nil {
		t.Fatal("no machine summary")
	}
	if rep.Pairs[1].Verdict != Slower || rep.Pairs[3].Verdict != Faster {
		t.Fatalf("fixture verdicts %v %v", rep.Pairs[1].Verdict, rep.Pairs[3].Verdict)
	}
	if m.Pairs != 6 || m.FlaggedPairs != 2 || m.Significant != s.Slower+s.Faster || m.SignificantFlagged != 1 || m.SignificantUnrecorded != 0 || m.OneSided != 0 {
		t.Errorf("summary %+v", *m)
	}
	for i, p := range rep.Pairs {
		if p.Machine == nil || p.Machine.Flagged != (i == 1 || i == 2) {
			t.Errorf("pair %d: machine %+v", i, p.Machine)
		}
	}
	if want := "GPU 1 SM clock -4.0 %, GPU 1 sw-power-cap in new only"; rep.Pairs[1].Machine.reasonLine() != want {
		t.Errorf("reasons %q, want %q", rep.Pairs[1].Machine.reasonLine(), want)
	}
	// Over all pairs GPU 1 ran 2 of 6 pairs at 1900 MHz: -1.3 %, within
	// the limit; the power cap was seen in new only.
	if want := "GPU 1 sw-power-cap in new only"; !m.Flagged || m.reasonLine() != want {
		t.Errorf("overall: %q, want %q", m.reasonLine(), want)
	}
	if g := m.New[1]; g.Device != 1 || !near(g.SMClockMHz, (4*1980+2*1900)/6.0, 1e-12) || g.Readings != 60 {
		t.Errorf("overall new GPU 1 %+v", g)
	}

	// Without the record on one side, nothing is compared, and it says so.
	rep = Compare(drifted(old, all(same)), new, Options{})
	if m := rep.Summary.Machine; m == nil || m.Pairs != 0 || m.OneSided != 6 || m.SignificantUnrecorded != 2 {
		t.Errorf("one-sided summary %+v", m)
	}
	for _, p := range rep.Pairs {
		if p.Machine != nil {
			t.Errorf("one-sided pair compared: %+v", p.Machine)
		}
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "6 pair(s) have a machine record on one side only; not compared") || strings.Contains(b.String(), "changed machine") {
		t.Errorf("one-sided table:\n%s", b.String())
	}
}

// Without machine records (the simulator, older files) the table and the
// JSON say nothing of the machine.
func TestMachineNone(t *testing.T) {
	old := fixture(t, 7, 0.01, 4, nil, scPair)
	new := fixture(t, 8, 0.01, 4, nil, scPair)
	rep := Compare(old, new, Options{})
	if rep.Summary.Machine != nil {
		t.Fatalf("machine summary without records: %+v", rep.Summary.Machine)
	}
	var tb, jb bytes.Buffer
	if err := WriteTable(&tb, rep, 80); err != nil {
		t.Fatal(err)
	}
	if err := WriteJSON(&jb, rep); err != nil {
		t.Fatal(err)
	}
	if s := tb.String() + jb.String(); strings.Contains(s, "machine") {
		t.Errorf("output speaks of the machine:\n%s", s)
	}
}

// The table with machine records, against a golden file: flagged rows
// carry a line with the reasons, the legend and the footer the states;
// the JSON carries the same per pair and in the summary.
func TestMachineGolden(t *testing.T) {
	old := fixture(t, 7, 0.01, 10, nil, scPair, scPair2)
	new := fixture(t, 1007, 0.01, 10, map[int]float64{1: 1.05, 3: 0.9}, scPair, scPair2)
	same := gpus(h200(0), h200(1))
	oc, nc := map[int][]telemetry.GPUState{}, map[int][]telemetry.GPUState{}
	for i := range old.Entries {
		oc[i], nc[i] = same, same
	}
	nc[1] = gpus(h200(0), state(1, 1900, 3201, 47, 4))
	oc[4] = gpus(h200(0), state(1, 1980, 3201, 40, 32))
	delete(oc, 5) // an old file without a record
	old, new = drifted(old, oc), drifted(new, nc)
	old.Source.Path, new.Source.Path = "old.json", "new.json"
	rep := Compare(old, new, Options{})
	var b bytes.Buffer
	if err := WriteTable(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	checkGolden80(t, b.Bytes(), filepath.Join("testdata", "compare-machine.golden"), "MachineGolden")

	var jb bytes.Buffer
	if err := WriteJSON(&jb, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pairs []struct {
			Machine *struct {
				Old, New []struct {
					Device     int      `json:"device"`
					SMClockMHz *float64 `json:"sm_clock_mhz"`
					Throttle   string   `json:"throttle_reasons"`
				}
				Flagged bool     `json:"flagged"`
				Reasons []string `json:"reasons"`
			} `json:"machine"`
		} `json:"pairs"`
		Summary struct {
			Machine *struct {
				Pairs              int `json:"pairs"`
				FlaggedPairs       int `json:"flagged_pairs"`
				Significant        int `json:"significant"`
				SignificantFlagged int `json:"significant_flagged"`
				Unrecorded         int `json:"significant_unrecorded"`
				OneSided           int `json:"one_sided"`
				Thresholds         struct {
					SMClockPct float64 `json:"sm_clock_pct"`
				} `json:"thresholds"`
				Old []json.RawMessage `json:"old"`
			} `json:"machine"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(jb.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	p1 := doc.Pairs[1].Machine
	if p1 == nil || !p1.Flagged || len(p1.New) != 2 || p1.New[1].SMClockMHz == nil || *p1.New[1].SMClockMHz != 1900 || p1.New[1].Throttle != "sw-power-cap" ||
		strings.Join(p1.Reasons, "; ") != "GPU 1 SM clock -4.0 %; GPU 1 temperature +7 C; GPU 1 sw-power-cap in new only" {
		t.Errorf("pair 1 machine JSON %+v", p1)
	}
	if doc.Pairs[0].Machine == nil || doc.Pairs[0].Machine.Flagged || doc.Pairs[5].Machine != nil {
		t.Errorf("pairs 0 and 5: %+v %+v", doc.Pairs[0].Machine, doc.Pairs[5].Machine)
	}
	sm := doc.Summary.Machine
	if sm == nil || sm.Pairs != 5 || sm.FlaggedPairs != 2 || sm.OneSided != 1 || sm.Thresholds.SMClockPct != 2 || len(sm.Old) != 2 ||
		sm.Significant+sm.Unrecorded != rep.Summary.Slower+rep.Summary.Faster {
		t.Errorf("summary machine JSON %+v", sm)
	}
}

func TestWrapList(t *testing.T) {
	tests := []struct {
		items []string
		w     int
		want  []string
	}{
		{[]string{"a"}, 20, []string{"head: a"}},
		{[]string{"aaa", "bbb"}, 20, []string{"head: aaa, bbb"}},
		{[]string{"aaa", "bbb", "ccc"}, 14, []string{"head: aaa,", "      bbb, ccc"}},
		{[]string{"aaaaaaaaaaaaaaaaaaaa", "b"}, 10, []string{"head: aaaaaaaaaaaaaaaaaaaa,", "      b"}},
	}
	for _, tt := range tests {
		if got := wrapList("head: ", tt.items, tt.w); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("wrapList(%q, %d) = %q, want %q", tt.items, tt.w, got, tt.want)
		}
	}
}

// The committed H200 sweeps, each run twice (FINDINGS section 5): how many
// significant changes came with a changed machine is logged, not
// asserted (it is what the data says); the counts must add up.
func TestMachineH200Sweeps(t *testing.T) {
	dir := filepath.Join("..", "..", "backends", "cuda", "results", "2026-12-01-h200x1-i16")
	for _, name := range []string{"passes", "fixed"} {
		t.Run(name, func(t *testing.T) {
			var in [2]Input
			for i := range in {
				var err error
				if in[i], err = Load(filepath.Join(dir, "sweep-"+name+"-"+string(rune('1'+i))+".json")); err != nil {
					t.Fatal(err)
				}
			}
			rep := Compare(in[0], in[1], Options{})
			s, m := rep.Summary, rep.Summary.Machine
			if m == nil {
				t.Fatal("no machine summary: every result of these sweeps has a drift record")
			}
			if m.Pairs != s.Pairs || m.OneSided != 0 || m.SignificantUnrecorded != 0 {
				t.Errorf("%d pairs, %d with records on both sides, %d one-sided, %d unrecorded", s.Pairs, m.Pairs, m.OneSided, m.SignificantUnrecorded)
			}
			if m.Significant+m.SignificantUnrecorded != s.Faster+s.Slower || m.SignificantFlagged > m.Significant || m.SignificantFlagged > m.FlaggedPairs {
				t.Errorf("counts do not add up: %+v, %d faster, %d slower", *m, s.Faster, s.Slower)
			}
			flagged, sigFlagged := 0, 0
			for _, p := range rep.Pairs {
				if p.Machine == nil {
					t.Fatalf("%s %s: no machine comparison", p.Scenario, p.Name)
				}
				if p.Machine.Flagged {
					flagged++
					if p.Verdict == Faster || p.Verdict == Slower {
						sigFlagged++
					}
				}
				if p.Verdict == Faster || p.Verdict == Slower || p.Machine.Flagged {
					why := p.Machine.reasonLine()
					if why == "" {
						why = "unchanged"
					}
					t.Logf("%-50s %-16s %-6s %s  machine: %s", p.Scenario, p.Name, p.Verdict, formatChange(TC3, p.TC3), why)
				}
			}
			if flagged != m.FlaggedPairs || sigFlagged != m.SignificantFlagged {
				t.Errorf("summary %d flagged, %d significant flagged; pairs say %d, %d", m.FlaggedPairs, m.SignificantFlagged, flagged, sigFlagged)
			}
			for i := range m.Old {
				t.Logf("old GPU %d: %s", m.Old[i].Device, formatState(m.Old[i]))
				t.Logf("new GPU %d: %s", m.New[i].Device, formatState(m.New[i]))
			}
			t.Logf("%s: %d of %d significant change(s) come with a changed machine; %d of %d pair(s) flagged; overall: %s",
				name, m.SignificantFlagged, m.Significant, m.FlaggedPairs, m.Pairs, m.reasonLine())
		})
	}
}

// withDuring gives r a machine record of 5 rounds at full clocks around
// every run (h200, a state per GPU of con) whose concurrent runs read con
// during them; the isolated runs read full clocks during them too.
func withDuring(r profiler.Result, con []profiler.DuringState) profiler.Result {
	var around []telemetry.GPUState
	var iso []profiler.DuringState
	for _, c := range con {
		around = append(around, h200(c.Device))
		iso = append(iso, profiler.DuringState{Device: c.Device, Readings: 40, SMClockMHz: 1980, MinSMClockMHz: 1980, MemClockMHz: 3201, PowerW: 400, TempC: 40, MaxTempC: 40})
	}
	r = withDrift(r, around, around)
	for i := range r.Drift.Runs {
		r.Drift.Runs[i].During = iso
		if r.Drift.Runs[i].Mode == backends.ModeConcurrent {
			r.Drift.Runs[i].During = con
		}
	}
	r.Drift.Check(profiler.DefaultDriftThresholds())
	return r
}

// during is one GPU's readings during a run.
func during(dev int, sm, temp float64, thr uint64) profiler.DuringState {
	return profiler.DuringState{Device: dev, Readings: 40, SMClockMHz: sm, MinSMClockMHz: sm - 15, MemClockMHz: 3201, PowerW: 690, TempC: temp, MaxTempC: temp + 1, Throttle: thr}
}

// A pair is compared by the readings during the concurrent runs when both
// sides have them: the same 1980 MHz around every run on both sides, but
// new ran at the power cap under load. A side without them (an older
// file) makes the pair fall back to the readings around the runs, and
// says so.
func TestMachineDuring(t *testing.T) {
	th := profiler.DefaultDriftThresholds()
	r := profiler.Result{}
	full := withDuring(r, []profiler.DuringState{during(0, 1980, 45, 0)})
	capped := withDuring(r, []profiler.DuringState{during(0, 1560, 60, 4)})
	m, one := compareSides(sidesOf(full), sidesOf(capped), th)
	if m == nil || one || !m.During || !m.Flagged ||
		m.reasonLine() != "SM clock -21.2 %, temperature +15 C, sw-power-cap in new only" || m.New[0].Readings != 200 || m.New[0].SMClockMHz != 1560 {
		t.Errorf("during: %+v, one-sided %v", m, one)
	}
	old := withDrift(r, gpus(h200(0)), gpus(h200(0))) // no readings during the runs
	m, one = compareSides(sidesOf(old), sidesOf(capped), th)
	if m == nil || one || m.During || m.Flagged || m.New[0].Readings != 10 {
		t.Errorf("around: %+v, one-sided %v", m, one)
	}
	js, err := json.Marshal(m)
	if err != nil || !strings.HasPrefix(string(js), `{"readings":"around",`) {
		t.Errorf("JSON %s %v", js, err)
	}
	if m, one = compareSides(sidesOf(r), sidesOf(capped), th); m != nil || !one {
		t.Errorf("one side without a record: %+v, one-sided %v", m, one)
	}
	if m, one = compareSides(sidesOf(r), sidesOf(r), th); m != nil || one {
		t.Errorf("no record: %+v, one-sided %v", m, one)
	}
}

// The table and JSON of a comparison by the readings during the runs,
// against a golden file; with one pair lacking them on a side, the
// summary falls back to the readings around the runs and says how many
// pairs were compared by those during them.
func TestMachineDuringGolden(t *testing.T) {
	old := fixture(t, 7, 0.01, 10, nil, scPair, scPair2)
	new := fixture(t, 1007, 0.01, 10, map[int]float64{1: 1.05, 3: 0.9}, scPair, scPair2)
	set := func(in Input, con map[int][]profiler.DuringState) Input {
		out := in
		out.Entries = append([]Entry(nil), in.Entries...)
		for i, c := range con {
			out.Entries[i].Result = withDuring(out.Entries[i].Result, c)
		}
		return out
	}
	same := []profiler.DuringState{during(0, 1980, 45, 0), during(1, 1980, 45, 0)}
	oc, nc := map[int][]profiler.DuringState{}, map[int][]profiler.DuringState{}
	for i := range old.Entries {
		oc[i], nc[i] = same, same
	}
	nc[1] = []profiler.DuringState{during(0, 1980, 45, 0), during(1, 1605, 58, 4)}
	o, n := set(old, oc), set(new, nc)
	o.Source.Path, n.Source.Path = "old.json", "new.json"
	rep := Compare(o, n, Options{})
	sm := rep.Summary.Machine
	if sm == nil || !sm.During || sm.DuringPairs != 6 || sm.Pairs != 6 || sm.FlaggedPairs != 1 {
		t.Fatalf("summary %+v", sm)
	}
	var b bytes.Buffer
	if err := WriteTable(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	checkGolden80(t, b.Bytes(), filepath.Join("testdata", "compare-machine-during.golden"), "MachineDuringGolden")
	var jb bytes.Buffer
	if err := WriteJSON(&jb, rep); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Pairs []struct {
			Machine struct {
				Readings string `json:"readings"`
			} `json:"machine"`
		} `json:"pairs"`
		Summary struct {
			Machine struct {
				Readings    string `json:"readings"`
				DuringPairs int    `json:"during_pairs"`
			} `json:"machine"`
		} `json:"summary"`
	}
	if err := json.Unmarshal(jb.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Pairs[1].Machine.Readings != "during" || doc.Summary.Machine.Readings != "during" || doc.Summary.Machine.DuringPairs != 6 {
		t.Errorf("JSON %+v", doc)
	}

	// Pair 4's old side from a file without readings during the runs.
	oc4 := withDrift(old.Entries[4].Result, gpus(h200(0), h200(1)), gpus(h200(0), h200(1)))
	o.Entries[4].Result = oc4
	rep = Compare(o, n, Options{})
	sm = rep.Summary.Machine
	if sm.During || sm.DuringPairs != 5 || sm.Pairs != 6 || rep.Pairs[4].Machine.During || !rep.Pairs[1].Machine.During {
		t.Fatalf("mixed summary %+v", sm)
	}
	b.Reset()
	if err := WriteTable(&b, rep, 80); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"machine during the runs: GPU 1 SM clock", "machine, concurrent runs (NVML at each run's start and end):",
		"(5 of 6 pair(s) compared by NVML read during their runs"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("mixed table lacks %q:\n%s", want, b.String())
		}
	}
}

// The committed H200 sweeps were written before the readings during the
// runs: their drift records load without them, say nothing of the clocks
// during the runs, and are compared by the readings around the runs.
func TestMachineOldSweepsAround(t *testing.T) {
	path := filepath.Join("..", "..", "backends", "cuda", "results", "2026-12-01-h200x1-i16", "sweep-fixed-1.json")
	in, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range in.Entries {
		d := e.Result.Drift
		if d == nil || len(d.Runs) == 0 || d.During != nil || d.Runs[0].During != nil || d.ClockNote() != "" {
			t.Fatalf("%s: drift record %+v", e.Result.Scenario.Name, d)
		}
	}
	rep := Compare(in, in, Options{})
	if m := rep.Summary.Machine; m == nil || m.During || m.DuringPairs != 0 || m.Pairs != len(in.Entries) {
		t.Errorf("summary %+v", m)
	}
}
