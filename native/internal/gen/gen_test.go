package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The committed shim_gen.h and shim_gen.c are what the generator writes
// from the committed shim.api: an edit to either side alone fails here.
func TestGeneratedFilesAreUpToDate(t *testing.T) {
	dir := filepath.Join("..", "..")
	table, err := os.ReadFile(filepath.Join(dir, "shim.api"))
	if err != nil {
		t.Fatal(err)
	}
	h, s, err := generate(bytes.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]byte{"shim_gen.h": h, "shim_gen.c": s} {
		got, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("native/%s differs from what native/shim.api generates (first difference: %s); run go generate ./native", name, firstDiff(got, want))
		}
	}
}

// firstDiff names the first line where two texts differ.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d: committed %q, generated %q", i+1, gl, wl)
		}
	}
	return "none"
}

// One table line is everything a new call needs: the table field, its
// symbol load (required before optional, alternatives in order) and its
// wrapper, unless nowrap.
func TestOneLineMakesACall(t *testing.T) {
	table := `library demo libdemo.so.1 libdemo.so
// Group comment.
optional int demoLater(void)
CUresult demoCall(int *, const char *const *) = demoCall_v2 demoCall // the v2 export first
nowrap size_t demoInternal(void *)
`
	h, s, err := generate(strings.NewReader(table))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\t// Group comment.\n\tint (*demoLater)(void);\n",
		"\tCUresult (*demoCall)(int *, const char *const *); // the v2 export first\n",
		"\tsize_t (*demoInternal)(void *);\n} c3_demo;\n",
		"int c3_demo_open(c3_demo *t, char *err, size_t errlen);\n",
		"static inline int c3_demoLater(const c3_demo *t) { return t->demoLater(); }\n",
		"static inline CUresult c3_demoCall(const c3_demo *t, int * a0, const char *const * a1) { return t->demoCall(a0, a1); }\n",
	} {
		if !strings.Contains(string(h), want) {
			t.Errorf("the header lacks %q:\n%s", want, h)
		}
	}
	if strings.Contains(string(h), "c3_demoInternal") {
		t.Error("a nowrap call got a wrapper")
	}
	opener := `	static const char *const names[] = {"libdemo.so.1", "libdemo.so", NULL};
	memset(t, 0, sizeof *t);
	t->handle = c3_open_first(names, err, errlen);
	if (!t->handle) return -1;
	SYM(t, demoCall, "demoCall_v2", "demoCall");
	SYM(t, demoInternal, "demoInternal");
	OPT(t, demoLater, "demoLater");
	return 0;
`
	if !strings.Contains(string(s), opener) {
		t.Errorf("the opener is not\n%s\nin\n%s", opener, s)
	}
}

// A malformed table is refused with the line at fault, never a panic or a
// half-written file.
func TestBadTablesAreRefused(t *testing.T) {
	for _, tc := range []struct {
		name, table, want string
	}{
		{"empty", "# nothing\n", "declares no library"},
		{"call before library", "int f(void)\n", "line 1: a call before the first library line"},
		{"library without soname", "library x\n", "line 1: want: library NAME SONAME"},
		{"library name", "library 9x libx.so\nint f(void)\n", "line 1: library name \"9x\""},
		{"soname", "library x lib/x.so\nint f(void)\n", "line 1: \"lib/x.so\" is not a library file name"},
		{"library twice", "library x libx.so\nint f(void)\nlibrary x liby.so\nint g(void)\n", "line 3: library x appears twice"},
		{"library without calls", "library x libx.so\n", "library x declares no call"},
		{"no parentheses", "library x libx.so\nint f\n", "line 2: want: [optional] [nowrap] RETURN CALL"},
		{"no return type", "library x libx.so\nf(void)\n", "line 2: want:"},
		{"empty parameters", "library x libx.so\nint f()\n", "line 2: f has an empty parameter list; write (void)"},
		{"bad parameter", "library x libx.so\nint f(int, )\n", "line 2: parameter type \"\" of f"},
		{"void among parameters", "library x libx.so\nint f(int, void)\n", "parameter type \"void\" of f"},
		{"bad return type", "library x libx.so\nint) f(int)\n", "line 2: return type \"int)\""},
		{"nothing after =", "library x libx.so\nint f(void) =\n", "line 2: nothing after ="},
		{"bad symbol", "library x libx.so\nint f(void) = f-1\n", "line 2: symbol \"f-1\""},
		{"optional with alternatives", "library x libx.so\noptional int f(void) = f_v2 f\n", "line 2: optional f has 2 symbol names"},
		{"twice", "library x libx.so\nint f(void)\nint f(int)\n", "line 3: f is declared twice"},
		{"dangling comment", "library x libx.so\nint f(void)\n// about nothing\n", "ends with a // comment line"},
		{"comment before library", "// stray\nlibrary x libx.so\nint f(void)\n", "line 2: a // comment line must come before a call"},
		{"flag alone", "library x libx.so\noptional\n", "line 2: want:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, s, err := generate(strings.NewReader(tc.table))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
			if h != nil || s != nil {
				t.Error("output came back with the error")
			}
		})
	}
}
