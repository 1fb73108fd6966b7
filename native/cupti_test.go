package native

import (
	"encoding/binary"
	"os"
	"slices"
	"strings"
	"testing"
)

// fakeCUPTI is a libcupti.so.13. $FAKE_CUPTI_REGISTER_RC fails
// cuptiActivityRegisterCallbacks; $FAKE_CUPTI_ENABLE_FAIL fails
// cuptiActivityEnable of that kind. Built with -DNO_TIMESTAMP it lacks
// cuptiGetTimestamp, the last symbol the shim loads.
const fakeCUPTI = `
#include <stdint.h>
#include <string.h>
typedef void (*request_fn)(uint8_t **, size_t *, size_t *);
typedef void (*complete_fn)(void *, uint32_t, uint8_t *, size_t, size_t);
static request_fn request_cb;
static complete_fn complete_cb;
static const char fake_kernel_name[] = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
int cuptiActivityRegisterCallbacks(void *request, void *complete) {
	fake_log("register");
	request_cb = (request_fn)request;
	complete_cb = (complete_fn)complete;
	return fake_env("FAKE_CUPTI_REGISTER_RC");
}
static void put32(uint8_t *r, int off, uint32_t v) { memcpy(r + off, &v, 4); }
static void put64(uint8_t *r, int off, uint64_t v) { memcpy(r + off, &v, 8); }
// With $FAKE_CUPTI_RECORDS set, a flush delivers one buffer: an h2d copy
// record (kind 1, 64 bytes) and a kernel record (kind 10, 160 bytes) laid
// out as ABI-NOTES 5 and 5.1 say.
static void deliver(void) {
	if (!fake_env("FAKE_CUPTI_RECORDS") || !request_cb || !complete_cb) return;
	uint8_t *buf; size_t size, max;
	request_cb(&buf, &size, &max);
	memset(buf, 0, 224);
	uint8_t *c = buf, *k = buf + 64;
	put32(c, 0, 1); c[4] = 1; put64(c, 8, 1 << 20); put64(c, 16, 100); put64(c, 24, 200); put32(c, 40, 3);
	put32(k, 0, 10); k[6] = 168; put64(k, 16, 1000); put64(k, 24, 5000); put32(k, 40, 0); put32(k, 48, 7);
	put32(k, 52, 2); put32(k, 56, 66); put32(k, 60, 1); put32(k, 64, 384); put32(k, 68, 1); put32(k, 72, 1);
	put32(k, 80, 213188);
	const char *name = fake_kernel_name; memcpy(k + 104, &name, sizeof name);
	complete_cb(0, 0, buf, size, 224);
}
int cuptiActivityEnable(int kind) {
	fake_log("enable %d", kind);
	return kind == fake_env("FAKE_CUPTI_ENABLE_FAIL") ? 1 : 0;
}
int cuptiActivityDisable(int kind) { fake_log("disable %d", kind); return 0; }
int cuptiActivityFlushAll(uint32_t flag) { fake_log("flush"); deliver(); return 0; }
int cuptiActivityGetNextRecord(uint8_t *buf, size_t n, void **rec) {
	uint8_t *next = *rec ? (uint8_t *)*rec + 64 : buf; // the copy, then the kernel
	if (next >= buf + n || next > buf + 64) return 2;
	*rec = next;
	return 0;
}
#ifndef NO_TIMESTAMP
int cuptiGetTimestamp(uint64_t *t) { *t = 4242; return 0; }
#endif
__attribute__((destructor)) static void unloaded(void) { fake_log("unloaded"); }
`

// A CUPTI start that fails part way leaves nothing of the library behind:
// the kinds it enabled are disabled again, the library is closed and no
// function pointer into it stays set, so the collector's calls do
// nothing and the next start loads every symbol afresh.
func TestFailedCUPTIStartLeavesNoPointers(t *testing.T) {
	full, partial := t.TempDir(), t.TempDir()
	buildFakeLib(t, full, "libcupti.so.13", fakeCUPTI)
	buildFakeLib(t, partial, "libcupti.so.13", "#define NO_TIMESTAMP 1\n"+fakeCUPTI)
	for _, tc := range []struct {
		name  string
		dir   string
		env   []string
		calls []string
	}{
		{"a symbol is missing", partial, []string{"WANT_ERROR=symbol cuptiGetTimestamp missing"},
			[]string{"unloaded"}},
		{"registering the callbacks fails", full, []string{"FAKE_CUPTI_REGISTER_RC=7", "WANT_ERROR=CUPTI error 7", "RETRY=1"},
			[]string{"register", "unloaded", "register", "enable 1", "enable 22", "disable 1", "disable 22", "flush"}},
		{"enabling MEMCPY fails", full, []string{"FAKE_CUPTI_ENABLE_FAIL=1", "WANT_ERROR=CUPTI error 1", "RETRY=1"},
			[]string{"register", "enable 1", "unloaded", "register", "enable 1", "enable 22", "disable 1", "disable 22", "flush"}},
		{"enabling MEMCPY2 fails", full, []string{"FAKE_CUPTI_ENABLE_FAIL=22", "WANT_ERROR=CUPTI error 1", "RETRY=1"},
			[]string{"register", "enable 1", "enable 22", "disable 1", "unloaded", "register", "enable 1", "enable 22", "disable 1", "disable 22", "flush"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := runChild(t, tc.dir, "TestFailedCUPTIStartChild", tc.env...)
			if !slices.Equal(calls, tc.calls) {
				t.Errorf("calls %q, want %q", calls, tc.calls)
			}
		})
	}
}

func TestFailedCUPTIStartChild(t *testing.T) {
	inChild(t)
	_, err := StartCUPTI()
	if want := os.Getenv("WANT_ERROR"); err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("StartCUPTI: error %v, want one saying %q", err, want)
	}
	if n := cuptiPointersSet(); n != 0 {
		t.Fatalf("after a failed start %d pointers into the closed libcupti are still set", n)
	}
	var none *CUPTI
	if none.Now() != 0 || len(none.Take()) != 0 {
		t.Fatal("a failed start left a collector that reads CUPTI")
	}
	none.Stop()
	if os.Getenv("RETRY") == "" {
		return
	}
	for _, v := range []string{"FAKE_CUPTI_REGISTER_RC", "FAKE_CUPTI_ENABLE_FAIL"} {
		os.Unsetenv(v)
	}
	c, err := StartCUPTI()
	if err != nil {
		t.Fatalf("the start after a failed one: %v", err)
	}
	if now := c.Now(); now != 4242 {
		t.Errorf("Now() = %d after a fresh load, want the fake's 4242", now)
	}
	c.Stop()
}

// The collector reads a kernel record's prefix at the offsets ABI-NOTES 5.1
// gives, and nothing else: another kind, or too few bytes, is no kernel.
func TestParseKernelRecord(t *testing.T) {
	rec := make([]byte, 160)
	le := binary.LittleEndian
	le.PutUint32(rec[0:], 10)
	le.PutUint16(rec[6:], 168)
	le.PutUint64(rec[16:], 1000)
	le.PutUint64(rec[24:], 5000)
	le.PutUint64(rec[32:], 5000) // completed: not read
	le.PutUint32(rec[40:], 1)
	le.PutUint32(rec[48:], 7)
	for i, v := range []uint32{2, 66, 1, 384, 1, 1} {
		le.PutUint32(rec[52+4*i:], v)
	}
	le.PutUint32(rec[76:], 16)
	le.PutUint32(rec[80:], 213188)
	got, ok := parseKernelRecord(rec)
	want := KernelRecord{Start: 1000, End: 5000, Device: 1, Stream: 7, Grid: [3]int32{2, 66, 1}, Block: [3]int32{384, 1, 1},
		StaticShared: 16, DynamicShared: 213188, Registers: 168}
	if !ok || got != want || got.CTAs() != 132 {
		t.Errorf("parsed %+v (%v), want %+v", got, ok, want)
	}
	le.PutUint32(rec[0:], 1) // a memcpy record
	if _, ok := parseKernelRecord(rec); ok {
		t.Error("a memcpy record parsed as a kernel")
	}
	if _, ok := parseKernelRecord(rec[:100]); ok {
		t.Error("100 bytes parsed as a kernel record")
	}
}

// Records CUPTI delivers go to their queues: a copy to Take, a kernel, its
// name copied out of CUPTI's memory, to TakeKernels; each once.
func TestCUPTIDeliversCopyAndKernelRecords(t *testing.T) {
	dir := t.TempDir()
	buildFakeLib(t, dir, "libcupti.so.13", fakeCUPTI)
	calls := runChild(t, dir, "TestCUPTIDeliversCopyAndKernelRecordsChild", "FAKE_CUPTI_RECORDS=1")
	if want := []string{"register", "enable 1", "enable 22", "enable 10", "flush", "flush", "disable 1", "disable 22", "disable 10", "flush",
		"enable 1", "enable 22", "disable 1", "disable 22", "flush"}; !slices.Equal(calls, want) {
		t.Errorf("calls %q, want %q", calls, want)
	}
}

func TestCUPTIDeliversCopyAndKernelRecordsChild(t *testing.T) {
	inChild(t)
	c, err := StartCUPTI()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.EnableKernels(); err != nil {
		t.Fatal(err)
	}
	if err := c.EnableKernels(); err != nil { // again: nothing more
		t.Fatal(err)
	}
	copies := c.Take()
	kernels := c.TakeKernels()
	if want := []CopyRecord{{Bytes: 1 << 20, Start: 100, End: 200, Stream: 3, Kind: 1}}; !slices.Equal(copies, want) {
		t.Errorf("copies %+v, want %+v", copies, want)
	}
	want := KernelRecord{Start: 1000, End: 5000, Stream: 7, Grid: [3]int32{2, 66, 1}, Block: [3]int32{384, 1, 1},
		DynamicShared: 213188, Registers: 168, Name: "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT"}
	if len(kernels) != 1 || kernels[0] != want {
		t.Errorf("kernels %+v, want [%+v]", kernels, want)
	}
	c.Take() // a second delivery
	if k := c.TakeKernels(); len(k) != 1 {
		t.Errorf("the second flush's kernels: %d, want 1", len(k))
	}
	if k := c.TakeKernels(); len(k) != 0 {
		t.Errorf("kernels taken twice: %+v", k)
	}
	c.Stop()
	// A start after a stop turns the memcpy records on again (the library
	// stays loaded), and a second stop turns them off.
	if _, err := StartCUPTI(); err != nil {
		t.Fatal(err)
	}
	c.Stop()
}
