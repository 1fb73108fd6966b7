package export

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/google/pprof/profile"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// trace measures a scenario on the simulator with a copy-engine collective,
// so the trace has compute, comm and copy-engine tracks.
func trace(t *testing.T) Trace {
	t.Helper()
	sc, err := scenarios.Find(scenarios.Names()[0])
	if err != nil {
		t.Fatal(err)
	}
	r, err := profiler.Measure(context.Background(), sim.New(sim.H200()), sc, scenarios.Strategy{CommEngine: scenarios.EngineDMA}, profiler.Options{Reps: 2})
	if err != nil {
		t.Fatal(err)
	}
	tr := FromResult(r)
	if len(tr.Spans) == 0 || len(tr.Samples) == 0 {
		t.Fatal("the simulator gave no timeline")
	}
	return tr
}

// parsePprof writes t's pprof profile and reads it back.
func parsePprof(t *testing.T, tr Trace) *profile.Profile {
	t.Helper()
	var buf bytes.Buffer
	if err := WritePprof(&buf, tr); err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(&buf)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// sampleSums sums each sample type of p over its samples.
func sampleSums(t *testing.T, p *profile.Profile) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for i, st := range p.SampleType {
		for _, s := range p.Sample {
			out[st.Type] += s.Value[i]
		}
	}
	return out
}

// TestPprof checks the profile of a simulated measurement: GPU time is the
// default and the last sample type, every span is a sample with a leaf
// name and labels, and each op's GPU time is its time in the C3 run.
func TestPprof(t *testing.T) {
	tr := trace(t)
	p := parsePprof(t, tr)
	// go tool pprof shows DefaultSampleType, or the last sample type when
	// it is unset (older readers): both must be GPU time.
	gpu := slices.IndexFunc(p.SampleType, func(v *profile.ValueType) bool { return v.Type == p.DefaultSampleType })
	for name, i := range map[string]int{"default": gpu, "last": len(p.SampleType) - 1} {
		if i < 0 || p.SampleType[i].Type != "gpu_time" || p.SampleType[i].Unit != "nanoseconds" {
			t.Fatalf("%s sample type (index %d, default %q) is not gpu_time in nanoseconds: %s", name, i, p.DefaultSampleType, p.String())
		}
	}
	if len(p.Sample) != len(tr.Spans) {
		t.Errorf("%d samples for %d spans", len(p.Sample), len(tr.Spans))
	}
	type devOp struct{ dev, op string }
	byOp := map[devOp]int64{}
	for _, s := range p.Sample {
		byOp[devOp{s.Label["device"][0], s.Label["op"][0]}] += s.Value[gpu]
		if s.Location[0].Line[0].Function.Name == "" || len(s.Label["device"]) != 1 || len(s.Label["stream"]) != 1 {
			t.Errorf("sample without a leaf name or labels: %+v", s)
		}
	}
	// The simulator's copy-engine collective shows once per engine; its
	// GPU time is still the time from its first span's start to its last
	// span's end, on each device.
	first, last := map[devOp]int64{}, map[devOp]int64{}
	for _, s := range tr.Spans {
		k := devOp{fmt.Sprint(s.Device), string(s.Op)}
		if v, ok := first[k]; !ok || s.Start < v {
			first[k] = s.Start
		}
		last[k] = max(last[k], s.End)
	}
	if len(first) != 2*len(tr.Devices) {
		t.Fatalf("the trace has %d ops on %d devices; want the pair on each", len(first), len(tr.Devices))
	}
	for k, start := range first {
		if want := last[k] - start; byOp[k] != want {
			t.Errorf("GPU %s, op %s: %d ns of GPU time, its spans run %d ns", k.dev, k.op, byOp[k], want)
		}
	}
}

// TestPprofCountsEachOpOnce holds the sample types to their definitions on
// timelines laid out as each backend lays them out (times in ns).
func TestPprofCountsEachOpOnce(t *testing.T) {
	span := func(op backends.Op, graphOp string, instance, dev int, track string, start, end int64) backends.Span {
		return backends.Span{Op: op, GraphOp: graphOp, Instance: instance, Device: dev, Track: track, Name: track + " work", Kind: "kernel", Start: start, End: end}
	}
	comp, comm := backends.OpCompute, backends.OpComm
	cudaDMA := []backends.Span{
		span(comp, "compute", 0, 0, "compute", 0, 50),
		span(comm, "comm", 0, 0, "comm", 0, 100),
		span(comm, "", 0, 0, "ce0", 10, 90),
		span(comm, "", 0, 0, "ce1", 5, 100),
		span(comm, "", 0, 0, "reduce", 0, 95),
	}
	cupti := []backends.Span{
		span(comp, "", 0, 0, backends.CUPTITrack(13), 2, 48),
		span(comm, "", 0, 0, backends.CUPTITrack(14), 10, 60),
		span(comm, "", 0, 0, backends.CUPTITrack(14), 62, 90),
	}
	for _, tc := range []struct {
		name                  string
		spans                 []backends.Span
		gpu, spanTime, nSpans int64
		cupti, nCUPTI         int64
	}{
		{name: "cuda: a copy-engine collective on its stream, its copy streams and its reduction", spans: cudaDMA,
			gpu: 150, spanTime: 420, nSpans: 5},
		{name: "cuda with CUPTI's records", spans: append(slices.Clone(cudaDMA), cupti...),
			gpu: 150, spanTime: 420, nSpans: 5, cupti: 124, nCUPTI: 3},
		{name: "sim: a copy-engine collective once per engine", spans: []backends.Span{
			span(comp, "", 0, 0, "compute", 0, 50),
			span(comm, "", 0, 0, "ce0", 20, 120), span(comm, "", 0, 0, "ce1", 20, 120), span(comm, "", 0, 0, "ce2", 20, 120),
		}, gpu: 150, spanTime: 350, nSpans: 4},
		{name: "an all-reduce's two copy phases with a gap", spans: []backends.Span{
			span(comm, "", 0, 0, "ce0", 0, 10), span(comm, "", 0, 0, "ce0", 20, 30), span(comm, "", 0, 0, "ce1", 25, 35),
		}, gpu: 25, spanTime: 30, nSpans: 3},
		{name: "graph instances on two devices", spans: []backends.Span{
			span(comm, "ag", 0, 0, "tp", 0, 40), span(comm, "ag", 0, 0, "tp ce", 5, 35),
			span(comm, "ag", 1, 0, "tp", 40, 80), span(comm, "ag", 1, 0, "tp ce", 45, 85),
			span(comp, "qkv", 0, 0, "compute", 40, 100),
			span(comm, "ag", 0, 1, "tp", 0, 40), span(comm, "ag", 0, 1, "tp ce", 5, 35),
		}, gpu: 40 + 45 + 60 + 40, spanTime: 40 + 30 + 40 + 40 + 60 + 40 + 30, nSpans: 7},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := sampleSums(t, parsePprof(t, Trace{Scenario: "s", Strategy: "dma", Backend: "test", Spans: tc.spans}))
			want := map[string]int64{"gpu_time": tc.gpu, "span_time": tc.spanTime, "spans": tc.nSpans, "cupti_time": tc.cupti, "cupti_records": tc.nCUPTI}
			if !maps.Equal(got, want) {
				t.Errorf("sample sums %v, want %v", got, want)
			}
		})
	}
}

// go tool pprof reads what we write (where the go command is available).
func TestGoToolPprofReadsIt(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	path := filepath.Join(t.TempDir(), "c3lab.pb.gz")
	tr := trace(t)
	if err := WriteFile(path, func(w io.Writer) error { return WritePprof(w, tr) }); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(goCmd, "tool", "pprof", "-top", path).CombinedOutput()
	if err != nil {
		t.Fatalf("go tool pprof: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "gemm") || !strings.Contains(string(out), "copy") {
		t.Errorf("go tool pprof -top does not list the ops:\n%s", out)
	}
	// -top ranks by GPU time, not by span counts: its totals carry a unit.
	if !regexp.MustCompile(`accounting for [0-9.]+(ns|us|µs|ms|s), `).Match(out) {
		t.Errorf("go tool pprof -top does not show GPU time by default:\n%s", out)
	}
}

func TestPerfetto(t *testing.T) {
	tr := trace(t)
	var buf bytes.Buffer
	if err := WritePerfetto(&buf, tr); err != nil {
		t.Fatal(err)
	}
	d := decodePerfetto(t, buf.Bytes())
	if d.seq == 0 || !d.cleared {
		t.Errorf("sequence id %d, incremental state cleared %v: want one sequence, cleared on its first packet", d.seq, d.cleared)
	}
	// Every span is a begin/end pair on its own stream or engine track,
	// whose parent is its device's process track.
	perTrack := map[uint64]int{}
	names := map[uint64][]string{}
	for _, s := range tr.Spans {
		u := trackUUID(s.Device, "stream", s.Track)
		perTrack[u]++
		names[u] = append(names[u], s.Name)
		if d.names[u] != s.Track {
			t.Errorf("track %s of GPU %d named %q", s.Track, s.Device, d.names[u])
		}
		if p := d.parent[u]; p != trackUUID(s.Device, "process", "") || !strings.Contains(d.names[p], "GPU") {
			t.Errorf("track %s of GPU %d hangs under %q", s.Track, s.Device, d.names[p])
		} else if pr, ok := d.process[p]; !ok || pr.pid != s.Device+1 || pr.name != d.names[p] {
			t.Errorf("GPU %d's track is no process (pid %d, name %q; want pid %d, %q)", s.Device, pr.pid, pr.name, s.Device+1, d.names[p])
		}
	}
	for u, n := range perTrack {
		if d.begins[u] != n || d.ends[u] != n {
			t.Errorf("track %s: %d begins, %d ends, want %d", d.names[u], d.begins[u], d.ends[u], n)
		}
		if !slices.Equal(d.slices[u], names[u]) {
			t.Errorf("track %s: slices %q, want the spans' names %q", d.names[u], d.slices[u], names[u])
		}
	}
	var ce bool
	for _, name := range d.names {
		ce = ce || strings.HasPrefix(name, "ce")
	}
	if !ce {
		t.Error("no copy-engine track in a copy-engine run")
	}
	// One counter track per metric and device, values in percent.
	counters := 0
	for u, isCounter := range d.counter {
		if !isCounter {
			continue
		}
		counters++
		for _, v := range d.values[u] {
			if strings.HasSuffix(d.names[u], "(%)") && (v < 0 || v > 100.01) {
				t.Errorf("%s = %v", d.names[u], v)
			}
		}
	}
	metrics := map[[2]any]bool{}
	for _, s := range tr.Samples {
		metrics[[2]any{s.Device, s.Metric}] = true
	}
	if counters != len(metrics) {
		t.Errorf("%d counter tracks for %d (device, metric) pairs", counters, len(metrics))
	}
}

func TestChrome(t *testing.T) {
	tr := trace(t)
	var buf bytes.Buffer
	if err := WriteChrome(&buf, tr); err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	slices, counters := 0, 0
	for _, e := range f.TraceEvents {
		switch e["ph"] {
		case "X":
			slices++
		case "C":
			counters++
		}
	}
	if slices != len(tr.Spans) || counters != len(tr.Samples) {
		t.Errorf("%d slices and %d counters for %d spans and %d samples", slices, counters, len(tr.Spans), len(tr.Samples))
	}
}

func TestEmptyTraceIsAnError(t *testing.T) {
	for name, w := range map[string]func(io.Writer, Trace) error{"pprof": WritePprof, "perfetto": WritePerfetto, "chrome": WriteChrome} {
		if err := w(io.Discard, Trace{}); !errors.Is(err, ErrEmpty) {
			t.Errorf("%s: %v, want ErrEmpty", name, err)
		}
	}
}

// A failed export leaves nothing under the final name, and an existing
// file there untouched.
func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.json")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := WriteFile(path, func(w io.Writer) error {
		w.Write([]byte("half"))
		return errors.New("disk full")
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the existing file became %q", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteFile(filepath.Join(dir, "missing", "x"), func(io.Writer) error { return nil }); err == nil {
		t.Error("writing into a missing folder succeeded")
	}
}

// Counters are shown in their units: a share in percent, bytes/s in GB/s,
// bytes in GB, watts and MHz as they are; a metric without a unit is a
// share (the simulator's) or an SM count.
func TestCounterUnits(t *testing.T) {
	tr := trace(t)
	tr.Samples = nil
	tr.Units = map[string]string{"sm_util": "fraction", "power_w": "W", "link_tx_bytes_s": "bytes/s", "mem_used_bytes": "bytes", "sm_clock_mhz": "MHz"}
	for _, s := range []struct {
		metric string
		value  float64
	}{{"sm_util", 0.5}, {"power_w", 121.5}, {"link_tx_bytes_s", 3e11}, {"mem_used_bytes", 8e9}, {"sm_clock_mhz", 1980}, {"tensor_util", 0.25}, {"sms_comm", 32}} {
		tr.Samples = append(tr.Samples, backends.Sample{Rep: -1, Metric: s.metric, Device: 1, Time: 1000, Value: s.value})
	}
	want := map[string]float64{
		"sm_util (%)": 50, "power_w (W)": 121.5, "link_tx_bytes_s (GB/s)": 300, "mem_used_bytes (GB)": 8,
		"sm_clock_mhz (MHz)": 1980, "tensor_util (%)": 25, "sms_comm (SMs)": 32,
	}
	var chrome bytes.Buffer
	if err := WriteChrome(&chrome, tr); err != nil {
		t.Fatal(err)
	}
	var f struct {
		TraceEvents []struct {
			Name string         `json:"name"`
			Ph   string         `json:"ph"`
			Args map[string]any `json:"args"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(chrome.Bytes(), &f); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, e := range f.TraceEvents {
		if v, ok := e.Args["value"].(float64); ok && e.Ph == "C" {
			got[e.Name] = v
		}
	}
	var pf bytes.Buffer
	if err := WritePerfetto(&pf, tr); err != nil {
		t.Fatal(err)
	}
	d := decodePerfetto(t, pf.Bytes())
	for u, isCounter := range d.counter {
		if isCounter && len(d.values[u]) == 1 {
			got["perfetto "+d.names[u]] = d.values[u][0]
		}
	}
	for name, v := range want {
		if math.Abs(got[name]-v) > 1e-9 || math.Abs(got["perfetto "+name]-v) > 1e-9 {
			t.Errorf("%s: chrome %v, perfetto %v; want %v (all: %v)", name, got[name], got["perfetto "+name], v, got)
		}
	}
}

// TestCopyStreamsLabel checks that the copy metric's counter is named for
// what it counts, busy copy streams, not copy engines (which no backend
// can see), in both trace formats.
func TestCopyStreamsLabel(t *testing.T) {
	tr := trace(t)
	var chrome bytes.Buffer
	if err := WriteChrome(&chrome, tr); err != nil {
		t.Fatal(err)
	}
	var pf bytes.Buffer
	if err := WritePerfetto(&pf, tr); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string][]byte{"chrome": chrome.Bytes(), "perfetto": pf.Bytes()} {
		if bytes.Contains(out, []byte("copy_eng")) {
			t.Errorf("%s: a counter still calls busy copy streams copy-engine utilization", name)
		}
		if !bytes.Contains(out, []byte("copy_streams_busy (%)")) {
			t.Errorf("%s: no copy_streams_busy counter", name)
		}
	}
}

// WriteFile writes exports the way every user-named output is written
// (recordings/outfile): a new file gets 0666 less the umask, a link is
// followed and stays a link, and a FIFO is refused, not replaced.
func TestWriteFileKeepsLinksAndTheUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	dir := t.TempDir()
	write := func(w io.Writer) error { _, err := io.WriteString(w, "trace"); return err }

	fresh := filepath.Join(dir, "new.pftrace")
	if err := WriteFile(fresh, write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("a new export has mode %v (%v), want 0644 under umask 022", fi.Mode().Perm(), err)
	}

	real, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "link.json")
	if err := os.WriteFile(real, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(link, write); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced by %v (%v)", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(real); string(b) != "trace" {
		t.Errorf("the link's file holds %q", b)
	}

	fifo := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if err := WriteFile(fifo, write); err == nil || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("writing over a FIFO: %v", err)
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the FIFO became %v (%v)", fi.Mode(), err)
	}
}
