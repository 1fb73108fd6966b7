package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
)

// progressRE matches a sweep's progress line ("sweep 3/36").
var progressRE = regexp.MustCompile(`sweep \d+/\d+`)

// twoScenarios is a small sweep's --scenarios.
func twoScenarios() string { return scenarios.Names()[0] + "," + scenarios.Names()[1] }

// Every output path is checked before anything runs: a path that cannot
// be written is refused with one line and exit 2, with no progress, and
// what is at the path is left as it was.
func TestOutputsAreCheckedBeforeAnythingRuns(t *testing.T) {
	type setup func(t *testing.T, dir string) string
	file := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "old.json")
		if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fifo := func(t *testing.T, dir string) string {
		p := filepath.Join(dir, "pipe")
		if err := syscall.Mkfifo(p, 0o644); err != nil {
			t.Skipf("cannot make a FIFO: %v", err)
		}
		return p
	}
	linkTo := func(to setup) setup {
		return func(t *testing.T, dir string) string {
			p := filepath.Join(dir, "link.json")
			if err := os.Symlink(to(t, dir), p); err != nil {
				t.Fatal(err)
			}
			return p
		}
	}
	missing := func(t *testing.T, dir string) string { return filepath.Join(dir, "nope", "x.json") }
	folder := func(t *testing.T, dir string) string { return dir }
	readOnly := func(t *testing.T, dir string) string {
		if os.Geteuid() == 0 {
			t.Skip("running as root: root writes into read-only folders, so there is nothing to refuse")
		}
		p := filepath.Join(dir, "ro")
		if err := os.Mkdir(p, 0o555); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.Chmod(p, 0o755) })
		return filepath.Join(p, "x.json")
	}
	fresh := func(t *testing.T, dir string) string { return filepath.Join(dir, "same.out") }
	sweep := func(extra ...string) func(string, string) []string {
		return func(_, p string) []string {
			return append([]string{"sweep", "--backend", "sim", "--scenarios", twoScenarios(), "--strategies", "baseline"}, append(extra, p)...)
		}
	}
	export := func(extra ...string) func(string, string) []string {
		return func(_, p string) []string { return append([]string{"export", "--backend", "sim"}, append(extra, p)...) }
	}
	for _, tc := range []struct {
		name string
		at   setup
		args func(dir, path string) []string
		want string
	}{
		{"sweep --out in a missing folder", missing, sweep("--out"), "does not exist"},
		{"sweep --out in a read-only folder", readOnly, sweep("--out"), "cannot create a file in"},
		{"sweep --out a folder", folder, sweep("--force", "--out"), "is a folder"},
		{"sweep --out an existing file", file, sweep("--out"), "exists; pick another --out file or add --force"},
		{"sweep --out a FIFO --force", fifo, sweep("--force", "--out"), "FIFO"},
		{"sweep --out a link to a FIFO --force", linkTo(fifo), sweep("--force", "--out"), "FIFO"},
		{"sweep --record in a missing folder", missing, func(dir, p string) []string {
			return sweep("--out", filepath.Join(dir, "r.json"), "--record")(dir, p)
		}, "does not exist"},
		{"sweep --record a FIFO", fifo, sweep("--record-overwrite", "--record"), "FIFO"},
		{"sweep --out and --record to one file", fresh, func(dir, p string) []string { return sweep("--out", p, "--record")(dir, p) }, "same file"},
		{"run --record in a missing folder", missing, func(_, p string) []string { return []string{"run", "--backend", "sim", "--record", p} }, "does not exist"},
		{"lab --record a FIFO", fifo, func(_, p string) []string {
			return []string{"lab", "--backend", "sim", "--record-overwrite", "--record", p}
		}, "FIFO"},
		{"export --chrome in a missing folder", missing, export("--chrome"), "does not exist"},
		{"export --perfetto a FIFO --force", fifo, export("--force", "--perfetto"), "FIFO"},
		{"export --pprof and --chrome to one file", fresh, func(_, p string) []string {
			return []string{"export", "--backend", "sim", "--pprof", p, "--chrome", p}
		}, "same file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.at(t, dir)
			before, entries := describePath(path), names(t, dir)
			code, out, errOut := call(t, tc.args(dir, path)...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d\nstderr: %s", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut, tc.want) || strings.Count(strings.TrimSpace(errOut), "\n") > 0 {
				t.Errorf("stderr %q; want one line containing %q", errOut, tc.want)
			}
			if progressRE.MatchString(errOut) || out != "" {
				t.Errorf("something ran: stdout %q, stderr %q", out, errOut)
			}
			if after := describePath(path); after != before {
				t.Errorf("%s changed: %s, then %s", path, before, after)
			}
			if now := names(t, dir); !slices.Equal(now, entries) {
				t.Errorf("the folder held %v, now %v", entries, now)
			}
		})
	}
}

// names lists a folder's entries.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var n []string
	for _, e := range entries {
		n = append(n, e.Name())
	}
	return n
}

// describePath is what is at path: type and mode, a file's content, a
// link's target.
func describePath(path string) string {
	fi, err := os.Lstat(path)
	if err != nil {
		return "nothing"
	}
	s := fi.Mode().String()
	if fi.Mode().IsRegular() {
		b, _ := os.ReadFile(path)
		s += " " + string(b)
	}
	if to, err := os.Readlink(path); err == nil {
		s += " -> " + to
	}
	return s
}

// Without --out a sweep writes its results to a new file in the working
// directory named like the lab's recordings, and says where; a new result
// file gets 0666 less the umask.
func TestSweepWithoutOutSavesTheResults(t *testing.T) {
	old := syscall.Umask(0o002)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"text", nil},
		{"json", []string{"--json"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			args := append([]string{"sweep", "--backend", "sim", "--scenarios", twoScenarios(), "--strategies", "baseline", "--reps", "1"}, tc.args...)
			code, out, errOut := call(t, args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "c3lab-sweep-*.json"))
			if len(files) != 1 {
				t.Fatalf("result files %v, want one c3lab-sweep-YYYYMMDD-HHMMSS.json", files)
			}
			if !regexp.MustCompile(`^c3lab-sweep-\d{8}-\d{6}\.json$`).MatchString(filepath.Base(files[0])) {
				t.Errorf("name %s", filepath.Base(files[0]))
			}
			if f := readSweepFile(t, files[0]); len(f.Results) != 2 {
				t.Errorf("%d results, want 2", len(f.Results))
			}
			if !strings.Contains(errOut, "wrote the results to "+filepath.Base(files[0])) {
				t.Errorf("stderr does not say where: %q", errOut)
			}
			if fi, _ := os.Stat(files[0]); fi.Mode().Perm() != 0o664 {
				t.Errorf("mode %v, want 0664 under umask 002", fi.Mode().Perm())
			}
			if tc.name == "json" && !json.Valid([]byte(out)) {
				t.Errorf("--json stdout is not JSON: %q", out)
			}
		})
	}
	// A working directory that takes no file is refused before the sweep.
	dir := t.TempDir()
	gone := filepath.Join(dir, "gone")
	if err := os.Mkdir(gone, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(gone)
	if err := os.Remove(gone); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := call(t, "sweep", "--backend", "sim", "--scenarios", twoScenarios(), "--strategies", "baseline")
	if code != exitUsage || !strings.Contains(errOut, "cannot create a file in") || progressRE.MatchString(errOut) {
		t.Errorf("a removed working directory: exit %d, %q", code, errOut)
	}
}

// breakingWriter collects what a command writes and, the first time
// something matching on is written, calls do.
type breakingWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	on   *regexp.Regexp
	do   func()
	done bool
}

func (w *breakingWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done && w.on.Match(p) {
		w.done = true
		w.do()
	}
	return w.buf.Write(p)
}

func (w *breakingWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// When the result file cannot be written at the end (its folder removed
// during the sweep here; a full disk in life), the results are saved in
// the working directory, or the temp directory when that fails too; the
// summary is printed, one line says where they are, and the exit is 1.
func TestSweepSavesTheResultsWhenTheWriteFails(t *testing.T) {
	for _, tc := range []struct {
		name       string
		cwdGoneToo bool
	}{
		{"into the working directory", false},
		{"into the temp directory", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			outDir, cwd, tmp := filepath.Join(base, "out"), filepath.Join(base, "cwd"), filepath.Join(base, "tmp")
			for _, d := range []string{outDir, cwd, tmp} {
				if err := os.Mkdir(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(cwd)
			t.Setenv("TMPDIR", tmp)
			errOut := &breakingWriter{on: progressRE, do: func() {
				os.RemoveAll(outDir)
				if tc.cwdGoneToo {
					os.RemoveAll(cwd)
				}
			}}
			var out bytes.Buffer
			target := filepath.Join(outDir, "r.json")
			code := realMain(context.Background(), []string{"sweep", "--backend", "sim", "--scenarios", twoScenarios(), "--strategies", "baseline", "--reps", "1", "--out", target},
				stdio{in: strings.NewReader(""), out: &out, errOut: errOut})
			if code != exitFailure {
				t.Errorf("exit %d, want %d", code, exitFailure)
			}
			where := cwd
			if tc.cwdGoneToo {
				where = tmp
			}
			saved, _ := filepath.Glob(filepath.Join(where, "r-rescued-*.json"))
			if len(saved) != 1 {
				entries, _ := os.ReadDir(where)
				t.Fatalf("saved %v in %s (holds %v); stderr %q", saved, where, entries, errOut.String())
			}
			if f := readSweepFile(t, saved[0]); len(f.Results) != 2 {
				t.Errorf("%s holds %d results, want 2", saved[0], len(f.Results))
			}
			last := lastLine(errOut.String())
			if !strings.Contains(last, "cannot write "+target) || !strings.Contains(last, "saved the results in "+saved[0]) {
				t.Errorf("the last line does not say what failed and where the results are: %q", last)
			}
			if !strings.Contains(out.String(), "baseline") {
				t.Errorf("no summary: %q", out.String())
			}
		})
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
