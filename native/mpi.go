package native

/*
#cgo LDFLAGS: -ldl
#include <stdlib.h>
#include "c3mpi.h"
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// MPI is an MPI library loaded at run time (libmpi.so.40 for Open MPI,
// libmpi.so.12 or libmpich.so.12 for MPICH and its derivatives), for the
// bootstrap of c3lab's ranks under mpirun: MPI_Init, the rank and size of
// MPI_COMM_WORLD, MPI_Bcast of bytes and MPI_Barrier. Its calls must all
// be made from one OS thread (runtime.LockOSThread): the thread that
// called Init is the one MPI_Finalize must come from.
type MPI struct {
	t *C.c3_mpi
}

// MPI ABIs: how the library spells MPI_COMM_WORLD and MPI_BYTE.
const (
	MPIABIOpenMPI = "Open MPI"
	MPIABIMPICH   = "MPICH"
)

// MPIError is a failed MPI call.
type MPIError struct {
	Call string
	Code int
	Msg  string
}

func (e *MPIError) Error() string {
	if e.Msg == "" {
		return fmt.Sprintf("%s failed: MPI error %d", e.Call, e.Code)
	}
	return fmt.Sprintf("%s failed: MPI error %d: %s", e.Call, e.Code, e.Msg)
}

// LoadMPI loads the MPI library: path when not "", else the first of the
// usual sonames the loader finds. A library of neither known ABI is
// refused; a missing one comes back as a *MissingLibraryError.
func LoadMPI(path string) (*MPI, error) {
	t := (*C.c3_mpi)(C.calloc(1, C.sizeof_c3_mpi))
	var buf [512]C.char
	var cpath *C.char
	if path != "" {
		cpath = C.CString(path)
		defer C.free(unsafe.Pointer(cpath))
	}
	if C.c3_mpi_open(t, cpath, &buf[0], C.size_t(len(buf))) != 0 {
		C.free(unsafe.Pointer(t))
		lib := path
		if lib == "" {
			lib = "libmpi.so.40 (Open MPI) or libmpi.so.12 (MPICH)"
		}
		return nil, &MissingLibraryError{Library: lib, NeededFor: "the bootstrap of ranks started by mpirun", Detail: C.GoString(&buf[0])}
	}
	return &MPI{t: t}, nil
}

// ABI is MPIABIOpenMPI or MPIABIMPICH.
func (m *MPI) ABI() string {
	if m.t.abi == C.C3_MPI_ABI_OMPI {
		return MPIABIOpenMPI
	}
	return MPIABIMPICH
}

// Version is the library's own description (MPI_Get_library_version),
// its first line; "" when it gives none.
func (m *MPI) Version() string {
	v := C.GoString(&m.t.version[0])
	first, _, _ := strings.Cut(v, "\n")
	return strings.TrimSpace(first)
}

func (m *MPI) check(call string, r C.int) error {
	if r == 0 {
		return nil
	}
	var buf [1024]C.char
	C.c3_mpi_error_string(m.t, r, &buf[0], C.size_t(len(buf)))
	return &MPIError{Call: call, Code: int(r), Msg: strings.TrimSpace(C.GoString(&buf[0]))}
}

// Init initializes MPI unless it is already (MPI_Initialized).
func (m *MPI) Init() error { return m.check("MPI_Init", C.c3_mpi_init(m.t)) }

// Rank is this process's rank in MPI_COMM_WORLD.
func (m *MPI) Rank() (int, error) {
	var r C.int
	err := m.check("MPI_Comm_rank", C.c3_mpi_rank(m.t, &r))
	return int(r), err
}

// Size is the size of MPI_COMM_WORLD.
func (m *MPI) Size() (int, error) {
	var r C.int
	err := m.check("MPI_Comm_size", C.c3_mpi_size(m.t, &r))
	return int(r), err
}

// Bcast sends buf from root to every rank of MPI_COMM_WORLD (MPI_BYTE).
func (m *MPI) Bcast(buf []byte, root int) error {
	if len(buf) == 0 {
		return nil
	}
	p := C.malloc(C.size_t(len(buf)))
	defer C.free(p)
	c := unsafe.Slice((*byte)(p), len(buf))
	copy(c, buf)
	if err := m.check("MPI_Bcast", C.c3_mpi_bcast(m.t, p, C.int(len(buf)), C.int(root))); err != nil {
		return err
	}
	copy(buf, c)
	return nil
}

// Barrier waits for every rank of MPI_COMM_WORLD.
func (m *MPI) Barrier() error { return m.check("MPI_Barrier", C.c3_mpi_barrier(m.t)) }

// Finalize ends MPI; no MPI call may follow.
func (m *MPI) Finalize() error { return m.check("MPI_Finalize", C.c3_mpi_finalize(m.t)) }
