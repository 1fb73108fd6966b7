package cuda

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/c3lab/c3lab/native"
)

// Fakes of the NVIDIA libraries under nativeGPU (the seam in libs.go).
// They compute nothing; they keep a ledger of every resource handed out
// (contexts retained, cuBLASLt handles and plans, modules, streams,
// events, device and pinned host memory, the gate word, green contexts,
// communicators, symmetric memory, windows) and fail one chosen call, so
// a test can fail each call in turn and check what is left.

// ledger is the fakes' shared state.
type ledger struct {
	devs int
	// calls counts the calls that can fail; call failAt (1-based) fails.
	calls, failAt int
	failed        string
	live          map[string]int    // resource -> times acquired and not released
	owner         map[string]int    // resource -> device current when it was acquired
	problems      []string          // double releases, uses after release, ...
	current       int               // device whose context is current; -1 none
	groups        int               // NCCL group depth
	windowComm    map[string]string // window -> its communicator
	next          uint64            // the next fake device address
	ctxs          []native.Context
}

func newLedger(devs, failAt int) *ledger {
	l := &ledger{devs: devs, failAt: failAt, live: map[string]int{}, owner: map[string]int{}, windowComm: map[string]string{},
		current: -1, next: 1 << 32}
	for range devs {
		l.ctxs = append(l.ctxs, native.FakeContext(handle()))
	}
	return l
}

// libs returns the fakes as the backend's libraries.
func (l *ledger) libs() *libs {
	return &libs{drv: &fakeDriver{l}, blas: &fakeBLAS{l}, nccl: &fakeNCCL{l}, nvrtc: &fakeNVRTC{l}}
}

// handle is a fresh pointer for a fake handle.
func handle() unsafe.Pointer { return unsafe.Pointer(new(byte)) }

// errInjected is the failure the ledger injects.
func errInjected(call string) error {
	return &native.CUDAError{Call: call, Code: 999, Name: "CUDA_ERROR_INJECTED", Msg: "a failure the test injected"}
}

// call counts a call that can fail and fails it when its turn has come.
func (l *ledger) call(name string) error {
	l.calls++
	if l.calls == l.failAt {
		l.failed = name
		return errInjected(name)
	}
	return nil
}

func (l *ledger) problem(format string, a ...any) {
	l.problems = append(l.problems, fmt.Sprintf(format, a...))
}

func (l *ledger) acquire(key string) {
	l.live[key]++
	l.owner[key] = l.current
}

// release records one release of key: a release of what is not held is a
// double release (or of something never acquired).
func (l *ledger) release(key string) {
	if l.live[key] == 0 {
		l.problem("%s released but not held", key)
		return
	}
	if l.live[key]--; l.live[key] == 0 {
		delete(l.live, key)
	}
}

// use checks that a call is given a resource that is held.
func (l *ledger) use(call, key string) {
	if l.live[key] == 0 {
		l.problem("%s given %s, which is not held", call, key)
	}
}

// leaks lists what is still held.
func (l *ledger) leaks() []string {
	var out []string
	for k, n := range l.live {
		out = append(out, fmt.Sprintf("%s x%d", k, n))
	}
	slices.Sort(out)
	return out
}

func (l *ledger) addr(bytes int64) native.DevPtr {
	p := l.next
	l.next += uint64(max(bytes, 1)+(1<<20)) &^ ((1 << 20) - 1)
	return native.DevPtr(p)
}

func key(kind string, h any) string { return fmt.Sprintf("%s %v", kind, h) }

// fakeDriver is the CUDA driver: two or more H200-like devices.
type fakeDriver struct{ l *ledger }

func (d *fakeDriver) Init() error               { return d.l.call("cuInit") }
func (d *fakeDriver) DeviceCount() (int, error) { return d.l.devs, d.l.call("cuDeviceGetCount") }
func (d *fakeDriver) Device(i int) (native.Device, error) {
	return native.Device(i), d.l.call("cuDeviceGet")
}
func (d *fakeDriver) DeviceName(native.Device) (string, error) {
	return "Fake H200", d.l.call("cuDeviceGetName")
}
func (d *fakeDriver) UUID(native.Device) (string, error) {
	return "GPU-fake", d.l.call("cuDeviceGetUuid")
}
func (d *fakeDriver) Attribute(_ native.Device, attr int) (int, error) {
	v := map[int]int{native.AttrMultiprocessorCount: 132, native.AttrAsyncEngineCount: 3, native.AttrComputeCapMajor: 9}[attr]
	return v, d.l.call("cuDeviceGetAttribute")
}
func (d *fakeDriver) TotalMemory(native.Device) (int64, error) {
	return 141 << 30, d.l.call("cuDeviceTotalMem")
}
func (d *fakeDriver) HasGreenContexts() bool  { return true }
func (d *fakeDriver) HasCopyEngineCopy() bool { return true }

func (d *fakeDriver) PrimaryContext(dev native.Device) (native.Context, error) {
	if err := d.l.call("cuDevicePrimaryCtxRetain"); err != nil {
		return native.Context{}, err
	}
	d.l.acquire(fmt.Sprintf("primary context %d", dev))
	return d.l.ctxs[dev], nil
}

func (d *fakeDriver) ReleasePrimaryContext(dev native.Device) error {
	err := d.l.call("cuDevicePrimaryCtxRelease")
	for k, owner := range d.l.owner {
		if owner == int(dev) && d.l.live[k] > 0 && !strings.HasPrefix(k, "primary context") {
			d.l.problem("primary context %d released while %s is held", dev, k)
		}
	}
	d.l.release(fmt.Sprintf("primary context %d", dev))
	return err
}

func (d *fakeDriver) SetCurrent(ctx native.Context) error {
	dev := slices.Index(d.l.ctxs, ctx)
	if dev < 0 {
		d.l.problem("cuCtxSetCurrent given an unknown context")
	} else {
		d.l.use("cuCtxSetCurrent", fmt.Sprintf("primary context %d", dev))
	}
	if err := d.l.call("cuCtxSetCurrent"); err != nil {
		return err
	}
	d.l.current = dev
	return nil
}

func (d *fakeDriver) Synchronize() error { return d.l.call("cuCtxSynchronize") }
func (d *fakeDriver) PriorityRange() (int, int, error) {
	return 0, -5, d.l.call("cuCtxGetStreamPriorityRange")
}
func (d *fakeDriver) CanAccessPeer(native.Device, native.Device) (bool, error) {
	return true, d.l.call("cuDeviceCanAccessPeer")
}
func (d *fakeDriver) EnablePeerAccess(native.Context) error { return d.l.call("cuCtxEnablePeerAccess") }
func (d *fakeDriver) MemInfo() (int64, int64, error) {
	return 140 << 30, 141 << 30, d.l.call("cuMemGetInfo")
}

func (d *fakeDriver) Alloc(bytes int64) (native.DevPtr, error) {
	if err := d.l.call("cuMemAlloc"); err != nil {
		return 0, err
	}
	p := d.l.addr(bytes)
	d.l.acquire(key("device memory", p))
	return p, nil
}

func (d *fakeDriver) Free(p native.DevPtr) error {
	err := d.l.call("cuMemFree")
	d.l.release(key("device memory", p))
	return err
}

// IPCHandle exports device memory this process holds: the handle is its
// address, in 64 bytes.
func (d *fakeDriver) IPCHandle(p native.DevPtr) ([]byte, error) {
	d.l.use("cuIpcGetMemHandle", key("device memory", p))
	if err := d.l.call("cuIpcGetMemHandle"); err != nil {
		return nil, err
	}
	h := make([]byte, native.IPCHandleSize)
	binary.LittleEndian.PutUint64(h, uint64(p))
	return h, nil
}

// OpenIPCHandle maps a handle at a new address, held until CloseIPC.
func (d *fakeDriver) OpenIPCHandle(handle []byte) (native.DevPtr, error) {
	if err := d.l.call("cuIpcOpenMemHandle"); err != nil {
		return 0, err
	}
	p := d.l.addr(1)
	d.l.acquire(key("ipc mapping", p))
	return p, nil
}

func (d *fakeDriver) CloseIPC(p native.DevPtr) error {
	err := d.l.call("cuIpcCloseMemHandle")
	d.l.release(key("ipc mapping", p))
	return err
}

func (d *fakeDriver) AllocHost(bytes int64) (native.HostBuffer, error) {
	if err := d.l.call("cuMemHostAlloc"); err != nil {
		return native.HostBuffer{}, err
	}
	h := native.FakeHostBuffer(make([]byte, bytes))
	d.l.acquire(key("host memory", h))
	return h, nil
}

func (d *fakeDriver) HostDevPtr(h native.HostBuffer) (native.DevPtr, error) {
	d.l.use("cuMemHostGetDevicePointer", key("host memory", h))
	return d.l.addr(int64(len(h.Bytes()))), d.l.call("cuMemHostGetDevicePointer")
}

// FreeHost, like the real one, makes no call for an unallocated buffer.
func (d *fakeDriver) FreeHost(h native.HostBuffer) error {
	if h.IsZero() {
		return nil
	}
	err := d.l.call("cuMemFreeHost")
	d.l.release(key("host memory", h))
	return err
}

func (d *fakeDriver) AllocHostWord() (native.HostWord, error) {
	if err := d.l.call("cuMemHostAlloc"); err != nil {
		return native.HostWord{}, err
	}
	w := native.FakeHostWord(new(uint32))
	d.l.acquire(key("gate word", w))
	return w, nil
}

func (d *fakeDriver) HostWordDevPtr(w native.HostWord) (native.DevPtr, error) {
	d.l.use("cuMemHostGetDevicePointer", key("gate word", w))
	return d.l.addr(4), d.l.call("cuMemHostGetDevicePointer")
}

func (d *fakeDriver) FreeHostWord(w native.HostWord) error {
	if w.IsZero() {
		return nil
	}
	err := d.l.call("cuMemFreeHost")
	d.l.release(key("gate word", w))
	return err
}

func (d *fakeDriver) RegisterHost(p unsafe.Pointer, _ int64) error {
	if err := d.l.call("cuMemHostRegister"); err != nil {
		return err
	}
	d.l.acquire(key("registered host memory", p))
	return nil
}

func (d *fakeDriver) UnregisterHost(p unsafe.Pointer) error {
	err := d.l.call("cuMemHostUnregister")
	d.l.release(key("registered host memory", p))
	return err
}

func (d *fakeDriver) CopyToDevice(native.DevPtr, []byte) error { return d.l.call("cuMemcpyHtoD") }
func (d *fakeDriver) CopyToHost([]byte, native.DevPtr) error   { return d.l.call("cuMemcpyDtoH") }

func (d *fakeDriver) NewStream(int) (native.Stream, error) {
	if err := d.l.call("cuStreamCreateWithPriority"); err != nil {
		return native.Stream{}, err
	}
	s := native.FakeStream(handle())
	d.l.acquire(key("stream", s))
	return s, nil
}

// GreenPartition is one call here: native's own cleanup inside it is C
// and Go of package native, not nativeGPU's.
func (d *fakeDriver) GreenPartition(_ native.Device, sms int, wantRest bool) (group, rest native.GreenContext, groupSMs, restSMs int, err error) {
	if err = d.l.call("cuGreenCtxCreate"); err != nil {
		return
	}
	group, groupSMs, restSMs = native.FakeGreenContext(handle()), sms, 132-sms
	d.l.acquire(key("green context", group))
	if wantRest && restSMs > 0 {
		rest = native.FakeGreenContext(handle())
		d.l.acquire(key("green context", rest))
	}
	return
}

func (d *fakeDriver) StructuredGroup(_ native.Device, g native.GreenContext, sms int) (native.GreenContext, int, error) {
	d.l.use("cuGreenCtxGetDevResource", key("green context", g))
	if err := d.l.call("cuGreenCtxCreate"); err != nil {
		return native.GreenContext{}, 0, err
	}
	gc := native.FakeGreenContext(handle())
	d.l.acquire(key("green context", gc))
	return gc, sms, nil
}

func (d *fakeDriver) GreenStream(g native.GreenContext, _ int) (native.Stream, error) {
	d.l.use("cuGreenCtxStreamCreate", key("green context", g))
	if err := d.l.call("cuGreenCtxStreamCreate"); err != nil {
		return native.Stream{}, err
	}
	s := native.FakeStream(handle())
	d.l.acquire(key("stream", s))
	return s, nil
}

func (d *fakeDriver) DestroyGreenContext(g native.GreenContext) error {
	err := d.l.call("cuGreenCtxDestroy")
	d.l.release(key("green context", g))
	return err
}

func (d *fakeDriver) DestroyStream(s native.Stream) error {
	err := d.l.call("cuStreamDestroy")
	d.l.release(key("stream", s))
	return err
}

func (d *fakeDriver) NewEvent(int) (native.Event, error) {
	if err := d.l.call("cuEventCreate"); err != nil {
		return native.Event{}, err
	}
	e := native.FakeEvent(handle())
	d.l.acquire(key("event", e))
	return e, nil
}

func (d *fakeDriver) DestroyEvent(e native.Event) error {
	err := d.l.call("cuEventDestroy")
	d.l.release(key("event", e))
	return err
}

func (d *fakeDriver) Record(e native.Event, s native.Stream) error {
	d.l.use("cuEventRecord", key("event", e))
	d.l.use("cuEventRecord", key("stream", s))
	return d.l.call("cuEventRecord")
}

func (d *fakeDriver) WaitEvent(s native.Stream, e native.Event) error {
	d.l.use("cuStreamWaitEvent", key("event", e))
	d.l.use("cuStreamWaitEvent", key("stream", s))
	return d.l.call("cuStreamWaitEvent")
}

func (d *fakeDriver) EventDone(e native.Event) (bool, error) {
	d.l.use("cuEventQuery", key("event", e))
	return true, d.l.call("cuEventQuery")
}

func (d *fakeDriver) Elapsed(a, b native.Event) (int64, error) {
	d.l.use("cuEventElapsedTime", key("event", a))
	d.l.use("cuEventElapsedTime", key("event", b))
	return 1000, d.l.call("cuEventElapsedTime")
}

func (d *fakeDriver) LoadModule([]byte) (native.Module, error) {
	if err := d.l.call("cuModuleLoadData"); err != nil {
		return native.Module{}, err
	}
	m := native.FakeModule(handle())
	d.l.acquire(key("module", m))
	return m, nil
}

func (d *fakeDriver) Function(m native.Module, _ string) (native.Function, error) {
	d.l.use("cuModuleGetFunction", key("module", m))
	return native.FakeFunction(handle()), d.l.call("cuModuleGetFunction")
}

func (d *fakeDriver) UnloadModule(m native.Module) error {
	err := d.l.call("cuModuleUnload")
	d.l.release(key("module", m))
	return err
}

func (d *fakeDriver) Launch(_ native.Function, _, _ uint32, s native.Stream, _ ...uint64) error {
	d.l.use("cuLaunchKernel", key("stream", s))
	return d.l.call("cuLaunchKernel")
}

func (d *fakeDriver) LaunchCluster(_ native.Function, _, _, _, _ uint32, s native.Stream, _ ...uint64) error {
	d.l.use("cuLaunchKernelEx", key("stream", s))
	return d.l.call("cuLaunchKernelEx")
}

func (d *fakeDriver) WaitValue32(s native.Stream, _ native.DevPtr, _ uint32, _ int) error {
	d.l.use("cuStreamWaitValue32", key("stream", s))
	return d.l.call("cuStreamWaitValue32")
}

func (d *fakeDriver) WriteValue32(s native.Stream, _ native.DevPtr, _ uint32) error {
	d.l.use("cuStreamWriteValue32", key("stream", s))
	return d.l.call("cuStreamWriteValue32")
}

func (d *fakeDriver) Copy(_, _ native.DevPtr, _ int64, s native.Stream) error {
	d.l.use("cuMemcpyAsync", key("stream", s))
	return d.l.call("cuMemcpyAsync")
}

func (d *fakeDriver) CopyOnCopyEngine(_, _ native.DevPtr, _ int64, _ native.Device, s native.Stream) error {
	d.l.use("cuMemcpyBatchAsync", key("stream", s))
	return d.l.call("cuMemcpyBatchAsync")
}

func (d *fakeDriver) CopyPeer(_ native.DevPtr, _ native.Context, _ native.DevPtr, _ native.Context, _ int64, s native.Stream) error {
	d.l.use("cuMemcpyPeerAsync", key("stream", s))
	return d.l.call("cuMemcpyPeerAsync")
}

// fakeBLAS is cuBLASLt.
type fakeBLAS struct{ l *ledger }

func (b *fakeBLAS) NewHandle() (native.BLASHandle, error) {
	if err := b.l.call("cublasLtCreate"); err != nil {
		return native.BLASHandle{}, err
	}
	h := native.FakeBLASHandle(handle())
	b.l.acquire(key("cuBLASLt handle", h))
	return h, nil
}

func (b *fakeBLAS) DestroyHandle(h native.BLASHandle) { b.l.release(key("cuBLASLt handle", h)) }

func (b *fakeBLAS) PlanGEMM(h native.BLASHandle, _, _, _, _, _, _ int, _ int64) (*native.GEMMPlan, error) {
	b.l.use("cuBLASLt plan", key("cuBLASLt handle", h))
	if err := b.l.call("cuBLASLt plan"); err != nil {
		return nil, err
	}
	p := &native.GEMMPlan{Workspace: 1 << 20}
	b.l.acquire(fmt.Sprintf("GEMM plan %p", p))
	return p, nil
}

func (b *fakeBLAS) DestroyPlan(p *native.GEMMPlan) { b.l.release(fmt.Sprintf("GEMM plan %p", p)) }

func (b *fakeBLAS) Run(h native.BLASHandle, p *native.GEMMPlan, _, _, _, _ native.DevPtr, s native.Stream) error {
	b.l.use("cublasLtMatmul", key("cuBLASLt handle", h))
	b.l.use("cublasLtMatmul", fmt.Sprintf("GEMM plan %p", p))
	b.l.use("cublasLtMatmul", key("stream", s))
	return b.l.call("cublasLtMatmul")
}

// fakeNCCL is NCCL 2.28 with symmetric windows.
type fakeNCCL struct{ l *ledger }

func (n *fakeNCCL) Version() (int, error) { return 22803, n.l.call("ncclGetVersion") }
func (n *fakeNCCL) HasWindows() bool      { return true }
func (n *fakeNCCL) NewUniqueID() (native.UniqueID, error) {
	return native.UniqueID{}, n.l.call("ncclGetUniqueId")
}

func (n *fakeNCCL) GroupStart() error {
	if err := n.l.call("ncclGroupStart"); err != nil {
		return err
	}
	n.l.groups++
	return nil
}

// GroupEnd closes the group even when it fails.
func (n *fakeNCCL) GroupEnd() error {
	if n.l.groups == 0 {
		n.l.problem("ncclGroupEnd without a group")
	}
	n.l.groups--
	return n.l.call("ncclGroupEnd")
}

func (n *fakeNCCL) InitRank(native.UniqueID, int, int, native.CommConfig) (native.Comm, error) {
	if err := n.l.call("ncclCommInitRankConfig"); err != nil {
		return native.Comm{}, err
	}
	c := native.FakeComm(handle())
	n.l.acquire(key("communicator", c))
	return c, nil
}

// Destroy expects the communicator's windows deregistered first.
func (n *fakeNCCL) Destroy(c native.Comm) error {
	err := n.l.call("ncclCommDestroy")
	for _, w := range n.windows(c) {
		n.l.problem("%s destroyed with %s registered", key("communicator", c), w)
		n.l.release(w)
	}
	n.l.release(key("communicator", c))
	return err
}

// Abort takes the communicator's windows along.
func (n *fakeNCCL) Abort(c native.Comm) error {
	err := n.l.call("ncclCommAbort")
	for _, w := range n.windows(c) {
		n.l.release(w)
	}
	n.l.release(key("communicator", c))
	return err
}

// windows lists the live windows of a communicator.
func (n *fakeNCCL) windows(c native.Comm) []string {
	var out []string
	for w, owner := range n.l.windowComm {
		if owner == key("communicator", c) && n.l.live[w] > 0 {
			out = append(out, w)
		}
	}
	return out
}

func (n *fakeNCCL) collective(name string, c native.Comm, s native.Stream) error {
	n.l.use(name, key("communicator", c))
	n.l.use(name, key("stream", s))
	return n.l.call(name)
}

func (n *fakeNCCL) AllGather(_, _ native.DevPtr, _ int64, _ int, c native.Comm, s native.Stream) error {
	return n.collective("ncclAllGather", c, s)
}
func (n *fakeNCCL) ReduceScatter(_, _ native.DevPtr, _ int64, _ int, c native.Comm, s native.Stream) error {
	return n.collective("ncclReduceScatter", c, s)
}
func (n *fakeNCCL) AllReduce(_, _ native.DevPtr, _ int64, _ int, c native.Comm, s native.Stream) error {
	return n.collective("ncclAllReduce", c, s)
}
func (n *fakeNCCL) AlltoAll(_, _ native.DevPtr, _, _ int64, _, _ int, c native.Comm, s native.Stream) error {
	return n.collective("ncclAlltoAll", c, s)
}

func (n *fakeNCCL) MemAlloc(bytes int64) (native.DevPtr, error) {
	if err := n.l.call("ncclMemAlloc"); err != nil {
		return 0, err
	}
	p := n.l.addr(bytes)
	n.l.acquire(key("symmetric memory", p))
	return p, nil
}

func (n *fakeNCCL) MemFree(p native.DevPtr) error {
	err := n.l.call("ncclMemFree")
	n.l.release(key("symmetric memory", p))
	return err
}

// RegisterWindows is one call, as native's is one group: all windows or
// none.
func (n *fakeNCCL) RegisterWindows(comms []native.Comm, _ []native.DevPtr, _ int64, setCurrent func(rank int) error) ([]native.Window, error) {
	if err := n.l.call("ncclCommWindowRegister"); err != nil {
		return nil, err
	}
	for r, c := range comms {
		n.l.use("ncclCommWindowRegister", key("communicator", c))
		if err := setCurrent(r); err != nil {
			return nil, err
		}
	}
	out := make([]native.Window, len(comms))
	for r := range out {
		out[r] = native.FakeWindow(handle())
		n.l.acquire(key("window", out[r]))
		n.l.owner[key("window", out[r])] = r
		n.l.windowComm[key("window", out[r])] = key("communicator", comms[r])
	}
	return out, nil
}

func (n *fakeNCCL) DeregisterWindow(c native.Comm, w native.Window) error {
	n.l.use("ncclCommWindowDeregister", key("communicator", c))
	err := n.l.call("ncclCommWindowDeregister")
	n.l.release(key("window", w))
	return err
}

// fakeNVRTC compiles anything.
type fakeNVRTC struct{ l *ledger }

func (r *fakeNVRTC) CompileCached(string, string, string) ([]byte, error) {
	return []byte("cubin"), r.l.call("nvrtcCompileProgram")
}
