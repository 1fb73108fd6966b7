package native

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Fake NVIDIA libraries: a test compiles a small C stand-in for a library
// under its soname and runs one of its own tests in a child process whose
// loader finds that directory first (LD_LIBRARY_PATH), so the shim's
// dlopen and dlsym load the fake exactly as they would load the real one.

// fakeLibChild is set in the environment of the child process.
const fakeLibChild = "C3LAB_FAKELIB_CHILD"

// fakeLogC is C for the fakes: fake_log appends a line to $FAKE_LOG, so the
// parent test sees which calls the shim made, in order.
const fakeLogC = `
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
static void fake_log(const char *format, ...) {
	const char *path = getenv("FAKE_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	if (!f) return;
	va_list ap;
	va_start(ap, format);
	vfprintf(f, format, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}
static int fake_env(const char *name) {
	const char *v = getenv(name);
	return v ? atoi(v) : 0;
}
`

// buildFakeLib compiles src into dir/soname.
func buildFakeLib(t *testing.T, dir, soname, src string) {
	t.Helper()
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		t.Skipf("no C compiler (%s) to build a fake %s", cc, soname)
	}
	c := filepath.Join(dir, soname+".c")
	if err := os.WriteFile(c, []byte(fakeLogC+src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(cc, "-shared", "-fPIC", "-o", filepath.Join(dir, soname), c).CombinedOutput()
	if err != nil {
		t.Fatalf("building the fake %s: %v\n%s", soname, err, out)
	}
}

// runChild runs the test named child in a child process that loads
// libraries from dir first, with env added; it returns the lines the fakes
// logged. The child test fails the parent through its exit status.
func runChild(t *testing.T, dir, child string, env ...string) []string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "calls.log")
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), fakeLibChild+"=1", "LD_LIBRARY_PATH="+dir, "FAKE_LOG="+log)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+child) {
		t.Fatalf("child %s with %v: %v\n%s", child, env, err, out)
	}
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	// What the fakes log after the child test ended (a destructor run at
	// exit, say) is not the shim's doing.
	calls, _, ended := strings.Cut(string(b), childEnded+"\n")
	if !ended {
		t.Fatalf("child %s did not mark its end in the call log", child)
	}
	if calls == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(calls, "\n"), "\n")
}

// childEnded marks the end of the child test in the call log.
const childEnded = "--- child test ended"

// inChild skips a child test unless a parent started it; in a child, the
// end of the test is marked in the call log.
func inChild(t *testing.T) {
	if os.Getenv(fakeLibChild) == "" {
		t.Skip("run by its parent test, against a fake library")
	}
	t.Cleanup(func() {
		f, err := os.OpenFile(os.Getenv("FAKE_LOG"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(childEnded + "\n"); err != nil {
			t.Fatal(err)
		}
	})
}
