package native

import (
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
int cuptiActivityRegisterCallbacks(void *request, void *complete) {
	fake_log("register");
	return fake_env("FAKE_CUPTI_REGISTER_RC");
}
int cuptiActivityEnable(int kind) {
	fake_log("enable %d", kind);
	return kind == fake_env("FAKE_CUPTI_ENABLE_FAIL") ? 1 : 0;
}
int cuptiActivityDisable(int kind) { fake_log("disable %d", kind); return 0; }
int cuptiActivityFlushAll(uint32_t flag) { fake_log("flush"); return 0; }
int cuptiActivityGetNextRecord(uint8_t *buf, size_t n, void **rec) { return 2; }
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
