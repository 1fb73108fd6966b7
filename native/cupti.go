package native

/*
#cgo LDFLAGS: -ldl -lpthread
#include <stdlib.h>
#include "cupti.h"
*/
import "C"

import "fmt"

// CopyRecord is one memory copy as CUPTI's activity API reported it.
type CopyRecord struct {
	Bytes uint64
	// Start and End are on CUPTI's clock (CUPTI.Now), in ns.
	Start, End uint64
	// Device is the CUDA device ordinal; Stream is CUPTI's stream id.
	Device, Stream uint32
	// Kind is CUpti_ActivityMemcpyKind (8 device to device, 10 peer to peer).
	Kind uint8
}

// KernelRecord is one kernel execution as CUPTI's activity API reported it
// (CONCURRENT_KERNEL records, which do not serialize kernels).
type KernelRecord struct {
	// Start and End are on CUPTI's clock (CUPTI.Now), in ns: when the
	// kernel's first CTA started and its last one ended.
	Start, End uint64
	// Device is the CUDA device ordinal; Stream is CUPTI's stream id.
	Device, Stream uint32
	// Grid and Block are the launch's dimensions.
	Grid, Block [3]int32
	// StaticShared and DynamicShared are its shared memory per CTA, in bytes.
	StaticShared, DynamicShared int32
	// Registers is per thread.
	Registers uint16
	// Name is the kernel's (mangled) name, cut to 159 bytes.
	Name string
}

// CTAs is the launch's grid size.
func (k KernelRecord) CTAs() int64 {
	return int64(k.Grid[0]) * int64(k.Grid[1]) * int64(k.Grid[2])
}

// CUPTI collects memory-copy and kernel records from CUPTI's activity API
// (libcupti.so.13, or .12). CUPTI's buffer callbacks are process-wide, so
// there is one collector per process: StartCUPTI returns it.
type CUPTI struct{}

// StartCUPTI loads CUPTI and enables memory-copy records. A missing library
// comes back as a *MissingLibraryError.
func StartCUPTI() (*CUPTI, error) {
	var buf [512]C.char
	if C.c3_cupti_start(&buf[0], C.size_t(len(buf))) != 0 {
		return nil, &MissingLibraryError{Library: "libcupti.so.13", NeededFor: "copy-engine timelines from CUPTI (C3LAB_CUPTI=1)", Detail: C.GoString(&buf[0])}
	}
	return &CUPTI{}, nil
}

// ProbeCUPTI checks that CUPTI loads, without enabling any record, and
// returns its API version (cuptiGetVersion; 0 when it does not say); a
// missing library comes back as a *MissingLibraryError.
func ProbeCUPTI() (apiVersion uint32, err error) {
	var buf [512]C.char
	var v C.uint32_t
	if C.c3_cupti_probe(&buf[0], C.size_t(len(buf)), &v) != 0 {
		return 0, &MissingLibraryError{Library: "libcupti.so.13", NeededFor: "copy-engine timelines from CUPTI (C3LAB_CUPTI=1)", Detail: C.GoString(&buf[0])}
	}
	return uint32(v), nil
}

// Now is CUPTI's current timestamp in ns.
func (*CUPTI) Now() uint64 { return uint64(C.c3_cupti_now()) }

// Take forces CUPTI to deliver what it has recorded and returns every
// record queued since the last call.
func (*CUPTI) Take() []CopyRecord {
	C.c3_cupti_flush()
	var out []CopyRecord
	var buf [1024]C.c3_copy_record
	for {
		n := int(C.c3_cupti_take(&buf[0], C.int(len(buf))))
		for _, r := range buf[:n] {
			out = append(out, CopyRecord{Bytes: uint64(r.bytes), Start: uint64(r.start), End: uint64(r.end),
				Device: uint32(r.device), Stream: uint32(r.stream), Kind: uint8(r.copy_kind)})
		}
		if n < len(buf) {
			return out
		}
	}
}

// EnableKernels turns on kernel records (CONCURRENT_KERNEL) as well: every
// kernel's start and end as the GPU ran it, where c3lab's own spans start
// when a stream reaches the op. Calling it again does nothing.
func (*CUPTI) EnableKernels() error {
	var buf [256]C.char
	if C.c3_cupti_enable_kernels(&buf[0], C.size_t(len(buf))) != 0 {
		return fmt.Errorf("CUPTI kernel records: %s", C.GoString(&buf[0]))
	}
	return nil
}

// TakeKernels returns every kernel record queued since the last call; call
// Take first, which makes CUPTI deliver what it has.
func (*CUPTI) TakeKernels() []KernelRecord {
	var out []KernelRecord
	buf := make([]C.c3_kernel_record, 256)
	for {
		n := int(C.c3_cupti_take_kernels(&buf[0], C.int(len(buf))))
		for _, r := range buf[:n] {
			out = append(out, kernelRecord(&r))
		}
		if n < len(buf) {
			return out
		}
	}
}

func kernelRecord(r *C.c3_kernel_record) KernelRecord {
	k := KernelRecord{Start: uint64(r.start), End: uint64(r.end), Device: uint32(r.device), Stream: uint32(r.stream),
		StaticShared: int32(r.static_shared), DynamicShared: int32(r.dynamic_shared), Registers: uint16(r.registers),
		Name: C.GoString(&r.name[0])}
	for i := range 3 {
		k.Grid[i], k.Block[i] = int32(r.grid[i]), int32(r.block[i])
	}
	return k
}

// parseKernelRecord reads one CUpti_ActivityKernel record (its bytes as
// CUPTI lays them out) with the collector's parser; for tests.
func parseKernelRecord(record []byte) (KernelRecord, bool) {
	if len(record) < 112 {
		return KernelRecord{}, false
	}
	p := C.CBytes(record)
	defer C.free(p)
	var r C.c3_kernel_record
	if C.c3_cupti_parse_kernel((*C.uint8_t)(p), &r) != 0 {
		return KernelRecord{}, false
	}
	return kernelRecord(&r), true
}

// Dropped counts records lost because the collector's queue was full.
func (*CUPTI) Dropped() uint64 { return uint64(C.c3_cupti_dropped()) }

// Stop disables the records (CUPTI stays loaded for the process).
func (*CUPTI) Stop() { C.c3_cupti_stop() }

// cuptiPointersSet counts the collector's function pointers into libcupti
// that are set (0 unless a start succeeded).
func cuptiPointersSet() int { return int(C.c3_cupti_pointers_set()) }
