package cuda

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"unsafe"

	"github.com/c3lab/c3lab/native"
	"github.com/c3lab/c3lab/scenarios"
)

// device is one GPU's native state.
type device struct {
	info   devInfo
	handle native.Device
	ctx    native.Context
	blas   native.BLASHandle
	stream native.Function // c3lab's streaming kernel
	copy   native.Function // c3lab's SM copy kernel
	traced native.Function // the copy kernel with a record of its CTAs (probes)
	stamp  native.Function // c3lab's %globaltimer stamp
	spin   native.Function // c3lab's busy kernel (busy.go)
	module native.Module
	// reduce, reducePipe and reduceLoad are compiled on first use (only
	// copy-engine and p2p-load reductions need them).
	reduce, reducePipe, reduceLoad native.Function
	reduceModule                   native.Module
	// green partitions by group size: [0] the group, [1] the rest, [2] a
	// structured group out of the rest (made when first asked for).
	green map[int][3]native.GreenContext
	plans map[gemmSpec]*native.GEMMPlan
	ws    map[gemmSpec]native.DevPtr
}

// nativeGPU implements gpu over package native.
type nativeGPU struct {
	l       *libs
	devs    []*device
	bufs    map[bufID]nbuf
	streams map[streamID]nstream
	events  map[eventID]nevent
	comms   map[commSpec][]native.Comm
	next    int
	// gate is the pinned host word gated repetitions wait on (allocated on
	// first use); gatePtr[dev] is its address on each GPU.
	gate    native.HostWord
	gatePtr []native.DevPtr
	// noEngineCopy is set once the driver refused a same-device copy on a
	// copy engine; such copies then use cuMemcpyPeerAsync.
	noEngineCopy bool
	// One process per GPU (proc.go): procIDs holds, per communicator
	// config, the NCCL id and this process's rank in it; gateShared is
	// set when the gate is a page the ranks share (registered, not
	// allocated).
	procIDs    map[commSpec]procComm
	gateShared unsafe.Pointer
	// mu guards live, this process's communicators of one process per
	// GPU, and aborted, those AbortAsync aborted from another goroutine
	// (the worker must not abort or destroy them again).
	mu      sync.Mutex
	live    map[native.Comm]bool
	aborted map[native.Comm]bool
	// flags are the buffers of ordering flags ReleaseFlags raises (the
	// copy-engine collectives of one process per GPU), guarded by mu.
	flags map[bufID]nbuf
	// spinStop is the pinned host word busy kernels watch (busy.go),
	// allocated on first use; spinPtr[dev] is its address on each GPU.
	spinStop native.HostWord
	spinPtr  []native.DevPtr
}

// procComm is this process's place in a communicator of one process per GPU.
type procComm struct {
	id          []byte
	world, rank int
}

type nbuf struct {
	dev       int
	p         native.DevPtr
	bytes     int64
	symmetric bool // from ncclMemAlloc
	// host is set for pinned host memory (AllocHost); p is then its
	// device address.
	host native.HostBuffer
	// windows registered on this buffer, by communicator config.
	windows map[commSpec]native.Window
	// peer is set for another process's buffer mapped with CUDA IPC
	// (OpenPeerBuf): Free closes the mapping.
	peer bool
}

type nstream struct {
	dev int
	s   native.Stream
}

type nevent struct {
	dev int
	e   native.Event
}

// maxGEMMWorkspace is the scratch memory a GEMM plan may ask for.
const maxGEMMWorkspace = 64 << 20

// initDriver initialises the CUDA driver and returns how many GPUs it
// sees, refusing none.
func initDriver(l *libs) (int, error) {
	if err := l.drv.Init(); err != nil {
		return 0, fmt.Errorf("initialising the CUDA driver: %w", err)
	}
	n, err := l.drv.DeviceCount()
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, errors.New("the CUDA driver sees no GPU")
	}
	return n, nil
}

// newNativeGPU initialises the driver and every visible device: primary
// contexts, peer access between all pairs, a cuBLASLt handle each, and
// c3lab's kernels compiled for the device's architecture.
func newNativeGPU(l *libs) (*nativeGPU, error) {
	n, err := initDriver(l)
	if err != nil {
		return nil, err
	}
	g := &nativeGPU{l: l, bufs: map[bufID]nbuf{}, streams: map[streamID]nstream{}, events: map[eventID]nevent{}, comms: map[commSpec][]native.Comm{}}
	for i := range n {
		d, err := g.openDevice(i)
		if err != nil {
			g.Close()
			return nil, fmt.Errorf("GPU %d: %w", i, err)
		}
		g.devs = append(g.devs, d)
	}
	for i, a := range g.devs {
		for j, b := range g.devs {
			if i == j {
				continue
			}
			ok, err := l.drv.CanAccessPeer(a.handle, b.handle)
			if err != nil || !ok {
				continue // collectives fall back to NCCL's own paths
			}
			if err := g.current(i); err != nil {
				g.Close()
				return nil, err
			}
			if err := l.drv.EnablePeerAccess(b.ctx); err != nil {
				g.Close()
				return nil, fmt.Errorf("enabling peer access GPU %d -> %d: %w", i, j, err)
			}
			a.info.Peers = append(a.info.Peers, j)
		}
	}
	return g, nil
}

// newNativeGPUOn initialises the driver and one GPU: the one of a rank of
// one process per GPU (procDevice picks it from the local rank).
func newNativeGPUOn(l *libs, localRank int) (*nativeGPU, error) {
	n, err := initDriver(l)
	if err != nil {
		return nil, err
	}
	dev, err := procDevice(n, localRank)
	if err != nil {
		return nil, err
	}
	g := &nativeGPU{l: l, bufs: map[bufID]nbuf{}, streams: map[streamID]nstream{}, events: map[eventID]nevent{}, comms: map[commSpec][]native.Comm{},
		procIDs: map[commSpec]procComm{}, live: map[native.Comm]bool{}, aborted: map[native.Comm]bool{}}
	d, err := g.openDevice(dev)
	if err != nil {
		return nil, fmt.Errorf("GPU %d: %w", dev, err)
	}
	g.devs = []*device{d}
	return g, nil
}

// openDevice opens GPU i; on failure it releases whatever it had acquired
// (the context, the cuBLASLt handle, the module).
func (g *nativeGPU) openDevice(i int) (_ *device, err error) {
	drv := g.l.drv
	h, err := drv.Device(i)
	if err != nil {
		return nil, err
	}
	d := &device{handle: h, green: map[int][3]native.GreenContext{}, plans: map[gemmSpec]*native.GEMMPlan{}, ws: map[gemmSpec]native.DevPtr{}}
	if d.info.Name, err = drv.DeviceName(h); err != nil {
		return nil, err
	}
	d.info.UUID, _ = drv.UUID(h)
	if v, ok := drv.(interface{ Version() (int, error) }); ok {
		d.info.Driver, _ = v.Version()
	}
	attr := func(a int) int { v, _ := drv.Attribute(h, a); return v }
	d.info.SMs = attr(native.AttrMultiprocessorCount)
	d.info.CopyEngines = attr(native.AttrAsyncEngineCount)
	d.info.CCMajor, d.info.CCMinor = attr(native.AttrComputeCapMajor), attr(native.AttrComputeCapMinor)
	d.info.MemoryBytes, _ = drv.TotalMemory(h)
	d.info.Green = drv.HasGreenContexts() && d.info.CCMajor >= 9
	d.info.SMStep = smPartitionStep(d.info.CCMajor)
	if d.ctx, err = drv.PrimaryContext(h); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			g.releaseDevice(d) // the first error is the one to report
		}
	}()
	if err := drv.SetCurrent(d.ctx); err != nil {
		return nil, err
	}
	if d.info.PriorityLeast, d.info.PriorityGreatest, err = drv.PriorityRange(); err != nil {
		return nil, err
	}
	if d.blas, err = g.l.blas.NewHandle(); err != nil {
		return nil, err
	}
	arch := fmt.Sprintf("sm_%d%d", d.info.CCMajor, d.info.CCMinor)
	cubin, err := g.l.nvrtc.CompileCached("stream.cu", arch, kernelCacheDir())
	if err != nil {
		return nil, fmt.Errorf("compiling c3lab's kernels for %s: %w", arch, err)
	}
	if d.module, err = drv.LoadModule(cubin); err != nil {
		return nil, err
	}
	if d.stream, err = drv.Function(d.module, native.StreamKernel); err != nil {
		return nil, err
	}
	if d.copy, err = drv.Function(d.module, native.CopyKernel); err != nil {
		return nil, err
	}
	if d.traced, err = drv.Function(d.module, native.CopyTracedKernel); err != nil {
		return nil, err
	}
	if d.stamp, err = drv.Function(d.module, native.StampKernel); err != nil {
		return nil, err
	}
	if d.spin, err = drv.Function(d.module, native.SpinKernel); err != nil {
		return nil, err
	}
	return d, nil
}

// kernelCacheDir is where compiled kernels are kept between runs.
func kernelCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "c3lab", "kernels")
}

func (g *nativeGPU) current(dev int) error { return g.l.drv.SetCurrent(g.devs[dev].ctx) }

func (g *nativeGPU) id() int { g.next++; return g.next }

func (g *nativeGPU) Devices() []devInfo {
	out := make([]devInfo, len(g.devs))
	for i, d := range g.devs {
		out[i] = d.info
	}
	return out
}

func (g *nativeGPU) FreeMemory(dev int) (int64, error) {
	if err := g.current(dev); err != nil {
		return 0, err
	}
	free, _, err := g.l.drv.MemInfo()
	return free, err
}

func (g *nativeGPU) Alloc(dev int, bytes int64) (bufID, error) {
	if err := g.current(dev); err != nil {
		return 0, err
	}
	p, err := g.l.drv.Alloc(bytes)
	if err != nil {
		return 0, err
	}
	id := bufID(g.id())
	g.bufs[id] = nbuf{dev: dev, p: p, bytes: bytes}
	return id, nil
}

func (g *nativeGPU) Free(b bufID) error {
	nb, ok := g.bufs[b]
	if !ok {
		return fmt.Errorf("free of unknown buffer %d", b)
	}
	delete(g.bufs, b)
	g.mu.Lock()
	delete(g.flags, b)
	g.mu.Unlock()
	// Freed even when its context cannot be made current: the driver
	// answers for the free itself, and the buffer is not lost.
	errs := []error{g.current(nb.dev)}
	if nb.peer {
		return errors.Join(append(errs, g.l.drv.CloseIPC(nb.p))...)
	}
	for spec, w := range nb.windows {
		if comms, ok := g.comms[spec]; ok && nb.dev < len(comms) {
			errs = append(errs, g.l.nccl.DeregisterWindow(comms[nb.dev], w))
		}
	}
	if nb.symmetric {
		return errors.Join(append(errs, g.l.nccl.MemFree(nb.p))...)
	}
	if !nb.host.IsZero() {
		return errors.Join(append(errs, g.l.drv.FreeHost(nb.host))...)
	}
	return errors.Join(append(errs, g.l.drv.Free(nb.p))...)
}

func (g *nativeGPU) AllocHost(dev int, bytes int64) (bufID, error) {
	if err := g.current(dev); err != nil {
		return 0, err
	}
	h, err := g.l.drv.AllocHost(bytes)
	if err != nil {
		return 0, fmt.Errorf("pinning %d bytes of host memory: %w", bytes, err)
	}
	p, err := g.l.drv.HostDevPtr(h)
	if err != nil {
		return 0, errors.Join(err, g.l.drv.FreeHost(h))
	}
	id := bufID(g.id())
	g.bufs[id] = nbuf{dev: dev, p: p, bytes: bytes, host: h}
	return id, nil
}

func (g *nativeGPU) AllocSymmetric(dev int, bytes int64) (bufID, error) {
	if !g.l.nccl.HasWindows() {
		return 0, &native.MissingLibraryError{Library: "libnccl.so.2", NeededFor: "NCCL's copy-engine collectives", Detail: "this NCCL has no ncclMemAlloc / window registration (needs 2.28+)"}
	}
	if err := g.current(dev); err != nil {
		return 0, err
	}
	p, err := g.l.nccl.MemAlloc(bytes)
	if err != nil {
		return 0, err
	}
	id := bufID(g.id())
	g.bufs[id] = nbuf{dev: dev, p: p, bytes: bytes, symmetric: true, windows: map[commSpec]native.Window{}}
	return id, nil
}

func (g *nativeGPU) RegisterWindows(spec commSpec, bufs []bufID) error {
	comms, err := g.communicators(spec)
	if err != nil {
		return err
	}
	if len(bufs) != len(comms) {
		return fmt.Errorf("%d buffers for %d ranks", len(bufs), len(comms))
	}
	ptrs := make([]native.DevPtr, len(bufs))
	var size int64
	for r, b := range bufs {
		nb := g.bufs[b]
		if !nb.symmetric {
			return fmt.Errorf("buffer %d is not symmetric memory (ncclMemAlloc)", b)
		}
		ptrs[r], size = nb.p, nb.bytes
	}
	wins, err := g.l.nccl.RegisterWindows(comms, ptrs, size, g.current)
	if err != nil {
		return fmt.Errorf("registering NCCL windows: %w", err)
	}
	for r, b := range bufs {
		g.bufs[b].windows[spec] = wins[r]
	}
	return nil
}

func (g *nativeGPU) Upload(b bufID, data []byte) error {
	nb := g.bufs[b]
	if int64(len(data)) > nb.bytes {
		return fmt.Errorf("upload of %d bytes into a %d-byte buffer", len(data), nb.bytes)
	}
	if !nb.host.IsZero() {
		copy(nb.host.Bytes(), data)
		return nil
	}
	if err := g.current(nb.dev); err != nil {
		return err
	}
	return g.l.drv.CopyToDevice(nb.p, data)
}

func (g *nativeGPU) Download(b bufID, out []byte) error {
	nb := g.bufs[b]
	if int64(len(out)) > nb.bytes {
		return fmt.Errorf("download of %d bytes from a %d-byte buffer", len(out), nb.bytes)
	}
	if !nb.host.IsZero() {
		copy(out, nb.host.Bytes())
		return nil
	}
	if err := g.current(nb.dev); err != nil {
		return err
	}
	return g.l.drv.CopyToHost(out, nb.p)
}

func (g *nativeGPU) Stream(dev int, spec streamSpec) (streamID, error) {
	if err := g.current(dev); err != nil {
		return 0, err
	}
	var s native.Stream
	var err error
	if spec.Partition.GroupSMs == 0 {
		s, err = g.l.drv.NewStream(spec.Priority)
	} else {
		var gc native.GreenContext
		if gc, err = g.green(dev, spec.Partition); err == nil {
			s, err = g.l.drv.GreenStream(gc, spec.Priority)
		}
	}
	if err != nil {
		return 0, err
	}
	id := streamID(g.id())
	g.streams[id] = nstream{dev, s}
	return id, nil
}

// green returns (creating once) the green context of one side of a split:
// the group, the rest, or a structured group out of the rest.
func (g *nativeGPU) green(dev int, p partition) (native.GreenContext, error) {
	d := g.devs[dev]
	split, ok := d.green[p.GroupSMs]
	if !ok {
		group, rest, got, _, err := g.l.drv.GreenPartition(d.handle, p.GroupSMs, true)
		if err != nil {
			return native.GreenContext{}, err
		}
		if got != p.GroupSMs {
			for _, gc := range []native.GreenContext{group, rest} {
				if gc != (native.GreenContext{}) {
					g.l.drv.DestroyGreenContext(gc)
				}
			}
			return native.GreenContext{}, fmt.Errorf("asked the driver for a %d-SM partition and got %d SMs", p.GroupSMs, got)
		}
		split = [3]native.GreenContext{group, rest}
		d.green[p.GroupSMs] = split
	}
	switch {
	case p.Rest && p.Structured > 0:
		if split[2] == (native.GreenContext{}) {
			gc, got, err := g.l.drv.StructuredGroup(d.handle, split[1], p.Structured)
			if err != nil {
				return native.GreenContext{}, fmt.Errorf("a structured group of %d SMs out of the rest of a %d-SM partition: %w", p.Structured, p.GroupSMs, err)
			}
			if got != p.Structured {
				g.l.drv.DestroyGreenContext(gc)
				return native.GreenContext{}, fmt.Errorf("asked the driver for a structured group of %d SMs out of the rest of a %d-SM partition and got %d SMs", p.Structured, p.GroupSMs, got)
			}
			split[2] = gc
			d.green[p.GroupSMs] = split
		}
		return split[2], nil
	case p.Rest:
		return split[1], nil
	}
	return split[0], nil
}

func (g *nativeGPU) Event(dev int) (eventID, error) {
	if err := g.current(dev); err != nil {
		return 0, err
	}
	e, err := g.l.drv.NewEvent(native.EventDefault)
	if err != nil {
		return 0, err
	}
	id := eventID(g.id())
	g.events[id] = nevent{dev, e}
	return id, nil
}

func (g *nativeGPU) Record(e eventID, s streamID) error {
	ev, st := g.events[e], g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.Record(ev.e, st.s)
}

func (g *nativeGPU) Wait(s streamID, e eventID) error {
	ev, st := g.events[e], g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.WaitEvent(st.s, ev.e)
}

func (g *nativeGPU) Done(e eventID) (bool, error) {
	ev := g.events[e]
	if err := g.current(ev.dev); err != nil {
		return false, err
	}
	return g.l.drv.EventDone(ev.e)
}

func (g *nativeGPU) Elapsed(from, to eventID) (int64, error) {
	a, b := g.events[from], g.events[to]
	if a.dev != b.dev {
		return 0, fmt.Errorf("events of GPUs %d and %d cannot be compared", a.dev, b.dev)
	}
	if err := g.current(a.dev); err != nil {
		return 0, err
	}
	return g.l.drv.Elapsed(a.e, b.e)
}

func (g *nativeGPU) GateWait(s streamID, v uint32) error {
	st := g.streams[s]
	drv := g.l.drv
	if g.gate.IsZero() {
		w, ptrs, err := g.mappedHostWord("the start gate")
		if err != nil {
			return err
		}
		g.gate, g.gatePtr = w, ptrs
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	return drv.WaitValue32(st.s, g.gatePtr[st.dev], v, native.StreamWaitValueGEQ)
}

// mappedHostWord allocates a pinned host word and maps it into every GPU
// of the node (what for names it in the error); on failure nothing is
// left allocated.
func (g *nativeGPU) mappedHostWord(what string) (native.HostWord, []native.DevPtr, error) {
	drv := g.l.drv
	w, err := drv.AllocHostWord()
	if err != nil {
		return w, nil, fmt.Errorf("allocating %s: %w", what, err)
	}
	ptrs := make([]native.DevPtr, len(g.devs))
	for dev := range g.devs {
		if err := g.current(dev); err != nil {
			drv.FreeHostWord(w)
			return native.HostWord{}, nil, err
		}
		if ptrs[dev], err = drv.HostWordDevPtr(w); err != nil {
			drv.FreeHostWord(w)
			return native.HostWord{}, nil, err
		}
	}
	return w, ptrs, nil
}

func (g *nativeGPU) OpenGate(v uint32) {
	if !g.gate.IsZero() {
		g.gate.Raise(v)
	}
}

// reduceKernels compiles (once per device) and returns the reduction
// kernels: after the copies, pipelined with them, and loading the peers'
// blocks (p2p-load). Loading the module waits for the context's streams,
// so the first call must not come while a stream waits on the start gate
// (it would wait for a gate that opens only after it returns): every plan's
// comm op runs once ungated, to verify it, before it is timed
// (Backend.verify), and that first run loads them.
func (g *nativeGPU) reduceKernels(dev int) (after, pipe, load native.Function, err error) {
	d := g.devs[dev]
	if d.reduceModule != (native.Module{}) {
		return d.reduce, d.reducePipe, d.reduceLoad, nil
	}
	arch := fmt.Sprintf("sm_%d%d", d.info.CCMajor, d.info.CCMinor)
	cubin, err := g.l.nvrtc.CompileCached("reduce.cu", arch, kernelCacheDir())
	if err != nil {
		return after, pipe, load, fmt.Errorf("compiling the reduction kernels for %s: %w", arch, err)
	}
	m, err := g.l.drv.LoadModule(cubin)
	if err != nil {
		return after, pipe, load, err
	}
	if after, err = g.l.drv.Function(m, native.ReduceKernel); err == nil {
		if pipe, err = g.l.drv.Function(m, native.ReducePipeKernel); err == nil {
			load, err = g.l.drv.Function(m, native.ReduceLoadKernel)
		}
	}
	if err != nil {
		g.l.drv.UnloadModule(m)
		return after, pipe, load, err
	}
	d.reduceModule, d.reduce, d.reducePipe, d.reduceLoad = m, after, pipe, load
	return after, pipe, load, nil
}

// reduceArgs are the kernel arguments both reductions start with: out, n,
// the number of sources and 8 source pointers (unused slots repeat a
// valid one).
func (g *nativeGPU) reduceArgs(out bufRef, srcs []bufRef, n int64) ([]uint64, error) {
	if len(srcs) < 1 || len(srcs) > native.ReduceMaxSources {
		return nil, fmt.Errorf("a reduction of %d sources; 1..%d allowed", len(srcs), native.ReduceMaxSources)
	}
	for _, r := range append([]bufRef{out}, srcs...) {
		if r.off < 0 || r.off+2*n > g.bufs[r.b].bytes {
			return nil, fmt.Errorf("a reduction of %d elements at offset %d overruns a %d-byte buffer", n, r.off, g.bufs[r.b].bytes)
		}
	}
	args := []uint64{uint64(g.bufs[out.b].p) + uint64(out.off), uint64(n), uint64(len(srcs))}
	for i := range native.ReduceMaxSources {
		src := srcs[min(i, len(srcs)-1)]
		args = append(args, uint64(g.bufs[src.b].p)+uint64(src.off))
	}
	return args, nil
}

func (g *nativeGPU) Reduce(s streamID, out bufID, outOff int64, srcs []bufRef, n int64) error {
	st := g.streams[s]
	args, err := g.reduceArgs(bufRef{out, outOff}, srcs, n)
	if err != nil {
		return err
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	f, _, _, err := g.reduceKernels(st.dev)
	if err != nil {
		return err
	}
	// Eight elements (one 16-byte word) per thread; the grid strides.
	grid := min((n/8+native.ReduceThreads-1)/native.ReduceThreads, int64(4*g.devs[st.dev].info.SMs))
	return g.l.drv.Launch(f, uint32(max(grid, 1)), native.ReduceThreads, st.s, args...)
}

func (g *nativeGPU) ReducePipelined(s streamID, out bufRef, srcs []bufRef, n int64, ps pipeSync) error {
	st := g.streams[s]
	args, err := g.reduceArgs(out, srcs, n)
	if err != nil {
		return err
	}
	if ps.chunk < 1 || syncWords(len(srcs), ps.chunks(n))*4 > g.bufs[ps.sync].bytes {
		return fmt.Errorf("pipelined reduction: chunk %d for %d elements does not fit its %d-byte sync buffer", ps.chunk, n, g.bufs[ps.sync].bytes)
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	_, f, _, err := g.reduceKernels(st.dev)
	if err != nil {
		return err
	}
	count := uint64(0)
	if ps.countDone {
		count = 1
	}
	args = append(args, uint64(g.bufs[ps.sync].p), uint64(ps.chunk), uint64(ps.seq), uint64(ps.timeoutNs), count)
	return g.l.drv.Launch(f, uint32(max(ps.grid, 1)), native.ReduceThreads, st.s, args...)
}

// ReduceLoad launches the p2p-load reduction: the sources' pointers are
// this process's view of them (a peer GPU's buffer through peer access,
// or a peer process's through its CUDA IPC mapping), so the kernel loads
// them over NVLink. ctas is the grid, no more than the work fills.
func (g *nativeGPU) ReduceLoad(s streamID, out bufRef, srcs []bufRef, n int64, ctas int) error {
	st := g.streams[s]
	if ctas < 1 {
		return fmt.Errorf("a p2p-load reduction of %d CTAs; at least 1", ctas)
	}
	args, err := g.reduceArgs(out, srcs, n)
	if err != nil {
		return err
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	_, _, f, err := g.reduceKernels(st.dev)
	if err != nil {
		return err
	}
	return g.l.drv.Launch(f, uint32(loadGrid(n, ctas)), native.ReduceThreads, st.s, args...)
}

// WriteFlag and WaitFlag are stream memory operations: the stream's front
// end writes or polls the word, no kernel runs.
func (g *nativeGPU) WriteFlag(s streamID, w bufRef, v uint32) error {
	st := g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.WriteValue32(st.s, g.bufs[w.b].p+native.DevPtr(w.off), v)
}

func (g *nativeGPU) WaitFlag(s streamID, w bufRef, v uint32) error {
	st := g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.WaitValue32(st.s, g.bufs[w.b].p+native.DevPtr(w.off), v, native.StreamWaitValueGEQ)
}

func (g *nativeGPU) CopyPeer(dst bufID, dstOff int64, src bufID, srcOff int64, n int64, s streamID) error {
	st, d, sb := g.streams[s], g.bufs[dst], g.bufs[src]
	if dstOff+n > d.bytes || srcOff+n > sb.bytes {
		return fmt.Errorf("copy of %d bytes out of bounds (dst %d+%d of %d, src %d+%d of %d)", n, dst, dstOff, d.bytes, src, srcOff, sb.bytes)
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	if !d.host.IsZero() || !sb.host.IsZero() || d.peer || sb.peer {
		// A peer process's buffer, mapped with CUDA IPC, is a device
		// address of another GPU: cuMemcpyAsync moves it on this
		// stream's copy engine, as cuMemcpyPeerAsync would.
		// Between pinned host memory and a GPU, cuMemcpyAsync always runs
		// on a copy engine (unified addressing tells it the direction).
		return g.l.drv.Copy(d.p+native.DevPtr(dstOff), sb.p+native.DevPtr(srcOff), n, st.s)
	}
	if d.dev == sb.dev && g.l.drv.HasCopyEngineCopy() && !g.noEngineCopy {
		// A same-device copy through cuMemcpy*Async can run as a kernel,
		// which then waits behind a GEMM holding every SM: ask for a copy
		// engine instead. A driver that refuses the hint gets the plain
		// copy from then on.
		err := g.l.drv.CopyOnCopyEngine(d.p+native.DevPtr(dstOff), sb.p+native.DevPtr(srcOff), n, g.devs[d.dev].handle, st.s)
		if err == nil {
			return nil
		}
		g.noEngineCopy = true
	}
	return g.l.drv.CopyPeer(d.p+native.DevPtr(dstOff), g.devs[d.dev].ctx, sb.p+native.DevPtr(srcOff), g.devs[sb.dev].ctx, n, st.s)
}

// blasType maps an element type to cuBLASLt's operand and output types.
func blasType(d scenarios.DType) (ab, out int) {
	switch d {
	case scenarios.FP16:
		return native.TypeF16, native.TypeF16
	case scenarios.FP8:
		return native.TypeF8E4M3, native.TypeBF16
	case scenarios.FP32:
		return native.TypeF32, native.TypeF32
	}
	return native.TypeBF16, native.TypeBF16
}

func (g *nativeGPU) GEMM(s streamID, spec gemmSpec, a, b, d bufID) error {
	return g.GEMMAt(s, spec, bufRef{a, 0}, bufRef{b, 0}, bufRef{d, 0})
}

func (g *nativeGPU) GEMMAt(s streamID, spec gemmSpec, a, b, d bufRef) error {
	sz, osz := spec.DType.Size(), outputType(spec.DType).Size()
	for _, c := range []struct {
		r     bufRef
		bytes int64
		what  string
	}{{a, int64(spec.M) * int64(spec.K) * sz, "A"}, {b, int64(spec.K) * int64(spec.N) * sz, "B"}, {d, int64(spec.M) * int64(spec.N) * osz, "D"}} {
		if c.r.off < 0 || c.r.off+c.bytes > g.bufs[c.r.b].bytes {
			return fmt.Errorf("GEMM %dx%dx%d: operand %s of %d bytes at offset %d is out of its buffer's %d bytes", spec.M, spec.N, spec.K, c.what, c.bytes, c.r.off, g.bufs[c.r.b].bytes)
		}
	}
	st := g.streams[s]
	dev := g.devs[st.dev]
	if err := g.current(st.dev); err != nil {
		return err
	}
	plan, ok := dev.plans[spec]
	if !ok {
		ab, out := blasType(spec.DType)
		p, err := g.l.blas.PlanGEMM(dev.blas, spec.M, spec.N, spec.K, ab, out, spec.SMTarget, maxGEMMWorkspace)
		if err != nil {
			return err
		}
		if p.Workspace > 0 {
			ws, err := g.l.drv.Alloc(p.Workspace)
			if err != nil {
				g.l.blas.DestroyPlan(p)
				return err
			}
			dev.ws[spec] = ws
		}
		dev.plans[spec], plan = p, p
	}
	at := func(r bufRef) native.DevPtr { return g.bufs[r.b].p + native.DevPtr(r.off) }
	return g.l.blas.Run(dev.blas, plan, at(a), at(b), at(d), dev.ws[spec], st.s)
}

func (g *nativeGPU) StreamOp(s streamID, in, out bufID, bytes int64) error {
	st := g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	words := bytes / 16
	perCTA := int64(native.StreamThreads * native.StreamWordsPerThread)
	grid := (words + perCTA - 1) / perCTA
	if grid > 1<<31-1 {
		return fmt.Errorf("stream op of %d bytes needs %d CTAs, more than a launch allows", bytes, grid)
	}
	return g.l.drv.Launch(g.devs[st.dev].stream, uint32(grid), native.StreamThreads, st.s, uint64(g.bufs[in].p), uint64(g.bufs[out].p), uint64(words))
}

func (g *nativeGPU) CopyKernel(s streamID, segs []copySeg, ctas int) error {
	args, err := g.copyArgs(segs, ctas)
	if err != nil {
		return err
	}
	st := g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.Launch(g.devs[st.dev].copy, uint32(ctas), native.CopyThreads, st.s, args[:]...)
}

// CopyKernelTraced is CopyKernel with a record of its CTAs: CTA i writes
// native.CopyTraceWords 8-byte words at trace + 24i (the SM it ran on, its
// start and end in %globaltimer ns). For probes of the block scheduler.
func (g *nativeGPU) CopyKernelTraced(s streamID, segs []copySeg, ctas int, trace bufRef) error {
	return g.copyKernelTraced(s, segs, ctas, 0, 0, trace)
}

// CopyKernelTracedCluster is CopyKernelTraced launched in thread-block
// clusters of cluster CTAs, each CTA asking for shmem bytes of dynamic
// shared memory it does not use: more than half an SM's (114 KiB on an
// H200) keeps one CTA to an SM. How the block scheduler places a
// clustered kernel.
func (g *nativeGPU) CopyKernelTracedCluster(s streamID, segs []copySeg, ctas, cluster, shmem int, trace bufRef) error {
	if cluster < 1 || shmem < 0 {
		return fmt.Errorf("copy kernel: clusters of %d CTAs, %d bytes of shared memory", cluster, shmem)
	}
	return g.copyKernelTraced(s, segs, ctas, cluster, shmem, trace)
}

// copyKernelTraced launches the traced copy kernel: plainly for cluster
// 0, else in clusters with shmem bytes of dynamic shared memory a CTA.
func (g *nativeGPU) copyKernelTraced(s streamID, segs []copySeg, ctas, cluster, shmem int, trace bufRef) error {
	args, err := g.copyArgs(segs, ctas)
	if err != nil {
		return err
	}
	tb := g.bufs[trace.b]
	if need := int64(ctas) * native.CopyTraceWords * 8; trace.off < 0 || trace.off+need > tb.bytes {
		return fmt.Errorf("copy kernel trace: %d bytes at %d of a %d-byte buffer", need, trace.off, tb.bytes)
	}
	st := g.streams[s]
	if err := g.current(st.dev); err != nil {
		return err
	}
	all := append(args[:], uint64(tb.p)+uint64(trace.off))
	if cluster == 0 {
		return g.l.drv.Launch(g.devs[st.dev].traced, uint32(ctas), native.CopyThreads, st.s, all...)
	}
	return g.l.drv.LaunchCluster(g.devs[st.dev].traced, uint32(ctas), native.CopyThreads, uint32(cluster), uint32(shmem), st.s, all...)
}

// copyArgs checks a copy kernel's segments and returns its arguments:
// destination, source and 16-byte words of each segment, then the CTA
// that starts the second segment.
func (g *nativeGPU) copyArgs(segs []copySeg, ctas int) ([7]uint64, error) {
	var args [7]uint64
	if len(segs) < 1 || len(segs) > 2 || ctas < len(segs) {
		return args, fmt.Errorf("copy kernel: %d segments on %d CTAs; want 1 or 2 segments and a CTA each at least", len(segs), ctas)
	}
	for i, sg := range segs {
		d, sb := g.bufs[sg.dst.b], g.bufs[sg.src.b]
		if sg.bytes%16 != 0 || sg.dst.off+sg.bytes > d.bytes || sg.src.off+sg.bytes > sb.bytes {
			return args, fmt.Errorf("copy kernel: %d bytes out of bounds or not whole 16-byte words (dst %d+%d of %d, src %d+%d of %d)", sg.bytes, sg.dst.b, sg.dst.off, d.bytes, sg.src.b, sg.src.off, sb.bytes)
		}
		args[3*i], args[3*i+1], args[3*i+2] = uint64(d.p)+uint64(sg.dst.off), uint64(sb.p)+uint64(sg.src.off), uint64(sg.bytes/16)
	}
	args[6] = uint64(ctas)
	if len(segs) == 2 {
		// CTAs in proportion to the segments' sizes, at least one each.
		total := segs[0].bytes + segs[1].bytes
		args[6] = uint64(min(max(int64(ctas)*segs[0].bytes/max(total, 1), 1), int64(ctas)-1))
	}
	return args, nil
}

// communicators returns (creating once) the communicators of a config.
func (g *nativeGPU) communicators(spec commSpec) ([]native.Comm, error) {
	if c, ok := g.comms[spec]; ok {
		return c, nil
	}
	nccl := g.l.nccl
	cfg := native.CommConfig{MaxCTAs: spec.MaxCTAs, CTAPolicy: -1}
	if spec.CTAPolicy > 0 {
		cfg.CTAPolicy = spec.CTAPolicy
	}
	if spec.MaxCTAs > 0 {
		cfg.MinCTAs = min(spec.MaxCTAs, 1)
	}
	if g.procIDs != nil {
		return g.procCommunicator(spec, cfg)
	}
	id, err := nccl.NewUniqueID()
	if err != nil {
		return nil, err
	}
	if spec.Ranks < 1 || spec.Ranks > len(g.devs) {
		return nil, fmt.Errorf("a communicator of %d ranks on a node of %d GPUs", spec.Ranks, len(g.devs))
	}
	comms := make([]native.Comm, spec.Ranks)
	if err := nccl.GroupStart(); err != nil {
		return nil, err
	}
	var initErr error
	for r := range spec.Ranks {
		if err := g.current(r); err != nil {
			initErr = err
			break
		}
		if comms[r], err = nccl.InitRank(id, spec.Ranks, r, cfg); err != nil {
			initErr = err
			break
		}
	}
	if err := nccl.GroupEnd(); err != nil && initErr == nil {
		initErr = err
	}
	if initErr != nil {
		// The ranks made before the failure would be lost: abort them (a
		// communicator whose group failed is aborted, not destroyed).
		for r, c := range comms {
			if c != (native.Comm{}) {
				g.current(r)
				nccl.Abort(c)
			}
		}
		return nil, fmt.Errorf("creating NCCL communicators: %w", initErr)
	}
	g.comms[spec] = comms
	return comms, nil
}

// procCommunicator makes this process's rank of a communicator of one
// process per GPU, from the id the ranks shared (SetCommID). InitRank
// returns when every rank has called it.
func (g *nativeGPU) procCommunicator(spec commSpec, cfg native.CommConfig) ([]native.Comm, error) {
	pc, ok := g.procIDs[spec]
	if !ok {
		return nil, fmt.Errorf("no NCCL id was shared for the communicator %+v", spec)
	}
	id, err := native.UniqueIDFromBytes(pc.id)
	if err != nil {
		return nil, err
	}
	if err := g.current(0); err != nil {
		return nil, err
	}
	c, err := g.l.nccl.InitRank(id, pc.world, pc.rank, cfg)
	if err != nil {
		return nil, fmt.Errorf("creating rank %d of a %d-rank NCCL communicator: %w", pc.rank, pc.world, err)
	}
	comms := []native.Comm{c}
	g.comms[spec] = comms
	g.mu.Lock()
	g.live[c] = true
	g.mu.Unlock()
	return comms, nil
}

// NewUniqueID makes an NCCL unique id, for rank 0 to share.
func (g *nativeGPU) NewUniqueID() ([]byte, error) {
	id, err := g.l.nccl.NewUniqueID()
	if err != nil {
		return nil, err
	}
	return id.Bytes(), nil
}

// SetCommID sets the id and rank of this process's communicators of spec.
func (g *nativeGPU) SetCommID(spec commSpec, id []byte, world, rank int) {
	g.procIDs[spec] = procComm{id: id, world: world, rank: rank}
}

// Stamp launches the one-thread %globaltimer kernel on s.
func (g *nativeGPU) Stamp(s streamID, at bufRef) error {
	st := g.streams[s]
	nb := g.bufs[at.b]
	if at.off < 0 || at.off+8 > nb.bytes {
		return fmt.Errorf("a stamp at %d of a %d-byte buffer", at.off, nb.bytes)
	}
	if err := g.current(st.dev); err != nil {
		return err
	}
	return g.l.drv.Launch(g.devs[st.dev].stamp, 1, 1, st.s, uint64(nb.p)+uint64(at.off))
}

// UseSharedGate registers the ranks' page and makes its first word the
// start gate.
func (g *nativeGPU) UseSharedGate(page []byte) error {
	if !g.gate.IsZero() {
		return errors.New("the start gate is in use already")
	}
	if len(page) < 4 {
		return fmt.Errorf("a shared start gate of %d bytes", len(page))
	}
	if err := g.current(0); err != nil {
		return err
	}
	p := unsafe.Pointer(&page[0])
	if err := g.l.drv.RegisterHost(p, int64(len(page))); err != nil {
		return fmt.Errorf("pinning the ranks' shared start gate: %w", err)
	}
	w := native.HostWordAt(p)
	ptr, err := g.l.drv.HostWordDevPtr(w)
	if err != nil {
		return errors.Join(err, g.l.drv.UnregisterHost(p))
	}
	g.gate, g.gatePtr, g.gateShared = w, []native.DevPtr{ptr}, p
	return nil
}

// AbortAsync aborts every communicator (ncclCommAbort): from the backend's
// watchdog while the worker may be blocked in NCCL.
func (g *nativeGPU) AbortAsync() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for c := range g.live {
		if !g.aborted[c] {
			g.aborted[c] = true
			g.l.nccl.Abort(c)
		}
	}
}

// release aborts or destroys a communicator unless AbortAsync aborted it.
func (g *nativeGPU) release(c native.Comm, destroy bool) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.live, c)
	if g.aborted[c] {
		delete(g.aborted, c)
		return nil
	}
	if destroy {
		return g.l.nccl.Destroy(c)
	}
	return g.l.nccl.Abort(c)
}

func (g *nativeGPU) Collective(c collective, send, recv []bufID, streams []streamID) error {
	at := func(ids []bufID) []bufRef {
		out := make([]bufRef, len(ids))
		for i, id := range ids {
			out[i] = bufRef{id, 0}
		}
		return out
	}
	return g.CollectiveAt(c, at(send), at(recv), streams)
}

func (g *nativeGPU) CollectiveAt(c collective, send, recv []bufRef, streams []streamID) error {
	local := c.Comm.Ranks // the ranks this process drives
	if g.procIDs != nil {
		local = 1
	}
	if len(send) < local || len(recv) < local || len(streams) < local {
		return fmt.Errorf("%s of %d ranks given %d send, %d receive buffers and %d streams", c.Kind, c.Comm.Ranks, len(send), len(recv), len(streams))
	}
	sendN, recvN := 2*sendElems(c, c.Comm.Ranks), 2*recvElems(c, c.Comm.Ranks)
	for r := range local {
		if send[r].off < 0 || send[r].off+sendN > g.bufs[send[r].b].bytes || recv[r].off < 0 || recv[r].off+recvN > g.bufs[recv[r].b].bytes {
			return fmt.Errorf("%s on rank %d: %d bytes sent at %d or %d received at %d are out of their buffers", c.Kind, r, sendN, send[r].off, recvN, recv[r].off)
		}
	}
	comms, err := g.communicators(c.Comm)
	if err != nil {
		return err
	}
	nccl := g.l.nccl
	if err := nccl.GroupStart(); err != nil {
		return err
	}
	var callErr error
	for r := range comms {
		if err := g.current(r); err != nil {
			callErr = err
			break
		}
		sb, rb, st := g.bufs[send[r].b].p+native.DevPtr(send[r].off), g.bufs[recv[r].b].p+native.DevPtr(recv[r].off), g.streams[streams[r]].s
		switch c.Kind {
		case scenarios.AllGather:
			callErr = nccl.AllGather(sb, rb, c.Count, native.NCCLBF16, comms[r], st)
		case scenarios.ReduceScatter:
			callErr = nccl.ReduceScatter(sb, rb, c.Count, native.NCCLBF16, comms[r], st)
		case scenarios.AllReduce:
			callErr = nccl.AllReduce(sb, rb, c.Count, native.NCCLBF16, comms[r], st)
		case scenarios.AllToAll:
			callErr = nccl.AlltoAll(sb, rb, c.Count, 2, native.NCCLBF16, c.Comm.Ranks, comms[r], st)
		default:
			callErr = fmt.Errorf("collective %q is not supported", c.Kind)
		}
		if callErr != nil {
			break
		}
	}
	if err := nccl.GroupEnd(); err != nil && callErr == nil {
		callErr = err
	}
	return callErr
}

func (g *nativeGPU) Abort() error {
	var errs []error
	// Aborted communicators take their windows along: forget them, so a
	// later Free does not deregister a stale handle on a new communicator.
	for _, b := range g.bufs {
		clear(b.windows)
	}
	for spec, comms := range g.comms {
		for r, c := range comms {
			// Aborted even when its context cannot be made current.
			errs = append(errs, g.current(r))
			errs = append(errs, g.release(c, false))
		}
		delete(g.comms, spec)
	}
	return errors.Join(errs...)
}

func (g *nativeGPU) Synchronize(dev int) error {
	if err := g.current(dev); err != nil {
		return err
	}
	return g.l.drv.Synchronize()
}

// Close frees everything: buffers, events, streams, communicators, plans,
// green contexts, modules, handles, and releases the primary contexts. A
// resource whose context cannot be made current is still released (the
// driver answers for it): nothing is skipped, every failure is reported.
func (g *nativeGPU) Close() error {
	drv := g.l.drv
	var errs []error
	for i := range g.devs {
		if err := g.current(i); err != nil {
			errs = append(errs, err)
			continue
		}
		errs = append(errs, drv.Synchronize())
	}
	if g.gateShared != nil {
		errs = append(errs, drv.UnregisterHost(g.gateShared))
		g.gateShared = nil
	} else {
		errs = append(errs, drv.FreeHostWord(g.gate))
	}
	g.gate = native.HostWord{}
	if !g.spinStop.IsZero() {
		errs = append(errs, drv.FreeHostWord(g.spinStop))
		g.spinStop = native.HostWord{}
	}
	// Buffers first: freeing one drops its windows, which needs its communicator.
	for id := range g.bufs {
		errs = append(errs, g.Free(id))
	}
	for spec, comms := range g.comms {
		for r, c := range comms {
			errs = append(errs, g.current(r))
			errs = append(errs, g.release(c, true))
		}
		delete(g.comms, spec)
	}
	for id, e := range g.events {
		errs = append(errs, g.current(e.dev))
		errs = append(errs, drv.DestroyEvent(e.e))
		delete(g.events, id)
	}
	for id, s := range g.streams {
		errs = append(errs, g.current(s.dev))
		errs = append(errs, drv.DestroyStream(s.s))
		delete(g.streams, id)
	}
	for _, d := range g.devs {
		errs = append(errs, g.releaseDevice(d)...)
	}
	g.devs = nil
	return errors.Join(errs...)
}

// releaseDevice releases what one GPU holds itself: GEMM plans and their
// workspaces, green contexts, modules, the cuBLASLt handle and, last, the
// primary context. It makes the context current first, and releases
// everything even when that fails.
func (g *nativeGPU) releaseDevice(d *device) []error {
	drv := g.l.drv
	if d.ctx == (native.Context{}) {
		return nil // nothing was acquired on it
	}
	errs := []error{drv.SetCurrent(d.ctx)}
	for spec, p := range d.plans {
		g.l.blas.DestroyPlan(p)
		if ws, ok := d.ws[spec]; ok {
			errs = append(errs, drv.Free(ws))
		}
	}
	for _, split := range d.green {
		for i := len(split) - 1; i >= 0; i-- { // what was made from the rest before the rest
			if split[i] != (native.GreenContext{}) {
				errs = append(errs, drv.DestroyGreenContext(split[i]))
			}
		}
	}
	if d.module != (native.Module{}) {
		errs = append(errs, drv.UnloadModule(d.module))
	}
	if d.reduceModule != (native.Module{}) {
		errs = append(errs, drv.UnloadModule(d.reduceModule))
	}
	if d.blas != (native.BLASHandle{}) {
		g.l.blas.DestroyHandle(d.blas)
	}
	errs = append(errs, drv.ReleasePrimaryContext(d.handle))
	d.plans, d.ws, d.green = map[gemmSpec]*native.GEMMPlan{}, map[gemmSpec]native.DevPtr{}, map[int][3]native.GreenContext{}
	d.module, d.reduceModule, d.blas, d.ctx = native.Module{}, native.Module{}, native.BLASHandle{}, native.Context{}
	d.reduce, d.reducePipe, d.reduceLoad = native.Function{}, native.Function{}, native.Function{}
	return errs
}
