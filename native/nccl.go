package native

/*
#include <stdlib.h>
#include "shim.h"

// Device addresses cross into C as integers and become pointers here.
static int c3n_allgather(const c3_nccl *t, CUdeviceptr s, CUdeviceptr r, size_t n, int dt, ncclComm_t c, CUstream st) {
	return t->ncclAllGather((const void *)s, (void *)r, n, dt, c, st);
}
static int c3n_reducescatter(const c3_nccl *t, CUdeviceptr s, CUdeviceptr r, size_t n, int dt, int op, ncclComm_t c, CUstream st) {
	return t->ncclReduceScatter((const void *)s, (void *)r, n, dt, op, c, st);
}
static int c3n_allreduce(const c3_nccl *t, CUdeviceptr s, CUdeviceptr r, size_t n, int dt, int op, ncclComm_t c, CUstream st) {
	return t->ncclAllReduce((const void *)s, (void *)r, n, dt, op, c, st);
}
static int c3n_alltoall(const c3_nccl *t, CUdeviceptr s, CUdeviceptr r, size_t n, int dt, ncclComm_t c, CUstream st) {
	return t->ncclAlltoAll((const void *)s, (void *)r, n, dt, c, st);
}
static int c3n_send(const c3_nccl *t, CUdeviceptr s, size_t n, int dt, int peer, ncclComm_t c, CUstream st) {
	return t->ncclSend((const void *)s, n, dt, peer, c, st);
}
static int c3n_recv(const c3_nccl *t, CUdeviceptr r, size_t n, int dt, int peer, ncclComm_t c, CUstream st) {
	return t->ncclRecv((void *)r, n, dt, peer, c, st);
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// NCCL is the NCCL library, loaded from libnccl.so.2.
type NCCL struct {
	t *C.c3_nccl
}

// Comm is one rank's NCCL communicator.
type Comm struct{ p C.ncclComm_t }

// NCCL data types and reduction ops.
const (
	NCCLBF16 = 9
	NCCLSum  = 0
)

// CTA policies (ncclConfig_t.CTAPolicy); CTAPolicyZero asks NCCL 2.28+ to
// run all-gather and all-to-all on the copy engines (on symmetric windows).
const (
	CTAPolicyDefault = 0
	CTAPolicyZero    = 2
)

// OpenNCCL loads NCCL.
func OpenNCCL() (*NCCL, error) {
	t := (*C.c3_nccl)(C.calloc(1, C.sizeof_c3_nccl))
	var buf [512]C.char
	if C.c3_nccl_open(t, &buf[0], C.size_t(len(buf))) != 0 {
		C.free(unsafe.Pointer(t))
		return nil, &MissingLibraryError{Library: "libnccl.so.2", NeededFor: "collectives on the SMs (NCCL)", Detail: C.GoString(&buf[0])}
	}
	return &NCCL{t: t}, nil
}

func (n *NCCL) check(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	return &NCCLError{Call: call, Code: int(r), Msg: C.GoString(C.c3_ncclGetErrorString(n.t, r))}
}

// Version returns NCCL's version code (22803 for 2.28.3).
func (n *NCCL) Version() (int, error) {
	var v C.int
	if err := n.check("ncclGetVersion", C.c3_ncclGetVersion(n.t, &v)); err != nil {
		return 0, err
	}
	return int(v), nil
}

// VersionString formats a version code as "2.28.3".
func VersionString(code int) string {
	return fmt.Sprintf("%d.%d.%d", code/10000, code/100%100, code%100)
}

// HasAlltoAll reports whether the library has ncclAlltoAll (2.28+).
func (n *NCCL) HasAlltoAll() bool { return n.t.ncclAlltoAll != nil }

// UniqueID is the 128-byte id every rank of a communicator shares.
type UniqueID struct{ id C.ncclUniqueId }

// NewUniqueID creates an id for a new communicator.
func (n *NCCL) NewUniqueID() (UniqueID, error) {
	var u UniqueID
	err := n.check("ncclGetUniqueId", C.c3_ncclGetUniqueId(n.t, &u.id))
	return u, err
}

// CommConfig holds the per-communicator knobs c3lab sets.
type CommConfig struct {
	MinCTAs, MaxCTAs int // 0 = NCCL's default
	CTAPolicy        int // -1 = NCCL's default
}

// InitRank creates one rank of a communicator; for several ranks in one
// process, call it between GroupStart and GroupEnd with each device's
// context current.
func (n *NCCL) InitRank(id UniqueID, nranks, rank int, cfg CommConfig) (Comm, error) {
	// The config's layout depends on the version: without it, no communicator.
	version, err := n.Version()
	if err != nil {
		return Comm{}, err
	}
	var c C.ncclComm_t
	err = n.check("ncclCommInitRankConfig", C.c3_nccl_init_rank(n.t, &c, C.int(nranks), &id.id, C.int(rank), C.int(version), C.int(cfg.MinCTAs), C.int(cfg.MaxCTAs), C.int(cfg.CTAPolicy)))
	return Comm{c}, err
}

// GroupStart begins a group of NCCL calls.
func (n *NCCL) GroupStart() error { return n.check("ncclGroupStart", C.c3_ncclGroupStart(n.t)) }

// GroupEnd ends a group of NCCL calls.
func (n *NCCL) GroupEnd() error { return n.check("ncclGroupEnd", C.c3_ncclGroupEnd(n.t)) }

// Destroy frees a communicator after its work is done.
func (n *NCCL) Destroy(c Comm) error {
	return n.check("ncclCommDestroy", C.c3_ncclCommDestroy(n.t, c.p))
}

// Abort frees a communicator at once, abandoning its work (after a hang).
func (n *NCCL) Abort(c Comm) error { return n.check("ncclCommAbort", C.c3_ncclCommAbort(n.t, c.p)) }

// AsyncError returns a communicator's asynchronous error, if any.
func (n *NCCL) AsyncError(c Comm) error {
	var r C.int
	if err := n.check("ncclCommGetAsyncError", C.c3_ncclCommGetAsyncError(n.t, c.p, &r)); err != nil {
		return err
	}
	return n.check("NCCL (asynchronous)", r)
}

// AllGather gathers count elements from every rank into recv.
func (n *NCCL) AllGather(send, recv DevPtr, count int64, dtype int, c Comm, s Stream) error {
	return n.check("ncclAllGather", C.c3n_allgather(n.t, C.CUdeviceptr(send), C.CUdeviceptr(recv), C.size_t(count), C.int(dtype), c.p, s.p))
}

// ReduceScatter sums send across ranks and leaves recvCount elements per rank.
func (n *NCCL) ReduceScatter(send, recv DevPtr, recvCount int64, dtype int, c Comm, s Stream) error {
	return n.check("ncclReduceScatter", C.c3n_reducescatter(n.t, C.CUdeviceptr(send), C.CUdeviceptr(recv), C.size_t(recvCount), C.int(dtype), NCCLSum, c.p, s.p))
}

// AllReduce sums count elements across ranks.
func (n *NCCL) AllReduce(send, recv DevPtr, count int64, dtype int, c Comm, s Stream) error {
	return n.check("ncclAllReduce", C.c3n_allreduce(n.t, C.CUdeviceptr(send), C.CUdeviceptr(recv), C.size_t(count), C.int(dtype), NCCLSum, c.p, s.p))
}

// AlltoAll sends count elements to every rank (block j of send goes to rank
// j). Before NCCL 2.28 it is a group of sends and receives.
func (n *NCCL) AlltoAll(send, recv DevPtr, count int64, elemBytes int64, dtype int, nranks int, c Comm, s Stream) error {
	if n.HasAlltoAll() {
		return n.check("ncclAlltoAll", C.c3n_alltoall(n.t, C.CUdeviceptr(send), C.CUdeviceptr(recv), C.size_t(count), C.int(dtype), c.p, s.p))
	}
	if err := n.GroupStart(); err != nil {
		return err
	}
	for peer := range nranks {
		off := DevPtr(int64(peer) * count * elemBytes)
		if err := n.check("ncclSend", C.c3n_send(n.t, C.CUdeviceptr(send+off), C.size_t(count), C.int(dtype), C.int(peer), c.p, s.p)); err != nil {
			n.GroupEnd()
			return err
		}
		if err := n.check("ncclRecv", C.c3n_recv(n.t, C.CUdeviceptr(recv+off), C.size_t(count), C.int(dtype), C.int(peer), c.p, s.p)); err != nil {
			n.GroupEnd()
			return err
		}
	}
	return n.GroupEnd()
}

// Window is a registered symmetric memory window (ncclWindow_t).
type Window struct{ p unsafe.Pointer }

// HasWindows reports whether the library offers symmetric memory and
// windows (NCCL 2.27+), which its copy-engine collectives need.
func (n *NCCL) HasWindows() bool { return C.c3n_has_windows(n.t) != 0 }

// MemAlloc allocates memory NCCL can register as a symmetric window (on
// the current device).
func (n *NCCL) MemAlloc(bytes int64) (DevPtr, error) {
	var p C.CUdeviceptr
	err := n.check(fmt.Sprintf("ncclMemAlloc(%d bytes)", bytes), C.c3n_mem_alloc(n.t, &p, C.size_t(bytes)))
	return DevPtr(p), err
}

// MemFree frees memory from MemAlloc.
func (n *NCCL) MemFree(p DevPtr) error {
	return n.check("ncclMemFree", C.c3n_mem_free(n.t, C.CUdeviceptr(p)))
}

// RegisterWindows registers one buffer per rank as a symmetric window of
// the ranks' communicators, in one group (NCCL writes the handles at the
// group's end, so they live in C memory until then). setCurrent makes a
// rank's device current before its call.
func (n *NCCL) RegisterWindows(comms []Comm, ptrs []DevPtr, bytes int64, setCurrent func(rank int) error) ([]Window, error) {
	if len(comms) != len(ptrs) {
		return nil, fmt.Errorf("%d communicators for %d buffers", len(comms), len(ptrs))
	}
	slots := (*unsafe.Pointer)(C.calloc(C.size_t(len(comms)), C.size_t(unsafe.Sizeof(unsafe.Pointer(nil)))))
	defer C.free(unsafe.Pointer(slots))
	handles := unsafe.Slice(slots, len(comms))
	if err := n.GroupStart(); err != nil {
		return nil, err
	}
	var regErr error
	for r, c := range comms {
		if regErr = setCurrent(r); regErr != nil {
			break
		}
		if regErr = n.check("ncclCommWindowRegister", C.c3n_window_register(n.t, c.p, C.CUdeviceptr(ptrs[r]), C.size_t(bytes), &handles[r])); regErr != nil {
			break
		}
	}
	if err := n.GroupEnd(); err != nil && regErr == nil {
		regErr = err
	}
	if regErr != nil {
		return nil, regErr
	}
	out := make([]Window, len(comms))
	for r := range out {
		out[r] = Window{handles[r]}
	}
	return out, nil
}

// DeregisterWindow removes a window.
func (n *NCCL) DeregisterWindow(c Comm, w Window) error {
	return n.check("ncclCommWindowDeregister", C.c3n_window_deregister(n.t, c.p, w.p))
}
