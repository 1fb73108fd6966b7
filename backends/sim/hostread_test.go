package sim

import (
	"archive/tar"
	"cmp"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// The read stall of c3lab's h2d copy kernel by its CTAs
// (Profile.HostReadStall, HostReadStallSteep, HostReadEndWait) against one
// H200: single bf16 GEMMs beside a 128 MiB copy launched first with
// priority. The fit rows (results/2026-12-03-h200x1-s20, call 4: three
// GEMMs at 8, 16, 32 and 64 CTAs) set the constants; the check rows (-s21,
// call 1: seven more GEMMs of one to thirteen tiles per CTA at 8-64 CTAs)
// and the length rows (two GEMMs beside 32 MiB and 512 MiB copies) did
// not, except that the 48-CTA rows placed HostReadStallFrom, which the fit
// rows leave anywhere between 1 and 2. Before, the model had these GEMMs
// 21 / 34 / 83 %, 27 / 70 / 89 % and 29 / 46 / 88 % off (median / p90 /
// max); the 48-CTA rows are bistable on the GPU (858 and 1698 µs in two
// passes), and the model takes their middle. The first rows (-s21 call 6,
// one GEMM enqueued before the copy) checked the rule for how the copy
// started: before it the decode GEMM at 64 CTAs was 80 % early.
func TestHostReadStallByCTAs(t *testing.T) {
	p := H200()
	const s20, s21 = "../2026-12-03-h200x1-s20", "../2026-12-03-h200x1-s21"
	type row struct {
		set, dir, probe string
		ctas            int
	}
	var rows []row
	for _, s := range []string{"4096x4096x4096", "512x28672x4096", "8192x8192x8192"} {
		for _, c := range []int{8, 16, 32, 64} {
			rows = append(rows, row{"fit", s20, "gh-" + s + "-h128", c})
		}
	}
	for _, s := range []string{"64x28672x8192", "1024x16384x8192", "2048x8192x8192", "8192x7168x8192",
		"4096x16384x8192", "8192x8192x4096", "1024x8192x4096"} {
		for _, c := range []int{8, 16, 32, 48, 64} {
			rows = append(rows, row{"check", s21, "gh-" + s + "-h128", c})
		}
	}
	for _, s := range []string{"4096x4096x4096", "512x28672x4096"} {
		for _, size := range []string{"h32", "h512"} {
			for _, c := range []int{16, 32, 64} {
				rows = append(rows, row{"length", s21, "gh-" + s + "-" + size, c})
			}
		}
	}
	// One GEMM enqueued before the copy (call 6): beside a persistent
	// GEMM the copy waits for its SMs; beside the decode GEMM it starts
	// on the SMs left free and counts as started alone.
	for _, s := range []string{"2048x8192x8192", "8192x7168x8192", "64x28672x8192"} {
		for _, c := range []int{16, 32, 64} {
			rows = append(rows, row{"first", s21, "gh-" + s + "-h128", c})
		}
	}
	// The most any one row and the median of a set may be off.
	limits := map[string]errorLimit{"fit": {0.25, 0.08}, "check": {0.4, 0.1}, "length": {0.2, 0.1}, "first": {0.3, 0.05}}
	errs := map[string][]float64{}
	for _, r := range rows {
		var ends []float64
		for _, pass := range []string{"p1", "p2"} {
			trace := fmt.Sprintf("call1/%s-c%d", r.probe, r.ctas)
			switch {
			case r.dir == s20:
				trace = fmt.Sprintf("call4/%s-c%d", r.probe, r.ctas)
			case r.set == "first":
				trace = fmt.Sprintf("call6/%s-cf%d", r.probe, r.ctas)
			}
			_, ops := measuredOps(t, fmt.Sprintf("%s/%s-%s.json", r.dir, trace, pass))
			ends = append(ends, gemmEnd(r.set, ops))
		}
		measured := (ends[0] + ends[1]) / 2
		sc, err := scenarios.Load(filepath.Join(hostWriteProbes, r.dir, "probe", r.probe+".yaml"), p.Limits())
		if err != nil {
			t.Fatal(err)
		}
		st := copyFirst(r.ctas)
		if r.set == "first" {
			st = scenarios.Strategy{Launch: scenarios.ComputeFirst, CommCTAs: r.ctas}
		}
		_, ops := simOps(t, p, sc, st)
		end := gemmEnd(r.set, ops)
		e := math.Abs(end/measured - 1)
		errs[r.set] = append(errs[r.set], e)
		if e > limits[r.set].row {
			t.Errorf("%s at %d CTAs (%s): the GEMM ends at %.0f µs, measured %.0f", r.probe, r.ctas, r.set, end, measured)
		}
	}
	checkSetMedians(t, errs, limits, "fit", "check", "length", "first")
}

// gemmEnd is a probe's GEMM end: µs from the copy's start, or, for a GEMM
// enqueued first (set "first"), from its own start, since the copy then
// starts when the GEMM leaves it SMs in the model and at once (its
// CTAs waiting) on the GPU.
func gemmEnd(set string, ops []opSpan) float64 {
	if set == "first" {
		return ops[0].end - ops[0].start
	}
	return ops[0].end
}

// Kernels wait to launch and to end behind the copy's reads only when the
// copy's CTAs got SMs as it launched (job.startedAlone): twelve 4096^3 GEMMs beside
// a 128 MiB h2d copy kernel of 32 CTAs took 420-505 µs each, 95-150 µs
// apart, with the copy enqueued first, and 275-325 µs, 10-40 µs apart,
// with the first GEMM enqueued first (results/2026-12-03-h200x1-s21, call
// 2, two passes each); at 16 CTAs, GEMMs first, 261-268 µs, 5 µs apart
// (call 3). A copy in a partition of its own starts alone though the
// GEMMs were enqueued first: on the rest of the GPU beside a copy in 16 or
// 32 SMs they took 417-490 µs, about 100 µs apart, and the first GEMM, which
// started before the copy, ended at 336-349 µs without the end wait (call
// 5). The model holds them within 12 % and 25 µs, where before it gave
// both whole-GPU orders the first's gaps. Not held: at 64 CTAs, GEMMs first,
// they took 352-393 µs, 45-80 µs apart, and the model gives 560 µs back
// to back (the copy's 64 CTAs cost the GEMM SMs in the model, not on the
// GPU).
func TestHostReadWaitsFollowCopyStart(t *testing.T) {
	p := H200()
	const s21 = "../2026-12-03-h200x1-s21"
	sc, err := scenarios.Load(filepath.Join(hostWriteProbes, s21, "probe", "tc-g4096x12-h128.yaml"), p.Limits())
	if err != nil {
		t.Fatal(err)
	}
	// beside is the median time and gap of GEMMs 2 to 6, which run wholly
	// beside the copy in every probe here.
	beside := func(_ float64, ops []opSpan) (dur, gap float64) {
		var ds, gs []float64
		for i := 1; i < len(ops); i++ {
			ds = append(ds, ops[i].end-ops[i].start)
			gs = append(gs, ops[i].start-ops[i-1].end)
		}
		return median(ds), median(gs)
	}
	for _, tc := range []struct {
		call, tag string
		launch    scenarios.LaunchOrder
		ctas, sms int
	}{
		{"call2", "cf", scenarios.ComputeFirst, 32, 0}, {"call2", "mf", scenarios.CommFirst, 32, 0},
		{"call3", "cf16", scenarios.ComputeFirst, 16, 0},
		// The copy in a partition of its own starts alone, though the
		// first GEMM was enqueued first (call 5).
		{"call5", "s16-c32", scenarios.ComputeFirst, 32, 16}, {"call5", "s32-c32", scenarios.ComputeFirst, 32, 32},
	} {
		var mDur, mGap, mFirst []float64
		for _, pass := range []string{"p1", "p2"} {
			_, ops := measuredOps(t, fmt.Sprintf("%s/%s/tc-g4096x12-h128-%s-%s.json", s21, tc.call, tc.tag, pass))
			d, g := beside(math.Inf(1), ops[:6])
			mDur, mGap, mFirst = append(mDur, d), append(mGap, g), append(mFirst, ops[0].end)
		}
		_, ops := simOps(t, p, sc, scenarios.Strategy{Launch: tc.launch, CommCTAs: tc.ctas, CommSMs: tc.sms})
		dur, gap := beside(math.Inf(1), ops[:6])
		// The first GEMM, enqueued before a copy in a partition of its
		// own, takes no end wait. (On the whole GPU the copy's CTAs wait
		// for the first GEMM's SMs in the model, and start with it on the
		// GPU, so the two clocks, from the copy's start, differ.)
		if want := median(mFirst); tc.sms > 0 && math.Abs(ops[0].end/want-1) > 0.12 {
			t.Errorf("%s, %d CTAs, %d SMs: the first GEMM ends at %.0f µs, measured %.0f", tc.launch, tc.ctas, tc.sms, ops[0].end, want)
		}
		if want := median(mDur); math.Abs(dur/want-1) > 0.12 {
			t.Errorf("%s, %d CTAs, %d SMs: GEMMs take %.0f µs beside the copy, measured %.0f", tc.launch, tc.ctas, tc.sms, dur, want)
		}
		if want := median(mGap); math.Abs(gap-want) > 25 {
			t.Errorf("%s, %d CTAs, %d SMs: GEMMs %.0f µs apart beside the copy, measured %.0f", tc.launch, tc.ctas, tc.sms, gap, want)
		}
		t.Logf("%s, %d CTAs, %d SMs: GEMMs %.0f µs, %.0f apart (measured %.0f, %.0f)", tc.launch, tc.ctas, tc.sms, dur, gap, median(mDur), median(mGap))
	}
}

// readApartDir holds session 26's runs of twelve GEMMs beside a 256 MiB
// h2d copy kernel in an SM partition of its own (probe/rs-*.yaml): call 2
// in 16 SMs with the partition probe of the same GEMMs on the same H200;
// calls 3 (16 SMs) and 4 (32 SMs) on two other H200s with each GEMM
// beside a 1 MiB copy there instead (probe/ra-*.yaml, the copy ending in
// about 25 µs), which times it alone on the rest.
const readApartDir = "../cuda/results/2026-12-04-h200x1-s26"

// TestHostReadApartWait: a GEMM launched before an h2d copy kernel in an
// SM partition of its own takes its time alone on the rest of the GPU
// plus Profile.HostReadApartWait x the copy's read weight, not a read
// stall on its rate. Measured on three H200s: twelve GEMMs of 93 µs to 1.8
// ms on the whole GPU (K from 2048 to 16384, 4 to 20 tiles per CTA) took
// 25-61 µs more than alone there at 16 copy CTAs and 66-116 µs more at
// 32, whatever their length (on call 2's GPU the longest, 2.2 ms there,
// -13 to +165), and the same with the copy in 32 SMs (call 4: 84 µs per
// 32 CTAs at the median against 87 and 87). With the read stall acting
// across the partition as on shared SMs (the model before) the added time
// was 35-285 µs, 47 / 147, 42 / 148 and 50 / 124 µs off on calls 2, 3
// and 4 (median / p90); now 6 / 24, 6 / 18 and 7 / 18.
func TestHostReadApartWait(t *testing.T) {
	for _, tc := range []struct {
		call string
		sms  int // the copy's partition
	}{{"call2", 16}, {"call3", 16}, {"call4", 32}} {
		call := tc.call
		t.Run(call, func(t *testing.T) {
			runs := readRunArchive(t, filepath.Join(readApartDir, call, "runs.tgz"))
			type cell struct {
				file string
				ctas int
			}
			measured := map[cell][]float64{}
			whole := map[string][]float64{} // the runs' times alone on the whole GPU
			aloneRuns := map[string][]float64{}
			for name, r := range runs {
				if base, ok := strings.CutPrefix(name, "ra-"); ok {
					base = "rs-" + base[:strings.LastIndex(base, "-p")]
					aloneRuns[base] = append(aloneRuns[base], r.CompInC3)
					continue
				}
				var base string
				var ctas, pass int
				if _, err := fmt.Sscanf(strings.ReplaceAll(name, "-c", " "), "%s %d-p%d.json", &base, &ctas, &pass); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				measured[cell{base, ctas}] = append(measured[cell{base, ctas}], r.CompInC3)
				whole[base] = append(whole[base], r.Comp)
			}
			if len(measured) != 24 {
				t.Fatalf("%d cells in %s; want 24 (12 GEMMs x 2 CTA counts)", len(measured), call)
			}
			// The GEMM's measured time alone on the rest: the probe's
			// ratio of the run's whole-GPU time (call 2), or its time
			// beside the 1 MiB copy (calls 3 and 4).
			aloneRest := func(base string, c scenarios.ComputeOp) float64 {
				if v := aloneRuns[base]; len(v) > 0 {
					return median(v)
				}
				probe, err := readPartitionProbe(filepath.Join(readApartDir, call, "probe.json.gz"))
				if err != nil {
					t.Fatal(err)
				}
				for _, s := range probe.Shapes {
					if (gemmKey{s.M, s.N, s.K, s.DType}) == keyOf(c) {
						return median(whole[base]) * s.OverFull[placementRest+"-"+strconv.Itoa(tc.sms)].Median
					}
				}
				t.Fatalf("%s: no time alone on the rest for %v", call, c)
				return 0
			}
			cells := slices.SortedFunc(maps.Keys(measured), func(a, b cell) int {
				return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.ctas, b.ctas))
			})
			var errs []float64
			for _, c := range cells {
				sc, err := scenarios.Load(filepath.Join(readApartDir, "probe", c.file+".yaml"), H200().Limits())
				if err != nil {
					t.Fatal(err)
				}
				// The wait is what is checked: measured, the GEMM's time
				// beside the copy over its time alone on the rest;
				// simulated, the same over the simulator's time alone
				// there.
				wantAdded := median(measured[c]) - aloneRest(c.file, sc.Compute)
				gotAdded := simComputeInC3(t, H200(), sc, scenarios.Strategy{Launch: scenarios.ComputeFirst, CommSMs: tc.sms, CommCTAs: c.ctas}) -
					aloneCompute(t, H200(), sc.Compute, scenarios.Strategy{CommSMs: tc.sms})
				errs = append(errs, (gotAdded-wantAdded)/1e3)
				t.Logf("%-26s %d CTAs: %4.0f µs more than alone there beside the copy (measured %4.0f)", c.file, c.ctas, gotAdded/1e3, wantAdded/1e3)
			}
			med, p90 := absStats(errs)
			t.Logf("%d cells: |error| median %.0f µs, p90 %.0f µs", len(errs), med, p90)
			if med > 15 || p90 > 40 {
				t.Errorf("the GEMM's time beside a copy apart is %.0f µs off at the median and %.0f at p90; want within 15 and 40 µs", med, p90)
			}
		})
	}
}

// apartRun is what TestHostReadApartWait reads of a c3lab run --json.
type apartRun struct {
	Comp, CompInC3 float64 // ns
}

// readRunArchive reads every c3lab run --json file in a gzipped tar,
// keyed by file name.
func readRunArchive(t *testing.T, path string) map[string]apartRun {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	zr, err := gzip.NewReader(fh)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]apartRun{}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(h.Name, ".json") {
			continue
		}
		var r struct {
			TComp struct {
				Median float64 `json:"median_ns"`
			} `json:"t_comp"`
			TCompInC3 struct {
				Median float64 `json:"median_ns"`
			} `json:"t_comp_in_c3"`
		}
		if err := json.NewDecoder(tr).Decode(&r); err != nil {
			t.Fatalf("%s: %v", h.Name, err)
		}
		out[filepath.Base(h.Name)] = apartRun{Comp: r.TComp.Median, CompInC3: r.TCompInC3.Median}
	}
}

// simComputeInC3 is the compute op's time in a concurrent run of sc under
// st on the simulator with p, ns.
func simComputeInC3(t *testing.T, p Profile, sc scenarios.Scenario, st scenarios.Strategy) float64 {
	t.Helper()
	o, err := New(p).Simulate(backends.Experiment{Scenario: sc, Strategy: st, Mode: backends.ModeConcurrent, Reps: 1})
	if err != nil {
		t.Fatal(err)
	}
	return float64(o.Rep.Compute)
}
