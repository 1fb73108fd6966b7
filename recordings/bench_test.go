package recordings

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// liveSession generates what a live session on 2 GPUs records with the
// cuda backend: about 20 iterations a second, each a result (isolated
// baseline reused, a concurrent run of 20 repetitions, its 6-span timeline;
// cuda reports no per-repetition samples) and the batch of 6 spans, and
// telemetry of 13 metrics per GPU at 10 Hz from the sampler (one time per
// tick). Times carry
// 1 % noise and telemetry values full float64 precision, as real runs do,
// so compression is not flattered.
type liveSession struct {
	rng      *rand.Rand
	sc       scenarios.Scenario
	st       scenarios.Strategy
	devices  []backends.DeviceInfo
	baseReps map[backends.Mode][]backends.Rep
	tComp    profiler.Stat
	tComm    profiler.Stat
}

type liveMetric struct {
	name  string
	value float64
}

// liveMetrics returns the sampler's 13 metrics with a typical value each.
func liveMetrics() []liveMetric {
	return []liveMetric{
		{backends.MetricSMUtil, 0.9}, {"sm_occupancy", 0.4}, {backends.MetricTensorUtil, 0.7}, {backends.MetricHBMUtil, 0.5},
		{backends.MetricLinkTXUtil, 0.8}, {backends.MetricLinkRXUtil, 0.8}, {"link_tx_bytes_s", 3.6e11}, {"link_rx_bytes_s", 3.6e11},
		{"pcie_tx_bytes_s", 2.1e7}, {"pcie_rx_bytes_s", 1.9e7}, {"power_w", 612.5}, {"sm_clock_mhz", 1980}, {"mem_used_bytes", 8.1e10},
	}
}

func newLiveSession(seed uint64) *liveSession {
	s := &liveSession{rng: rand.New(rand.NewPCG(seed, 1)), sc: testScenario(), st: testStrategy(),
		devices: testHeader().DeviceInfos()}
	s.baseReps = map[backends.Mode][]backends.Rep{}
	var comp, comm []int64
	for range 20 {
		c, m := s.jitter(416600), s.jitter(839769)
		comp, comm = append(comp, c), append(comm, m)
		s.baseReps[backends.ModeCompute] = append(s.baseReps[backends.ModeCompute], backends.Rep{Wall: c, Compute: c})
		s.baseReps[backends.ModeComm] = append(s.baseReps[backends.ModeComm], backends.Rep{Wall: m, Comm: m})
	}
	s.tComp, s.tComm = profiler.Summarize(comp), profiler.Summarize(comm)
	return s
}

// jitter is x with about 1 % noise, in whole nanoseconds.
func (s *liveSession) jitter(x float64) int64 { return int64(x * (1 + 0.01*s.rng.NormFloat64())) }

func (s *liveSession) spans(rep int) []backends.Span {
	var out []backends.Span
	for dev := range 2 {
		cEnd, mStart := s.jitter(422849), s.jitter(333280)
		out = append(out,
			backends.Span{Rep: rep, Op: backends.OpCompute, Name: "gemm 16384x1280x8192 bf16", Device: dev, Track: "compute", Kind: "kernel", Start: 0, End: cEnd},
			backends.Span{Rep: rep, Op: backends.OpComm, Name: "nccl all-gather 224MiB", Device: dev, Track: "comm", Kind: "kernel", Start: mStart, End: s.jitter(1100192)},
			backends.Span{Rep: rep, Op: backends.OpComm, Name: "nccl all-gather 224MiB (tail)", Device: dev, Track: "comm", Kind: "kernel", Start: cEnd, End: s.jitter(1100192)},
		)
	}
	return out
}

func (s *liveSession) samples(rep int, t int64) []backends.Sample {
	var out []backends.Sample
	for dev := range 2 {
		for _, m := range liveMetrics() {
			v := m.value * (1 + 0.05*s.rng.NormFloat64())
			switch m.name {
			case "sm_clock_mhz", "mem_used_bytes":
				v = math.Round(v)
			case "power_w":
				v = math.Round(v*1000) / 1000
			}
			out = append(out, backends.Sample{Rep: rep, Metric: m.name, Device: dev, Time: t, Value: v})
		}
	}
	return out
}

func (s *liveSession) result(rep int) profiler.Result {
	var walls, comps, comms []int64
	reps := map[backends.Mode][]backends.Rep{backends.ModeCompute: s.baseReps[backends.ModeCompute], backends.ModeComm: s.baseReps[backends.ModeComm]}
	for range 20 {
		w, c, m := s.jitter(1100192), s.jitter(422849), s.jitter(1095192)
		walls, comps, comms = append(walls, w), append(comps, c), append(comms, m)
		reps[backends.ModeConcurrent] = append(reps[backends.ModeConcurrent], backends.Rep{Wall: w, Compute: c, Comm: m})
	}
	r := profiler.Result{
		Scenario: s.sc, Strategy: s.st, Backend: "cuda", Devices: s.devices,
		TComp: s.tComp, TComm: s.tComm, TC3: profiler.Summarize(walls),
		TCompInC3: profiler.Summarize(comps), TCommInC3: profiler.Summarize(comms),
		Reps: reps, Timeline: s.spans(rep),
	}
	r.Derive(4.8e12)
	return r
}

// TestSessionSizePerHour records a representative minute of a live session
// (iterations at 20/s, 10 Hz telemetry of 13 metrics on 2 GPUs, a strategy
// change every 10 s, flushed each second as the recorder does) and
// extrapolates to an hour. The budget is 50 MB an hour.
func TestSessionSizePerHour(t *testing.T) {
	const (
		minute  = time.Minute
		iterDur = 50 * time.Millisecond // 20 iterations a second
		telDur  = 100 * time.Millisecond
		budget  = 50e6
	)
	path := filepath.Join(t.TempDir(), "hour.c3rec")
	clk := &fakeClock{}
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, now: clk.now})
	if err != nil {
		t.Fatal(err)
	}
	s := newLiveSession(1)
	rec.Scenario(s.sc)
	base, _ := os.Stat(path)
	started := time.Now()
	iters := 0
	for now := time.Duration(0); now < minute; now += 10 * time.Millisecond {
		clk.set(now)
		if now%(10*time.Second) == 0 {
			s.st.CommSMs = 8 * (1 + int(now/(10*time.Second)))
			rec.Strategy(s.st)
		}
		if now%iterDur == 0 {
			r := s.result(iters)
			rec.Result(r)
			rec.Spans(r.Timeline)
			iters++
		}
		if now%telDur == 0 {
			rec.Samples(s.samples(-1, int64(now)))
		}
		if now%time.Second == time.Second-10*time.Millisecond {
			if err := rec.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(started)
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	perMinute := float64(st.Size() - base.Size())
	perHour := perMinute * 60
	t.Logf("one minute: %d iterations, %.0f KB; one hour: %.1f MB (budget %.0f MB); writer time %v per recorded minute",
		iters, perMinute/1e3, perHour/1e6, budget/1e6, elapsed.Round(time.Millisecond))
	if perHour > budget {
		t.Errorf("an hour takes %.1f MB, more than %.0f MB", perHour/1e6, budget/1e6)
	}
	got, err := ReadAll(path)
	if err != nil || got.Damage != nil || len(got.Events) != 1+6+iters*2+600 {
		t.Errorf("read back: %v, %d events, damage %v", err, len(got.Events), got.Damage)
	}
}

// BenchmarkRecordEvents measures what recording costs the caller: one call
// per op. Encoding and writing happen on the recorder's goroutine and are
// not the caller's cost; so that a tight loop does not outrun the writer
// (and measure dropping instead), the queue is emptied, untimed, every
// 1000 calls.
func BenchmarkRecordEvents(b *testing.B) {
	s := newLiveSession(2)
	res := s.result(0)
	spans := s.spans(0)
	samples := s.samples(-1, 0)
	for _, bc := range []struct {
		name string
		call func(*Recorder)
	}{
		{"result", func(r *Recorder) { r.Result(res) }},
		{"spans6", func(r *Recorder) { r.Spans(spans) }},
		{"samples26", func(r *Recorder) { r.Samples(samples) }},
		{"strategy", func(r *Recorder) { r.Strategy(s.st) }},
		{"marker", func(r *Recorder) { r.Marker("note") }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			rec, err := Create(filepath.Join(b.TempDir(), "bench.c3rec"), testHeader(), Options{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				bc.call(rec)
				if i++; i%1000 == 0 {
					b.StopTimer()
					rec.mu.Lock()
					clear(rec.queue)
					rec.queue = rec.queue[:0]
					rec.mu.Unlock()
					b.StartTimer()
				}
			}
			b.StopTimer()
			if err := rec.Close(); err != nil {
				b.Fatal(err)
			}
			if d := rec.Stats().Dropped; d > 0 {
				b.Fatalf("%d events dropped", d)
			}
		})
	}
}

// BenchmarkWriteSecond measures the recorder's own goroutine: encoding,
// compressing and writing one second of a live session (20 results, 20
// span batches, 10 telemetry batches).
func BenchmarkWriteSecond(b *testing.B) {
	s := newLiveSession(4)
	var results []profiler.Result
	for i := range 20 {
		results = append(results, s.result(i))
	}
	samples := s.samples(-1, 0)
	rec, err := Create(filepath.Join(b.TempDir(), "w.c3rec"), testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer rec.Close()
	for b.Loop() {
		b.StopTimer()
		for i, r := range results {
			rec.Result(r)
			rec.Spans(r.Timeline)
			if i%2 == 0 {
				rec.Samples(samples)
			}
		}
		b.StartTimer()
		if err := rec.Flush(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadAll measures reading back a minute of a live session.
func BenchmarkReadAll(b *testing.B) {
	path := filepath.Join(b.TempDir(), "read.c3rec")
	clk := &fakeClock{}
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour, now: clk.now})
	if err != nil {
		b.Fatal(err)
	}
	s := newLiveSession(3)
	for i := range 1200 {
		clk.advance(50 * time.Millisecond)
		r := s.result(i)
		rec.Result(r)
		rec.Spans(r.Timeline)
		rec.Samples(s.samples(-1, 0))
		if i%20 == 19 {
			rec.Flush()
		}
	}
	if err := rec.Close(); err != nil {
		b.Fatal(err)
	}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		got, err := ReadAll(path)
		if err != nil || len(got.Events) != 3600 {
			b.Fatal(err, fmt.Sprint(len(got.Events)))
		}
	}
}
