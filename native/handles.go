package native

/*
#include "shim.h"
*/
import "C"

import "unsafe"

// Handles for test doubles of the libraries. Code above this package (the
// cuda backend) is tested against fakes of Driver, CUBLASLt and NCCL that
// must hand out handles as the real ones do: distinct and non-zero. Each
// function wraps p, any pointer the fake owns (a Go allocation of its own
// per handle), and such a handle must never reach NVIDIA's libraries.

// FakeContext returns a Context wrapping p, for test doubles.
func FakeContext(p unsafe.Pointer) Context { return Context{C.CUcontext(p)} }

// FakeStream returns a Stream wrapping p, for test doubles.
func FakeStream(p unsafe.Pointer) Stream { return Stream{C.CUstream(p)} }

// FakeEvent returns an Event wrapping p, for test doubles.
func FakeEvent(p unsafe.Pointer) Event { return Event{C.CUevent(p)} }

// FakeModule returns a Module wrapping p, for test doubles.
func FakeModule(p unsafe.Pointer) Module { return Module{C.CUmodule(p)} }

// FakeFunction returns a Function wrapping p, for test doubles.
func FakeFunction(p unsafe.Pointer) Function { return Function{C.CUfunction(p)} }

// FakeGreenContext returns a GreenContext wrapping p, for test doubles.
func FakeGreenContext(p unsafe.Pointer) GreenContext { return GreenContext{C.CUgreenCtx(p)} }

// FakeBLASHandle returns a BLASHandle wrapping p, for test doubles.
func FakeBLASHandle(p unsafe.Pointer) BLASHandle { return BLASHandle{C.cublasLtHandle_t(p)} }

// FakeComm returns a Comm wrapping p, for test doubles.
func FakeComm(p unsafe.Pointer) Comm { return Comm{C.ncclComm_t(p)} }

// FakeWindow returns a Window wrapping p, for test doubles.
func FakeWindow(p unsafe.Pointer) Window { return Window{p} }

// FakeHostBuffer returns a HostBuffer over mem, for test doubles: Bytes
// is mem. An empty mem gives the zero (unallocated) buffer.
func FakeHostBuffer(mem []byte) HostBuffer {
	if len(mem) == 0 {
		return HostBuffer{}
	}
	return HostBuffer{unsafe.Pointer(&mem[0]), int64(len(mem))}
}

// FakeHostWord returns a HostWord over w, for test doubles.
func FakeHostWord(w *uint32) HostWord { return HostWord{unsafe.Pointer(w)} }
