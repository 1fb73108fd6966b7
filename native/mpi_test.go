package native

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// fakeMPIFuncs are the MPI calls of a fake libmpi; WORLD(c) and BYTE(d)
// say whether a handle is the ABI's MPI_COMM_WORLD and MPI_BYTE, COMM and
// DTYPE are the ABI's handle types. A non-root rank's MPI_Bcast fills the
// buffer with the root's byte ('R').
const fakeMPIFuncs = `
#include <string.h>
int MPI_Initialized(int *f) { *f = fake_env("FAKE_MPI_INITIALIZED"); fake_log("MPI_Initialized"); return 0; }
int MPI_Init(int *argc, char ***argv) { fake_log("MPI_Init argc=%s", argc ? "set" : "NULL"); return fake_env("FAKE_MPI_INIT_RC"); }
int MPI_Finalize(void) { fake_log("MPI_Finalize"); return 0; }
int MPI_Error_string(int code, char *s, int *n) { sprintf(s, "fake MPI error %d", code); *n = strlen(s); return 0; }
int MPI_Get_library_version(char *v, int *n) { strcpy(v, VERSION); *n = strlen(v); return 0; }
int MPI_Comm_rank(COMM c, int *r) { fake_log("MPI_Comm_rank world=%d", WORLD(c)); *r = fake_env("FAKE_MPI_RANK"); return 0; }
int MPI_Comm_size(COMM c, int *r) { fake_log("MPI_Comm_size world=%d", WORLD(c)); *r = fake_env("FAKE_MPI_SIZE"); return 0; }
int MPI_Bcast(void *buf, int n, DTYPE d, int root, COMM c) {
	fake_log("MPI_Bcast n=%d byte=%d root=%d world=%d", n, BYTE(d), root, WORLD(c));
	if (fake_env("FAKE_MPI_BCAST_RC")) return fake_env("FAKE_MPI_BCAST_RC");
	if (fake_env("FAKE_MPI_RANK") != root) memset(buf, 'R', n);
	return 0;
}
int MPI_Barrier(COMM c) { fake_log("MPI_Barrier world=%d", WORLD(c)); return 0; }
`

// fakeOpenMPI is Open MPI's ABI: handles are the addresses of objects the
// library exports.
const fakeOpenMPI = `
char ompi_mpi_comm_world[512], ompi_mpi_byte[512];
#define COMM void *
#define DTYPE void *
#define WORLD(c) ((c) == (void *)ompi_mpi_comm_world)
#define BYTE(d) ((d) == (void *)ompi_mpi_byte)
#define VERSION "Open MPI v4.1.4, package: Debian OpenMPI\nmore"
` + fakeMPIFuncs

// fakeMPICH is MPICH's ABI: handles are ints of fixed values.
const fakeMPICH = `
#define COMM int
#define DTYPE int
#define WORLD(c) ((c) == 0x44000000)
#define BYTE(d) ((d) == 0x4c00010d)
#define VERSION "MPICH Version:      4.0.2"
` + fakeMPIFuncs

// fakeOtherMPI is neither.
const fakeOtherMPI = `
#define COMM long
#define DTYPE long
#define WORLD(c) 0
#define BYTE(d) 0
#define VERSION "Some MPI 1.0"
` + fakeMPIFuncs

// The fakes of MPICH's ABI are loaded by path: a real Open MPI installed
// on the machine (CI installs one) has libmpi.so.40, which the search by
// soname tries first. The fake Open MPI is found by soname, the loader
// searching LD_LIBRARY_PATH before the system's folders.
//
// Each ABI's handles reach the library as that ABI spells MPI_COMM_WORLD
// and MPI_BYTE, the root's bytes reach the other ranks, and a library of
// an unknown ABI is refused before any call.
func TestMPIBootstrapABIs(t *testing.T) {
	ompi, mpich, other := t.TempDir(), t.TempDir(), t.TempDir()
	buildFakeLib(t, ompi, "libmpi.so.40", fakeOpenMPI)
	buildFakeLib(t, mpich, "libmpi.so.12", fakeMPICH)
	buildFakeLib(t, other, "libmpi.so.12", fakeOtherMPI)
	all := func() []string {
		return []string{"MPI_Initialized", "MPI_Init argc=NULL", "MPI_Comm_rank world=1", "MPI_Comm_size world=1",
			"MPI_Bcast n=128 byte=1 root=0 world=1", "MPI_Barrier world=1", "MPI_Finalize"}
	}
	for _, tc := range []struct {
		name, dir string
		env       []string
		calls     []string
	}{
		{"open mpi rank 0, by soname", ompi, []string{"FAKE_MPI_RANK=0", "FAKE_MPI_SIZE=2", "WANT_ABI=Open MPI", "WANT_VERSION=Open MPI v4.1.4, package: Debian OpenMPI"}, all()},
		{"open mpi rank 1 gets the root's bytes", ompi, []string{"FAKE_MPI_RANK=1", "FAKE_MPI_SIZE=2", "WANT_ABI=Open MPI", "WANT_BYTE=R"}, all()},
		{"mpich by path", mpich, []string{"FAKE_MPI_RANK=1", "FAKE_MPI_SIZE=4", "WANT_ABI=MPICH", "WANT_BYTE=R", "MPI_PATH=" + filepath.Join(mpich, "libmpi.so.12")}, all()},
		{"already initialized", mpich, []string{"MPI_PATH=" + filepath.Join(mpich, "libmpi.so.12"), "FAKE_MPI_INITIALIZED=1", "FAKE_MPI_RANK=0", "FAKE_MPI_SIZE=2", "WANT_ABI=MPICH"},
			[]string{"MPI_Initialized", "MPI_Comm_rank world=1", "MPI_Comm_size world=1", "MPI_Bcast n=128 byte=1 root=0 world=1", "MPI_Barrier world=1", "MPI_Finalize"}},
		{"a failed bcast says so", ompi, []string{"FAKE_MPI_RANK=0", "FAKE_MPI_SIZE=2", "FAKE_MPI_BCAST_RC=5", "WANT_ABI=Open MPI", "WANT_ERROR=MPI_Bcast failed: MPI error 5: fake MPI error 5"},
			[]string{"MPI_Initialized", "MPI_Init argc=NULL", "MPI_Comm_rank world=1", "MPI_Comm_size world=1", "MPI_Bcast n=128 byte=1 root=0 world=1"}},
		{"an unknown ABI is refused", other, []string{"MPI_PATH=" + filepath.Join(other, "libmpi.so.12"), "WANT_ERROR=neither Open MPI's ABI (no ompi_mpi_comm_world) nor MPICH's (its version string is \"Some MPI 1.0\")"}, nil},
		{"no library", t.TempDir(), []string{"MPI_PATH=/nonexistent/libmpi.so.40", "WANT_ERROR=/nonexistent/libmpi.so.40 could not be loaded (needed for the bootstrap of ranks started by mpirun)"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := runChild(t, tc.dir, "TestMPIBootstrapChild", tc.env...)
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q\nwant %q", calls, tc.calls)
			}
		})
	}
}

func TestMPIBootstrapChild(t *testing.T) {
	inChild(t)
	m, err := LoadMPI(os.Getenv("MPI_PATH"))
	if err == nil {
		err = func() error {
			if got, want := m.ABI(), os.Getenv("WANT_ABI"); got != want {
				t.Errorf("ABI %q, want %q", got, want)
			}
			if want := os.Getenv("WANT_VERSION"); want != "" && m.Version() != want {
				t.Errorf("version %q, want %q", m.Version(), want)
			}
			if err := m.Init(); err != nil {
				return err
			}
			rank, err := m.Rank()
			if err != nil {
				return err
			}
			size, err := m.Size()
			if err != nil {
				return err
			}
			if strconv.Itoa(rank) != os.Getenv("FAKE_MPI_RANK") || strconv.Itoa(size) != os.Getenv("FAKE_MPI_SIZE") {
				t.Errorf("rank %d of %d", rank, size)
			}
			id := bytes.Repeat([]byte{'0'}, UniqueIDBytes)
			if err := m.Bcast(id, 0); err != nil {
				return err
			}
			want := byte('0')
			if w := os.Getenv("WANT_BYTE"); w != "" {
				want = w[0]
			}
			if !bytes.Equal(id, bytes.Repeat([]byte{want}, UniqueIDBytes)) {
				t.Errorf("after the broadcast the id is %q", id[:8])
			}
			if err := m.Barrier(); err != nil {
				return err
			}
			return m.Finalize()
		}()
	}
	want := os.Getenv("WANT_ERROR")
	switch {
	case want == "" && err != nil:
		t.Fatal(err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("error %v, want one saying %q", err, want)
	}
}

func TestUniqueIDBytes(t *testing.T) {
	b := make([]byte, UniqueIDBytes)
	for i := range b {
		b[i] = byte(i * 7)
	}
	u, err := UniqueIDFromBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(u.Bytes(), b) {
		t.Error("the id's bytes do not round-trip")
	}
	if _, err := UniqueIDFromBytes(b[:100]); err == nil || err.Error() != "an NCCL unique id is 128 bytes, got 100" {
		t.Errorf("a short id: %v", err)
	}
}
