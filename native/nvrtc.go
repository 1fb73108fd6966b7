package native

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// NVRTC is the runtime compiler, loaded from libnvrtc.so.13 (or .12).
type NVRTC struct {
	t *C.c3_nvrtc
}

// OpenNVRTC loads NVRTC.
func OpenNVRTC() (*NVRTC, error) {
	t := (*C.c3_nvrtc)(C.calloc(1, C.sizeof_c3_nvrtc))
	var buf [512]C.char
	if C.c3_nvrtc_open(t, &buf[0], C.size_t(len(buf))) != 0 {
		C.free(unsafe.Pointer(t))
		return nil, &MissingLibraryError{Library: "libnvrtc.so.13", NeededFor: "c3lab's own kernels (stream op, reductions)", Detail: C.GoString(&buf[0])}
	}
	return &NVRTC{t: t}, nil
}

// Version returns NVRTC's major and minor version.
func (r *NVRTC) Version() (int, int) {
	var ma, mi C.int
	C.c3_nvrtcVersion(r.t, &ma, &mi)
	return int(ma), int(mi)
}

func (r *NVRTC) err(call string, code C.int) error {
	return &NVRTCError{Call: call, Code: int(code), Msg: C.GoString(C.c3_nvrtcGetErrorString(r.t, code))}
}

// CompileCUBIN compiles CUDA C source for an SM architecture ("sm_90") into
// a cubin. A compile error comes with the compiler's log.
func (r *NVRTC) CompileCUBIN(src, name, arch string) ([]byte, error) {
	csrc, cname := C.CString(src), C.CString(name)
	defer C.free(unsafe.Pointer(csrc))
	defer C.free(unsafe.Pointer(cname))
	var prog C.nvrtcProgram
	if rc := C.c3_nvrtcCreateProgram(r.t, &prog, csrc, cname, 0, nil, nil); rc != 0 {
		return nil, r.err("nvrtcCreateProgram", rc)
	}
	defer C.c3_nvrtcDestroyProgram(r.t, &prog)
	opts := []string{"-arch=" + arch, "-std=c++17", "--use_fast_math"}
	copts := make([]*C.char, len(opts))
	for i, o := range opts {
		copts[i] = C.CString(o)
		defer C.free(unsafe.Pointer(copts[i]))
	}
	coptsC := (**C.char)(C.malloc(C.size_t(len(copts)) * C.size_t(unsafe.Sizeof(copts[0]))))
	defer C.free(unsafe.Pointer(coptsC))
	copy(unsafe.Slice(coptsC, len(copts)), copts)
	if rc := C.c3_nvrtcCompileProgram(r.t, prog, C.int(len(opts)), coptsC); rc != 0 {
		e := r.err("nvrtcCompileProgram("+name+", "+arch+")", rc).(*NVRTCError)
		var n C.size_t
		if C.c3_nvrtcGetProgramLogSize(r.t, prog, &n) == 0 && n > 1 {
			buf := C.malloc(n)
			defer C.free(buf)
			C.c3_nvrtcGetProgramLog(r.t, prog, (*C.char)(buf))
			e.Log = C.GoString((*C.char)(buf))
		}
		return nil, e
	}
	var n C.size_t
	if rc := C.c3_nvrtcGetCUBINSize(r.t, prog, &n); rc != 0 {
		return nil, r.err("nvrtcGetCUBINSize", rc)
	}
	if n == 0 {
		return nil, fmt.Errorf("nvrtc produced no cubin for %s (arch %s)", name, arch)
	}
	buf := C.malloc(n)
	defer C.free(buf)
	if rc := C.c3_nvrtcGetCUBIN(r.t, prog, (*C.char)(buf)); rc != 0 {
		return nil, r.err("nvrtcGetCUBIN", rc)
	}
	return C.GoBytes(buf, C.int(n)), nil
}
