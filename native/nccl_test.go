package native

import (
	"os"
	"slices"
	"strings"
	"testing"
)

// fakeNCCL is a libnccl.so.2 with every call the shim requires. Its
// ncclGetVersion returns $FAKE_NCCL_VERSION_RC when that is set, and
// reports $FAKE_NCCL_VERSION otherwise; ncclCommInitRankConfig logs the
// config's size and version.
const fakeNCCL = `
typedef struct { char internal[128]; } fake_id;
typedef struct { unsigned long size; unsigned magic, version; } cfg_t;
int ncclGetVersion(int *v) {
	fake_log("ncclGetVersion");
	if (fake_env("FAKE_NCCL_VERSION_RC")) return fake_env("FAKE_NCCL_VERSION_RC");
	*v = fake_env("FAKE_NCCL_VERSION");
	return 0;
}
const char *ncclGetErrorString(int r) { return "fake NCCL failure"; }
int ncclGetUniqueId(fake_id *id) { return 0; }
int ncclCommInitRankConfig(void **comm, int n, fake_id id, int rank, cfg_t *cfg) {
	fake_log("ncclCommInitRankConfig size=%lu version=%u", cfg->size, cfg->version);
	*comm = comm;
	return 0;
}
int ncclCommDestroy(void *c) { return 0; }
int ncclCommAbort(void *c) { return 0; }
int ncclCommGetAsyncError(void *c, int *r) { *r = 0; return 0; }
int ncclAllGather(void) { return 0; }
int ncclReduceScatter(void) { return 0; }
int ncclAllReduce(void) { return 0; }
int ncclSend(void) { return 0; }
int ncclRecv(void) { return 0; }
int ncclGroupStart(void) { return 0; }
int ncclGroupEnd(void) { return 0; }
`

// A communicator's config carries NCCL's version; when ncclGetVersion
// fails, no communicator is made from a guessed version: the error says
// what failed.
func TestNCCLVersionIsChecked(t *testing.T) {
	dir := t.TempDir()
	buildFakeLib(t, dir, "libnccl.so.2", fakeNCCL)
	for _, tc := range []struct {
		name  string
		env   []string
		calls []string
	}{
		{"2.28 layout", []string{"FAKE_NCCL_VERSION=22803"},
			[]string{"ncclGetVersion", "ncclCommInitRankConfig size=80 version=22803"}},
		{"2.27 layout", []string{"FAKE_NCCL_VERSION=22703"},
			[]string{"ncclGetVersion", "ncclCommInitRankConfig size=72 version=22703"}},
		{"ncclGetVersion fails", []string{"FAKE_NCCL_VERSION_RC=3", "WANT_ERROR=ncclGetVersion failed: NCCL error 3: fake NCCL failure"},
			[]string{"ncclGetVersion"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := runChild(t, dir, "TestNCCLVersionChild", tc.env...)
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

func TestNCCLVersionChild(t *testing.T) {
	inChild(t)
	n, err := OpenNCCL()
	if err != nil {
		t.Fatal(err)
	}
	_, err = n.InitRank(UniqueID{}, 1, 0, CommConfig{CTAPolicy: -1})
	want := os.Getenv("WANT_ERROR")
	switch {
	case want == "" && err != nil:
		t.Fatalf("InitRank: %v", err)
	case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
		t.Fatalf("InitRank: error %v, want one saying %q", err, want)
	}
}
