package kineto

import (
	"bytes"
	"compress/gzip"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

const (
	gemmK = "nvjet_hsh_256x128_64x4_2x1_v_bz_coopB_NNN"
	agK   = "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)"
	ewK   = "void at::native::vectorized_elementwise_kernel<4>(int)"
)

// TestKnownOverlap builds traces whose figures are known by hand and
// checks every one of them.
func TestKnownOverlap(t *testing.T) {
	for _, tc := range []struct {
		name                                string
		evs                                 []ev
		overlap, hta                        float64 // -1: none
		exposed, tSerial, tIdeal, tc3, idle float64 // µs
	}{
		{
			name: "half hidden",
			evs: []ev{
				{cat: "kernel", name: gemmK, ts: 0, dur: 100, stream: 7},
				{cat: "kernel", name: agK, ts: 50, dur: 100, stream: 23},
			},
			overlap: 0.5, hta: 0.5, exposed: 50, tSerial: 200, tIdeal: 100, tc3: 150,
		},
		{
			name: "fully hidden, alone times from the trace",
			evs: []ev{
				{cat: "kernel", name: gemmK, ts: 0, dur: 100, stream: 7},   // alone
				{cat: "kernel", name: gemmK, ts: 100, dur: 120, stream: 7}, // beside the gather: 1.2x
				{cat: "kernel", name: agK, ts: 110, dur: 50, stream: 23},
			},
			overlap: 1, hta: 1, exposed: 0, tSerial: 250, tIdeal: 200, tc3: 220,
		},
		{
			name: "serial with a gap; copies are communication, not HTA's",
			evs: []ev{
				{cat: "kernel", name: gemmK, ts: 0, dur: 100, stream: 7},
				{cat: "gpu_memcpy", name: "Memcpy HtoD (Pinned -> Device)", ts: 150, dur: 100, stream: 19, args: map[string]any{"bytes": 1 << 20}},
			},
			overlap: 0, hta: -1, exposed: 100, tSerial: 200, tIdeal: 100, tc3: 200, idle: 50,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := mustAnalyze(t, mustRead(t, synth(t, 2, tc.evs...)), Select{})
			check := func(what string, got *float64, want float64) {
				t.Helper()
				switch {
				case want < 0 && got != nil:
					t.Errorf("%s = %v, want none", what, *got)
				case want >= 0 && (got == nil || !near(*got, want, 1e-9)):
					t.Errorf("%s = %v, want %v", what, got, want)
				}
			}
			check("overlap", r.Overlap, tc.overlap)
			check("HTA overlap", r.HTAOverlap, tc.hta)
			for _, f := range []struct {
				what      string
				got, want float64
			}{
				{"exposed", float64(r.ExposedCommNs), tc.exposed * 1e3},
				{"T_serial", r.TSerialNs, tc.tSerial * 1e3},
				{"T_ideal", r.TIdealNs, tc.tIdeal * 1e3},
				{"T_c3", r.TC3Ns, tc.tc3 * 1e3},
				{"idle", float64(r.IdleNs), tc.idle * 1e3},
				{"S_real", r.RealizedSpeedup, tc.tSerial / tc.tc3},
				{"S_ideal", r.IdealSpeedup, tc.tSerial / tc.tIdeal},
			} {
				if !near(f.got, f.want, 1e-6) {
					t.Errorf("%s = %v, want %v", f.what, f.got, f.want)
				}
			}
			sIdeal, sReal := tc.tSerial/tc.tIdeal, tc.tSerial/tc.tc3
			if r.FractionOfIdeal == nil || !near(*r.FractionOfIdeal, (sReal-1)/(sIdeal-1), 1e-9) {
				t.Errorf("F = %v, want %v", r.FractionOfIdeal, (sReal-1)/(sIdeal-1))
			}
		})
	}
}

// TestSlowdownAgainstAloneInstances: a kind of op that ran both alone and
// beside the other role gets its slowdown; T_serial uses the alone median.
func TestSlowdownAgainstAloneInstances(t *testing.T) {
	r := mustAnalyze(t, mustRead(t, synth(t, 2,
		ev{cat: "kernel", name: gemmK, ts: 0, dur: 100, stream: 7},
		ev{cat: "kernel", name: gemmK, ts: 100, dur: 150, stream: 7},
		ev{cat: "kernel", name: agK, ts: 120, dur: 40, stream: 23},
	)), Select{})
	var gemm *ClassStat
	for i := range r.Classes {
		if r.Classes[i].Class == ClassGEMM {
			gemm = &r.Classes[i]
		}
	}
	if gemm == nil || gemm.Slowdown == nil || !near(*gemm.Slowdown, 1.5, 1e-9) {
		t.Fatalf("GEMM kind %+v, want a 1.5x slowdown", gemm)
	}
	if !near(r.TSerialComputeNs, 200e3, 1e-6) {
		t.Errorf("T_serial compute = %v, want 2 x the alone median (200 µs)", r.TSerialComputeNs)
	}
}

// refOverlap is HTA's definition computed a second way, from the raw
// activities: cut time at every start and end, and add up the pieces
// where an NCCL kernel and another kernel both run, over the pieces where
// an NCCL kernel runs.
func refOverlap(evs []ev) (float64, bool) {
	var cuts []float64
	for _, e := range evs {
		cuts = append(cuts, e.ts, e.ts+e.dur)
	}
	slices.Sort(cuts)
	var both, comm float64
	for i := 0; i+1 < len(cuts); i++ {
		a, b := cuts[i], cuts[i+1]
		if b <= a {
			continue
		}
		mid := (a + b) / 2
		var inComm, inComp bool
		for _, e := range evs {
			if e.cat != "kernel" || mid < e.ts || mid >= e.ts+e.dur {
				continue
			}
			if strings.HasPrefix(e.name, "nccl") {
				inComm = true
			} else {
				inComp = true
			}
		}
		if inComm {
			comm += b - a
			if inComp {
				both += b - a
			}
		}
	}
	if comm == 0 {
		return 0, false
	}
	return both / comm, true
}

// TestHTAOverlapMatchesRawEvents checks the overlap share against
// refOverlap on random traces (the target: within 0.5 points).
func TestHTAOverlapMatchesRawEvents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	names := []string{gemmK, agK, ewK, "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)"}
	for trial := range 200 {
		var evs []ev
		for i := range 1 + rng.IntN(30) {
			e := ev{cat: "kernel", name: names[rng.IntN(len(names))], ts: float64(rng.IntN(2000)), dur: float64(1 + rng.IntN(300)), stream: 1 + rng.IntN(4)}
			if i%7 == 6 {
				e.cat, e.name = "gpu_memcpy", "Memcpy DtoH (Device -> Pinned)"
				e.args = map[string]any{"bytes": 4096}
			}
			evs = append(evs, e)
		}
		r := mustAnalyze(t, mustRead(t, synth(t, 2, evs...)), Select{})
		want, ok := refOverlap(evs)
		switch {
		case !ok && r.HTAOverlap != nil:
			t.Fatalf("trial %d: HTA overlap %v, want none (no NCCL kernel)", trial, *r.HTAOverlap)
		case ok && (r.HTAOverlap == nil || math.Abs(*r.HTAOverlap-want) > 1e-9):
			t.Fatalf("trial %d: HTA overlap %v, want %v", trial, r.HTAOverlap, want)
		}
	}
}

func TestFixtureFigures(t *testing.T) {
	tr, err := ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Rank != 0 || tr.WorldSize != 2 || tr.Devices[0] != "NVIDIA H200" {
		t.Errorf("rank %d of %d on %q, want 0 of 2 on NVIDIA H200", tr.Rank, tr.WorldSize, tr.Devices[0])
	}
	if got := len(tr.Ops); got != 16 {
		t.Errorf("%d GPU activities, want 16", got)
	}
	r := mustAnalyze(t, tr, Select{Step: "3"})
	if r.ComputeOps+r.CommOps != 8 {
		t.Errorf("step 3 holds %d activities, want 8", r.ComputeOps+r.CommOps)
	}
	keys := map[string]bool{}
	for _, c := range r.Classes {
		keys[c.Key] = true
	}
	for _, k := range []string{"gemm 8192x4096x8192 bf16", "gemm 8192x8192x4096 bf16", "all-gather 8MiB", "reduce-scatter 8MiB", "h2d 32MiB", "memset"} {
		if !keys[k] {
			t.Errorf("no kind %q in %v", k, keys)
		}
	}
	if r.Unmapped != 1 {
		t.Errorf("%d unmapped activities, want 1 (the memset)", r.Unmapped)
	}
	if _, err := Analyze(tr, Select{Step: "9"}); err == nil || !strings.Contains(err.Error(), "its steps are 3, 4") {
		t.Errorf("step 9: %v, want the steps listed", err)
	}
	w := mustAnalyze(t, tr, Select{From: 0, To: 500e3})
	if w.ComputeOps+w.CommOps != 3 {
		t.Errorf("window 0..500µs holds %d activities, want 3 (the gather and two GEMMs)", w.ComputeOps+w.CommOps)
	}
}

func TestGzipReadsTheSame(t *testing.T) {
	data, err := os.ReadFile(fixture(t, "synthetic-tp2-rank1.json"))
	if err != nil {
		t.Fatal(err)
	}
	var z bytes.Buffer
	zw := gzip.NewWriter(&z)
	zw.Write(data)
	zw.Close()
	a, b := mustRead(t, data), mustRead(t, z.Bytes())
	if !b.Gzip || a.Gzip {
		t.Errorf("gzip flags %v %v", a.Gzip, b.Gzip)
	}
	ra, rb := mustAnalyze(t, a, Select{}), mustAnalyze(t, b, Select{})
	if ra.TSerialNs != rb.TSerialNs || *ra.Overlap != *rb.Overlap || len(a.Ops) != len(b.Ops) {
		t.Errorf("gzip read differs: %v/%v vs %v/%v", ra.TSerialNs, *ra.Overlap, rb.TSerialNs, *rb.Overlap)
	}
}

// TestBrokenTraces: every cut of a trace, and corrupted ones, give one
// *Error naming a byte offset, never a panic or a silent partial read.
func TestBrokenTraces(t *testing.T) {
	data, err := os.ReadFile(fixture(t, "synthetic-tp2-rank0.json"))
	if err != nil {
		t.Fatal(err)
	}
	for cut := 0; cut < len(data)-2; cut += 97 {
		_, err := Read(bytes.NewReader(data[:cut]), "cut.json")
		var ke *Error
		if !errors.As(err, &ke) {
			t.Fatalf("cut at %d: %v, want a *kineto.Error", cut, err)
		}
		if !strings.Contains(err.Error(), "byte ") || ke.Offset < 0 || ke.Offset > int64(cut) {
			t.Fatalf("cut at %d: %q (offset %d)", cut, err, ke.Offset)
		}
	}
	_, err = Read(bytes.NewReader(data[:len(data)/2]), "half.json")
	mustContain(t, err.Error(), "half.json", "ends early")
	for _, tc := range []struct{ name, text, want string }{
		{"not json", "hello", "invalid JSON"},
		{"array of junk", `[1,2`, "cannot read event 1"},
		{"no events", `{"schemaVersion": 1}`, "no traceEvents"},
		{"events not an array", `{"traceEvents": {}}`, "not an array"},
		{"bad ts", `{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":"x","dur":1}]}`, "no valid ts"},
		{"negative dur", `{"traceEvents": [{"ph":"X","cat":"kernel","name":"k","ts":1,"dur":-4}]}`, "no valid dur"},
		{"trailing text", `{"traceEvents": []} x`, "invalid JSON"},
		{"empty", ``, "empty"},
	} {
		_, err := Read(strings.NewReader(tc.text), tc.name)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), tc.name) {
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.want)
		}
	}
	// A corrupted byte in the middle of the file.
	bad := bytes.Clone(data)
	i := bytes.Index(bad, []byte(`"cat": "kernel"`))
	bad[i] = '}'
	if _, err := Read(bytes.NewReader(bad), "bad.json"); err == nil || !strings.Contains(err.Error(), "byte ") {
		t.Errorf("corrupted: %v", err)
	}
}

func TestGEMMShapeFromOps(t *testing.T) {
	bf := []string{"c10::BFloat16", "c10::BFloat16", "c10::BFloat16"}
	for _, tc := range []struct {
		name string
		dims [][]int64
		want *GEMMShape
	}{
		{"aten::mm", [][]int64{{128, 64}, {64, 32}}, &GEMMShape{128, 32, 64, "c10::BFloat16"}},
		{"aten::addmm", [][]int64{{32}, {128, 64}, {64, 32}}, &GEMMShape{128, 32, 64, "c10::BFloat16"}},
		{"aten::bmm", [][]int64{{4, 128, 64}, {4, 64, 32}}, &GEMMShape{512, 32, 64, "c10::BFloat16"}},
		{"aten::linear", [][]int64{{2, 8, 64}, {32, 64}, {32}}, &GEMMShape{16, 32, 64, "c10::BFloat16"}},
		{"aten::matmul", [][]int64{{8, 64}, {64, 16}}, &GEMMShape{8, 16, 64, "c10::BFloat16"}},
		{"aten::mm", [][]int64{{128, 64}, {63, 32}}, nil}, // K does not match
		{"aten::mm", [][]int64{{128}}, nil},
		{"aten::add", [][]int64{{128, 64}, {128, 64}}, nil},
	} {
		got := gemmFromOp(tc.name, tc.dims, bf)
		if (got == nil) != (tc.want == nil) || (got != nil && *got != *tc.want) {
			t.Errorf("%s %v: %+v, want %+v", tc.name, tc.dims, got, tc.want)
		}
	}
}

func TestCollectives(t *testing.T) {
	for _, tc := range []struct {
		kernel string
		args   *CommArgs
		want   scenarios.Collective
		bytes  int64
	}{
		{agK, nil, scenarios.AllGather, 0},
		{"ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL(x)", &CommArgs{Name: "_reduce_scatter_base", InNelems: 8, OutNelems: 4, DType: "BFloat16"}, scenarios.ReduceScatter, 8},
		{"ncclKernel_AllReduce_RING_LL_Sum_float(x)", &CommArgs{Name: "allreduce", InNelems: 10, OutNelems: 10, DType: "Float"}, scenarios.AllReduce, 40},
		{"ncclDevKernel_SendRecv(x)", &CommArgs{Name: "all_to_all", InNelems: 16, OutNelems: 16, DType: "Half"}, scenarios.AllToAll, 32},
		{"ncclDevKernel_Broadcast_RING_LL(x)", &CommArgs{Name: "broadcast", InNelems: 16, DType: "Float"}, "", 0},
	} {
		c := collectiveOf(tc.kernel, tc.args)
		if c != tc.want || commBytes(c, tc.args) != tc.bytes {
			t.Errorf("%s: %s %d B, want %s %d B", tc.kernel, c, commBytes(c, tc.args), tc.want, tc.bytes)
		}
	}
	if m, n, k, ok := gemmTile(gemmK); !ok || m != 256 || n != 128 || k != 64 {
		t.Errorf("nvjet tile %d %d %d %v", m, n, k, ok)
	}
	if m, n, k, ok := gemmTile("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cgasize1x2x1_execute_kernel__5x_cublas"); !ok || m != 128 || n != 256 || k != 64 {
		t.Errorf("xmma tile %d %d %d %v", m, n, k, ok)
	}
}

func TestMicros(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1700000000123.456", 1700000000123456, true},
		{"12.5", 12500, true},
		{"7", 7000, true},
		{"1e3", 1000000, true},
		{"-2.25", -2250, true},
		{"x", 0, false},
		{"", 0, false},
		{"99999999999999999999", 0, false},
	} {
		got, ok := micros(jsonNumber(tc.in))
		if got != tc.want || ok != tc.ok {
			t.Errorf("micros(%q) = %d %v, want %d %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestUnknownKernelsAreNamed: a kernel c3lab cannot size is counted and
// named in the report, not dropped.
func TestUnknownKernelsAreNamed(t *testing.T) {
	r := mustAnalyze(t, mustRead(t, synth(t, 2,
		ev{cat: "kernel", name: "my_custom_kernel<3>(float*)", ts: 0, dur: 10, stream: 7},
		ev{cat: "kernel", name: "my_custom_kernel<3>(float*)", ts: 20, dur: 10, stream: 7},
		ev{cat: "kernel", name: "ncclDevKernel_Broadcast_RING_LL(x)", ts: 0, dur: 5, stream: 9},
	)), Select{})
	if r.Unmapped != 3 || r.UnmappedNs != 25e3 {
		t.Errorf("unmapped %d (%d ns), want 3 (25 µs)", r.Unmapped, r.UnmappedNs)
	}
	var b strings.Builder
	WriteText(&b, []*Report{r}, 120)
	mustContain(t, b.String(), "my_custom_kernel ×2", "nccl ncclDevKernel_Broadcast_RING_LL ×1")
}
