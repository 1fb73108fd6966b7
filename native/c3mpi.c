// See c3mpi.h.
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "c3mpi.h"
#include "dl.h"

int c3_mpi_open(c3_mpi *t, const char *path, char *err, size_t errlen) {
	memset(t, 0, sizeof *t);
	// Open MPI loads its components with dlopen, and they look for
	// libmpi's symbols globally: RTLD_GLOBAL, as mpi4py does.
	const char *names[] = {"libmpi.so.40", "libmpi.so.12", "libmpich.so.12", "libmpi.so", NULL};
	const char *one[] = {path, NULL};
	const char *const *list = path ? one : names;
	for (int i = 0; list[i] && !t->handle; i++) t->handle = dlopen(list[i], RTLD_NOW | RTLD_GLOBAL);
	if (!t->handle) {
		const char *why = dlerror();
		snprintf(err, errlen, "%s: %s", list[0], why ? why : "not found");
		return -1;
	}
	SYM(t, MPI_Initialized, "MPI_Initialized");
	SYM(t, MPI_Init, "MPI_Init");
	SYM(t, MPI_Finalize, "MPI_Finalize");
	OPT(t, MPI_Get_library_version, "MPI_Get_library_version");
	OPT(t, MPI_Error_string, "MPI_Error_string");
	if (t->MPI_Get_library_version) {
		int n = 0;
		if (t->MPI_Get_library_version(t->version, &n) != 0) t->version[0] = 0;
		t->version[sizeof t->version - 1] = 0;
	}
	t->ompi_comm_world = dlsym(t->handle, "ompi_mpi_comm_world");
	t->ompi_byte = dlsym(t->handle, "ompi_mpi_byte");
	if (t->ompi_comm_world && t->ompi_byte) {
		t->abi = C3_MPI_ABI_OMPI;
		SYM(t, ompi_comm_rank, "MPI_Comm_rank");
		SYM(t, ompi_comm_size, "MPI_Comm_size");
		SYM(t, ompi_bcast, "MPI_Bcast");
		SYM(t, ompi_barrier, "MPI_Barrier");
		return 0;
	}
	// MPICH and its derivatives say so in their version string.
	if (strstr(t->version, "MPICH") || strstr(t->version, "Intel(R) MPI") || strstr(t->version, "MVAPICH")) {
		t->abi = C3_MPI_ABI_MPICH;
		SYM(t, mpich_comm_rank, "MPI_Comm_rank");
		SYM(t, mpich_comm_size, "MPI_Comm_size");
		SYM(t, mpich_bcast, "MPI_Bcast");
		SYM(t, mpich_barrier, "MPI_Barrier");
		return 0;
	}
	snprintf(err, errlen, "the MPI library is neither Open MPI's ABI (no ompi_mpi_comm_world) nor MPICH's (its version string is \"%.200s\")",
	         t->version);
	dlclose(t->handle);
	t->handle = NULL;
	return -1;
}

int c3_mpi_init(const c3_mpi *t) {
	int done = 0;
	int r = t->MPI_Initialized(&done);
	if (r || done) return r;
	return t->MPI_Init(NULL, NULL);
}

int c3_mpi_rank(const c3_mpi *t, int *rank) {
	if (t->abi == C3_MPI_ABI_OMPI) return t->ompi_comm_rank(t->ompi_comm_world, rank);
	return t->mpich_comm_rank(C3_MPICH_COMM_WORLD, rank);
}

int c3_mpi_size(const c3_mpi *t, int *size) {
	if (t->abi == C3_MPI_ABI_OMPI) return t->ompi_comm_size(t->ompi_comm_world, size);
	return t->mpich_comm_size(C3_MPICH_COMM_WORLD, size);
}

int c3_mpi_bcast(const c3_mpi *t, void *buf, int n, int root) {
	if (t->abi == C3_MPI_ABI_OMPI) return t->ompi_bcast(buf, n, t->ompi_byte, root, t->ompi_comm_world);
	return t->mpich_bcast(buf, n, C3_MPICH_BYTE, root, C3_MPICH_COMM_WORLD);
}

int c3_mpi_barrier(const c3_mpi *t) {
	if (t->abi == C3_MPI_ABI_OMPI) return t->ompi_barrier(t->ompi_comm_world);
	return t->mpich_barrier(C3_MPICH_COMM_WORLD);
}

int c3_mpi_finalize(const c3_mpi *t) { return t->MPI_Finalize(); }

void c3_mpi_error_string(const c3_mpi *t, int code, char *out, size_t outlen) {
	out[0] = 0;
	if (!t->MPI_Error_string || outlen < 1024) return; // MPI_MAX_ERROR_STRING is at most 1024 in both ABIs
	int n = 0;
	if (t->MPI_Error_string(code, out, &n) != 0) out[0] = 0;
	out[outlen - 1] = 0;
}
