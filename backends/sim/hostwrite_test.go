package sim

import (
	"cmp"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// The waits behind the posted writes of c3lab's d2h copy kernel
// (Profile.HostWriteEndWait, HostWriteLaunchGap), against the one-H200
// probes of results/2026-12-03-h200x1-s19: streams of short kernels back
// to back beside copies launched first with priority.
const hostWriteProbes = "../cuda/results/2026-12-03-h200x1-s19"

// loadHostWriteProbe reads one of those probes' scenario files.
func loadHostWriteProbe(t *testing.T, name string) scenarios.Scenario {
	t.Helper()
	sc, err := scenarios.Load(filepath.Join(hostWriteProbes, "probe", name+".yaml"), H200().Limits())
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// opSpan is one kernel of the probe's "ops" stream, in µs from the start
// of its copy.
type opSpan struct{ start, end float64 }

// simOps runs a probe once in the simulator and returns its copy's end and
// its ops' kernels, in µs from the copy's start.
func simOps(t *testing.T, p Profile, sc scenarios.Scenario, st scenarios.Strategy) (copyEnd float64, ops []opSpan) {
	t.Helper()
	o := simPair(t, p, sc, st, backends.ModeConcurrent)
	t0, copyEnd := math.Inf(1), 0.0
	for _, s := range o.Spans {
		if s.Track == "copy" {
			t0, copyEnd = math.Min(t0, usOf(s.Start)), math.Max(copyEnd, usOf(s.End))
		}
	}
	for _, s := range o.Spans {
		if s.Track == "ops" && s.Kind == "kernel" {
			ops = append(ops, opSpan{usOf(s.Start) - t0, usOf(s.End) - t0})
		}
	}
	slices.SortFunc(ops, func(a, b opSpan) int { return cmp.Compare(a.start, b.start) })
	return copyEnd - t0, ops
}

// measuredOps reads a committed trace (c3lab export --chrome) of a probe.
func measuredOps(t *testing.T, file string) (copyEnd float64, ops []opSpan) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(hostWriteProbes, file))
	if err != nil {
		t.Fatal(err)
	}
	var tr struct {
		TraceEvents []struct {
			Ph  string  `json:"ph"`
			Tid string  `json:"tid"`
			Ts  float64 `json:"ts"`
			Dur float64 `json:"dur"`
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &tr); err != nil {
		t.Fatal(err)
	}
	t0 := math.Inf(1)
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Tid == "copy" {
			t0, copyEnd = math.Min(t0, e.Ts), math.Max(copyEnd, e.Ts+e.Dur)
		}
	}
	for _, e := range tr.TraceEvents {
		if e.Ph == "X" && e.Tid == "ops" {
			ops = append(ops, opSpan{e.Ts - t0, e.Ts + e.Dur - t0})
		}
	}
	return copyEnd - t0, ops
}

func lastEnd(ops []opSpan) float64 {
	end := 0.0
	for _, o := range ops {
		end = math.Max(end, o.end)
	}
	return end
}

func copyFirst(ctas int) scenarios.Strategy {
	return scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommCTAs: ctas}
}

// Under the fitted profile the lab runs, the ops stream of every probe
// ends where it ended on the H200 (the mean of two passes), within 10 %:
// before these waits the model ended it 11 to 62 % early. HostWriteEndWait and HostWriteLaunchGap were set from the
// stream ops beside one 128 MiB copy (the fit rows); the other rows, the
// copy cut into kernels of 2, 8 and 32 MiB, decode GEMMs, a 32 MiB copy
// and ops that start late in a 256 MiB copy, did not set them.
func TestHostWriteWaitsAsMeasured(t *testing.T) {
	fit, err := LoadProfileFile("profiles/h200-fit.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p := fit.Profile
	for _, tc := range []struct {
		probe, tag string
		st         scenarios.Strategy
		fit        bool
	}{
		{"tc-s64x30-d128", "c8", copyFirst(8), true},
		{"tc-s64x30-d128", "c16", copyFirst(16), true},
		{"tc-s64x30-d128", "c24", copyFirst(24), true},
		{"tc-s64x30-d128", "c32", copyFirst(32), true},
		{"tc-s64x30-d128", "c48", copyFirst(48), true},
		{"tc-s64x30-d128", "c64", copyFirst(64), true},
		{"tc-s64x30-d128", "sms32", scenarios.Strategy{Launch: scenarios.ComputeFirst, CommSMs: 32}, false},
		{"tc-s64x30-d32", "c32", copyFirst(0), false},
		{"tc-s64x30-d8x16", "c8", copyFirst(8), false},
		{"tc-s64x30-d8x16", "c32", copyFirst(0), false},
		{"tc-s64x30-d32x4", "c32", copyFirst(0), false},
		{"tc-gdec-x30-d8x16", "c32", copyFirst(0), false},
		{"tc-gdec-x30-d2x64", "c32", copyFirst(0), false},
		{"tc-gdec-x30-d32x4", "c32", copyFirst(0), false},
		{"tc-gdec-x30-d128", "c64", copyFirst(64), false},
		{"tc-late-s64x20-d256", "c32", copyFirst(0), false},
		{"tc-late2-s1g-s64x20-d256", "c32", copyFirst(0), false},
	} {
		call := "call1"
		if _, err := os.Stat(filepath.Join(hostWriteProbes, call, tc.probe+"-"+tc.tag+"-p1.json")); err != nil {
			call = "call2"
		}
		var measured float64
		for _, pass := range []string{"p1", "p2"} {
			_, ops := measuredOps(t, call+"/"+tc.probe+"-"+tc.tag+"-"+pass+".json")
			measured += lastEnd(ops) / 2
		}
		_, ops := simOps(t, p, loadHostWriteProbe(t, tc.probe), tc.st)
		if got := lastEnd(ops); math.Abs(got/measured-1) > 0.1 {
			t.Errorf("%s %s (fit %v): the ops end at %.0f µs, measured %.0f", tc.probe, tc.tag, tc.fit, got, measured)
		}
	}
}

// A stream op that finishes beside a writing copy kernel ends
// HostWriteEndWait x the copy's write weight later, or with the copy
// kernel when that comes first; the next one launches HostWriteLaunchGap
// x min(1, weight / HostWriteLaunchGapWeight) after it while the copy
// writes, and at once after the copy.
func TestHostWriteEndWaitAndLaunchGap(t *testing.T) {
	p := H200()
	off := p
	off.HostWriteEndWait, off.HostWriteLaunchGap = 0, 0
	sc := loadHostWriteProbe(t, "tc-s64x30-d128")
	for _, ctas := range []int{8, 32} {
		weight := float64(ctas) / float64(p.HostCopyCTAs)
		copyEnd, ops := simOps(t, p, sc, copyFirst(ctas))
		_, opsOff := simOps(t, off, sc, copyFirst(ctas))
		if d, want := (ops[1].end-ops[1].start)-(opsOff[1].end-opsOff[1].start), 1e6*p.HostWriteEndWait*weight; math.Abs(d-want) > 1 {
			t.Errorf("%d CTAs: the second op takes %.1f µs longer with the end wait, want %.1f", ctas, d, want)
		}
		gap := ops[2].start - ops[1].end
		want := 1e6*p.HostWriteLaunchGap*math.Min(1, weight/p.HostWriteLaunchGapWeight) + 1e6*p.KernelFixedCost
		if math.Abs(gap-want) > 1 {
			t.Errorf("%d CTAs: ops stand %.1f µs apart while the copy writes, want %.1f", ctas, gap, want)
		}
		for i := 1; i < len(ops); i++ {
			if ops[i-1].end >= copyEnd+1 {
				if g := ops[i].start - ops[i-1].end; g > 1e6*p.KernelFixedCost+1 {
					t.Errorf("%d CTAs: op %d starts %.1f µs after the previous one past the copy's end", ctas, i, g)
				}
			}
			if ops[i-1].end < copyEnd && ops[i].end > copyEnd+1e6*p.HostWriteEndWait*weight {
				t.Errorf("%d CTAs: op %d ends at %.0f µs, past the copy's end (%.0f) plus the whole wait", ctas, i, ops[i].end, copyEnd)
			}
		}
	}
	// Beside the same bytes cut into 8 MiB copy kernels, an op whose work
	// is done waits only for the copy kernel it ran beside to end: every
	// op that ends while the copies run ends with one of them.
	sc = loadHostWriteProbe(t, "tc-s64x30-d8x16")
	o := simPair(t, p, sc, copyFirst(0), backends.ModeConcurrent)
	var copyEnds []float64
	for _, s := range o.Spans {
		if s.Track == "copy" {
			copyEnds = append(copyEnds, usOf(s.End))
		}
	}
	last := slices.Max(copyEnds)
	for _, s := range o.Spans {
		if s.Track != "ops" || s.Kind != "kernel" || usOf(s.End) > last {
			continue
		}
		near := math.Inf(1)
		for _, c := range copyEnds {
			near = math.Min(near, math.Abs(usOf(s.End)-c))
		}
		if near > 1 {
			t.Errorf("an op ends at %.1f µs, %.1f µs from the nearest copy kernel's end", usOf(s.End), near)
		}
	}
}
