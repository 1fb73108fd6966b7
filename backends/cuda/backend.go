package cuda

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// Backend runs experiments on the NVIDIA GPUs of this node. Every GPU call
// happens on one goroutine locked to its OS thread (CUDA's current context
// is per thread); Run and Close hand their work to it.
type Backend struct {
	work chan func()
	quit chan struct{} // closed by Close: the worker stops
	done chan struct{} // closed by the worker when it has stopped
	once sync.Once

	// Owned by the worker goroutine:
	g        gpu
	devs     []devInfo
	prepared *prepared
	streams  map[streamKey]streamID
	verified map[string]bool
	// spareEvents holds, per GPU, events a released graph gave back.
	spareEvents map[int][]eventID
	opts        Options
	ncclCE      bool // NCCL has symmetric windows (2.28's copy-engine path)
	// gateVal is the value that opens the current gated repetition;
	// gateStalls counts gated repetitions the watchdog had to open.
	gateVal    uint32
	gateStalls int
	// tracer, when set (Options.CUPTI), reports every memory copy as the
	// GPU saw it; each repetition's copies become timeline spans.
	tracer gpuTracer
	// measured holds, per GPU, the bandwidths measured at Open (or read
	// from the cache); they replace the device table's in Devices.
	// measureErr is why a measurement failed (the device table's numbers
	// stand then).
	measured   map[int]measuredBW
	measureErr error
	// proc is set when the backend is one rank of a job with one process
	// per GPU (proc.go).
	proc *procState
	// primeCopies makes every repetition of a copy-engine comm op start
	// with an untimed copy on each copy stream before its start gate, and
	// busySeq numbers the busy kernels' runs (busy.go: tools of the
	// copy-engine baseline probe).
	primeCopies bool
	busySeq     uint32
	// structuredRest runs a compute op that a comm partition leaves the
	// rest of the GPU on a structured group split again out of that rest,
	// a few SMs fewer (112 of 116 beside a 16-SM partition on an H200):
	// a probe of why a GEMM on a split's remainder loses more than its
	// SMs (TestGPUGEMMOnPartitions; NOTES.md). Measured, it does not help
	// (the same time at the median), so no strategy uses it.
	structuredRest bool
}

// gpuTracer reports memory copies and kernels as the GPUs ran them:
// CUPTI's activity records (native.CUPTI).
type gpuTracer interface {
	// Now is the tracer's clock, in ns.
	Now() uint64
	// Take returns every copy recorded since the last call, and has the
	// tracer deliver the kernels recorded since then to TakeKernels.
	Take() []native.CopyRecord
	// TakeKernels returns every kernel delivered since the last call.
	TakeKernels() []native.KernelRecord
	Stop()
}

// Options tune the backend.
type Options struct {
	// RepTimeoutNanos bounds one repetition; a collective that hangs past it
	// is aborted. 0 means DefaultRepTimeout.
	RepTimeoutNanos int64
	// Ungated turns the start gate off. By default every GPU's streams wait
	// at a start gate (a pinned host word) until all ops of a timed
	// repetition are enqueued, and are then released together: the host's
	// launch latency leaves the timing window and all GPUs start at once.
	// Warm-up repetitions run ungated. If enqueuing stalls past
	// GateStallNanos (a library waiting on the device, which the gate
	// holds), a watchdog opens the gate, the repetition is thrown away and
	// run again; after maxGateStalls such stalls in one experiment the rest
	// of it runs ungated. Ungated, each op's time includes the host's time
	// to launch the first op (NOTES.md).
	Ungated bool
	// GateStallNanos is how long enqueuing a gated repetition may take
	// before the watchdog opens the gate. 0 means DefaultGateStall.
	GateStallNanos int64
	// CUPTI turns on CUPTI's memory-copy and kernel records (libcupti,
	// opt-in): every copy and kernel of a repetition, c3lab's, cuBLAS's and
	// NCCL's alike, becomes a timeline span on a track per CUDA stream
	// ("cupti-sN") from when the GPU started it to when it ended, where
	// c3lab's own spans start when a stream reaches the op. It shows what
	// NVML cannot, such as NCCL's own use of the copy engines or a kernel
	// waiting for SMs, and costs a forced CUPTI flush per repetition.
	CUPTI bool
	// Settle is how long a measurement runs its load untimed before
	// timing (Capabilities.Settle; profiler.Options.Settle): an H200 runs
	// a large GEMM's first ~100 ms at 1980 MHz and then at its power
	// limit's clock (results/2026-12-02-h200x1-s6). Open makes 0
	// DefaultSettle; negative settles nothing. One process per GPU
	// (Process set) never settles: a time-bound loop could end after a
	// different number of collectives on each rank.
	Settle time.Duration
	// PipePull makes a pipelined copy-engine reduction pull the peers'
	// chunks (each rank's copy streams read from the peers) instead of
	// pushing them (each rank writes its chunks into the peers' staging
	// buffers and raises the peer's flag). Push is the default; pull is
	// kept to measure the difference (FINDINGS.md section 4).
	PipePull bool
	// Process, when set, makes the backend one rank of a job with one
	// process per GPU (proc.go, backends/MULTINODE.md): it opens only its
	// rank's GPU and runs every experiment together with the other ranks.
	Process *Process
}

// DefaultGateStall is how long enqueuing one gated repetition may take
// before the watchdog opens the gate (250 ms; a repetition normally
// enqueues in well under a millisecond).
const DefaultGateStall = int64(250e6)

// maxGateStalls is how many stalled gated repetitions one experiment
// tolerates before it runs the rest ungated.
const maxGateStalls = 3

// DefaultRepTimeout is how long one repetition may take before the backend
// declares a hang (30 s).
const DefaultRepTimeout = int64(30e9)

// streamKey identifies a stream: each op has its own streams, even when
// their specs are equal, or the two ops would serialize.
type streamKey struct {
	dev  int
	op   backends.Op
	spec streamSpec
}

// Open loads the NVIDIA libraries, initialises every visible GPU and
// returns the backend. A missing library comes back as a
// *native.MissingLibraryError naming it.
func Open(opts Options) (*Backend, error) {
	// c3lab never uses NVLink multicast (NVLS): it needs settings c3lab must
	// not touch and it would change what the collectives measure.
	os.Setenv("NCCL_NVLS_ENABLE", "0")
	if opts.Settle == 0 {
		opts.Settle = DefaultSettle
	}
	b, err := open(opts, openLibs)
	if err != nil {
		return nil, err
	}
	if opts.Process == nil {
		// One process per GPU keeps the device table's bandwidths: the
		// probes copy between GPUs one process drives.
		b.do(func() { b.measureErr = b.measureBandwidths(bandwidthCachePath(), defaultBWProbe()) })
	}
	return b, nil
}

// open is Open with the libraries from load (fakes, in tests).
func open(opts Options, load func() (*libs, error)) (*Backend, error) {
	b := newBackend(opts)
	var err error
	b.do(func() {
		var l *libs
		if l, err = load(); err != nil {
			return
		}
		var g *nativeGPU
		if opts.Process != nil {
			g, err = newNativeGPUOn(l, opts.Process.LocalRank)
		} else {
			g, err = newNativeGPU(l)
		}
		if err != nil {
			return
		}
		if opts.Process != nil {
			if opts.CUPTI {
				err = errors.New("CUPTI copy records (C3LAB_CUPTI=1) are for one process driving the node's GPUs; unset it to run one process per GPU")
			} else if err = b.joinJob(g, opts.Process); err != nil {
				err = fmt.Errorf("joining the job's other ranks: %w", err)
			}
			if err != nil {
				g.Close()
				return
			}
		} else {
			b.attach(g)
		}
		version, verr := l.nccl.Version()
		if verr != nil {
			err = fmt.Errorf("NCCL does not report its version, so its communicators cannot be configured: %w", verr)
			g.Close()
			return
		}
		b.ncclCE = l.nccl.HasWindows() && version >= 22800
		if opts.CUPTI {
			c, cerr := native.StartCUPTI()
			if cerr == nil {
				if cerr = c.EnableKernels(); cerr != nil {
					c.Stop()
				}
			}
			if cerr != nil {
				err = fmt.Errorf("CUPTI copy and kernel records were asked for (C3LAB_CUPTI=1): %w", cerr)
				g.Close()
				return
			}
			b.tracer = c
		}
	})
	if err != nil {
		b.stop()
		return nil, err
	}
	return b, nil
}

// newBackend starts the worker goroutine.
// DefaultSettle is the settling time Open gives a real GPU: the ~100 ms
// an H200's power limit takes to act, and its steps after.
const DefaultSettle = 300 * time.Millisecond

// settle is the backend's Capabilities.Settle: none for one process per
// GPU or when turned off.
func (b *Backend) settle() time.Duration {
	if b.opts.Process != nil || b.opts.Settle < 0 {
		return 0
	}
	return b.opts.Settle
}

func newBackend(opts Options) *Backend {
	if opts.RepTimeoutNanos <= 0 {
		opts.RepTimeoutNanos = DefaultRepTimeout
	}
	if opts.GateStallNanos <= 0 {
		opts.GateStallNanos = DefaultGateStall
	}
	b := &Backend{work: make(chan func()), quit: make(chan struct{}), done: make(chan struct{}), opts: opts,
		streams: map[streamKey]streamID{}, verified: map[string]bool{}, spareEvents: map[int][]eventID{}}
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(b.done)
		for {
			select {
			case f := <-b.work:
				f()
			case <-b.quit:
				return
			}
		}
	}()
	return b
}

// attach hands the backend its GPUs (on the worker).
func (b *Backend) attach(g gpu) {
	b.g = g
	b.devs = g.Devices()
}

// errClosed is returned by calls after Close.
var errClosed = errors.New("the cuda backend is closed")

// do runs f on the worker goroutine and waits for it; after Close it runs
// nothing and returns errClosed.
func (b *Backend) do(f func()) error {
	ran := make(chan struct{})
	select {
	case b.work <- func() { defer close(ran); f() }:
		<-ran
		return nil
	case <-b.done:
		return errClosed
	}
}

func (b *Backend) stop() { b.once.Do(func() { close(b.quit); <-b.done }) }

// Name is the cuda backend's short name, what --backend takes.
const Name = "cuda"

// Name implements backends.Backend.
func (b *Backend) Name() string { return Name }

// Devices implements backends.Backend: what the driver reports, and the
// bandwidths of the device model from backends.FactsOf, replaced by those
// measured on the device at Open (HBM, and NVLink with 2+ GPUs) where
// they were.
func (b *Backend) Devices() []backends.DeviceInfo {
	out := make([]backends.DeviceInfo, len(b.devs))
	for i, d := range b.devs {
		out[i] = backends.DeviceInfo{Index: i, Name: d.Name, SMs: d.SMs, MemoryBytes: d.MemoryBytes, CopyEngines: d.CopyEngines,
			HighestPriority: d.PriorityGreatest}
		if d.Green {
			out[i].SMStep = d.SMStep
		}
		if f, ok := backends.FactsOf(d.Name); ok {
			out[i] = f.Apply(out[i])
		}
		if m, ok := b.measured[i]; ok {
			out[i].HBMBandwidth = m.HBM
			if m.Link > 0 {
				out[i].LinkBandwidth = m.Link
			}
		}
	}
	return out
}

// Capabilities implements backends.Backend.
func (b *Backend) Capabilities() backends.Capabilities {
	d := b.devs[0]
	dtypes := []scenarios.DType{scenarios.BF16, scenarios.FP16, scenarios.FP32}
	if d.CCMajor > 8 || (d.CCMajor == 8 && d.CCMinor >= 9) {
		dtypes = append(dtypes, scenarios.FP8)
	}
	// A scenario must fit on every GPU it may run on: the smallest.
	mem := d.MemoryBytes
	for _, o := range b.devs {
		mem = min(mem, o.MemoryBytes)
	}
	c := backends.Capabilities{
		Limits: scenarios.Limits{
			Device: d.Name, SMs: d.SMs, SMStep: d.SMStep, MaxGPUs: len(b.devs),
			CopyEngines: d.CopyEngines, HighestPriority: d.PriorityGreatest, DTypes: dtypes,
			MemoryBytes: mem,
		},
		DMAReductions: d.CopyEngines > 0, // copies plus c3lab's reduction kernel
		Settle:        b.settle(),
		HBMBandwidth:  b.Devices()[0].HBMBandwidth,
		LocalGPUs:     true,
	}.With(scenarios.CapPriority, scenarios.CapCommCTACap, scenarios.CapGEMMSMTarget, scenarios.CapDecompose)
	if d.Green {
		c = c.With(scenarios.CapSMPartition)
	}
	if d.CopyEngines > 0 {
		c = c.With(scenarios.CapDMA)
	}
	if b.ncclCE {
		c = c.With(scenarios.CapNCCLCopyEngine)
	}
	if peerLoadable(b.devs) {
		c = c.With(scenarios.CapPeerLoad)
	}
	return c
}

// Close implements backends.Backend: it waits for the GPUs, frees every
// buffer, stream, event and communicator, and releases the contexts.
func (b *Backend) Close() error {
	var err error
	if b.do(func() {
		if b.g == nil {
			return
		}
		b.prepared = nil
		if b.tracer != nil {
			b.tracer.Stop()
		}
		err = b.g.Close()
		b.g = nil
		if b.proc != nil {
			err = errors.Join(err, b.proc.gate.close())
		}
	}) != nil {
		return nil // already closed
	}
	b.stop()
	return err
}

// Run implements backends.Backend.
func (b *Backend) Run(ctx context.Context, ex backends.Experiment, sink backends.EventSink) (backends.RunResult, error) {
	if ex.Reps < 1 {
		return backends.RunResult{}, fmt.Errorf("reps is %d; want at least 1", ex.Reps)
	}
	sc := ex.Scenario
	sc.Strategy = ex.Strategy
	if err := validate(sc, b.Capabilities().Limits); err != nil {
		return backends.RunResult{}, err
	}
	if err := b.procDMACheck(sc, ex.Strategy); err != nil {
		return backends.RunResult{}, err
	}
	if err := b.procPeerCheck(sc, ex.Strategy); err != nil {
		return backends.RunResult{}, err
	}
	var res backends.RunResult
	var err error
	if derr := b.do(func() {
		if b.g == nil {
			err = errClosed
			return
		}
		if b.proc == nil {
			res, err = b.run(ctx, ex, sink)
			return
		}
		var out any
		out, err = b.procRun(ctx, func() (any, error) { return b.run(ctx, ex, sink) })
		if out != nil {
			res = out.(backends.RunResult)
		}
	}); derr != nil {
		return res, derr
	}
	return res, err
}

// validate checks a scenario against the device limits. A format-2
// scenario is checked by expanding its graph (scenarios.Scenario.Graph
// reports its problems with their fields) and its strategy and GPU count
// against the limits; scenarios.Validate checks the one-pair format.
func validate(sc scenarios.Scenario, lim scenarios.Limits) error {
	if !sc.IsGraph() {
		return scenarios.Validate(sc, lim)
	}
	errs := scenarios.ValidateStrategy(sc.Strategy, lim)
	if sc.GPUs < 1 || (lim.MaxGPUs > 0 && sc.GPUs > lim.MaxGPUs) {
		errs = append(errs, scenarios.FieldError{Path: "$.gpus", Msg: fmt.Sprintf("gpus is %d; allowed 1..%d on %s", sc.GPUs, lim.MaxGPUs, lim.Device)})
	}
	if len(errs) > 0 {
		return &scenarios.ValidationError{Scenario: sc.Name, Fields: errs}
	}
	g, err := sc.Graph(sc.Strategy)
	if err != nil {
		return err
	}
	for _, o := range g.Ops {
		if o.Role == scenarios.RoleComm && !o.Comm.Collective.IsHostCopy() && sc.GPUs < 2 {
			return &scenarios.ValidationError{Scenario: sc.Name, Fields: []scenarios.FieldError{{Path: o.Path, Msg: fmt.Sprintf("op %s is a %s, which needs at least 2 GPUs; gpus is %d (host copies run on 1)", o.Name, o.Comm.Collective, sc.GPUs)}}}
		}
	}
	return nil
}
