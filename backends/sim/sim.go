package sim

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// Backend is the simulator backend. It is safe for use by one goroutine at
// a time per Run; it holds no mutable state, so concurrent Runs are fine.
type Backend struct {
	p Profile
	// prov is the provenance of p's constants; nil takes the built-in
	// table of p's name.
	prov map[string]Provenance
	// heldOut is the profile's error on its held-out runs, and label what
	// the profile was loaded as; nil and "" for a hand-set profile.
	heldOut *HeldOutError
	label   string
}

// New returns a simulator of a node of p's devices.
func New(p Profile) *Backend { return &Backend{p: p.withTables()} }

// NewFromFile returns a simulator of the profile file's device, which
// knows the provenance of the file's constants (Unmeasured reads it).
func NewFromFile(pf ProfileFile) *Backend {
	b := &Backend{p: pf.Profile.withTables(), prov: pf.EffectiveProvenance(), label: pf.label}
	if pf.Fit != nil {
		b.heldOut = pf.Fit.HeldOutError
	}
	return b
}

// ModelError implements backends.ModelErrorReporter: the profile's error
// on its held-out H200 runs, picked for sc (HeldOutError); nil for a
// profile without held-out figures.
func (b *Backend) ModelError(sc scenarios.Scenario, idealSpeedup float64) *backends.ModelError {
	if b.heldOut == nil {
		return nil
	}
	me := b.heldOut.modelError(sc, idealSpeedup)
	me.Profile, me.Device = b.label, b.p.Device
	if me.Profile == "" {
		me.Profile = b.p.Name
	}
	if c, ok := b.unmeasuredGEMM(sc); ok {
		me.UnmeasuredGEMM = c.String()
		me.GEMMAloneMedian, me.GEMMAloneP90 = UnmeasuredGEMMMedian, UnmeasuredGEMMP90
	}
	return &me
}

// UnmeasuredGEMMMedian and UnmeasuredGEMMP90 are the calibrated H200
// profile's relative |error|, median and p90, on the time alone on the
// whole GPU of GEMMs it has no measurement of: the hundred shapes drawn
// at random and timed on one H200 (the shape grid b, model.md "GEMMs the
// suite does not have"), with the tile rule's launches, as such a GEMM
// gets them. TestGEMMGrid holds them to what the grid measures.
const (
	UnmeasuredGEMMMedian = 0.032
	UnmeasuredGEMMP90    = 0.148
)

// unmeasuredGEMM returns the first GEMM of sc that the profile has no
// measurement of (no time alone, placement or launch: gemmTables.measured),
// when it has measurements at all: the held-out runs' GEMMs all have some,
// and a GEMM without takes the tile model's time and the tile rule's
// launch.
func (b *Backend) unmeasuredGEMM(sc scenarios.Scenario) (scenarios.ComputeOp, bool) {
	tb := b.p.gemms()
	if tb == nil || len(tb.measured) == 0 {
		return scenarios.ComputeOp{}, false
	}
	for _, c := range scenarioGEMMs(sc) {
		if !tb.measured[keyOf(c)] {
			return c, true
		}
	}
	return scenarios.ComputeOp{}, false
}

// scenarioGEMMs lists the GEMMs of sc, a pair or streams.
func scenarioGEMMs(sc scenarios.Scenario) []scenarios.ComputeOp {
	if !sc.IsGraph() {
		if sc.Compute.Kind == scenarios.GEMM {
			return []scenarios.ComputeOp{sc.Compute}
		}
		return nil
	}
	var out []scenarios.ComputeOp
	for _, ss := range sc.Streams {
		for _, o := range ss.Ops {
			if c := o.AsCompute(); o.Kind.IsCompute() && c.Kind == scenarios.GEMM {
				out = append(out, c)
			}
		}
	}
	return out
}

// Profile returns the device profile the simulator uses.
func (b *Backend) Profile() Profile {
	p := b.p
	p.tables = nil // a caller may change the tables; New indexes them again
	return p
}

// Name is the simulator backend's short name, what --backend takes.
const Name = "sim"

// Name implements backends.Backend.
func (b *Backend) Name() string { return Name }

// Devices implements backends.Backend: a node of MaxGPUs simulated devices
// (a run uses the first Scenario.GPUs of them).
func (b *Backend) Devices() []backends.DeviceInfo {
	out := make([]backends.DeviceInfo, b.p.MaxGPUs)
	for i := range out {
		out[i] = backends.DeviceInfo{
			Index: i, Name: b.p.Device, SMs: b.p.SMs, MemoryBytes: b.p.MemoryBytes,
			CopyEngines: b.p.CopyEngines, Simulated: true,
			SMStep: b.p.SMStep, HighestPriority: b.p.HighestPriority,
			HBMBandwidth: b.p.HBMBandwidth, LinkBandwidth: b.p.LinkBandwidth, PCIeLinkBandwidth: b.p.PCIeLinkBandwidth,
		}
	}
	return out
}

// Capabilities implements backends.Backend: the simulator models every
// knob of the table it was built with (decomposition through the graph it
// runs); a knob added since is refused until the model applies it.
func (b *Backend) Capabilities() backends.Capabilities {
	return backends.Capabilities{
		Limits:        b.p.Limits(),
		DMAReductions: true, Explains: true, Deterministic: true,
		HBMBandwidth: b.p.HBMBandwidth,
		Profile:      b.p.Name,
		TelemetryNames: []string{
			backends.MetricSMUtil, backends.MetricSMsCompute, backends.MetricSMsComm,
			backends.MetricTensorUtil, backends.MetricHBMUtil,
			backends.MetricLinkTXUtil, backends.MetricLinkRXUtil, backends.MetricCopyStreamsBusy,
			backends.MetricPCIeTXUtil, backends.MetricPCIeRXUtil,
		},
	}.With(scenarios.CapPriority, scenarios.CapSMPartition, scenarios.CapCommCTACap, scenarios.CapGEMMSMTarget,
		scenarios.CapDMA, scenarios.CapNCCLCopyEngine, scenarios.CapDecompose, scenarios.CapPeerLoad)
}

// Unmeasured says why the simulator's prediction for strategy st rests on
// a constant no measurement has set, or "" when none does: p2p-load's
// per-CTA load bandwidth while its provenance (the profile file's, else
// the built-in table's) is the model's estimate.
func (b *Backend) Unmeasured(st scenarios.Strategy) string {
	prov := b.prov
	if prov == nil {
		prov, _ = BuiltinProvenance(b.p.Name)
	}
	if st.Normalize().CommEngine == scenarios.EngineP2PLoad && prov["PeerLoadCTABandwidth"].Source == SourceModel {
		return "p2p-load's per-CTA load bandwidth (PeerLoadCTABandwidth) is the model's guess, not measured: gpu-suite.sh peer-load-2gpu measures it on two GPUs"
	}
	return ""
}

// Close implements backends.Backend.
func (b *Backend) Close() error { return nil }

// Outcome is one simulated repetition: the times and what bounded each op.
type Outcome struct {
	Rep     backends.Rep
	Explain []backends.OpExplanation
	Spans   []backends.Span // device 0 only; Run copies them per device
	Samples []backends.Sample
}

// Simulate runs the model once for an experiment. It is deterministic.
func (b *Backend) Simulate(ex backends.Experiment) (Outcome, error) {
	if ex.Scenario.Profile != "" && ex.Scenario.Profile != b.p.Name {
		return Outcome{}, fmt.Errorf("scenario %s wants device profile %q but the simulator models %q", ex.Scenario.Name, ex.Scenario.Profile, b.p.Name)
	}
	if ex.Scenario.IsGraph() {
		return b.simulateGraph(ex, graphOptions{})
	}
	p := b.p.onGPUs(ex.Scenario.GPUs)
	// A one-pair scenario keeps the fluid model it was calibrated with:
	// one job per op, the GEMM persistent (see model.md).
	pl, err := atPowerClock(p, func() (*plan, *engine, error) {
		pl, err := build(p, ex)
		if err != nil {
			return nil, nil, err
		}
		return pl, pl.eng, nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if !pl.eng.allDone() {
		return Outcome{}, fmt.Errorf("simulation of %s did not finish (a model bug; please report it with the scenario)", ex.Scenario.Name)
	}
	var out Outcome
	ends := map[backends.Op]float64{}
	for _, op := range []backends.Op{backends.OpCompute, backends.OpComm} {
		jobs := pl.opJobs[op]
		if len(jobs) == 0 {
			continue
		}
		end := 0.0
		for _, j := range jobs {
			end = math.Max(end, j.end)
		}
		ends[op] = end
		d := ns(end - pl.opLaunch[op])
		if op == backends.OpCompute {
			out.Rep.Compute = d
		} else {
			out.Rep.Comm = d
		}
		for _, j := range jobs {
			out.Explain = append(out.Explain, explain(p, j, pl))
			out.Spans = append(out.Spans, spans(j)...)
		}
	}
	out.Rep.Wall = ns(math.Max(ends[backends.OpCompute], ends[backends.OpComm]))
	// The pair's graph: the compute op, then the collective.
	out.Rep.Ops = []int64{out.Rep.Compute, out.Rep.Comm}
	out.Samples = samples(p, pl)
	return out, nil
}

// Run implements backends.Backend. The model is deterministic, so every
// repetition gives the same times; spans and samples are reported for every
// repetition and every device.
func (b *Backend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if ex.Reps < 1 {
		return backends.RunResult{}, fmt.Errorf("reps is %d; want at least 1", ex.Reps)
	}
	if err := scenarios.Validate(withStrategy(ex.Scenario, ex.Strategy), b.p.Limits()); err != nil {
		return backends.RunResult{}, err
	}
	o, err := b.Simulate(ex)
	if err != nil {
		return backends.RunResult{}, err
	}
	res := backends.RunResult{Mode: ex.Mode, Explain: o.Explain}
	for rep := range ex.Reps {
		if err := ctx.Err(); err != nil {
			return backends.RunResult{}, err
		}
		res.Reps = append(res.Reps, o.Rep)
		if sink == nil {
			continue
		}
		spans := make([]backends.Span, 0, len(o.Spans)*ex.Scenario.GPUs)
		smp := make([]backends.Sample, 0, len(o.Samples)*ex.Scenario.GPUs)
		for dev := range ex.Scenario.GPUs {
			for _, s := range o.Spans {
				s.Rep, s.Device = rep, dev
				s.Name = deviceName(s.Name, dev, ex.Scenario.GPUs)
				spans = append(spans, s)
			}
			for _, s := range o.Samples {
				s.Rep, s.Device = rep, dev
				smp = append(smp, s)
			}
		}
		sink.Spans(spans)
		sink.Samples(smp)
	}
	return res, nil
}

func withStrategy(sc scenarios.Scenario, st scenarios.Strategy) scenarios.Scenario {
	sc.Strategy = st
	return sc
}

// deviceName fills the "{dev}" and "{peer}" placeholders of copy names.
func deviceName(name string, dev, gpus int) string {
	if !strings.Contains(name, "{") {
		return name
	}
	peer := fmt.Sprintf("gpu%d", (dev+1)%gpus)
	if gpus > 2 {
		peer = fmt.Sprintf("%d peers", gpus-1)
	}
	return strings.NewReplacer("{dev}", fmt.Sprintf("gpu%d", dev), "{peer}", peer).Replace(name)
}

func ns(sec float64) int64 { return int64(math.Round(sec * 1e9)) }

// spans reports a job's execution on device 0: one span on its stream, or
// one per copy engine it kept busy.
func spans(j *job) []backends.Span {
	if !j.started {
		return nil
	}
	if !j.copy {
		return []backends.Span{{Op: j.op, Name: j.name, Track: j.track, Kind: "kernel", Start: ns(j.start), End: ns(j.end)}}
	}
	name := "copy {dev}->{peer}"
	if j.coll.IsHostCopy() {
		name = j.name
	}
	out := make([]backends.Span, j.engines)
	for i := range out {
		out[i] = backends.Span{
			Op: j.op, Name: name, Track: fmt.Sprintf("ce%d", i), Kind: "copy",
			Start: ns(j.start), End: ns(j.end),
		}
	}
	return out
}

// explain turns a job's time per bounding resource into an explanation.
func explain(p Profile, j *job, pl *plan) backends.OpExplanation {
	e := backends.OpExplanation{Op: j.op, Label: j.name}
	for r, t := range j.bounds {
		if d := ns(t); d > 0 {
			e.Bounds = append(e.Bounds, backends.Bound{Resource: r, Nanos: d, Detail: boundDetail(p, j, r, pl)})
		}
	}
	slices.SortFunc(e.Bounds, func(a, b backends.Bound) int {
		if a.Nanos != b.Nanos {
			return int(b.Nanos - a.Nanos)
		}
		return strings.Compare(string(a.Resource), string(b.Resource))
	})
	return e
}

func boundDetail(p Profile, j *job, r backends.Resource, pl *plan) string {
	other := "the other op"
	if j.op == backends.OpComm {
		other = "the compute op"
	} else if len(pl.opJobs[backends.OpComm]) > 0 {
		other = "the collective"
	}
	switch r {
	case backends.ResWaitSMs:
		if j.skipsTails {
			return fmt.Sprintf("CTAs queued: no free SM in its domain, all held by %s, or freed by a GEMM's last round, which the sweeps' collectives gain little from (the block scheduler serves priority, then launch order, and never evicts)", other)
		}
		return fmt.Sprintf("CTAs queued: no free SM in its domain, all held by %s (the block scheduler serves priority, then launch order, and never evicts)", other)
	case backends.ResTensor:
		return "tensor-core throughput of the SMs it held"
	case backends.ResSMs:
		if j.maxRate > 0 {
			return fmt.Sprintf("the reduction kernel's own speed: %.0f GB/s of memory traffic per SM it holds (%.0f while a GEMM fills L2 and the crossbar), %.2f TB/s at most",
				p.ReductionSMBandwidth/1e9, p.ContendedSMBandwidth/1e9, p.ReductionBandwidth/1e12)
		}
		return fmt.Sprintf("too few SMs to pull more HBM bandwidth (%.0f GB/s per SM)", p.SMHBMBandwidth/1e9)
	case backends.ResHBM:
		if len(pl.eng.jobs) > 1 {
			return fmt.Sprintf("HBM bandwidth (%.1f TB/s) shared with %s", p.HBMBandwidth/1e12, other)
		}
		return fmt.Sprintf("HBM bandwidth (%.1f TB/s)", p.HBMBandwidth/1e12)
	case backends.ResLink:
		return fmt.Sprintf("NVLink bandwidth (%.0f GB/s per direction)", p.LinkBandwidth/1e9)
	case backends.ResPCIe:
		if !j.copy {
			return fmt.Sprintf("its loads and stores over PCIe (the copy kernel reaches %.1f GB/s each way, %.1f both ways)", p.HostCopyKernelBandwidth/1e9, p.HostCopyKernelDuplexBandwidth/1e9)
		}
		return fmt.Sprintf("PCIe to the host (%.0f GB/s per direction, %.0f both ways)", p.PCIeBandwidth/1e9, p.PCIeDuplexBandwidth/1e9)
	case backends.ResCTA:
		return ctaDetail(p, j, pl)
	case backends.ResCopyEngines:
		return fmt.Sprintf("%d copy engine(s) at up to %.0f GB/s each", j.engines, p.CopyEngineBandwidth/1e9)
	case backends.ResDependency:
		switch {
		case j.after == nil:
		case !j.copy:
			return "the add waits for every copy of its blocks to land"
		case !j.after.copy && j.after.op == j.op && strings.HasPrefix(j.after.name, "nccl-ce"):
			return "NCCL's copies wait for its kernel to run"
		case !j.after.copy:
			return "the copies of the reduced blocks wait for the add"
		}
		return "waits for the step of the collective before it"
	case backends.ResLaunch:
		switch {
		case j.after != nil:
			return "launch and synchronization overhead once the step before it is done"
		case j.setup > 0 && j.op == backends.OpCompute:
			return "the kernel's prologue before its first tiles, holding its SMs"
		case j.setup > 0 && j.coll.IsHostCopy():
			return "the copy kernel's launch and start, holding its SMs"
		case j.setup > 0:
			return "fixed setup (handshakes with the peers), holding its SMs"
		}
		return "launch and synchronization overhead"
	}
	return ""
}

// ctaDetail says how many CTAs of an SM collective ran at once and how fast
// each could move data: with fewer SMs than CTAs (a comm partition, or SMs
// held by the other op) only some are resident, one per SM.
func ctaDetail(p Profile, j *job, pl *plan) string {
	n := j.ctaResident
	if j.perSM {
		return fmt.Sprintf("the %d SMs of its partition, fewer than its CTAs, each moving at most %.0f GB/s", j.ctas, ctaGBs(p, j))
	}
	if j.inherited {
		return fmt.Sprintf("%d CTAs on SMs a GEMM left configured for its tiles (little L1 for loads in flight), each moving at most %.1f GB/s", j.ctas, ctaGBs(p, j))
	}
	if n <= 0 || n >= j.ctas {
		return fmt.Sprintf("%d CTAs, each moving at most %.0f GB/s", j.ctas, ctaGBs(p, j))
	}
	why := fmt.Sprintf("one per SM of the %d it may use", domainSize(pl.eng, j.domain))
	if n < domainSize(pl.eng, j.domain) {
		why = "one per SM, the other op holding the rest"
	}
	return fmt.Sprintf("%d of its %d CTAs at a time (%s), each moving at most %.0f GB/s", n, j.ctas, why, ctaGBs(p, j))
}

// ctaGBs is the link bandwidth one CTA of an SM collective drives, or the
// PCIe bandwidth one CTA of a host copy kernel drives, in GB/s.
func ctaGBs(p Profile, j *job) float64 {
	if j.inherited {
		return p.HostCopyInheritedCTABandwidth / 1e9
	}
	if j.coll.IsHostCopy() {
		return p.HostCopyCTABandwidth / 1e9
	}
	if j.peerLoad {
		return p.peerLoadCTABandwidth() / 1e9
	}
	return j.ctaRate * j.link * p.LinkEfficiencySM[j.coll] / 1e9
}

// samples turns the engine's segments into piecewise-constant telemetry:
// one sample per metric at the start of every segment where a value changed,
// and zeros at the end.
func samples(p Profile, pl *plan) []backends.Sample {
	names := []string{
		backends.MetricSMUtil, backends.MetricSMsCompute, backends.MetricSMsComm,
		backends.MetricTensorUtil, backends.MetricHBMUtil,
		backends.MetricLinkTXUtil, backends.MetricLinkRXUtil, backends.MetricCopyStreamsBusy,
		backends.MetricPCIeTXUtil, backends.MetricPCIeRXUtil,
	}
	values := func(s segment) []float64 {
		link := s.linkBytes / p.LinkBandwidth
		return []float64{
			float64(s.smsCompute+s.smsComm) / float64(p.SMs),
			float64(s.smsCompute), float64(s.smsComm),
			s.tensorFLOPs / pl.peakTensor,
			s.hbmBytes / p.HBMBandwidth,
			link, link,
			float64(s.enginesBusy) / float64(p.CopyEngines),
			s.toHost / p.PCIeLinkBandwidth, s.fromHost / p.PCIeLinkBandwidth,
		}
	}
	var out []backends.Sample
	var last []float64
	for _, s := range pl.eng.segs {
		if s.t1 <= s.t0 {
			continue
		}
		v := values(s)
		for i, name := range names {
			if last == nil || v[i] != last[i] {
				out = append(out, backends.Sample{Metric: name, Time: ns(s.t0), Value: v[i]})
			}
		}
		last = v
	}
	end := ns(pl.eng.now)
	for _, name := range names {
		out = append(out, backends.Sample{Metric: name, Time: end, Value: 0})
	}
	return out
}
