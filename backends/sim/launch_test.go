package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// launchTableFile is the committed H200 launch table.
const launchTableFile = "gemm_launches_h200.json"

// probeGEMMs are the GEMMs of the one-H200 boundary probe
// (results/2026-12-01-h200x1-i15/boundary-probe.json), which the graph
// model is checked against.
var probeGEMMs = []scenarios.ComputeOp{
	{Kind: scenarios.GEMM, M: 32768, N: 8192, K: 8192, DType: scenarios.BF16},
	{Kind: scenarios.GEMM, M: 4096, N: 4096, K: 4096, DType: scenarios.BF16},
}

// suiteGEMMs lists every distinct GEMM of the built-in suite (whole and
// decomposed in 2, 4 and 8 chunks, where a scenario can be) and of the
// boundary probe, in a stable order.
func suiteGEMMs(t testing.TB) []scenarios.ComputeOp {
	t.Helper()
	seen := map[scenarios.ComputeOp]bool{}
	var out []scenarios.ComputeOp
	add := func(c scenarios.ComputeOp) {
		if c.Kind == scenarios.GEMM && !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	for _, c := range probeGEMMs {
		add(c)
	}
	for _, sc := range scenarios.Builtin() {
		for _, d := range []int{0, 2, 4, 8} {
			g, err := sc.Graph(scenarios.Strategy{Decompose: d})
			if err != nil {
				if d == 0 {
					t.Fatalf("%s: %v", sc.Name, err)
				}
				continue
			}
			for _, o := range g.Ops {
				if o.Role == scenarios.RoleCompute {
					add(o.Compute)
				}
			}
		}
	}
	return out
}

// The committed H200 table parses, covers every GEMM of the suite on the
// whole device, and every entry the tile rule filled in ("model") is the
// rule's launch for its shape, so the table and the rule cannot drift
// apart unnoticed. H200() carries it.
func TestH200LaunchTable(t *testing.T) {
	data, err := os.ReadFile(launchTableFile)
	if err != nil {
		t.Fatal(err)
	}
	table, err := ParseGEMMLaunches(data)
	if err != nil {
		t.Fatal(err)
	}
	p := H200()
	if len(p.GEMMLaunches) != len(table) {
		t.Fatalf("H200() carries %d launches, the file %d", len(p.GEMMLaunches), len(table))
	}
	for _, c := range suiteGEMMs(t) {
		l := p.gemmLaunch(c, p.SMs)
		if l.Source == LaunchRule {
			t.Errorf("%s on %d SMs is not in %s: regenerate it (TestWriteGEMMLaunchTable)", c, p.SMs, launchTableFile)
		}
	}
	for _, l := range table {
		if l.Source != LaunchModel {
			continue
		}
		c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: l.M, N: l.N, K: l.K, DType: l.DType}
		want := ruleLaunch(p, c, l.SMTarget)
		want.Source = LaunchModel
		if l != want {
			t.Errorf("%s: the table says %+v, the tile rule %+v", c, l, want)
		}
	}
}

// A shape the table lacks takes the rule's launch, marked as such; a
// listed one takes its entry, on its SM target only.
func TestGEMMLaunchLookup(t *testing.T) {
	p := H200()
	c := scenarios.ComputeOp{Kind: scenarios.GEMM, M: 12345, N: 678, K: 910, DType: scenarios.FP16}
	if l := p.gemmLaunch(c, p.SMs); l.Source != LaunchRule || !l.Persistent || l.GridCTAs > p.SMs {
		t.Errorf("unlisted shape: %+v; want the rule's persistent launch", l)
	}
	mine := GEMMLaunch{M: c.M, N: c.N, K: c.K, DType: c.DType, SMTarget: p.SMs, GridCTAs: 1000, ThreadsPerCTA: 256,
		CTAsPerSM: 2, TileM: 128, TileN: 128, SplitK: 1, Source: LaunchMeasured}
	p.GEMMLaunches = append(slices.Clone(p.GEMMLaunches), mine)
	if l := p.gemmLaunch(c, p.SMs); l != mine {
		t.Errorf("listed shape: %+v; want %+v", l, mine)
	}
	if l := p.gemmLaunch(c, 100); l.Source != LaunchRule {
		t.Errorf("listed shape on another SM target: %+v; want the rule's", l)
	}
}

// Bad tables are refused with a line that says which entry and why.
func TestParseGEMMLaunchesRefuses(t *testing.T) {
	good := `{"m":4096,"n":4096,"k":4096,"dtype":"bf16","sm_target":132,"grid_ctas":132,"threads_per_cta":384,"ctas_per_sm":1,"persistent":true,"tile_m":128,"tile_n":256,"split_k":1,"source":"measured"}`
	wrap := func(entries ...string) string {
		return `{"device":"NVIDIA H200","regenerate":"by hand","launches":[` + strings.Join(entries, ",") + `]}`
	}
	if l, err := ParseGEMMLaunches([]byte(wrap(good))); err != nil || len(l) != 1 || l[0].Tiles() != 32*16 {
		t.Fatalf("good table: %v, %+v", err, l)
	}
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "reading"},
		{"unknown field", `{"launches":[],"colour":1}`, "unknown field"},
		{"trailing data", wrap(good) + "{}", "after the table"},
		{"twice", wrap(good, good), "listed twice"},
		{"zero grid", wrap(strings.Replace(good, `"grid_ctas":132`, `"grid_ctas":0`, 1)), "grid_ctas is 0"},
		{"huge m", wrap(strings.Replace(good, `"m":4096`, `"m":99999999999`, 1)), "m is"},
		{"bad dtype", wrap(strings.Replace(good, `"bf16"`, `"int4"`, 1)), "element type"},
		{"too many threads", wrap(strings.Replace(good, `"threads_per_cta":384`, `"threads_per_cta":2048`, 1)), "1024"},
		{"persistent grid too large", wrap(strings.Replace(good, `"grid_ctas":132`, `"grid_ctas":512`, 1)), "resident slots"},
		{"rule in a file", wrap(strings.Replace(good, `"measured"`, `"rule"`, 1)), "source"},
		{"negative shared memory", wrap(strings.Replace(good, `"split_k":1`, `"split_k":1,"shared_bytes":-1`, 1)), "shared_bytes"},
		{"shared memory no SM has", wrap(strings.Replace(good, `"split_k":1`, `"split_k":1,"shared_bytes":300000`, 1)), "shared_bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseGEMMLaunches([]byte(tc.data))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one saying %q", err, tc.want)
			}
		})
	}
}

// FuzzParseGEMMLaunches: any input parses or is refused, never panics,
// and what parses looks up and tiles without overflow.
func FuzzParseGEMMLaunches(f *testing.F) {
	f.Add(gemmLaunchesH200)
	f.Add([]byte(`{"launches":[{"m":1,"n":1,"k":1,"dtype":"fp8","sm_target":1,"grid_ctas":1,"threads_per_cta":1,"ctas_per_sm":1,"persistent":false,"tile_m":1,"tile_n":1,"split_k":1,"source":"model"}]}`))
	f.Add([]byte(`{"launches":null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseGEMMLaunches(data)
		if err != nil {
			return
		}
		for _, e := range l {
			if e.Tiles() < 1 {
				t.Fatalf("%+v tiles to %d", e, e.Tiles())
			}
		}
	})
}

// TestWriteGEMMLaunchTable writes the H200 launch table (only with
// C3LAB_SIM_WRITE_LAUNCHES set to the output path, normally
// backends/sim/gemm_launches_h200.json): every GEMM of the suite and of
// the boundary probe on the whole device, from the launches measured on
// the H200 where the file named by C3LAB_SIM_LAUNCHES_FROM has them (ncu's
// launch statistics as backends/cuda/reference/gemm_launches.py writes
// them, see launchesFromNCU), else from the tile rule ("model"). Measured
// entries for other shapes or SM targets are kept too.
//
//	C3LAB_SIM_WRITE_LAUNCHES=$PWD/backends/sim/gemm_launches_h200.json \
//	C3LAB_SIM_LAUNCHES_FROM=$PWD/backends/cuda/results/2026-12-01-h200x1-i17/gemm-launches-h200.json \
//	go test ./backends/sim -run TestWriteGEMMLaunchTable
func TestWriteGEMMLaunchTable(t *testing.T) {
	out := os.Getenv("C3LAB_SIM_WRITE_LAUNCHES")
	if out == "" {
		t.Skip("set C3LAB_SIM_WRITE_LAUNCHES to the table's path to write it")
	}
	if fi, err := os.Stat(out); err == nil && !fi.Mode().IsRegular() {
		t.Fatalf("%s is not a regular file", out)
	}
	// C3LAB_SIM_LAUNCHES_FROM may name several files (a path list): a
	// launch a later file measured replaces an earlier one's.
	var measured []GEMMLaunch
	var names []string
	for _, from := range filepath.SplitList(os.Getenv("C3LAB_SIM_LAUNCHES_FROM")) {
		data, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		got, err := launchesFromNCU(data)
		if err != nil {
			t.Fatalf("%s: %v", from, err)
		}
		measured = mergeLaunches(measured, got)
		names = append(names, filepath.Base(filepath.Dir(from))+"/"+filepath.Base(from))
	}
	p := H200()
	p.GEMMLaunches = measured
	f := launchFile{
		Device: p.Device,
		Regenerate: "C3LAB_SIM_WRITE_LAUNCHES=$PWD/backends/sim/" + launchTableFile +
			" [C3LAB_SIM_LAUNCHES_FROM=<ncu launch statistics, backends/cuda/results/*/gemm-launches-h200.json>] go test ./backends/sim -run TestWriteGEMMLaunchTable" +
			"; source \"model\": the tile rule, \"measured\": ncu launch statistics of the cuBLASLt kernel the cuda backend runs",
	}
	if len(names) > 0 {
		f.Regenerate += "; measured entries from " + strings.Join(names, ", ") + " (later ones winning)" +
			" (tile from the kernel's name; split-K, which ncu does not report, is the grid over the output tiles when a split-K reduction ran)"
	}
	have := map[GEMMLaunch]bool{}
	for _, c := range suiteGEMMs(t) {
		l := p.gemmLaunch(c, p.SMs)
		if l.Source == LaunchRule {
			l.Source = LaunchModel
		}
		f.Launches = append(f.Launches, l)
		have[l] = true
	}
	for _, l := range measured {
		if !have[l] {
			f.Launches = append(f.Launches, l)
		}
	}
	writeTableFile(t, out, f, func(data []byte) error {
		_, err := ParseGEMMLaunches(data)
		return err
	})
	t.Logf("wrote %d launches to %s", len(f.Launches), out)
}

// mergeLaunches is base with the launches of later added, a launch of the
// same GEMM and SM target replacing base's.
func mergeLaunches(base, later []GEMMLaunch) []GEMMLaunch {
	out := slices.DeleteFunc(slices.Clone(base), func(b GEMMLaunch) bool {
		return slices.ContainsFunc(later, func(l GEMMLaunch) bool {
			return l.M == b.M && l.N == b.N && l.K == b.K && l.DType == b.DType && l.SMTarget == b.SMTarget
		})
	})
	return append(out, later...)
}

// Launch files merge in order: a later file's launch of a GEMM and SM
// target replaces an earlier one's; the others stay.
func TestMergeLaunches(t *testing.T) {
	a := GEMMLaunch{M: 1, N: 2, K: 3, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, Kernel: "old"}
	b := GEMMLaunch{M: 4, N: 5, K: 6, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, Kernel: "kept"}
	a2 := a
	a2.Kernel = "new"
	a68 := a
	a68.SMTarget, a68.Kernel = 68, "other target"
	got := mergeLaunches([]GEMMLaunch{a, b}, []GEMMLaunch{a2, a68})
	want := []GEMMLaunch{b, a2, a68}
	if !slices.Equal(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

// The ncu measurement file becomes measured launch entries: the whole
// device for SM target 0, the tile from the kernel's name, split-K from
// the grid when a reduction kernel ran; bad files are refused.
func TestLaunchesFromNCU(t *testing.T) {
	data := []byte(`{"sms":132,"shapes":[
 {"m":16,"n":18432,"k":16384,"dtype":"bf16","sm_target":0,"persistent":true,
  "main":{"kernel":"nvjet_sm90_tst_16x192_64x8_1x2_h_bz_splitK_TNN","grid":132,"block":384,"ctas_per_sm":1,"shared_bytes":222532},
  "reduce":{"kernel":"splitKreduce","grid":576,"block":512,"ctas_per_sm":4}},
 {"m":2,"n":49152,"k":12288,"dtype":"fp16","sm_target":100,"persistent":false,
  "main":{"kernel":"void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_f16_64x256_64x4_tn_align2>(T1::Params)","grid":384,"block":128,"ctas_per_sm":1}}]}`)
	l, err := launchesFromNCU(data)
	if err != nil {
		t.Fatal(err)
	}
	want := []GEMMLaunch{
		{M: 16, N: 18432, K: 16384, DType: scenarios.BF16, SMTarget: 132, GridCTAs: 132, ThreadsPerCTA: 384, CTAsPerSM: 1, Persistent: true,
			TileM: 16, TileN: 192, SplitK: 2, Kernel: "nvjet_sm90_tst_16x192_64x8_1x2_h_bz_splitK_TNN", SharedBytes: 222532, Source: LaunchMeasured},
		{M: 2, N: 49152, K: 12288, DType: scenarios.FP16, SMTarget: 100, GridCTAs: 384, ThreadsPerCTA: 128, CTAsPerSM: 1,
			TileM: 64, TileN: 256, SplitK: 1, Kernel: "void cutlass::Kernel2<cutlass_80_tensorop_f16_s16816gemm_f16_64x256_64x4_tn_align2>(T1::Params)", Source: LaunchMeasured},
	}
	if !slices.Equal(l, want) {
		t.Errorf("got %+v\nwant %+v", l, want)
	}
	for _, bad := range []string{`[`, `{"sms":0,"shapes":[]}`, `{"sms":132,"shapes":[{"m":0}]}`,
		`{"sms":132,"shapes":[{"m":1,"n":1,"k":1,"dtype":"bf16","persistent":true,"main":{"kernel":"k","grid":1,"block":1,"ctas_per_sm":1,"shared_bytes":300000}}]}`} {
		if _, err := launchesFromNCU([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}

// FuzzLaunchesFromNCU: any input converts or is refused, never panics.
func FuzzLaunchesFromNCU(f *testing.F) {
	f.Add([]byte(`{"sms":132,"shapes":[{"m":1,"n":1,"k":1,"dtype":"bf16","sm_target":0,"persistent":true,"main":{"kernel":"tst_1x1","grid":1,"block":1,"ctas_per_sm":1},"reduce":{}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := launchesFromNCU(data)
		if err != nil {
			return
		}
		for _, e := range l {
			if e.validate() != nil || e.Tiles() < 1 {
				t.Fatalf("%+v passed", e)
			}
		}
	})
}

// The tile rule on the whole GPU takes what cuBLASLt's kernels take for
// these shapes (ncu on an H200, gemm_launches_h200.json): a tile of M
// rows for a small M, tiles that fill the SMs in one round where they
// can, split K only for shapes whose tiles leave SMs idle, in slices of
// at least 1024; on a partition's SM target the older rule decides.
func TestTileRule(t *testing.T) {
	p := H200()
	g := func(m, n, k int, d scenarios.DType) scenarios.ComputeOp {
		return scenarios.ComputeOp{Kind: scenarios.GEMM, M: m, N: n, K: k, DType: d}
	}
	for _, tc := range []struct {
		c    scenarios.ComputeOp
		sms  int
		test func(tm, tn, sk int) string
	}{
		{g(16, 14336, 4096, scenarios.BF16), 132, func(tm, tn, sk int) string {
			if tm != 16 {
				return "want a 16-row tile"
			}
			return ""
		}},
		{g(80, 20992, 12288, scenarios.BF16), 132, func(tm, tn, sk int) string {
			if tm != 80 {
				return "want an 80-row tile (ncu: 80 x 192)"
			}
			return ""
		}},
		{g(3160, 512, 5760, scenarios.BF16), 132, func(tm, tn, sk int) string {
			if r := ceilDiv(3160, tm) * ceilDiv(512, tn) * sk; r > 132 {
				return fmt.Sprintf("%d tiles: want one round on 132 SMs (ncu: 96 x 128, 132 tiles)", r)
			}
			return ""
		}},
		{g(16, 4096, 65536, scenarios.BF16), 132, func(tm, tn, sk int) string {
			if sk < 2 || 65536/sk < 1024 {
				return "want K split (few tiles, long K), in slices of at least 1024"
			}
			return ""
		}},
		{g(8192, 8192, 8192, scenarios.BF16), 132, func(tm, tn, sk int) string {
			if sk != 1 || tm*tn < 128*128 {
				return "want a large tile and no split"
			}
			return ""
		}},
	} {
		tileNs := ruleTileN()
		tm, tn, sk := tileRule(p, tc.c, tc.sms)
		if why := tc.test(tm, tn, sk); why != "" {
			t.Errorf("%s on %d SMs: %d x %d split %d: %s", tc.c, tc.sms, tm, tn, sk, why)
		}
		if tm%8 != 0 || tm > ruleMaxTileM || tm*tn > ruleMaxTileArea || !slices.Contains(tileNs[:], tn) {
			t.Errorf("%s: %d x %d is no candidate tile", tc.c, tm, tn)
		}
	}
	c := g(16, 14336, 4096, scenarios.BF16)
	tm, tn, sk := tileRule(p, c, 68)
	wm, wn, wk := partitionTileRule(p, c, 68)
	if tm != wm || tn != wn || sk != wk {
		t.Errorf("on 68 SMs the rule gave %d x %d split %d, want the partition rule's %d x %d split %d", tm, tn, sk, wm, wn, wk)
	}
}

// The launch table's tile comes from the kernel's name for every nvjet
// type code: fp16's "hsh" kernels once all read as 128 x 256 in the table
// (gpt3's decode GEMM has 16 x 384 tiles on 128 CTAs). The tiled GEMM
// re-read the name, so its times did not change; the table's other
// readers (the roofline GEMM's traffic, split-K's count) did.
func TestTileOfKernel(t *testing.T) {
	for _, tc := range []struct {
		name   string
		tm, tn int
	}{
		{"nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_TNT", 320, 128},
		{"nvjet_sm90_hsh_16x384_64x4_1x2_h_bz_TNN", 16, 384},
		{"nvjet_sm90_hsh_192x192_64x4_2x1_v_bz_coopB_TNN", 192, 192},
		{"nvjet_sm90_qqtst_128x128_128x6_2x1_v_bz_coopA_algo2_TNT", 128, 128},
		{"sm80_xmma_gemm_f16f16_f16f32_f32_tn_n_tilesize96x128x32_stage3_warpsize2x2x1_tensor16x8x16_kernel", 128, 256},
		{"void cutlass::Kernel<cutlass_80_tensorop_bf16_s16816gemm_bf16_64x256_64x4_tn_align2>(Params)", 64, 256},
		{"", 128, 256},
		{"nvjet_sm90_hsh_0x384_64x4", 128, 256},
	} {
		if tm, tn := tileOfKernel(tc.name); tm != tc.tm || tn != tc.tn {
			t.Errorf("%q: tile %d x %d; want %d x %d", tc.name, tm, tn, tc.tm, tc.tn)
		}
	}
}

// writeTableFile writes v as indented JSON to out through a temporary
// file in the same folder renamed over it, so that a failed write leaves
// the old table; parse must accept what is written.
func writeTableFile(t *testing.T, out string, v any, parse func([]byte) error) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	if err := parse(buf.Bytes()); err != nil {
		t.Fatalf("the table written does not parse: %v", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".table-*.json")
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		t.Fatal(err)
	}
}
