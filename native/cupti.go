package native

/*
#cgo LDFLAGS: -ldl -lpthread
#include "cupti.h"
*/
import "C"

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

// CUPTI collects memory-copy records from CUPTI's activity API
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

// Dropped counts records lost because the collector's queue was full.
func (*CUPTI) Dropped() uint64 { return uint64(C.c3_cupti_dropped()) }

// Stop disables the records (CUPTI stays loaded for the process).
func (*CUPTI) Stop() { C.c3_cupti_stop() }

// cuptiPointersSet counts the collector's function pointers into libcupti
// that are set (0 unless a start succeeded).
func cuptiPointersSet() int { return int(C.c3_cupti_pointers_set()) }
