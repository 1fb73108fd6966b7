package kineto

import (
	"context"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// checkScenario writes sc as c3lab writes scenario files and reads it back
// through the loader: it must validate and come back equal.
func checkScenario(t testing.TB, sc scenarios.Scenario) scenarios.Scenario {
	t.Helper()
	if err := scenarios.Validate(sc, scenarios.Limits{}); err != nil {
		t.Fatalf("the scenario does not validate: %v", err)
	}
	data, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	back, err := scenarios.Parse(data, "imported.yaml", scenarios.Limits{})
	if err != nil {
		t.Fatalf("the written scenario does not load: %v\n%s", err, data)
	}
	if !back.Equal(sc) {
		t.Fatalf("the scenario reads back different:\n%s", data)
	}
	return back
}

func TestScenarioFromFixture(t *testing.T) {
	tr, err := ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, tr, Select{Step: "3"})
	sc, left, err := r.Scenario(ScenarioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc = checkScenario(t, sc)
	if sc.Name != "import-synthetic-tp2-rank0-step3" || sc.GPUs != 2 {
		t.Errorf("name %q on %d GPUs", sc.Name, sc.GPUs)
	}
	if len(left) != 1 || left[0].Key != "memset" {
		t.Errorf("left out %+v, want the memset", left)
	}
	var got []string
	for _, s := range sc.Streams {
		for _, o := range s.Ops {
			got = append(got, s.Name+":"+o.String())
		}
	}
	want := []string{
		"s7:gemm 8192x4096x8192 bf16 x2", "s7:stream 128MiB", "s7:gemm 8192x8192x4096 bf16",
		"s19:h2d 32MiB",
		"s23:all-gather 8MiB", "s23:reduce-scatter 8MiB",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestScenarioSplitsMixedStreams: a trace stream that runs a copy and a
// kernel in turn becomes two scenario streams, each op after the one the
// trace ran before it; repeats fold into counts.
func TestScenarioSplitsMixedStreams(t *testing.T) {
	mm := map[string]any{"External id": 5}
	data := synthWithCPU(t, 1, []ev{
		{cat: "gpu_memcpy", name: "Memcpy HtoD (Pinned -> Device)", ts: 0, dur: 10, stream: 7, args: map[string]any{"bytes": 1 << 20}},
		{cat: "kernel", name: gemmK, ts: 10, dur: 10, stream: 7, args: mm},
		{cat: "kernel", name: gemmK, ts: 20, dur: 10, stream: 7, args: mm},
		{cat: "gpu_memcpy", name: "Memcpy DtoH (Device -> Pinned)", ts: 30, dur: 10, stream: 7, args: map[string]any{"bytes": 1 << 20}},
		{cat: "kernel", name: agK, ts: 0, dur: 5, stream: 9, args: map[string]any{"Collective name": "allgather", "In msg nelems": 8, "dtype": "Float"}},
	})
	r := mustAnalyze(t, mustRead(t, data), Select{})
	sc, left, err := r.Scenario(ScenarioOptions{Name: "mixed"})
	if err != nil {
		t.Fatal(err)
	}
	checkScenario(t, sc)
	if len(left) != 1 || left[0].Class != ClassNCCL {
		t.Errorf("left %+v, want the all-gather (a collective on 1 GPU)", left)
	}
	if len(sc.Streams) != 2 || sc.Streams[0].Name != "s7-comm" || sc.Streams[1].Name != "s7-compute" {
		t.Fatalf("streams %+v", sc.Streams)
	}
	c, m := sc.Streams[1].Ops, sc.Streams[0].Ops
	if len(c) != 1 || c[0].Count != 2 || strings.Join(c[0].After, ",") != "h2d1" {
		t.Errorf("compute ops %+v, want one gemm x2 after h2d1", c)
	}
	if len(m) != 2 || strings.Join(m[1].After, ",") != "gemm1" {
		t.Errorf("comm ops %+v, want h2d1 then d2h1 after gemm1", m)
	}
}

// synthWithCPU is synth with an aten::mm op (External id 5, 64x32x16
// bf16) that the GEMM kernels link to.
func synthWithCPU(t testing.TB, world int, evs []ev) []byte {
	data := synth(t, world, evs...)
	cpu := `{"ph":"X","cat":"cpu_op","name":"aten::mm","pid":1,"tid":1,"ts":0,"dur":1,"args":{"External id":5,"Input Dims":[[64,16],[16,32]],"Input type":["c10::BFloat16","c10::BFloat16"]}},`
	return []byte(strings.Replace(string(data), `"traceEvents":[`, `"traceEvents":[`+cpu, 1))
}

func TestScenarioLimits(t *testing.T) {
	var evs []ev
	for i := range scenarios.MaxStreamOps + 1 {
		// Alternating sizes so that no two neighbours fold.
		evs = append(evs, ev{cat: "gpu_memcpy", name: "Memcpy HtoD (Pinned -> Device)", ts: float64(10 * i), dur: 5, stream: 3, args: map[string]any{"bytes": 4096 * (1 + i%2)}})
	}
	r := mustAnalyze(t, mustRead(t, synth(t, 1, evs...)), Select{})
	if _, _, err := r.Scenario(ScenarioOptions{}); err == nil || !strings.Contains(err.Error(), "--window") {
		t.Errorf("%d ops on a stream: %v, want a refusal that suggests --window", len(evs), err)
	}
}

// TestRoundTripOnTheSimulator: trace, scenario, a simulator run; the
// measured result holds every op of the scenario.
func TestRoundTripOnTheSimulator(t *testing.T) {
	tr, err := ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, tr, Select{Step: "4"})
	sc, _, err := r.Scenario(ScenarioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	sc = checkScenario(t, sc)
	res, err := profiler.Measure(context.Background(), sim.New(sim.DefaultProfile()), sc, sc.Strategy, profiler.Options{Reps: 2, Rounds: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Ops) != 6 || res.TC3.Median <= 0 || res.TSerial <= 0 {
		t.Fatalf("sim result: %d ops, T_c3 %v, T_serial %v", len(res.Ops), res.TC3.Median, res.TSerial)
	}
	// The simulated H200 and the made-up trace agree on the order of
	// magnitude: the GEMMs of the fixture take 300-340 µs, the simulated
	// ones about twice that; T_serial within 4x either way.
	if ratio := res.TSerial / r.TSerialNs; ratio < 0.25 || ratio > 4 {
		t.Errorf("sim T_serial %v vs trace %v", res.TSerial, r.TSerialNs)
	}
}

// TestStepResult: the imported step measured on the trace itself is a
// profiler.Result whose figures come from the trace: T_c3 the busy time
// of its ops, T_serial their alone times summed, spans on the scenario's
// streams with the idle gaps taken out.
func TestStepResult(t *testing.T) {
	tr, err := ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	r := mustAnalyze(t, tr, Select{Step: "3"})
	im, err := r.Import(ScenarioOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := im.Result(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var busy []interval
	var serial float64
	for i, it := range r.Items() {
		if im.Op[i] == "" {
			continue
		}
		busy = append(busy, interval{it.Op.Start, it.Op.End()})
		serial += it.TAlone
	}
	if want := float64(length(union(busy))); res.TC3.Median != want {
		t.Errorf("T_c3 %v, want the ops' busy time %v", res.TC3.Median, want)
	}
	if !near(res.TSerial, serial, 1) {
		t.Errorf("T_serial %v, want %v", res.TSerial, serial)
	}
	if res.Backend != BackendName || len(res.Ops) != 6 || res.FractionOfIdeal == nil {
		t.Errorf("result %s, %d ops, F %v", res.Backend, len(res.Ops), res.FractionOfIdeal)
	}
	if len(res.Timeline) != 7 {
		t.Fatalf("%d spans, want 7 (8 activities but the memset)", len(res.Timeline))
	}
	var end int64
	tracks := map[string]bool{}
	for _, s := range res.Timeline {
		end = max(end, s.End)
		tracks[s.Track] = true
		if s.Start < 0 || s.End < s.Start {
			t.Errorf("span %+v", s)
		}
	}
	if float64(end) != res.TC3.Median || len(tracks) != 3 {
		t.Errorf("timeline ends at %d (T_c3 %v) on %d tracks", end, res.TC3.Median, len(tracks))
	}
}
