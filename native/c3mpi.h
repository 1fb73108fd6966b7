// Loading an MPI library with dlopen, for the bootstrap of c3lab's ranks
// under mpirun (mpi.go). No MPI header is needed: the handles of the two
// ABIs in use are declared here (ABI-NOTES.md section 6).
#ifndef C3_MPI_H
#define C3_MPI_H

#include <stddef.h>

// The two MPI ABIs: Open MPI's handles are pointers to predefined objects
// the library exports; MPICH's (MPICH, Intel MPI, MVAPICH, Cray MPICH) are
// ints with fixed values.
enum { C3_MPI_ABI_OMPI = 1, C3_MPI_ABI_MPICH = 2 };

typedef struct {
	void *handle;
	int abi;
	// Open MPI: the exported predefined objects.
	void *ompi_comm_world, *ompi_byte;
	int (*MPI_Initialized)(int *);
	int (*MPI_Init)(int *, char ***);
	int (*MPI_Finalize)(void);
	int (*MPI_Get_library_version)(char *, int *);
	int (*MPI_Error_string)(int, char *, int *);
	// The calls that take a communicator or a datatype, in each ABI.
	int (*ompi_comm_rank)(void *, int *);
	int (*ompi_comm_size)(void *, int *);
	int (*ompi_bcast)(void *, int, void *, int, void *);
	int (*ompi_barrier)(void *);
	int (*mpich_comm_rank)(int, int *);
	int (*mpich_comm_size)(int, int *);
	int (*mpich_bcast)(void *, int, int, int, int);
	int (*mpich_barrier)(int);
	char version[512];
} c3_mpi;

// MPICH's handle values (mpi.h of MPICH 3.x and 4.x).
#define C3_MPICH_COMM_WORLD 0x44000000
#define C3_MPICH_BYTE 0x4c00010d

// c3_mpi_open loads the MPI library: path when not NULL, else the first of
// the usual sonames; it picks the ABI from what the library exports and
// says, and refuses one it does not know. On failure it writes why into err.
int c3_mpi_open(c3_mpi *t, const char *path, char *err, size_t errlen);
int c3_mpi_init(const c3_mpi *t);
int c3_mpi_rank(const c3_mpi *t, int *rank);
int c3_mpi_size(const c3_mpi *t, int *size);
int c3_mpi_bcast(const c3_mpi *t, void *buf, int n, int root);
int c3_mpi_barrier(const c3_mpi *t);
int c3_mpi_finalize(const c3_mpi *t);
void c3_mpi_error_string(const c3_mpi *t, int code, char *out, size_t outlen);

#endif
