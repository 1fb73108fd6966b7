// Package native loads NVIDIA's libraries at run time (dlopen) and exposes
// the few calls c3lab makes through a narrow Go API: the CUDA driver API
// (libcuda.so.1), cuBLASLt, NCCL and NVRTC. Building needs Go and a C
// compiler only, no CUDA toolkit: the shim declares the types it uses
// (native/ABI-NOTES.md records where each came from).
//
// CUDA calls act on the calling OS thread's current context: callers pin
// their goroutine with runtime.LockOSThread and set the context first.
package native

import "fmt"

// MissingLibraryError says that a library (or one of its symbols) could not
// be loaded, and what needs it.
type MissingLibraryError struct {
	Library   string // e.g. "libnccl.so.2"
	NeededFor string // e.g. "collectives on the SMs"
	Detail    string // the loader's message
}

func (e *MissingLibraryError) Error() string {
	return fmt.Sprintf("%s could not be loaded (needed for %s): %s", e.Library, e.NeededFor, e.Detail)
}

// CUDAError is a failed CUDA driver call.
type CUDAError struct {
	Call string
	Code int
	Name string // CUDA_ERROR_...
	Msg  string
}

func (e *CUDAError) Error() string {
	return fmt.Sprintf("%s failed: %s (%d): %s", e.Call, e.Name, e.Code, e.Msg)
}

// CUBLASError is a failed cuBLASLt call.
type CUBLASError struct {
	Call   string
	Status int
}

func (e *CUBLASError) Error() string {
	return fmt.Sprintf("%s failed: cuBLAS status %d (%s)", e.Call, e.Status, cublasStatusName(e.Status))
}

func cublasStatusName(s int) string {
	switch s {
	case 1:
		return "not initialized"
	case 3:
		return "alloc failed"
	case 7:
		return "invalid value"
	case 8:
		return "arch mismatch"
	case 13:
		return "execution failed"
	case 14:
		return "internal error"
	case 15:
		return "not supported"
	}
	return "unknown"
}

// NCCLError is a failed NCCL call.
type NCCLError struct {
	Call string
	Code int
	Msg  string
}

func (e *NCCLError) Error() string {
	return fmt.Sprintf("%s failed: NCCL error %d: %s", e.Call, e.Code, e.Msg)
}

// NVRTCError is a failed kernel compilation; Log holds the compiler's log.
type NVRTCError struct {
	Call string
	Code int
	Msg  string
	Log  string
}

func (e *NVRTCError) Error() string {
	if e.Log != "" {
		return fmt.Sprintf("%s failed: %s\n%s", e.Call, e.Msg, e.Log)
	}
	return fmt.Sprintf("%s failed: %s", e.Call, e.Msg)
}
