package sim

import (
	"fmt"
	"math"
	"path/filepath"
	"testing"

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
