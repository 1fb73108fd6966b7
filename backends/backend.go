// Package backends defines what every c3lab backend offers: the devices it
// drives, the knobs it can honour, and runs of one experiment that report
// timings and stream events (spans and telemetry samples) to a sink.
//
// Implementations live in sub-packages: backends/sim (the calibrated
// simulator, the default without a GPU), backends/cuda and
// backends/replay. What c3lab knows of a device model beyond what the
// driver reports (measured bandwidths) is in the device table here
// (DeviceFacts). Nothing here knows about the TUI.
package backends

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/c3lab/c3lab/scenarios"
)

// Backend runs experiments on some devices, real or simulated.
type Backend interface {
	// Name is the backend's short name: "sim", "cuda", "replay".
	Name() string
	// Devices describes the devices a run uses.
	Devices() []DeviceInfo
	// Capabilities says which knobs the backend honours and the device limits.
	Capabilities() Capabilities
	// Run runs one experiment Reps times after Warmup untimed runs,
	// streaming spans and samples to sink (which may be nil).
	Run(ctx context.Context, ex Experiment, sink EventSink) (RunResult, error)
	// Close releases everything the backend holds.
	Close() error
}

// EffectChecker is implemented by a backend whose model can tell that a
// change of strategy cannot change a scenario's times, or cannot change
// the collective's own. The simulator does, by its model; a real GPU
// backend does not claim what only a measurement could show.
type EffectChecker interface {
	// NoEffect returns, in one line with the numbers, what running sc
	// under to instead of from cannot change on this backend (the run, or
	// the collective) and why, or "" when the change may matter. It is
	// cheap enough to call on a key press.
	NoEffect(sc scenarios.Scenario, from, to scenarios.Strategy) string
}

// ModelErrorReporter is implemented by a backend that computes its
// figures from a model rather than measuring them: it says how far the
// model was from real runs it was not fitted to, so that a figure it
// gives can be read with its error beside it.
type ModelErrorReporter interface {
	// ModelError is the model's error for runs like sc, whose ideal
	// speedup (as the model gives it) is idealSpeedup; nil when the model
	// has no held-out figures (a hand-set profile).
	ModelError(sc scenarios.Scenario, idealSpeedup float64) *ModelError
}

// ScopeAll is a ModelError's scope when every held-out run gives its
// figures.
const ScopeAll = "all"

// ModelError is a model backend's error on real runs it was not fitted
// to (issue 17's held-out validation), picked for one run: T_c3's error
// from the held-out runs of the same collective, F's from those of the
// same band of ideal speedup, each falling back to all held-out runs
// where too few are alike. Errors are absolute: T_c3 relative (0.05 is
// 5 %), F in points.
type ModelError struct {
	// Profile names the model's profile ("h200-fit", or a file).
	Profile string `json:"profile"`
	// Device is the device the held-out runs were measured on.
	Device string `json:"device"`
	// Scope is whose runs give the T_c3 figures: a collective's name, or
	// ScopeAll (every held-out run).
	Scope     string  `json:"scope"`
	Runs      int     `json:"runs"`
	TC3Median float64 `json:"t_c3_median"`
	TC3P90    float64 `json:"t_c3_p90"`
	// FScope is whose runs give the F figures: a band of measured ideal
	// speedup ("S_ideal 1.0 to 1.2"), or ScopeAll.
	FScope  string  `json:"f_scope"`
	FRuns   int     `json:"f_runs"`
	FMedian float64 `json:"f_median"`
	FP90    float64 `json:"f_p90"`
	// RankCases and RankWithin say how often the model's best strategy
	// for a held-out scenario was within RankTolerance (0.03: 3 %) of the
	// measured best T_c3: what a ranking by the model is worth; 0 cases
	// when unknown.
	RankCases     int     `json:"rank_cases,omitempty"`
	RankWithin    int     `json:"rank_within,omitempty"`
	RankTolerance float64 `json:"rank_tolerance,omitempty"`
	// Unvalidated, when set, says why no held-out run speaks for this
	// one (it uses a GPU count none of them had); the figures are then
	// those of all held-out runs, for what they are worth.
	Unvalidated string `json:"unvalidated,omitempty"`
	// UnmeasuredGEMM, when set, names a GEMM of this run that the model
	// has no measurement of (no time alone, placement or launch on the
	// device), as it had of every held-out run's GEMM; GEMMAloneMedian and
	// GEMMAloneP90 are the model's relative |error| on such a GEMM's time
	// alone, which the figures above do not hold.
	UnmeasuredGEMM  string  `json:"unmeasured_gemm,omitempty"`
	GEMMAloneMedian float64 `json:"gemm_alone_median,omitempty"`
	GEMMAloneP90    float64 `json:"gemm_alone_p90,omitempty"`
}

// DeviceInfo describes one device: what the driver reports and what
// c3lab knows of the device model (DeviceFacts). A recording keeps it, so a
// replay knows the device as the run did.
type DeviceInfo struct {
	Index int    `json:"index"`
	Name  string `json:"name"`
	// SMs is the number of streaming multiprocessors.
	SMs int `json:"sms"`
	// MemoryBytes is the device memory size.
	MemoryBytes int64 `json:"memory_bytes"`
	// CopyEngines is the number of async copy engines.
	CopyEngines int `json:"copy_engines"`
	// Simulated is true when the device is a model, not hardware.
	Simulated bool `json:"simulated"`
	// SMStep is the SM partition granularity; 0 when the device cannot
	// be partitioned or it is unknown.
	SMStep int `json:"sm_step,omitempty"`
	// HighestPriority is the most urgent stream priority (CUDA's
	// convention: negative is higher; 0 when there is only one).
	HighestPriority int `json:"highest_priority,omitempty"`
	// HBMBandwidth is the HBM bandwidth c3lab's stream op reaches (read +
	// write, bytes/s); LinkBandwidth is the GPU's NVLink bandwidth per
	// direction over all its links; PCIeLinkBandwidth the PCIe link's raw
	// rate per direction. 0 is unknown (or no such link).
	HBMBandwidth      float64 `json:"hbm_bandwidth,omitempty"`
	LinkBandwidth     float64 `json:"link_bandwidth,omitempty"`
	PCIeLinkBandwidth float64 `json:"pcie_link_bandwidth,omitempty"`
}

// Capabilities lists what a backend can do.
type Capabilities struct {
	// Limits are the device limits scenarios are validated against.
	Limits scenarios.Limits
	// knobs holds what the backend can do to apply strategy knobs
	// (scenarios.Capability); With adds to it. A strategy that needs one
	// it lacks is refused, naming the knob, never silently ignored.
	knobs []scenarios.Capability
	// DMAReductions is true when the backend runs reductions
	// (reduce-scatter, all-reduce) on copy engines too, not only pure
	// copies.
	DMAReductions bool
	Explains      bool // reports which resource bounded each op
	Deterministic bool // identical runs give identical numbers
	// Settle is how long a measurement should run its load untimed before
	// timing, so that the device's clocks have settled under it (an
	// H200's power limit takes ~100 ms to act); 0 for none (the
	// simulator, fakes, recordings).
	Settle time.Duration
	// TelemetryNames lists the metrics the backend reports.
	TelemetryNames []string
	// HBMBandwidth is the device's measured HBM bandwidth in bytes/s, for
	// the bound metric; 0 when unknown (the bound is then not reported).
	HBMBandwidth float64
	// LocalGPUs is true when the devices are this node's GPUs in the
	// driver's numbering: the driver's report and NVML's telemetry
	// describe them.
	LocalGPUs bool
	// Profile names the device profile the backend simulates ("h200");
	// empty when its devices are real or recorded.
	Profile string
}

// Has reports whether the backend can do c; everything can do "" (a knob
// at its default needs nothing).
func (c Capabilities) Has(k scenarios.Capability) bool {
	return k == "" || slices.Contains(c.knobs, k)
}

// With returns c that can also do ks. c itself is left as it was.
func (c Capabilities) With(ks ...scenarios.Capability) Capabilities {
	out := slices.Clone(c.knobs)
	for _, k := range ks {
		if k != "" && !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	c.knobs = out
	return c
}

// Without returns c that cannot do ks. c itself is left as it was.
func (c Capabilities) Without(ks ...scenarios.Capability) Capabilities {
	c.knobs = slices.DeleteFunc(slices.Clone(c.knobs), func(k scenarios.Capability) bool { return slices.Contains(ks, k) })
	return c
}

// Knobs lists what the backend can do to apply strategy knobs, sorted.
func (c Capabilities) Knobs() []scenarios.Capability { return slices.Clone(c.knobs) }

// Mode selects which ops an experiment runs.
type Mode string

// Experiment modes: the two isolated baselines and the concurrent run.
const (
	ModeCompute    Mode = "compute"
	ModeComm       Mode = "comm"
	ModeConcurrent Mode = "concurrent"
)

// Experiment is one scenario under one strategy in one mode.
type Experiment struct {
	Scenario scenarios.Scenario
	Strategy scenarios.Strategy
	Mode     Mode
	// Reps is the number of timed repetitions (at least 1).
	Reps int
	// Warmup is the number of untimed repetitions run first.
	Warmup int
}

// Op names the two ops of a scenario.
type Op string

// The ops of a scenario.
const (
	OpCompute Op = "compute"
	OpComm    Op = "comm"
)

// Rep holds the times of one repetition, in nanoseconds. Wall runs from the
// common start until every op on every GPU has finished; Compute and Comm
// run from the first launch of an op of that role to the last finish of
// one, across GPUs (0 when no op of the role was part of the run).
//
// A scenario runs as its graph (scenarios.Scenario.Graph under the
// experiment's strategy). ModeCompute runs every compute op instance alone,
// one after another in the graph's enqueue order, with no communication
// (a dependency on a communication op is dropped); ModeComm likewise runs
// the communication ops; ModeConcurrent runs the whole graph: streams in
// order, dependencies honoured, enqueued in Graph.EnqueueOrder.
type Rep struct {
	Wall    int64 `json:"wall_ns"`
	Compute int64 `json:"compute_ns,omitempty"`
	Comm    int64 `json:"comm_ns,omitempty"`
	// Ops holds, per op of the graph (Graph.Ops order), the sum over its
	// instances of each instance's time from its first start to its last
	// end across GPUs; 0 for an op the mode did not run. Recordings made
	// before graphs lack it: the pair's ops are then Compute and Comm.
	Ops []int64 `json:"ops_ns,omitempty"`
}

// RunResult is what one Run returns.
type RunResult struct {
	Mode Mode  `json:"mode"`
	Reps []Rep `json:"reps"`
	// Explain says, per op, which resource bounded it and for how long
	// (empty when the backend cannot tell).
	Explain []OpExplanation `json:"explain,omitempty"`
	// StartSkews is, per timed repetition that passed a start gate shared
	// by several processes (one process per GPU), the spread of the
	// ranks' first-kernel %globaltimer stamps after the gate, in ns;
	// empty otherwise.
	StartSkews []int64 `json:"start_skews_ns,omitempty"`
}

// OpExplanation says what held one op back during a run.
type OpExplanation struct {
	Op Op `json:"op"`
	// Label is the op's human label ("gemm 8192x8192x8192 bf16").
	Label string `json:"label"`
	// Bounds lists, longest first, each limiting resource and the time the
	// op spent bounded by it.
	Bounds []Bound `json:"bounds"`
}

// Bound is time spent limited by one resource.
type Bound struct {
	Resource Resource `json:"resource"`
	// Nanos is the time the op spent limited by Resource.
	Nanos int64 `json:"ns"`
	// Detail says why, in words ("all 132 SMs held by compute").
	Detail string `json:"detail,omitempty"`
}

// Resource names a hardware resource an op can be limited by.
type Resource string

// Resources an op can be bounded by.
const (
	// ResWaitSMs is time with CTAs queued and no SM free to run them.
	ResWaitSMs Resource = "sm-wait"
	// ResSMs is time bounded by how many SMs the op holds.
	ResSMs Resource = "sms"
	// ResTensor is time bounded by tensor-core throughput on the SMs held.
	ResTensor Resource = "tensor"
	// ResHBM is time bounded by the share of HBM bandwidth the op gets.
	ResHBM Resource = "hbm"
	// ResLink is time bounded by NVLink bandwidth.
	ResLink Resource = "link"
	// ResPCIe is time bounded by the GPU's PCIe bandwidth to the host.
	ResPCIe Resource = "pcie"
	// ResCTA is time bounded by the per-CTA throughput of its few CTAs.
	ResCTA Resource = "cta"
	// ResCopyEngines is time bounded by the copy engines in use.
	ResCopyEngines Resource = "copy-engines"
	// ResLaunch is launch and synchronization overhead.
	ResLaunch Resource = "launch"
	// ResDependency is time waiting for another part of the same op to
	// finish: a copy-engine reduction's add waiting for its copies, the
	// copies of an all-reduce's second phase waiting for the add, NCCL's
	// copies waiting for its kernel. Recordings made before it existed
	// count such waits as launch.
	ResDependency Resource = "dependency"
)

// Span is one op's (or one part of an op's) execution on one device's stream
// or copy engine. Times are nanoseconds from the start of the repetition.
type Span struct {
	// Rep is the repetition index (warm-up runs are not reported).
	Rep int `json:"rep"`
	// Op is the role of the scenario op the span belongs to.
	Op Op `json:"op"`
	// GraphOp names the graph op (scenarios.GraphOp.Name) and Instance is
	// its instance; empty and 0 in recordings made before graphs, where
	// Op names the op.
	GraphOp  string `json:"graph_op,omitempty"`
	Instance int    `json:"instance,omitempty"`
	// Name is the kernel or copy name ("gemm 8192x8192x8192 bf16", "copy gpu0->gpu1").
	Name   string `json:"name"`
	Device int    `json:"device"`
	// Track is the stream or engine the span ran on ("compute", "comm", "ce0").
	Track string `json:"track"`
	// Kind is "kernel" or "copy".
	Kind  string `json:"kind"`
	Start int64  `json:"start_ns"`
	End   int64  `json:"end_ns"`
}

// cuptiTrackPrefix starts the track of every span a backend took from
// CUPTI's activity records rather than from its own timing.
const cuptiTrackPrefix = "cupti-"

// CUPTITrack is the track of the spans CUPTI recorded on CUDA stream
// stream ("cupti-s7").
func CUPTITrack(stream uint32) string { return fmt.Sprintf("%ss%d", cuptiTrackPrefix, stream) }

// FromCUPTI says the span is one of CUPTI's kernel or copy records: a
// second view of work the backend's own spans already cover, so a sum of
// GPU time over a timeline counts either kind, never both.
func (s Span) FromCUPTI() bool { return strings.HasPrefix(s.Track, cuptiTrackPrefix) }

// Sample is one telemetry value at one time on one device.
type Sample struct {
	// Rep is the repetition index the sample was taken in (-1 outside any).
	Rep int `json:"rep"`
	// Metric names the measured quantity; see the Metric* constants.
	Metric string `json:"metric"`
	Device int    `json:"device"`
	// Time is nanoseconds from the start of the repetition.
	Time  int64   `json:"t_ns"`
	Value float64 `json:"value"`
}

// Telemetry metric names, shared by every backend. Utilizations are
// fractions 0..1 of the device's capacity.
const (
	MetricSMUtil     = "sm_util"      // share of SMs holding a CTA
	MetricTensorUtil = "tensor_util"  // share of peak tensor throughput
	MetricHBMUtil    = "hbm_util"     // share of HBM bandwidth
	MetricLinkTXUtil = "link_tx_util" // share of NVLink TX bandwidth
	MetricLinkRXUtil = "link_rx_util" // share of NVLink RX bandwidth
	MetricPCIeTXUtil = "pcie_tx_util" // share of the PCIe link's bandwidth to the host
	MetricPCIeRXUtil = "pcie_rx_util" // share of the PCIe link's bandwidth from the host
	MetricSMsCompute = "sms_compute"  // SMs held by the compute op
	MetricSMsComm    = "sms_comm"     // SMs held by the collective
	// MetricCopyStreamsBusy is the share of the copy streams c3lab can
	// use (one per copy engine of the device) with a copy of the
	// collective in flight, from c3lab's own events: NVML cannot see
	// copy engines, so which engine serves a stream, and copies made by
	// others (NCCL's own copy-engine path on a GPU), are not in it. Its
	// stored name is the one it had when it was called copy-engine
	// utilization, so that recordings stay readable.
	MetricCopyStreamsBusy = "copy_eng_util"
)

// EventSink receives a run's events as they happen. Implementations must be
// safe to call from the backend's goroutine and must not block for long.
type EventSink interface {
	Spans([]Span)
	Samples([]Sample)
}

// Collector is an EventSink that keeps everything in memory.
type Collector struct {
	SpanList   []Span
	SampleList []Sample
}

// Spans appends spans.
func (c *Collector) Spans(s []Span) { c.SpanList = append(c.SpanList, s...) }

// Samples appends samples.
func (c *Collector) Samples(s []Sample) { c.SampleList = append(c.SampleList, s...) }
