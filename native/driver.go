package native

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include <string.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync/atomic"
	"unsafe"
)

// Driver is the CUDA driver API, loaded from libcuda.so.1.
type Driver struct {
	t *C.c3_cuda
}

// Handles. They wrap driver pointers; the zero value is "none".
type (
	// Device is a CUDA device ordinal handle (CUdevice).
	Device int32
	// Context is a CUDA context (CUcontext).
	Context struct{ p C.CUcontext }
	// Stream is a CUDA stream (CUstream).
	Stream struct{ p C.CUstream }
	// Event is a CUDA event (CUevent).
	Event struct{ p C.CUevent }
	// Module is a loaded CUDA module (CUmodule).
	Module struct{ p C.CUmodule }
	// Function is a kernel in a module (CUfunction).
	Function struct{ p C.CUfunction }
	// GreenContext is a context confined to a set of SMs (CUgreenCtx).
	GreenContext struct{ p C.CUgreenCtx }
	// DevPtr is a device address (CUdeviceptr).
	DevPtr uint64
)

// IsZero reports whether the stream is unset.
func (s Stream) IsZero() bool { return s.p == nil }

// Device attributes used by c3lab (CUdevice_attribute values).
const (
	AttrClockRate               = 13
	AttrMultiprocessorCount     = 16
	AttrAsyncEngineCount        = 40
	AttrComputeCapMajor         = 75
	AttrComputeCapMinor         = 76
	AttrCanUse64BitStreamMemOps = 122
)

// Stream and event flags.
const (
	StreamNonBlocking   = 1
	EventDefault        = 0
	EventDisableTiming  = 2
	StreamWaitValueGEQ  = 0
	StreamWaitValueEq   = 1
	StreamWriteValueDef = 0
)

// OpenDriver loads libcuda.so.1. It does not initialise the driver.
func OpenDriver() (*Driver, error) {
	t := (*C.c3_cuda)(C.calloc(1, C.sizeof_c3_cuda))
	var buf [512]C.char
	if C.c3_cuda_open(t, &buf[0], C.size_t(len(buf))) != 0 {
		C.free(unsafe.Pointer(t))
		return nil, &MissingLibraryError{Library: "libcuda.so.1", NeededFor: "running on NVIDIA GPUs (the driver API)", Detail: C.GoString(&buf[0])}
	}
	return &Driver{t: t}, nil
}

func (d *Driver) check(call string, r C.CUresult) error {
	if r == 0 {
		return nil
	}
	var name, msg *C.char
	C.c3_cuGetErrorName(d.t, r, &name)
	C.c3_cuGetErrorString(d.t, r, &msg)
	e := &CUDAError{Call: call, Code: int(r), Name: "CUDA_ERROR_UNKNOWN", Msg: "unknown error"}
	if name != nil {
		e.Name = C.GoString(name)
	}
	if msg != nil {
		e.Msg = C.GoString(msg)
	}
	return e
}

// Init initialises the driver (cuInit).
func (d *Driver) Init() error { return d.check("cuInit", C.c3_cuInit(d.t, 0)) }

// Version returns the driver's CUDA version as 1000*major + 10*minor.
func (d *Driver) Version() (int, error) {
	var v C.int
	err := d.check("cuDriverGetVersion", C.c3_cuDriverGetVersion(d.t, &v))
	return int(v), err
}

// DeviceCount returns the number of visible devices.
func (d *Driver) DeviceCount() (int, error) {
	var n C.int
	err := d.check("cuDeviceGetCount", C.c3_cuDeviceGetCount(d.t, &n))
	return int(n), err
}

// Device returns the handle of device ordinal i.
func (d *Driver) Device(i int) (Device, error) {
	var dev C.CUdevice
	err := d.check("cuDeviceGet", C.c3_cuDeviceGet(d.t, &dev, C.int(i)))
	return Device(dev), err
}

// DeviceName returns the device's name ("NVIDIA H200").
func (d *Driver) DeviceName(dev Device) (string, error) {
	var buf [256]C.char
	if err := d.check("cuDeviceGetName", C.c3_cuDeviceGetName(d.t, &buf[0], C.int(len(buf)), C.CUdevice(dev))); err != nil {
		return "", err
	}
	return C.GoString(&buf[0]), nil
}

// Attribute reads a device attribute.
func (d *Driver) Attribute(dev Device, attr int) (int, error) {
	var v C.int
	err := d.check(fmt.Sprintf("cuDeviceGetAttribute(%d)", attr), C.c3_cuDeviceGetAttribute(d.t, &v, C.int(attr), C.CUdevice(dev)))
	return int(v), err
}

// TotalMemory returns the device memory size in bytes.
func (d *Driver) TotalMemory(dev Device) (int64, error) {
	var v C.size_t
	err := d.check("cuDeviceTotalMem", C.c3_cuDeviceTotalMem(d.t, &v, C.CUdevice(dev)))
	return int64(v), err
}

// UUID returns the device UUID as "GPU-xxxxxxxx-xxxx-...".
func (d *Driver) UUID(dev Device) (string, error) {
	var u C.CUuuid
	if err := d.check("cuDeviceGetUuid", C.c3_cuDeviceGetUuid(d.t, &u, C.CUdevice(dev))); err != nil {
		return "", err
	}
	b := C.GoBytes(unsafe.Pointer(&u.bytes[0]), 16)
	return fmt.Sprintf("GPU-%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]), nil
}

// PrimaryContext retains the device's primary context.
func (d *Driver) PrimaryContext(dev Device) (Context, error) {
	var c C.CUcontext
	err := d.check("cuDevicePrimaryCtxRetain", C.c3_cuDevicePrimaryCtxRetain(d.t, &c, C.CUdevice(dev)))
	return Context{c}, err
}

// ReleasePrimaryContext releases a retained primary context.
func (d *Driver) ReleasePrimaryContext(dev Device) error {
	return d.check("cuDevicePrimaryCtxRelease", C.c3_cuDevicePrimaryCtxRelease(d.t, C.CUdevice(dev)))
}

// SetCurrent makes ctx current on the calling OS thread.
func (d *Driver) SetCurrent(ctx Context) error {
	return d.check("cuCtxSetCurrent", C.c3_cuCtxSetCurrent(d.t, ctx.p))
}

// Synchronize waits for all work in the current context.
func (d *Driver) Synchronize() error { return d.check("cuCtxSynchronize", C.c3_cuCtxSynchronize(d.t)) }

// PriorityRange returns the least (lowest) and greatest (most urgent) stream
// priorities of the current context, e.g. 0 and -5.
func (d *Driver) PriorityRange() (least, greatest int, err error) {
	var l, g C.int
	err = d.check("cuCtxGetStreamPriorityRange", C.c3_cuCtxGetStreamPriorityRange(d.t, &l, &g))
	return int(l), int(g), err
}

// NewStream creates a non-blocking stream with a priority in the current context.
func (d *Driver) NewStream(priority int) (Stream, error) {
	var s C.CUstream
	err := d.check("cuStreamCreateWithPriority", C.c3_cuStreamCreateWithPriority(d.t, &s, StreamNonBlocking, C.int(priority)))
	return Stream{s}, err
}

// DestroyStream destroys a stream.
func (d *Driver) DestroyStream(s Stream) error {
	return d.check("cuStreamDestroy", C.c3_cuStreamDestroy(d.t, s.p))
}

// SyncStream waits for a stream's work.
func (d *Driver) SyncStream(s Stream) error {
	return d.check("cuStreamSynchronize", C.c3_cuStreamSynchronize(d.t, s.p))
}

// WaitEvent makes stream s wait for event e.
func (d *Driver) WaitEvent(s Stream, e Event) error {
	return d.check("cuStreamWaitEvent", C.c3_cuStreamWaitEvent(d.t, s.p, e.p, 0))
}

// NewEvent creates an event (EventDefault records timing).
func (d *Driver) NewEvent(flags int) (Event, error) {
	var e C.CUevent
	err := d.check("cuEventCreate", C.c3_cuEventCreate(d.t, &e, C.uint(flags)))
	return Event{e}, err
}

// Record records e on stream s.
func (d *Driver) Record(e Event, s Stream) error {
	return d.check("cuEventRecord", C.c3_cuEventRecord(d.t, e.p, s.p))
}

// SyncEvent waits for e.
func (d *Driver) SyncEvent(e Event) error {
	return d.check("cuEventSynchronize", C.c3_cuEventSynchronize(d.t, e.p))
}

// EventDone reports whether the work before e has finished, without waiting.
func (d *Driver) EventDone(e Event) (bool, error) {
	r := C.c3_cuEventQuery(d.t, e.p)
	if r == 600 { // CUDA_ERROR_NOT_READY
		return false, nil
	}
	return r == 0, d.check("cuEventQuery", r)
}

// Elapsed returns the time between two recorded events in nanoseconds
// (the driver's resolution is about half a microsecond).
func (d *Driver) Elapsed(start, end Event) (int64, error) {
	var ms C.float
	err := d.check("cuEventElapsedTime", C.c3_cuEventElapsedTime(d.t, &ms, start.p, end.p))
	return int64(float64(ms) * 1e6), err
}

// DestroyEvent destroys an event.
func (d *Driver) DestroyEvent(e Event) error {
	return d.check("cuEventDestroy", C.c3_cuEventDestroy(d.t, e.p))
}

// Alloc allocates device memory in the current context.
func (d *Driver) Alloc(bytes int64) (DevPtr, error) {
	var p C.CUdeviceptr
	err := d.check(fmt.Sprintf("cuMemAlloc(%d bytes)", bytes), C.c3_cuMemAlloc(d.t, &p, C.size_t(bytes)))
	return DevPtr(p), err
}

// Free frees device memory.
func (d *Driver) Free(p DevPtr) error {
	return d.check("cuMemFree", C.c3_cuMemFree(d.t, C.CUdeviceptr(p)))
}

// IPCHandleSize is the size of a CUDA IPC memory handle (CU_IPC_HANDLE_SIZE).
const IPCHandleSize = 64

// IPCHandle exports device memory from cuMemAlloc (its base address) for
// other processes of the node: cuIpcGetMemHandle. Nothing is acquired:
// the handle stays valid until the memory is freed.
func (d *Driver) IPCHandle(p DevPtr) ([]byte, error) {
	var h C.CUipcMemHandle
	if err := d.check("cuIpcGetMemHandle", C.c3_cuIpcGetMemHandle(d.t, &h, C.CUdeviceptr(p))); err != nil {
		return nil, err
	}
	return C.GoBytes(unsafe.Pointer(&h), IPCHandleSize), nil
}

// OpenIPCHandle maps another process's exported memory into the current
// context (cuIpcOpenMemHandle with CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS, so
// a GPU other than this context's is reached by peer access). CloseIPC
// unmaps it.
func (d *Driver) OpenIPCHandle(handle []byte) (DevPtr, error) {
	if len(handle) != IPCHandleSize {
		return 0, fmt.Errorf("a CUDA IPC handle is %d bytes, not %d", IPCHandleSize, len(handle))
	}
	var h C.CUipcMemHandle
	C.memcpy(unsafe.Pointer(&h), unsafe.Pointer(&handle[0]), IPCHandleSize)
	var p C.CUdeviceptr
	err := d.check("cuIpcOpenMemHandle", C.c3_cuIpcOpenMemHandle(d.t, &p, h, ipcLazyEnablePeerAccess))
	return DevPtr(p), err
}

// ipcLazyEnablePeerAccess is CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS.
const ipcLazyEnablePeerAccess = 1

// CloseIPC unmaps memory OpenIPCHandle mapped.
func (d *Driver) CloseIPC(p DevPtr) error {
	return d.check("cuIpcCloseMemHandle", C.c3_cuIpcCloseMemHandle(d.t, C.CUdeviceptr(p)))
}

// MemInfo returns free and total memory of the current context's device.
func (d *Driver) MemInfo() (free, total int64, err error) {
	var f, t C.size_t
	err = d.check("cuMemGetInfo", C.c3_cuMemGetInfo(d.t, &f, &t))
	return int64(f), int64(t), err
}

// CopyToDevice copies host bytes to device memory and returns once they
// are there. cuMemcpyHtoD from pageable memory returns when the bytes are
// staged, before the DMA into device memory has necessarily ended, and it
// runs on the legacy stream, which c3lab's non-blocking streams do not
// wait for: a kernel launched next could read (or be overwritten by) the
// old bytes. So the legacy stream is synchronized before returning.
func (d *Driver) CopyToDevice(dst DevPtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	p := C.CBytes(src) // cgo forbids passing Go memory the driver may keep; copy once
	defer C.free(p)
	if err := d.check("cuMemcpyHtoD", C.c3_cuMemcpyHtoD(d.t, C.CUdeviceptr(dst), p, C.size_t(len(src)))); err != nil {
		return err
	}
	return d.check("cuStreamSynchronize", C.c3_cuStreamSynchronize(d.t, nil))
}

// CopyToHost copies device memory into dst (synchronous).
func (d *Driver) CopyToHost(dst []byte, src DevPtr) error {
	if len(dst) == 0 {
		return nil
	}
	p := C.malloc(C.size_t(len(dst)))
	defer C.free(p)
	if err := d.check("cuMemcpyDtoH", C.c3_cuMemcpyDtoH(d.t, p, C.CUdeviceptr(src), C.size_t(len(dst)))); err != nil {
		return err
	}
	copy(dst, unsafe.Slice((*byte)(p), len(dst)))
	return nil
}

// Memset32 fills n 32-bit words at dst with v on stream s.
func (d *Driver) Memset32(dst DevPtr, v uint32, n int64, s Stream) error {
	return d.check("cuMemsetD32Async", C.c3_cuMemsetD32Async(d.t, C.CUdeviceptr(dst), C.uint(v), C.size_t(n), s.p))
}

// CopyPeer copies bytes between devices on stream s (a copy engine does it).
func (d *Driver) CopyPeer(dst DevPtr, dstCtx Context, src DevPtr, srcCtx Context, bytes int64, s Stream) error {
	return d.check("cuMemcpyPeerAsync", C.c3_cuMemcpyPeerAsync(d.t, C.CUdeviceptr(dst), dstCtx.p, C.CUdeviceptr(src), srcCtx.p, C.size_t(bytes), s.p))
}

// Copy copies bytes between (peer-mapped) device addresses on stream s.
func (d *Driver) Copy(dst, src DevPtr, bytes int64, s Stream) error {
	return d.check("cuMemcpyAsync", C.c3_cuMemcpyAsync(d.t, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(bytes), s.p))
}

// HasCopyEngineCopy reports whether CopyOnCopyEngine is available
// (cuMemcpyBatchAsync, CUDA 12.8+ drivers).
func (d *Driver) HasCopyEngineCopy() bool { return C.c3_cuda_has_batch_copy(d.t) != 0 }

// CopyOnCopyEngine copies bytes within one device on stream s, asking the
// driver to use a copy engine (cuMemcpyBatchAsync with
// PREFER_OVERLAP_WITH_COMPUTE). A plain same-device cuMemcpyAsync may run
// as a kernel on the SMs, where a GEMM holding every SM delays it.
func (d *Driver) CopyOnCopyEngine(dst, src DevPtr, bytes int64, dev Device, s Stream) error {
	return d.check("cuMemcpyBatchAsync", C.c3_copy_on_copy_engine(d.t, C.CUdeviceptr(dst), C.CUdeviceptr(src), C.size_t(bytes), C.int(dev), s.p))
}

// CanAccessPeer reports whether dev can map peer's memory.
func (d *Driver) CanAccessPeer(dev, peer Device) (bool, error) {
	var v C.int
	err := d.check("cuDeviceCanAccessPeer", C.c3_cuDeviceCanAccessPeer(d.t, &v, C.CUdevice(dev), C.CUdevice(peer)))
	return v != 0, err
}

// EnablePeerAccess lets the current context access peer's memory. A peer
// already enabled is not an error.
func (d *Driver) EnablePeerAccess(peer Context) error {
	r := C.c3_cuCtxEnablePeerAccess(d.t, peer.p, 0)
	if r == 704 { // CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED
		return nil
	}
	return d.check("cuCtxEnablePeerAccess", r)
}

// WaitValue32 makes stream s wait until the word at addr satisfies flags
// against v, without any kernel.
func (d *Driver) WaitValue32(s Stream, addr DevPtr, v uint32, flags int) error {
	return d.check("cuStreamWaitValue32", C.c3_cuStreamWaitValue32(d.t, s.p, C.CUdeviceptr(addr), C.uint32_t(v), C.uint(flags)))
}

// WriteValue32 makes stream s write v to addr, without any kernel.
func (d *Driver) WriteValue32(s Stream, addr DevPtr, v uint32) error {
	return d.check("cuStreamWriteValue32", C.c3_cuStreamWriteValue32(d.t, s.p, C.CUdeviceptr(addr), C.uint32_t(v), 0))
}

// LoadModule loads a cubin or PTX image into the current context.
func (d *Driver) LoadModule(image []byte) (Module, error) {
	p := C.CBytes(image)
	defer C.free(p)
	var m C.CUmodule
	err := d.check("cuModuleLoadData", C.c3_cuModuleLoadData(d.t, &m, p))
	return Module{m}, err
}

// Function finds a kernel by its (extern "C") name.
func (d *Driver) Function(m Module, name string) (Function, error) {
	cs := C.CString(name)
	defer C.free(unsafe.Pointer(cs))
	var f C.CUfunction
	err := d.check("cuModuleGetFunction("+name+")", C.c3_cuModuleGetFunction(d.t, &f, m.p, cs))
	return Function{f}, err
}

// UnloadModule unloads a module.
func (d *Driver) UnloadModule(m Module) error {
	return d.check("cuModuleUnload", C.c3_cuModuleUnload(d.t, m.p))
}

// Launch launches a 1-D kernel whose parameters are all 64-bit values
// (pointers and sizes).
func (d *Driver) Launch(f Function, grid, block uint32, s Stream, args ...uint64) error {
	if len(args) > 16 {
		return fmt.Errorf("launch: %d kernel arguments, at most 16", len(args))
	}
	var a [16]C.ulonglong
	for i, v := range args {
		a[i] = C.ulonglong(v)
	}
	return d.check("cuLaunchKernel", C.c3_launch_u64(d.t, f.p, C.uint(grid), C.uint(block), 0, s.p, &a[0], C.int(len(args))))
}

// LaunchCluster launches a 1-D kernel as Launch does, in thread-block
// clusters of cluster CTAs (grid a multiple of it), each CTA with shmem
// bytes of dynamic shared memory: what a probe of the block scheduler
// needs to launch a kernel the way NCCL's are launched on Hopper.
func (d *Driver) LaunchCluster(f Function, grid, block, cluster, shmem uint32, s Stream, args ...uint64) error {
	switch {
	case len(args) > 16:
		return fmt.Errorf("cluster launch: %d kernel arguments, at most 16", len(args))
	case cluster < 1 || grid%cluster != 0:
		return fmt.Errorf("cluster launch: a grid of %d CTAs in clusters of %d; want a whole number of clusters", grid, cluster)
	case C.c3_cuda_has_cluster_launch(d.t) == 0:
		return fmt.Errorf("cluster launch: this driver has no cuLaunchKernelEx (CUDA 12.0+)")
	}
	var a [16]C.ulonglong
	for i, v := range args {
		a[i] = C.ulonglong(v)
	}
	return d.check("cuLaunchKernelEx", C.c3_launch_cluster_u64(d.t, f.p, C.uint(grid), C.uint(block), C.uint(cluster), C.uint(shmem), s.p, &a[0], C.int(len(args))))
}

// HasGreenContexts reports whether the driver offers green contexts (12.4+).
func (d *Driver) HasGreenContexts() bool { return C.c3_cuda_has_green(d.t) != 0 }

// GreenPartition splits dev's SMs once into a group of `sms` SMs and the
// rest, and makes a green context of each (kernels in a green context's
// streams run only on its SMs). It returns both with the SM counts they got.
// wantRest false skips the rest's context (it stays unused by c3lab).
func (d *Driver) GreenPartition(dev Device, sms int, wantRest bool) (group, rest GreenContext, groupSMs, restSMs int, err error) {
	if !d.HasGreenContexts() {
		err = &MissingLibraryError{Library: "libcuda.so.1", NeededFor: "SM partitions", Detail: "the driver has no green contexts (needs CUDA 12.4+)"}
		return
	}
	var all, g, r C.CUdevResource
	if err = d.check("cuDeviceGetDevResource", C.c3_cuDeviceGetDevResource(d.t, C.CUdevice(dev), &all, 1)); err != nil {
		return
	}
	n := C.uint(1)
	if err = d.check(fmt.Sprintf("cuDevSmResourceSplitByCount(%d SMs)", sms), C.c3_cuDevSmResourceSplitByCount(d.t, &g, &n, &all, &r, 0, C.uint(sms))); err != nil {
		return
	}
	if n != 1 {
		err = fmt.Errorf("splitting %d SMs off the device made %d groups, want 1", sms, n)
		return
	}
	if group, err = d.greenFrom(dev, &g); err != nil {
		return
	}
	groupSMs, restSMs = int(C.c3_res_sm_count(&g)), int(C.c3_res_sm_count(&r))
	if wantRest && restSMs > 0 {
		if rest, err = d.greenFrom(dev, &r); err != nil {
			d.DestroyGreenContext(group)
			group = GreenContext{}
		}
	}
	return
}

// StructuredGroup makes a green context of one structured group of at
// most sms SMs out of g's SMs and returns it with the SM count it got. A
// split's groups are structured (their SMs co-scheduled, so thread block
// clusters fit), its remainder is not; g is typically such a remainder
// (GreenPartition's rest), which cannot be split again except through a
// green context of its own. g is left as it was.
func (d *Driver) StructuredGroup(dev Device, g GreenContext, sms int) (GreenContext, int, error) {
	if C.c3_cuda_has_green_resource(d.t) == 0 {
		return GreenContext{}, 0, &MissingLibraryError{Library: "libcuda.so.1", NeededFor: "a structured SM group out of a partition's rest", Detail: "the driver has no cuGreenCtxGetDevResource (needs CUDA 12.4+)"}
	}
	var res, grp, rem C.CUdevResource
	if err := d.check("cuGreenCtxGetDevResource", C.c3_cuGreenCtxGetDevResource(d.t, g.p, &res, 1)); err != nil {
		return GreenContext{}, 0, err
	}
	n := C.uint(1)
	if err := d.check(fmt.Sprintf("cuDevSmResourceSplitByCount(%d SMs of a green context)", sms), C.c3_cuDevSmResourceSplitByCount(d.t, &grp, &n, &res, &rem, 0, C.uint(sms))); err != nil {
		return GreenContext{}, 0, err
	}
	if n != 1 {
		return GreenContext{}, 0, fmt.Errorf("a structured group of %d SMs out of %d made %d groups, want 1", sms, int(C.c3_res_sm_count(&res)), n)
	}
	gc, err := d.greenFrom(dev, &grp)
	if err != nil {
		return GreenContext{}, 0, err
	}
	return gc, int(C.c3_res_sm_count(&grp)), nil
}

func (d *Driver) greenFrom(dev Device, res *C.CUdevResource) (GreenContext, error) {
	var desc C.CUdevResourceDesc
	if err := d.check("cuDevResourceGenerateDesc", C.c3_cuDevResourceGenerateDesc(d.t, &desc, res, 1)); err != nil {
		return GreenContext{}, err
	}
	var g C.CUgreenCtx
	err := d.check("cuGreenCtxCreate", C.c3_cuGreenCtxCreate(d.t, &g, desc, C.CUdevice(dev), 1)) // CU_GREEN_CTX_DEFAULT_STREAM
	return GreenContext{g}, err
}

// GreenStream creates a stream whose kernels run only on g's SMs.
func (d *Driver) GreenStream(g GreenContext, priority int) (Stream, error) {
	var s C.CUstream
	err := d.check("cuGreenCtxStreamCreate", C.c3_cuGreenCtxStreamCreate(d.t, &s, g.p, StreamNonBlocking, C.int(priority)))
	return Stream{s}, err
}

// DestroyGreenContext destroys a green context (its streams first).
func (d *Driver) DestroyGreenContext(g GreenContext) error {
	return d.check("cuGreenCtxDestroy", C.c3_cuGreenCtxDestroy(d.t, g.p))
}

// HostWord is one 32-bit word of pinned host memory that every GPU can
// read (cuMemHostAlloc, portable and device-mapped). Stream memory ops on
// any GPU can wait on it, and the host changes it with Store: a plain
// memory write that calls no CUDA function, so any goroutine may make it,
// even while another thread is blocked inside the driver.
type HostWord struct{ p unsafe.Pointer }

// Host allocation flags (CU_MEMHOSTALLOC_*).
const (
	hostAllocPortable  = 0x1
	hostAllocDeviceMap = 0x2
)

// AllocHostWord allocates a HostWord, set to zero.
func (d *Driver) AllocHostWord() (HostWord, error) {
	h, err := d.AllocHost(4)
	if err != nil {
		return HostWord{}, err
	}
	w := HostWord{h.p}
	w.Store(0)
	return w, nil
}

// HostWordDevPtr returns the word's address in the current context.
func (d *Driver) HostWordDevPtr(w HostWord) (DevPtr, error) {
	return d.HostDevPtr(HostBuffer{w.p, 4})
}

// FreeHostWord frees the word; no stream may still wait on it.
func (d *Driver) FreeHostWord(w HostWord) error { return d.FreeHost(HostBuffer{w.p, 4}) }

// HostBuffer is pinned host memory that every GPU can read and write
// (cuMemHostAlloc, portable and device-mapped): the host side of a
// host<->device copy, which copy engines move with cuMemcpyAsync and SM
// kernels reach through its device address.
type HostBuffer struct {
	p unsafe.Pointer
	n int64
}

// AllocHost pins bytes of host memory.
func (d *Driver) AllocHost(bytes int64) (HostBuffer, error) {
	if bytes <= 0 {
		return HostBuffer{}, fmt.Errorf("cuMemHostAlloc: %d bytes; want at least 1", bytes)
	}
	var p unsafe.Pointer
	if err := d.check("cuMemHostAlloc", C.c3_cuMemHostAlloc(d.t, &p, C.size_t(bytes), hostAllocPortable|hostAllocDeviceMap)); err != nil {
		return HostBuffer{}, err
	}
	return HostBuffer{p, bytes}, nil
}

// HostDevPtr returns the buffer's address in the current context.
func (d *Driver) HostDevPtr(h HostBuffer) (DevPtr, error) {
	var p C.CUdeviceptr
	err := d.check("cuMemHostGetDevicePointer", C.c3_cuMemHostGetDevicePointer(d.t, &p, h.p, 0))
	return DevPtr(p), err
}

// FreeHost unpins and frees the buffer; no stream may still use it.
func (d *Driver) FreeHost(h HostBuffer) error {
	if h.p == nil {
		return nil
	}
	return d.check("cuMemFreeHost", C.c3_cuMemFreeHost(d.t, h.p))
}

// Bytes returns the buffer's memory, for the host to fill or read while no
// stream uses it.
func (h HostBuffer) Bytes() []byte {
	if h.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(h.p), h.n)
}

// IsZero reports whether the buffer is unallocated.
func (h HostBuffer) IsZero() bool { return h.p == nil }

// IsZero reports whether the word is unallocated.
func (w HostWord) IsZero() bool { return w.p == nil }

// Store writes v to the word (an atomic store the GPUs see within
// microseconds). Safe from any goroutine.
func (w HostWord) Store(v uint32) { atomic.StoreUint32((*uint32)(w.p), v) }

// Raise sets the word to v unless it already holds v or a later value,
// comparing as cuStreamWaitValue32's GEQ does ((int32)(word-v) >= 0, so
// the count may wrap). A late writer of an old value cannot close a gate
// a newer value opened. Safe from any goroutine.
func (w HostWord) Raise(v uint32) {
	p := (*uint32)(w.p)
	for {
		old := atomic.LoadUint32(p)
		if int32(old-v) >= 0 || atomic.CompareAndSwapUint32(p, old, v) {
			return
		}
	}
}

// Load reads the word.
func (w HostWord) Load() uint32 { return atomic.LoadUint32((*uint32)(w.p)) }

// RegisterHost pins bytes of host memory c3lab did not allocate with CUDA
// (cuMemHostRegister, portable and device-mapped): a page shared between
// processes, whose words the GPUs then read through HostWordAt. Unregister
// it with UnregisterHost before it is unmapped.
func (d *Driver) RegisterHost(p unsafe.Pointer, bytes int64) error {
	if p == nil || bytes <= 0 {
		return fmt.Errorf("cuMemHostRegister: %d bytes at %p; want memory", bytes, p)
	}
	return d.check("cuMemHostRegister", C.c3_cuMemHostRegister(d.t, p, C.size_t(bytes), hostAllocPortable|hostAllocDeviceMap))
}

// UnregisterHost unpins memory RegisterHost pinned; no stream may still
// use it.
func (d *Driver) UnregisterHost(p unsafe.Pointer) error {
	return d.check("cuMemHostUnregister", C.c3_cuMemHostUnregister(d.t, p))
}

// HostWordAt is the word at p, in memory RegisterHost pinned (or any
// memory, for the host side alone): the start gate's word in a page that
// several processes map.
func HostWordAt(p unsafe.Pointer) HostWord { return HostWord{p} }
