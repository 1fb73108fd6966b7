package cuda

import (
	"unsafe"

	"github.com/c3lab/c3lab/native"
)

// The seam between nativeGPU and NVIDIA's libraries: exactly the calls
// nativeGPU makes of package native, one interface per library. The real
// backend fills libs with native's types (openLibs); the tests fill it
// with fakes that count every resource and fail any call on demand
// (nativegpu_fault_test.go), which is how nativeGPU is shown to release
// everything it acquired on every error path.

// driverAPI is the CUDA driver, as *native.Driver offers it.
type driverAPI interface {
	Init() error
	DeviceCount() (int, error)
	Device(i int) (native.Device, error)
	DeviceName(dev native.Device) (string, error)
	UUID(dev native.Device) (string, error)
	Attribute(dev native.Device, attr int) (int, error)
	TotalMemory(dev native.Device) (int64, error)
	HasGreenContexts() bool
	HasCopyEngineCopy() bool

	// Contexts: a retained primary context is released once.
	PrimaryContext(dev native.Device) (native.Context, error)
	ReleasePrimaryContext(dev native.Device) error
	SetCurrent(ctx native.Context) error
	Synchronize() error
	PriorityRange() (least, greatest int, err error)
	CanAccessPeer(dev, peer native.Device) (bool, error)
	EnablePeerAccess(peer native.Context) error

	// Memory: device memory, pinned host memory and the start gate's word.
	MemInfo() (free, total int64, err error)
	Alloc(bytes int64) (native.DevPtr, error)
	Free(p native.DevPtr) error
	AllocHost(bytes int64) (native.HostBuffer, error)
	HostDevPtr(h native.HostBuffer) (native.DevPtr, error)
	FreeHost(h native.HostBuffer) error
	AllocHostWord() (native.HostWord, error)
	HostWordDevPtr(w native.HostWord) (native.DevPtr, error)
	FreeHostWord(w native.HostWord) error
	// RegisterHost and UnregisterHost pin memory CUDA did not allocate:
	// the start-gate page the processes of one node share.
	RegisterHost(p unsafe.Pointer, bytes int64) error
	UnregisterHost(p unsafe.Pointer) error
	// IPCHandle, OpenIPCHandle and CloseIPC are CUDA IPC: one process per
	// GPU maps its peers' buffers (an open mapping is closed once).
	IPCHandle(p native.DevPtr) ([]byte, error)
	OpenIPCHandle(handle []byte) (native.DevPtr, error)
	CloseIPC(p native.DevPtr) error
	CopyToDevice(dst native.DevPtr, src []byte) error
	CopyToHost(dst []byte, src native.DevPtr) error

	// Streams, green contexts and events.
	NewStream(priority int) (native.Stream, error)
	GreenPartition(dev native.Device, sms int, wantRest bool) (group, rest native.GreenContext, groupSMs, restSMs int, err error)
	StructuredGroup(dev native.Device, g native.GreenContext, sms int) (native.GreenContext, int, error)
	GreenStream(g native.GreenContext, priority int) (native.Stream, error)
	DestroyGreenContext(g native.GreenContext) error
	DestroyStream(s native.Stream) error
	NewEvent(flags int) (native.Event, error)
	DestroyEvent(e native.Event) error
	Record(e native.Event, s native.Stream) error
	WaitEvent(s native.Stream, e native.Event) error
	EventDone(e native.Event) (bool, error)
	Elapsed(start, end native.Event) (int64, error)

	// Modules and the work c3lab enqueues itself.
	LoadModule(image []byte) (native.Module, error)
	Function(m native.Module, name string) (native.Function, error)
	UnloadModule(m native.Module) error
	Launch(f native.Function, grid, block uint32, s native.Stream, args ...uint64) error
	LaunchCluster(f native.Function, grid, block, cluster, shmem uint32, s native.Stream, args ...uint64) error
	WaitValue32(s native.Stream, addr native.DevPtr, v uint32, flags int) error
	WriteValue32(s native.Stream, addr native.DevPtr, v uint32) error
	Copy(dst, src native.DevPtr, bytes int64, s native.Stream) error
	CopyOnCopyEngine(dst, src native.DevPtr, bytes int64, dev native.Device, s native.Stream) error
	CopyPeer(dst native.DevPtr, dstCtx native.Context, src native.DevPtr, srcCtx native.Context, bytes int64, s native.Stream) error
}

// blasAPI is cuBLASLt, as *native.CUBLASLt offers it.
type blasAPI interface {
	NewHandle() (native.BLASHandle, error)
	DestroyHandle(h native.BLASHandle)
	PlanGEMM(h native.BLASHandle, m, n, k, ab, c, smTarget int, maxWorkspace int64) (*native.GEMMPlan, error)
	DestroyPlan(p *native.GEMMPlan)
	Run(h native.BLASHandle, p *native.GEMMPlan, a, b, d, workspace native.DevPtr, s native.Stream) error
}

// ncclAPI is NCCL, as *native.NCCL offers it.
type ncclAPI interface {
	Version() (int, error)
	HasWindows() bool
	NewUniqueID() (native.UniqueID, error)
	GroupStart() error
	GroupEnd() error
	InitRank(id native.UniqueID, nranks, rank int, cfg native.CommConfig) (native.Comm, error)
	Destroy(c native.Comm) error
	Abort(c native.Comm) error
	AllGather(send, recv native.DevPtr, count int64, dtype int, c native.Comm, s native.Stream) error
	ReduceScatter(send, recv native.DevPtr, recvCount int64, dtype int, c native.Comm, s native.Stream) error
	AllReduce(send, recv native.DevPtr, count int64, dtype int, c native.Comm, s native.Stream) error
	AlltoAll(send, recv native.DevPtr, count, elemBytes int64, dtype, nranks int, c native.Comm, s native.Stream) error
	MemAlloc(bytes int64) (native.DevPtr, error)
	MemFree(p native.DevPtr) error
	RegisterWindows(comms []native.Comm, ptrs []native.DevPtr, bytes int64, setCurrent func(rank int) error) ([]native.Window, error)
	DeregisterWindow(c native.Comm, w native.Window) error
}

// nvrtcAPI is NVRTC, as *native.NVRTC offers it.
type nvrtcAPI interface {
	CompileCached(file, arch, cacheDir string) ([]byte, error)
}

var (
	_ driverAPI = (*native.Driver)(nil)
	_ blasAPI   = (*native.CUBLASLt)(nil)
	_ ncclAPI   = (*native.NCCL)(nil)
	_ nvrtcAPI  = (*native.NVRTC)(nil)
)

// libs are the loaded NVIDIA libraries.
type libs struct {
	drv   driverAPI
	blas  blasAPI
	nccl  ncclAPI
	nvrtc nvrtcAPI
}

// openLibs loads every library the backend needs; the first that is missing
// is returned as a *native.MissingLibraryError.
func openLibs() (*libs, error) {
	drv, err := native.OpenDriver()
	if err != nil {
		return nil, err
	}
	blas, err := native.OpenCUBLASLt()
	if err != nil {
		return nil, err
	}
	nccl, err := native.OpenNCCL()
	if err != nil {
		return nil, err
	}
	nvrtc, err := native.OpenNVRTC()
	if err != nil {
		return nil, err
	}
	return &libs{drv: drv, blas: blas, nccl: nccl, nvrtc: nvrtc}, nil
}
