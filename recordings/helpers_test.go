package recordings

import (
	"bytes"
	"encoding/binary"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// testHeader is a header like the one cmd/c3lab writes on a 2 x H200 node.
func testHeader() Header {
	devs := DevicesFromInfo([]backends.DeviceInfo{
		{Index: 0, Name: "NVIDIA H200", SMs: 132, MemoryBytes: 150754820096, CopyEngines: 3},
		{Index: 1, Name: "NVIDIA H200", SMs: 132, MemoryBytes: 150754820096, CopyEngines: 3},
	})
	for i := range devs {
		devs[i].Driver = "580.95.05"
		devs[i].UUID = "GPU-0f3c6a1e-0000-0000-0000-00000000000" + string(rune('0'+i))
		devs[i].Libraries = map[string]string{"cuda": "13.0", "nccl": "2.27.7", "cublasLt": "13.1.0"}
		devs[i].NVLink = map[string]any{"links": 18.0, "peers": []any{float64(1 - i)}, "gbps_per_link": 26.5625}
	}
	return Header{
		Version:   "c3lab test",
		Host:      "testhost",
		Backend:   "cuda",
		Devices:   devs,
		Profile:   "h200",
		Telemetry: map[string]string{backends.MetricSMUtil: "fraction", "power_w": "W"},
	}
}

func testScenario() scenarios.Scenario {
	return scenarios.Scenario{
		Name: "llama3-70b-tp8-qkv-ag-224m", Description: "a skinny QKV shard next to an all-gather",
		GPUs: 2, Profile: "h200",
		Compute: scenarios.ComputeOp{Kind: scenarios.GEMM, M: 16384, N: 1280, K: 8192, DType: scenarios.BF16},
		Comm:    scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 224 << 20},
		Reps:    20,
	}
}

func testStrategy() scenarios.Strategy {
	return scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommSMs: 32, CommEngine: scenarios.EngineSM}
}

func testSpans(n int) []backends.Span {
	out := make([]backends.Span, n)
	for i := range out {
		out[i] = backends.Span{Rep: i / 4, Op: backends.OpComm, Name: "nccl all-gather 224MiB", Device: i % 2,
			Track: "comm", Kind: "kernel", Start: int64(1000 * i), End: int64(1000*i + 777)}
	}
	return out
}

func testSamples() []backends.Sample {
	return []backends.Sample{
		{Rep: 3, Metric: backends.MetricSMUtil, Device: 0, Time: 100, Value: 0.8654321000000001},
		{Rep: 3, Metric: backends.MetricHBMUtil, Device: 1, Time: 200, Value: math.NaN()},
		{Rep: -1, Metric: "power_w", Device: 1, Time: 300, Value: math.Inf(1)},
		{Rep: -1, Metric: "power_w", Device: 0, Time: 400, Value: math.Inf(-1)},
		{Rep: 4, Metric: backends.MetricSMsComm, Device: 0, Time: 500, Value: 32},
	}
}

// testResult is a result with every field set, including the undefined
// (NaN) ratios profiler writes as null.
func testResult() profiler.Result {
	frac, fob := 0.2861469799181422, 0.31
	st := func(m float64) profiler.Stat {
		return profiler.Stat{N: 20, Median: m, Min: m - 10, Max: m + 10, P10: m - 5, P90: m + 5}
	}
	sc := testScenario()
	sc.Strategy = testStrategy()
	return profiler.Result{
		Scenario: sc, Strategy: testStrategy(), Backend: "cuda",
		Devices: testHeader().DeviceInfos(),
		TComp:   st(416600), TComm: st(839769), TC3: st(1100192), TCompInC3: st(422849), TCommInC3: st(1095192),
		IdealSpeedup: 1.496, RealizedSpeedup: math.NaN(), FractionOfIdeal: &frac,
		CompSlowdown: 1.015, CommSlowdown: 1.304, Class: profiler.CommLong,
		ModelError: &backends.ModelError{Profile: "h200-fit", Device: "NVIDIA H200", Scope: "all-gather", Runs: 52,
			TC3Median: 0.0197, TC3P90: 0.0657, FScope: "S_ideal 1.2 to 1.5", FRuns: 44, FMedian: 3.97, FP90: 20.49},
		AlgBW: 5.59e11, BusBW: 2.79e11, AchievedTFLOPs: 825.4,
		Bound: &profiler.Bound{TBound: 839769, By: "longer op", SBound: 1.496, FractionOfBound: &fob, HBMBandwidth: 4e12},
		Explain: map[backends.Mode][]backends.OpExplanation{
			backends.ModeConcurrent: {{Op: backends.OpComm, Label: "nccl all-gather 224MiB", Bounds: []backends.Bound{
				{Resource: backends.ResLink, Nanos: 677343, Detail: "NVLink bandwidth"},
				{Resource: backends.ResWaitSMs, Nanos: 268280}}}},
		},
		Reps: map[backends.Mode][]backends.Rep{
			backends.ModeCompute:    {{Wall: 416600, Compute: 416600}},
			backends.ModeConcurrent: {{Wall: 1100192, Compute: 422849, Comm: 1095192}, {Wall: 1100199, Compute: 422850, Comm: 1095190}},
		},
		RoundOf:        map[backends.Mode][]int{backends.ModeCompute: {0}, backends.ModeConcurrent: {0, 1}},
		DefaultRoundOf: map[backends.Mode][]int{backends.ModeComm: {1}},
		CI: &profiler.Intervals{Level: 0.95, Resamples: 1000, Rounds: 5, TC3: profiler.Interval{Lo: 1100000, Hi: 1100400},
			U: profiler.Interval{Lo: 1.1, Hi: 1.2}, Ops: []profiler.Interval{{Lo: 1, Hi: 1.1}}},
		Bimodal:   []profiler.Bimodal{{Time: "T_c3", Modes: [2]profiler.Mode{{Median: 5.85e6, Share: 0.6}, {Median: 6.97e6, Share: 0.4}}, D: 5}},
		Precision: &profiler.PrecisionOutcome{Target: "2% T_c3", Reached: true, Stop: "reached", HalfWidth: &frac, Rounds: 7, Elapsed: 3e9},
		Timeline:  testSpans(4),
		Samples:   testSamples(),
	}
}

// wantResult is what a result reads back as: NaN ratios were written as
// null and read as zero.
func wantResult(r profiler.Result) profiler.Result {
	for _, f := range []*float64{&r.IdealSpeedup, &r.RealizedSpeedup, &r.CompSlowdown, &r.CommSlowdown, &r.AlgBW, &r.BusBW, &r.AchievedTFLOPs} {
		if math.IsNaN(*f) || math.IsInf(*f, 0) {
			*f = 0
		}
	}
	return r
}

// sameSamples compares samples, NaN equal to NaN.
func sameSamples(a, b []backends.Sample) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		x, y := a[i], b[i]
		if math.IsNaN(x.Value) && math.IsNaN(y.Value) {
			x.Value, y.Value = 0, 0
		}
		if x != y {
			return false
		}
	}
	return true
}

// sameEvent compares the payloads of two events (not their times).
func sameEvent(a, b Event) bool {
	if a.Kind != b.Kind || a.Text != b.Text || !sameSamples(a.Samples, b.Samples) ||
		!reflect.DeepEqual(a.Scenario, b.Scenario) || !reflect.DeepEqual(a.Strategy, b.Strategy) ||
		!reflect.DeepEqual(a.Spans, b.Spans) {
		return false
	}
	if (a.Result == nil) != (b.Result == nil) {
		return false
	}
	if a.Result == nil {
		return true
	}
	ra, rb := *a.Result, *b.Result
	if !sameSamples(ra.Samples, rb.Samples) {
		return false
	}
	ra.Samples, rb.Samples = nil, nil
	return reflect.DeepEqual(ra, rb)
}

// record calls the recorder method that records ev.
func record(r *Recorder, ev Event) {
	switch ev.Kind {
	case KindScenario:
		r.Scenario(*ev.Scenario)
	case KindStrategy:
		r.Strategy(*ev.Strategy)
	case KindResult:
		r.Result(*ev.Result)
	case KindSpans:
		r.Spans(ev.Spans)
	case KindSamples:
		r.Samples(ev.Samples)
	case KindMarker:
		r.Marker(ev.Text)
	case KindError:
		r.Error(ev.Text)
	}
}

// allKinds is one event of every kind, as recorded and as read back.
func allKinds() (in, want []Event) {
	sc, st, res := testScenario(), testStrategy(), testResult()
	wr := wantResult(res)
	in = []Event{
		{Kind: KindScenario, Scenario: &sc},
		{Kind: KindStrategy, Strategy: &st},
		{Kind: KindResult, Result: &res},
		{Kind: KindSpans, Spans: testSpans(6)},
		{Kind: KindSamples, Samples: testSamples()},
		{Kind: KindMarker, Text: "tried comm-first ✓"},
		{Kind: KindError, Text: "cuda: out of memory"},
	}
	want = append([]Event(nil), in...)
	want[2] = Event{Kind: KindResult, Result: &wr}
	return in, want
}

// fakeClock is a manual clock for Options.now.
type fakeClock struct {
	mu sync.Mutex
	t  time.Duration
}

func (c *fakeClock) now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) set(t time.Duration) {
	c.mu.Lock()
	c.t = t
	c.mu.Unlock()
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.t += d
	c.mu.Unlock()
}

// smallRecording records events, flushing after each one that flushEach
// says, and returns the file's bytes.
func smallRecording(t testing.TB, events []Event, flushEach bool) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "small.c3rec")
	clk := &fakeClock{}
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		clk.advance(time.Millisecond)
		record(rec, ev)
		if flushEach {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// readBytes reads a recording from memory as ReadAll does.
func readBytes(b []byte) (*Recording, error) {
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return readAll(r)
}

// frameSpan is where one top-level frame lies in a file.
type frameSpan struct{ start, end int64 }

// topFrames walks the frames of a valid recording (the header included).
func topFrames(t testing.TB, b []byte) []frameSpan {
	t.Helper()
	var out []frameSpan
	for pos := int64(preambleSize); pos < int64(len(b)); {
		if int64(len(b))-pos < frameHeaderSize {
			t.Fatalf("frame walk: short header at %d", pos)
		}
		n := int64(binary.LittleEndian.Uint32(b[pos+2:]))
		out = append(out, frameSpan{pos, pos + frameHeaderSize + n})
		pos += frameHeaderSize + n
	}
	return out
}
