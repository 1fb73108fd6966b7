package calib

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"slices"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
	"gonum.org/v1/gonum/mat"
)

// RefGEMM is one isolated GEMM timed outside a sweep (c3lab's reference
// ops, c3lab-ref.json): more points for the GEMM efficiency.
type RefGEMM struct {
	Op      scenarios.ComputeOp
	Seconds float64
}

// LoadRefGEMMs reads the GEMMs of a reference-ops file (the "ops" list of
// c3lab-ref.json: kind, label "gemm MxNxK dtype", time).
func LoadRefGEMMs(path string) ([]RefGEMM, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var ref struct {
		Ops []struct {
			Kind, Label string
			Time        profiler.Stat
		} `json:"ops"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		return nil, fmt.Errorf("%s: not a reference-ops file: %w", path, err)
	}
	var out []RefGEMM
	for _, o := range ref.Ops {
		if o.Kind != "gemm" {
			continue
		}
		c := scenarios.ComputeOp{Kind: scenarios.GEMM}
		var dt string
		if _, err := fmt.Sscanf(o.Label, "gemm %dx%dx%d %s", &c.M, &c.N, &c.K, &dt); err != nil {
			return nil, fmt.Errorf("%s: reference op %q: %w", path, o.Label, err)
		}
		c.DType = scenarios.DType(dt)
		if o.Time.Median > 0 {
			out = append(out, RefGEMM{Op: c, Seconds: o.Time.Median / 1e9})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s: no GEMM among the reference ops", path)
	}
	return out, nil
}

// fitted is what stage 1 found for one constant (one map entry, or a
// scalar field when Key is empty).
type fitted struct {
	Field, Key string
	Value      float64
	// Low and High: value +- one standard error (line fits) or the
	// quartiles of the per-run values (median fits).
	Low, High float64
	Points    int
	Note      string
}

// point is one isolated measurement: bytes sent per rank and seconds,
// the seconds of it the model already knows apart from the line's
// intercept (fixed; 0 for most), and, for a copy-engine phase, the copy
// streams it uses beyond the first (k).
type point struct{ x, t, fixed, k float64 }

// fitLine fits t = a + fixed + x/bw minimizing the sum of squared
// relative errors and returns the intercept a (seconds), the bandwidth bw
// (bytes/s) and their standard errors from the residuals.
func fitLine(pts []point) (a, bw, seA, seBW float64) {
	// Minimize sum (a u + s v - w)^2 with u = 1/t, v = x/t, s = 1/bw and
	// w = 1 - fixed/t.
	var uu, uv, vv, uw, vw float64
	for _, p := range pts {
		u, v, w := 1/p.t, p.x/p.t, 1-p.fixed/p.t
		uu, uv, vv, uw, vw = uu+u*u, uv+u*v, vv+v*v, uw+u*w, vw+v*w
	}
	det := uu*vv - uv*uv
	a = (uw*vv - vw*uv) / det
	s := (uu*vw - uv*uw) / det
	var ssr float64
	for _, p := range pts {
		r := (a+p.fixed)/p.t + s*p.x/p.t - 1
		ssr += r * r
	}
	if n := len(pts); n > 2 && det > 0 {
		s2 := ssr / float64(n-2)
		seA = math.Sqrt(s2 * vv / det)
		seS := math.Sqrt(s2 * uu / det)
		seBW = seS / (s * s)
	}
	return a, 1 / s, seA, seBW
}

// fitStreamLine fits t = a + c k + fixed + x/bw minimizing the sum of
// squared relative errors (a copy-engine phase's intercept, its cost per
// extra stream and its bandwidth) and returns a, c and bw with their
// standard errors from the residuals. ok is false when the points cannot
// tell the three apart (every phase using the same streams, or fewer than
// four points).
func fitStreamLine(pts []point) (a, c, bw, seA, seC, seBW float64, ok bool) {
	n := len(pts)
	if n < 4 {
		return 0, 0, 0, 0, 0, 0, false
	}
	// Columns u = 1/t, k u and x u, each scaled to a largest value of 1
	// (seconds and bytes differ by twelve orders of magnitude).
	A := mat.NewDense(n, 3, nil)
	w := mat.NewVecDense(n, nil)
	var scale [3]float64
	for i, p := range pts {
		u := 1 / p.t
		row := [3]float64{u, p.k * u, p.x * u}
		for j, v := range row {
			A.Set(i, j, v)
			scale[j] = math.Max(scale[j], math.Abs(v))
		}
		w.SetVec(i, 1-p.fixed*u)
	}
	for j, sc := range scale {
		if sc == 0 {
			return 0, 0, 0, 0, 0, 0, false
		}
		for i := range n {
			A.Set(i, j, A.At(i, j)/sc)
		}
	}
	var ata mat.Dense
	ata.Mul(A.T(), A)
	var inv mat.Dense
	if err := inv.Inverse(&ata); err != nil {
		return 0, 0, 0, 0, 0, 0, false
	}
	var atw, beta mat.VecDense
	atw.MulVec(A.T(), w)
	beta.MulVec(&inv, &atw)
	var r mat.VecDense
	r.MulVec(A, &beta)
	r.SubVec(&r, w)
	s2 := mat.Dot(&r, &r) / float64(max(n-3, 1))
	a, c, s := beta.AtVec(0)/scale[0], beta.AtVec(1)/scale[1], beta.AtVec(2)/scale[2]
	if s <= 0 {
		return 0, 0, 0, 0, 0, 0, false
	}
	seA = math.Sqrt(s2*inv.At(0, 0)) / scale[0]
	seC = math.Sqrt(s2*inv.At(1, 1)) / scale[1]
	seBW = math.Sqrt(s2*inv.At(2, 2)) / scale[2] / (s * s)
	return a, c, 1 / s, seA, seC, seBW, true
}

// isolatedComm lists the isolated times of the pair runs under strategy
// whose collective keep accepts: one point per run, which annotate (when
// not nil) completes with what the model knows of it.
func isolatedComm(runs []Run, strategy string, keep func(scenarios.Collective) bool, annotate func(Run, *point)) []point {
	var pts []point
	for _, r := range runs {
		sc := r.Scen
		if r.Strategy != strategy || sc.IsGraph() || !keep(sc.Comm.Collective) || r.Real.TComm.Median <= 0 {
			continue
		}
		pt := point{x: sc.Comm.LinkBytes(sc.GPUs), t: r.Real.TComm.Median / 1e9}
		if annotate != nil {
			annotate(r, &pt)
		}
		pts = append(pts, pt)
	}
	return pts
}

// quartiles returns the median and the quartiles of v.
func quartiles(v []float64) (lo, mid, hi float64) {
	s := slices.Clone(v)
	slices.Sort(s)
	q := func(f float64) float64 {
		x := f * float64(len(s)-1)
		i := int(x)
		if i+1 >= len(s) {
			return s[len(s)-1]
		}
		return s[i] + (x-float64(i))*(s[i+1]-s[i])
	}
	return q(0.25), q(0.5), q(0.75)
}

// Stage1 fits the isolated-time constants of p in closed form to the runs
// (the fit set's), as TestFitH200 did:
//   - each SM collective's setup and link efficiency: intercept and slope
//     of a line through its isolated times (baseline) against the bytes
//     it sends, least squares on relative error;
//   - likewise c3lab's copy-engine all-gathers and all-to-alls (dma),
//     then NCCL's (nccl-ce);
//   - the copy-engine reduction kernel's bandwidth from the isolated
//     reduce-scatters and all-reduces under dma-prio, less their copies;
//   - each collective CTA's link bandwidth from the CTA-capped runs
//     (ctas-8, ctas-16), where the capped collective runs after the GEMM;
//   - the GEMM efficiency per element type: the median of the
//     efficiencies that match each isolated tensor-bound GEMM (baseline
//     runs and refs).
//
// A constant without data keeps p's value, and says so. Values are held
// to their ranges.
func Stage1(p sim.Profile, runs []Run, refs []RefGEMM, prov map[string]sim.Provenance) (sim.Profile, []fitted, error) {
	p = sim.CloneProfile(p)
	var out []fitted
	clamp := func(field string, v float64) float64 {
		if r := prov[field].Range; len(r) == 2 {
			return math.Min(math.Max(v, r[0]), r[1])
		}
		return v
	}
	keep := func(field, key string, old float64, why string) {
		out = append(out, fitted{Field: field, Key: key, Value: old, Low: old, High: old, Note: "kept: " + why})
	}
	line := func(field, key string, setup *float64, setupField string, eff *float64, effField string, pts []point) {
		if len(pts) < 3 {
			keep(setupField, key, *setup, fmt.Sprintf("%d isolated runs in the fit set, a line needs 3", len(pts)))
			keep(effField, key, *eff, fmt.Sprintf("%d isolated runs in the fit set, a line needs 3", len(pts)))
			return
		}
		a, bw, seA, seBW := fitLine(pts)
		*setup = clamp(setupField, roundSig(a, 4))
		e := clamp(effField, roundSig(bw/p.LinkBandwidth, 4))
		*eff = e
		seE := seBW / p.LinkBandwidth
		out = append(out,
			fitted{Field: setupField, Key: key, Value: *setup, Low: *setup - seA, High: *setup + seA, Points: len(pts)},
			fitted{Field: effField, Key: key, Value: e, Low: e - seE, High: e + seE, Points: len(pts)})
	}
	for _, coll := range scenarios.Collectives {
		setup, eff := p.CommSetup[coll], p.LinkEfficiencySM[coll]
		line("", string(coll), &setup, "CommSetup", &eff, "LinkEfficiencySM",
			isolatedComm(runs, "baseline", func(c scenarios.Collective) bool { return c == coll }, nil))
		p.CommSetup[coll], p.LinkEfficiencySM[coll] = setup, eff
	}
	linkCopy := func(c scenarios.Collective) bool { return slices.Contains(scenarios.Collectives, c) && c.IsPureCopy() }
	// Each copy phase's enqueue is known, and how many streams it uses.
	phase := func(r Run, pt *point) {
		pt.fixed = p.CopyLaunchOverhead
		pt.k = float64(sim.CopyPhaseStreams(p, r.Scen, r.Strat, pt.x) - 1)
	}
	out = append(out, fitCopyPhase(&p, isolatedComm(runs, "dma", linkCopy, phase), clamp)...)
	line("", "", &p.NCCLCESetup, "NCCLCESetup", &p.LinkEfficiencyNCCLCE, "LinkEfficiencyNCCLCE",
		isolatedComm(runs, "nccl-ce", linkCopy, nil))
	out = append(out, fitReduction(&p, runs, clamp)...)
	out = append(out, fitCTABandwidths(&p, runs, prov["CommCTAScaling"].Range, clamp)...)
	for _, coll := range scenarios.Collectives {
		out = append(out, fitPartitionBandwidth(&p, runs, coll, clamp))
	}
	// With per-tile GEMM times the efficiency and the prologue and
	// epilogue share the same times: alternate their fits until they
	// settle (a few rounds; each is exact given the other).
	rounds := 1
	if p.GEMMTiles {
		rounds = gemmFitRounds
	}
	// The GEMM constants are the model's, what a shape nobody timed
	// gets: fit them without the measured whole-GPU times. Those only
	// move the timed shapes relative to one another (Profile.
	// GEMMWholeTimes), so with them on, the constants would be left
	// nearly free and wander off for every other shape.
	whole := p.GEMMWholeTimes
	p.GEMMWholeTimes = nil
	var gemm []fitted
	for range rounds {
		gemm = gemm[:0]
		for _, d := range []scenarios.DType{scenarios.BF16, scenarios.FP16, scenarios.FP8} {
			f, err := fitGEMMEfficiency(&p, runs, refs, d, clamp)
			if err != nil {
				return p, nil, err
			}
			gemm = append(gemm, f)
		}
		if p.GEMMTiles {
			f, err := fitGEMMTiles(&p, runs, refs, clamp)
			if err != nil {
				return p, nil, err
			}
			gemm = append(gemm, f...)
		}
	}
	p.GEMMWholeTimes = whole
	return p, append(out, gemm...), nil
}

// gemmFitRounds is how many times stage 1 alternates the GEMM efficiency
// and the per-tile constants.
const gemmFitRounds = 4

// isolatedGEMM is one GEMM timed alone: the op, the GPUs of the run that
// timed it (a run on two GPUs or more reports the slowest GPU's time,
// Profile.MultiGPUComputeScale) and its measured time in seconds.
type isolatedGEMM struct {
	Op      scenarios.ComputeOp
	GPUs    int
	Seconds float64
}

// isolatedGEMMs lists the isolated GEMMs of the fit set (the baseline
// pair runs' compute ops) and the reference GEMMs (timed on one GPU).
func isolatedGEMMs(runs []Run, refs []RefGEMM) []isolatedGEMM {
	var out []isolatedGEMM
	for _, r := range runs {
		if r.Strategy != "baseline" || r.Scen.IsGraph() || r.Real.TComp.Median <= 0 || r.Scen.Compute.Kind != scenarios.GEMM {
			continue
		}
		out = append(out, isolatedGEMM{r.Scen.Compute, max(r.Scen.GPUs, 1), r.Real.TComp.Median / 1e9})
	}
	for _, g := range refs {
		out = append(out, isolatedGEMM{g.Op, 1, g.Seconds})
	}
	return out
}

// gemmAlone simulates GEMM c alone in a run on gpus GPUs on p and returns
// its time and its first bound.
func gemmAlone(b *sim.Backend, c scenarios.ComputeOp, gpus int) (float64, backends.Resource, error) {
	sc := scenarios.Scenario{Name: "fit", GPUs: gpus, Compute: c, Comm: scenarios.CommOp{Collective: scenarios.AllGather, Bytes: 1 << 20}}
	if gpus < 2 {
		// One GPU has no peer: a host copy stands beside the GEMM.
		sc.Comm = scenarios.CommOp{Collective: scenarios.HostToDevice, Bytes: 1 << 20}
	}
	o, err := b.Simulate(backends.Experiment{Scenario: sc, Mode: backends.ModeCompute, Reps: 1})
	if err != nil {
		return 0, "", fmt.Errorf("simulating the GEMM %s alone: %w", c, err)
	}
	var bound backends.Resource
	if len(o.Explain) > 0 && len(o.Explain[0].Bounds) > 0 {
		bound = o.Explain[0].Bounds[0].Resource
	}
	return float64(o.Rep.Compute) / 1e9, bound, nil
}

// fitGEMMTiles fits GEMMPrologue (P) and GEMMTileEpilogue (E) to every
// isolated GEMM: the simulator's time is base + P x c + E x d, base its
// time with both 0, c the prologues on its critical path (1 for a
// persistent launch; one per wave for a launch in waves under
// LateCTASetup) and d the tiles of its busiest CTA that E adds to (c and
// d are measured by simulating with P or E = 1 µs: a GEMM bound by HBM as
// a whole hides its epilogues), and P and E minimize the sum of squared
// relative errors (two normal equations). Their standard errors come from
// the residuals.
func fitGEMMTiles(p *sim.Profile, runs []Run, refs []RefGEMM, clamp func(string, float64) float64) ([]fitted, error) {
	gemms := isolatedGEMMs(runs, refs)
	keepBoth := func(why string) []fitted {
		return []fitted{
			{Field: "GEMMPrologue", Value: p.GEMMPrologue, Low: p.GEMMPrologue, High: p.GEMMPrologue, Note: "kept: " + why},
			{Field: "GEMMTileEpilogue", Value: p.GEMMTileEpilogue, Low: p.GEMMTileEpilogue, High: p.GEMMTileEpilogue, Note: "kept: " + why},
		}
	}
	if len(gemms) < 3 {
		return keepBoth(fmt.Sprintf("%d isolated GEMMs in the fit set, the fit needs 3", len(gemms))), nil
	}
	const probe = 1e-6
	times := func(prologue, epilogue float64) ([]float64, error) {
		q := sim.CloneProfile(*p)
		q.GEMMPrologue, q.GEMMTileEpilogue = prologue, epilogue
		b := sim.New(q)
		out := make([]float64, len(gemms))
		for i, g := range gemms {
			t, _, err := gemmAlone(b, g.Op, g.GPUs)
			if err != nil {
				return nil, err
			}
			out[i] = t
		}
		return out, nil
	}
	base, err := times(0, 0)
	if err != nil {
		return nil, err
	}
	withE, err := times(0, probe)
	if err != nil {
		return nil, err
	}
	withP, err := times(probe, 0)
	if err != nil {
		return nil, err
	}
	// Minimize sum (P u + E v - w)^2, u = c/t, v = d/t, w = 1 - base/t.
	var uu, uv, vv, uw, vw float64
	for i, g := range gemms {
		t := g.Seconds
		u, v, w := (withP[i]-base[i])/probe/t, (withE[i]-base[i])/probe/t, 1-base[i]/t
		uu, uv, vv, uw, vw = uu+u*u, uv+u*v, vv+v*v, uw+u*w, vw+v*w
	}
	det := uu*vv - uv*uv
	if det <= 0 {
		return keepBoth("the isolated GEMMs do not separate the prologue from the epilogue"), nil
	}
	P := (uw*vv - vw*uv) / det
	E := (uu*vw - uv*uw) / det
	var ssr float64
	for i, g := range gemms {
		t := g.Seconds
		r := P*(withP[i]-base[i])/probe/t + E*(withE[i]-base[i])/probe/t - (1 - base[i]/t)
		ssr += r * r
	}
	var seP, seE float64
	if n := len(gemms); n > 2 {
		s2 := ssr / float64(n-2)
		seP, seE = math.Sqrt(s2*vv/det), math.Sqrt(s2*uu/det)
	}
	p.GEMMPrologue = clamp("GEMMPrologue", roundSig(P, 3))
	p.GEMMTileEpilogue = clamp("GEMMTileEpilogue", roundSig(E, 3))
	n := len(gemms)
	return []fitted{
		{Field: "GEMMPrologue", Value: p.GEMMPrologue, Low: p.GEMMPrologue - seP, High: p.GEMMPrologue + seP, Points: n},
		{Field: "GEMMTileEpilogue", Value: p.GEMMTileEpilogue, Low: p.GEMMTileEpilogue - seE, High: p.GEMMTileEpilogue + seE, Points: n},
	}, nil
}

// fitCopyPhase fits a copy-engine phase's fixed costs and bandwidth to
// the isolated copy-engine all-gathers and all-to-alls (dma): one line
// through their times against the bytes they send, whose intercept is
// CopySyncOverhead plus CopyStreamSyncOverhead per copy stream beyond the
// first (split transfers use every engine, whole ones one per peer), the
// enqueue of the first copy known. Where the runs cannot separate the two
// (every phase on the same streams), CopyStreamSyncOverhead is kept and
// only the intercept and the slope are fitted.
func fitCopyPhase(p *sim.Profile, pts []point, clamp func(string, float64) float64) []fitted {
	if a, c, bw, seA, seC, seBW, ok := fitStreamLine(pts); ok {
		p.CopySyncOverhead = clamp("CopySyncOverhead", roundSig(a, 4))
		p.CopyStreamSyncOverhead = clamp("CopyStreamSyncOverhead", roundSig(c, 4))
		e := clamp("LinkEfficiencyCE", roundSig(bw/p.LinkBandwidth, 4))
		p.LinkEfficiencyCE = e
		seE := seBW / p.LinkBandwidth
		return []fitted{
			{Field: "CopySyncOverhead", Value: p.CopySyncOverhead, Low: p.CopySyncOverhead - seA, High: p.CopySyncOverhead + seA, Points: len(pts)},
			{Field: "CopyStreamSyncOverhead", Value: p.CopyStreamSyncOverhead, Low: p.CopyStreamSyncOverhead - seC, High: p.CopyStreamSyncOverhead + seC, Points: len(pts)},
			{Field: "LinkEfficiencyCE", Value: e, Low: e - seE, High: e + seE, Points: len(pts)},
		}
	}
	for i := range pts {
		pts[i].fixed += pts[i].k * p.CopyStreamSyncOverhead
	}
	why := "the fit set's copy-engine phases do not tell a stream's cost from the intercept"
	if len(pts) < 3 {
		return []fitted{
			{Field: "CopySyncOverhead", Value: p.CopySyncOverhead, Low: p.CopySyncOverhead, High: p.CopySyncOverhead, Note: fmt.Sprintf("kept: %d isolated runs in the fit set, a line needs 3", len(pts))},
			{Field: "CopyStreamSyncOverhead", Value: p.CopyStreamSyncOverhead, Low: p.CopyStreamSyncOverhead, High: p.CopyStreamSyncOverhead, Note: "kept: " + why},
			{Field: "LinkEfficiencyCE", Value: p.LinkEfficiencyCE, Low: p.LinkEfficiencyCE, High: p.LinkEfficiencyCE, Note: fmt.Sprintf("kept: %d isolated runs in the fit set, a line needs 3", len(pts))},
		}
	}
	a, bw, seA, seBW := fitLine(pts)
	p.CopySyncOverhead = clamp("CopySyncOverhead", roundSig(a, 4))
	e := clamp("LinkEfficiencyCE", roundSig(bw/p.LinkBandwidth, 4))
	p.LinkEfficiencyCE = e
	return []fitted{
		{Field: "CopySyncOverhead", Value: p.CopySyncOverhead, Low: p.CopySyncOverhead - seA, High: p.CopySyncOverhead + seA, Points: len(pts)},
		{Field: "CopyStreamSyncOverhead", Value: p.CopyStreamSyncOverhead, Low: p.CopyStreamSyncOverhead, High: p.CopyStreamSyncOverhead, Note: "kept: " + why},
		{Field: "LinkEfficiencyCE", Value: e, Low: e - seBW/p.LinkBandwidth, High: e + seBW/p.LinkBandwidth, Points: len(pts)},
	}
}

// fitReduction fits the reduction kernel's bandwidth and an all-reduce's
// second copy phase's fixed cost (CopyChainSyncOverhead) to the isolated
// copy-engine reductions: what their times leave after the first copy
// phase, the reduction's launch and the second phase's bytes, against
// the HBM bytes the kernel moves and whether a second phase follows
// (least squares on relative error). Without both reduce-scatters and
// all-reduces in the fit set the chained cost is kept and only the
// bandwidth fitted.
func fitReduction(p *sim.Profile, runs []Run, clamp func(string, float64) float64) []fitted {
	type obs struct{ known, y, z, t float64 }
	var pts []obs
	var kinds [2]int
	for _, r := range runs {
		sc := r.Scen
		c := sc.Comm.Collective
		if r.Strategy != "dma-prio" || sc.IsGraph() || (c != scenarios.ReduceScatter && c != scenarios.AllReduce) || r.Real.TComm.Median <= 0 {
			continue
		}
		phase := sc.Comm.LinkBytes(sc.GPUs)
		if c == scenarios.AllReduce {
			phase /= 2
		}
		ceBW := p.LinkBandwidth * p.LinkEfficiencyCE
		o := obs{t: r.Real.TComm.Median / 1e9}
		o.known = sim.CopyPhaseSync(*p, sc, r.Strat, phase) + p.CopyLaunchOverhead + phase/ceBW + p.KernelFixedCost
		if c == scenarios.AllReduce {
			// The chained phase's streams are known; its base cost is fitted.
			extra := float64(sim.CopyPhaseStreams(*p, sc, r.Strat, phase) - 1)
			o.known += extra*p.CopyStreamSyncOverhead + phase/ceBW
			o.z = 1
			kinds[1]++
		} else {
			kinds[0]++
		}
		n := float64(sc.GPUs)
		o.y = (n + 1) * phase / (n - 1)
		pts = append(pts, o)
	}
	keepBW := fitted{Field: "ReductionBandwidth", Value: p.ReductionBandwidth, Low: p.ReductionBandwidth, High: p.ReductionBandwidth,
		Note: fmt.Sprintf("kept: %d copy-engine reductions (dma-prio) in the fit set", len(pts))}
	keepChain := fitted{Field: "CopyChainSyncOverhead", Value: p.CopyChainSyncOverhead, Low: p.CopyChainSyncOverhead, High: p.CopyChainSyncOverhead,
		Note: fmt.Sprintf("kept: %d reduce-scatters and %d all-reduces (dma-prio) in the fit set; it needs both", kinds[0], kinds[1])}
	if len(pts) < 2 {
		return []fitted{keepBW, keepChain}
	}
	// Minimize sum ((known + rho y + C z)/t - 1)^2 over rho = 1/bandwidth
	// and C (C held at its value when one kind is missing).
	var yy, yz, zz, yw, zw float64
	fitChain := kinds[0] > 0 && kinds[1] > 0
	for _, o := range pts {
		known := o.known
		if !fitChain {
			known += o.z * p.CopyChainSyncOverhead
		}
		y, z, w := o.y/o.t, o.z/o.t, 1-known/o.t
		yy, yz, zz, yw, zw = yy+y*y, yz+y*z, zz+z*z, yw+y*w, zw+z*w
	}
	rho, chain := yw/yy, p.CopyChainSyncOverhead
	if fitChain {
		det := yy*zz - yz*yz
		rho, chain = (yw*zz-zw*yz)/det, (yy*zw-yz*yw)/det
	}
	if rho <= 0 {
		return []fitted{keepBW, keepChain}
	}
	p.ReductionBandwidth = clamp("ReductionBandwidth", roundSig(1/rho, 4))
	var per, chains []float64
	for _, o := range pts {
		if o.z == 0 {
			if left := o.t - o.known; left > 0 {
				per = append(per, o.y/left)
			}
		} else {
			chains = append(chains, o.t-o.known-o.y/p.ReductionBandwidth)
		}
	}
	bw := fitted{Field: "ReductionBandwidth", Value: p.ReductionBandwidth, Low: p.ReductionBandwidth, High: p.ReductionBandwidth, Points: len(pts)}
	if len(per) >= 2 {
		bw.Low, _, bw.High = quartiles(per)
	}
	if !fitChain {
		return []fitted{bw, keepChain}
	}
	p.CopyChainSyncOverhead = clamp("CopyChainSyncOverhead", roundSig(chain, 4))
	ch := fitted{Field: "CopyChainSyncOverhead", Value: p.CopyChainSyncOverhead, Low: p.CopyChainSyncOverhead, High: p.CopyChainSyncOverhead, Points: kinds[1]}
	if len(chains) >= 2 {
		ch.Low, _, ch.High = quartiles(chains)
	}
	return []fitted{bw, ch}
}

// ctaCapRun is one run under an NCCL CTA cap: the cap and the link
// bandwidth one of its CTAs drove (bytes sent / (CTAs x time)).
type ctaCapRun struct {
	ctas int
	bw   float64
}

// ctaScalingStep is the grid step of stage 1's search for
// CommCTAScaling.
const ctaScalingStep = 0.01

// fitCTABandwidths derives each collective CTA's link bandwidth and how
// it falls with the CTA count (CommCTAScaling) from the runs under an
// NCCL CTA cap (ctas-8, ctas-16). There the GEMM launches first and holds
// every SM to its end, so the capped collective runs after it, alone:
// T_c3 = T_comp + setup + bytes / (CTAs x bandwidth). Each run's
// bandwidth, taken back to CommCTARef CTAs under an exponent, should be
// its collective's: the exponent on a grid over its range that leaves
// the least spread (squared log distance to each collective's median) is
// kept, and each collective's CTALinkBandwidth is the median at it. The
// exponent needs runs at two caps or more; without them p's is kept.
func fitCTABandwidths(p *sim.Profile, runs []Run, scalingRange []float64, clamp func(string, float64) float64) []fitted {
	caps := map[string]int{"ctas-8": 8, "ctas-16": 16}
	byColl := map[scenarios.Collective][]ctaCapRun{}
	counts := map[int]bool{}
	for _, r := range runs {
		n, ok := caps[r.Strategy]
		if !ok || r.Scen.IsGraph() || !slices.Contains(scenarios.Collectives, r.Scen.Comm.Collective) {
			continue
		}
		coll := r.Scen.Comm.Collective
		alone := (r.Real.TC3.Median-r.Real.TComp.Median)/1e9 - p.CommSetup[coll]
		if alone > 0 {
			byColl[coll] = append(byColl[coll], ctaCapRun{ctas: n, bw: r.Scen.Comm.LinkBytes(r.Scen.GPUs) / (float64(n) * alone)})
			counts[n] = true
		}
	}
	// atRef returns a collective's runs' bandwidths taken back to
	// CommCTARef CTAs under exponent x.
	atRef := func(rs []ctaCapRun, x float64) []float64 {
		out := make([]float64, len(rs))
		for i, r := range rs {
			out[i] = r.bw * math.Pow(float64(r.ctas)/sim.CommCTARef, x)
		}
		return out
	}
	spread := func(x float64) float64 {
		var sum float64
		for _, rs := range byColl {
			bws := atRef(rs, x)
			_, mid, _ := quartiles(bws)
			for _, b := range bws {
				d := math.Log(b / mid)
				sum += d * d
			}
		}
		return sum
	}
	scaling := fitted{Field: "CommCTAScaling", Value: p.CommCTAScaling, Low: p.CommCTAScaling, High: p.CommCTAScaling}
	if len(counts) >= 2 && len(scalingRange) == 2 {
		var xs, ss []float64
		best := 0
		for i := 0; ; i++ {
			x := math.Round((scalingRange[0]+float64(i)*ctaScalingStep)*1000) / 1000
			if x > scalingRange[1]+1e-12 {
				break
			}
			xs, ss = append(xs, x), append(ss, spread(x))
			if ss[len(ss)-1] < ss[best] {
				best = len(ss) - 1
			}
		}
		var n int
		for _, rs := range byColl {
			n += len(rs)
		}
		// Within one standard error of the best by the profile
		// likelihood (n ln(S/Smin) <= 1).
		scaling = fitted{Field: "CommCTAScaling", Value: xs[best], Low: xs[best], High: xs[best], Points: n}
		for i, x := range xs {
			if ss[best] > 0 && float64(n)*math.Log(ss[i]/ss[best]) > 1 {
				continue
			}
			scaling.Low, scaling.High = math.Min(scaling.Low, x), math.Max(scaling.High, x)
		}
		p.CommCTAScaling = xs[best]
	} else {
		scaling.Note = fmt.Sprintf("kept: the fit set has CTA-capped runs at %d cap(s), the exponent needs 2", len(counts))
	}
	out := []fitted{scaling}
	for _, coll := range scenarios.Collectives {
		old := p.CTALinkBandwidth[coll]
		rs := byColl[coll]
		if len(rs) == 0 {
			out = append(out, fitted{Field: "CTALinkBandwidth", Key: string(coll), Value: old, Low: old, High: old, Note: "kept: no CTA-capped run of it in the fit set"})
			continue
		}
		lo, mid, hi := quartiles(atRef(rs, p.CommCTAScaling))
		p.CTALinkBandwidth[coll] = clamp("CTALinkBandwidth", math.Round(mid/1e8)*1e8)
		out = append(out, fitted{Field: "CTALinkBandwidth", Key: string(coll), Value: p.CTALinkBandwidth[coll], Low: lo, High: hi, Points: len(rs)})
	}
	return out
}

// fitPartitionBandwidth derives the link bandwidth one SM drives for a
// collective confined to a partition of fewer SMs than its CTAs, from the
// runs with such a partition (comm-sms-N) next to a GEMM at most half the
// collective's length alone, where the partition binds (the collective
// in C3 at least 1.2x its time alone): there the collective's time in C3
// is mostly setup + bytes / (SMs x bandwidth). It takes the median of the
// bandwidths that solve this per run.
func fitPartitionBandwidth(p *sim.Profile, runs []Run, coll scenarios.Collective, clamp func(string, float64) float64) fitted {
	const field = "PartitionSMLinkBandwidth"
	var bws []float64
	for _, r := range runs {
		sms := r.Strat.CommSMs
		if sms <= 0 || sms >= p.CommCTAs[coll] || r.Scen.IsGraph() || r.Scen.Comm.Collective != coll ||
			r.Strat.CommEngine != "" && r.Strat.CommEngine != scenarios.EngineSM {
			continue
		}
		comm, inC3 := r.Real.TComm.Median, r.Real.TCommInC3.Median
		if comm <= 0 || r.Real.TComp.Median > comm/2 || inC3 < 1.2*comm {
			continue
		}
		if t := inC3/1e9 - p.CommSetup[coll]; t > 0 {
			bws = append(bws, r.Scen.Comm.LinkBytes(r.Scen.GPUs)/(float64(sms)*t))
		}
	}
	old := p.PartitionSMLinkBandwidth[coll]
	if len(bws) == 0 {
		return fitted{Field: field, Key: string(coll), Value: old, Low: old, High: old, Note: "kept: no run of it in a binding partition next to a short GEMM in the fit set"}
	}
	lo, mid, hi := quartiles(bws)
	if p.PartitionSMLinkBandwidth == nil {
		p.PartitionSMLinkBandwidth = map[scenarios.Collective]float64{}
	}
	p.PartitionSMLinkBandwidth[coll] = clamp(field, math.Round(mid/1e8)*1e8)
	return fitted{Field: field, Key: string(coll), Value: p.PartitionSMLinkBandwidth[coll], Low: lo, High: hi, Points: len(bws)}
}

// gemmEfficiency is p's efficiency of an element type, bf16's when the
// type has none (as the simulator has it).
func gemmEfficiency(p sim.Profile, d scenarios.DType) float64 {
	if e, ok := p.GEMMEfficiency[d]; ok {
		return e
	}
	return p.GEMMEfficiency[scenarios.BF16]
}

// fitGEMMEfficiency sets the GEMM efficiency of one element type: the
// median, over its isolated tensor-bound GEMMs (the baseline pair runs'
// and the reference ops'), of the efficiency that would make the
// simulator match each exactly. A tensor-bound GEMM's time is inversely
// proportional to the efficiency, so that is the current efficiency times
// simulated / measured.
func fitGEMMEfficiency(p *sim.Profile, runs []Run, refs []RefGEMM, d scenarios.DType, clamp func(string, float64) float64) (fitted, error) {
	gemms := isolatedGEMMs(runs, refs)
	b := sim.New(*p)
	cur := gemmEfficiency(*p, d)
	doubled := sim.CloneProfile(*p)
	doubled.GEMMEfficiency[d] = 2 * cur
	b2 := sim.New(doubled)
	var effs []float64
	for _, g := range gemms {
		if g.Op.DType != d {
			continue
		}
		t, bound, err := gemmAlone(b, g.Op, g.GPUs)
		if err != nil {
			return fitted{}, err
		}
		// Only GEMMs the tensor cores bound: a memory-bound one says
		// nothing about the efficiency.
		if bound != backends.ResTensor {
			continue
		}
		if p.GEMMTiles {
			// Only the main loops scale with the efficiency: with it
			// doubled they take half, which tells them from the rest
			// (prologue, epilogues, fixed cost); the efficiency matches
			// the measured time less the rest.
			t2, _, err := gemmAlone(b2, g.Op, g.GPUs)
			if err != nil {
				return fitted{}, err
			}
			main := 2 * (t - t2)
			if main <= 0 || g.Seconds-(t-main) <= 0 {
				continue
			}
			effs = append(effs, cur*main/(g.Seconds-(t-main)))
			continue
		}
		effs = append(effs, cur*t/g.Seconds)
	}
	if len(effs) == 0 {
		return fitted{Field: "GEMMEfficiency", Key: string(d), Value: cur, Low: cur, High: cur, Note: "kept: no isolated tensor-bound GEMM of it"}, nil
	}
	lo, mid, hi := quartiles(effs)
	e := clamp("GEMMEfficiency", math.Round(mid*1000)/1000)
	p.GEMMEfficiency[d] = e
	return fitted{Field: "GEMMEfficiency", Key: string(d), Value: e, Low: lo, High: hi, Points: len(effs)}, nil
}
