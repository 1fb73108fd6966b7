package outfile

import (
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// place makes something at a path in dir for a test case and returns the
// path to write.
type place func(t *testing.T, dir string) string

func newPath(t *testing.T, dir string) string { return filepath.Join(dir, "new.json") }

func missingFolder(t *testing.T, dir string) string { return filepath.Join(dir, "nope", "x.json") }

func fileAsFolder(t *testing.T, dir string) string {
	f := regularFile(t, dir)
	return filepath.Join(f, "x.json")
}

func regularFile(t *testing.T, dir string) string {
	p := filepath.Join(dir, "old.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func folder(t *testing.T, dir string) string {
	p := filepath.Join(dir, "sub")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func fifo(t *testing.T, dir string) string {
	p := filepath.Join(dir, "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skipf("cannot make a FIFO here: %v", err)
	}
	return p
}

func socket(t *testing.T, dir string) string {
	p := filepath.Join(dir, "sock")
	l, err := net.Listen("unix", p)
	if err != nil {
		t.Skipf("cannot make a unix socket here: %v", err)
	}
	t.Cleanup(func() { l.Close() })
	return p
}

func linkTo(to place) place {
	return func(t *testing.T, dir string) string {
		target := to(t, dir)
		p := filepath.Join(dir, "link")
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
}

func devNull(t *testing.T, dir string) string {
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Skip("no /dev/null character device here")
	}
	return "/dev/null"
}

func readOnlyFolder(t *testing.T, dir string) string {
	if os.Geteuid() == 0 {
		t.Skip("running as root: root creates files in read-only folders, so the refusal cannot happen")
	}
	p := filepath.Join(dir, "ro")
	if err := os.Mkdir(p, 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(p, 0o755) })
	return filepath.Join(p, "x.json")
}

func dangling(t *testing.T, dir string) string {
	p := filepath.Join(dir, "link")
	if err := os.Symlink(filepath.Join(dir, "gone.json"), p); err != nil {
		t.Fatal(err)
	}
	return p
}

// checkCases are what Check must accept or refuse; wantIs, when set, is
// the sentinel the error must wrap, and want a fragment of its message.
var checkCases = []struct {
	name      string
	at        place
	overwrite bool
	wantIs    error
	want      string
}{
	{"new file", newPath, false, nil, ""},
	{"existing file", regularFile, false, ErrExists, "already exists"},
	{"existing file, overwrite", regularFile, true, nil, ""},
	{"missing folder", missingFolder, false, nil, "does not exist"},
	{"a file for a folder", fileAsFolder, false, nil, "is not a folder"},
	{"read-only folder", readOnlyFolder, false, nil, "cannot create a file in"},
	{"folder", folder, true, ErrNotRegular, "is a folder"},
	{"FIFO", fifo, true, ErrNotRegular, "FIFO"},
	{"socket", socket, true, ErrNotRegular, "socket"},
	{"device", devNull, true, ErrNotRegular, "character device"},
	{"link to a device", linkTo(devNull), true, ErrNotRegular, "character device"},
	{"link to a FIFO", linkTo(fifo), true, ErrNotRegular, "FIFO"},
	{"link to a folder", linkTo(folder), true, ErrNotRegular, "folder"},
	{"link to nothing", dangling, true, ErrNotRegular, "link to nothing"},
	{"link to a file", linkTo(regularFile), false, ErrExists, "already exists"},
	{"link to a file, overwrite", linkTo(regularFile), true, nil, ""},
}

func TestCheck(t *testing.T) {
	for _, tc := range checkCases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.at(t, dir)
			before := listing(t, dir)
			err := Check(path, Options{Overwrite: tc.overwrite})
			wantErr(t, err, tc.wantIs, tc.want)
			if after := listing(t, dir); !slices.Equal(before, after) {
				t.Errorf("Check changed the folder: %v, then %v", before, after)
			}
		})
	}
	if err := Check("", Options{}); err == nil {
		t.Error("an empty path passed the check")
	}
}

// WriteFile refuses what Check refuses (except a device, which no test
// writes to), writes a new file or replaces a regular one, keeps links,
// and leaves no temporary file behind.
func TestWriteFile(t *testing.T) {
	for _, tc := range checkCases {
		if strings.Contains(tc.name, "device") {
			continue // never aim a write at a real device, even one to be refused
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.at(t, dir)
			before := snapshot(t, dir)
			err := WriteFile(path, Options{Overwrite: tc.overwrite}, func(w io.Writer) error {
				_, err := io.WriteString(w, "new")
				return err
			})
			wantErr(t, err, tc.wantIs, tc.want)
			after := snapshot(t, dir)
			if err != nil {
				if !equalSnapshots(before, after) {
					t.Errorf("a refused write changed the folder:\n%v\n%v", before, after)
				}
				return
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "new" {
				t.Errorf("read back %q, %v", b, err)
			}
			for name, e := range after {
				if _, ok := before[name]; !ok && name != filepath.Base(path) {
					t.Errorf("left behind: %s", name)
				}
				if b, ok := before[name]; ok && b.mode != e.mode {
					t.Errorf("%s changed type or mode: %v to %v", name, b.mode, e.mode)
				}
			}
		})
	}
}

// A link to a regular file stays a link: the file it names is replaced.
func TestWriteFileFollowsALink(t *testing.T) {
	dir := t.TempDir()
	real := regularFile(t, dir)
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	for _, write := range []func() error{
		func() error {
			return WriteFile(link, Options{Overwrite: true}, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err })
		},
		func() error {
			f, err := Create(link, Options{Overwrite: true})
			if err != nil {
				return err
			}
			_, err = io.WriteString(f, "newer")
			return errors.Join(err, f.Close())
		},
	} {
		if err := write(); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Lstat(link)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			t.Fatalf("the link became %v (%v)", fi.Mode(), err)
		}
		if to, _ := os.Readlink(link); to != real {
			t.Errorf("the link now points to %s", to)
		}
	}
	if b, _ := os.ReadFile(real); string(b) != "newer" {
		t.Errorf("the link's file holds %q", b)
	}
	if fi, _ := os.Stat(real); fi.Mode().Perm() != 0o600 {
		t.Errorf("the replaced file's mode became %v, want its own 0600", fi.Mode().Perm())
	}
}

// A failed write leaves the target as it was and no temporary file.
func TestWriteFileFailure(t *testing.T) {
	dir := t.TempDir()
	path := regularFile(t, dir)
	err := WriteFile(path, Options{Overwrite: true}, func(w io.Writer) error {
		io.WriteString(w, "half")
		return errors.New("disk full")
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("error %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the file became %q", b)
	}
	if l := listing(t, dir); len(l) != 1 {
		t.Errorf("left behind: %v", l)
	}
}

// Without overwrite, a file that appears while the content is written is
// kept, not replaced.
func TestWriteFileNeverClobbersALateFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "x.json")
	err := WriteFile(path, Options{}, func(w io.Writer) error {
		_, err := io.WriteString(w, "mine")
		return errors.Join(err, os.WriteFile(path, []byte("theirs"), 0o644))
	})
	if !errors.Is(err, ErrExists) {
		t.Errorf("error %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "theirs" {
		t.Errorf("the late file became %q", b)
	}
}

// Create refuses what Check refuses, makes new files with O_EXCL and
// empties an existing regular file with overwrite, keeping its mode.
func TestCreate(t *testing.T) {
	for _, tc := range checkCases {
		if strings.Contains(tc.name, "device") {
			continue // never open a real device for writing
		}
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tc.at(t, dir)
			before := snapshot(t, dir)
			f, err := Create(path, Options{Overwrite: tc.overwrite})
			wantErr(t, err, tc.wantIs, tc.want)
			if err != nil {
				if after := snapshot(t, dir); !equalSnapshots(before, after) {
					t.Errorf("a refused create changed the folder:\n%v\n%v", before, after)
				}
				return
			}
			if _, err := io.WriteString(f, "new"); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			if b, err := os.ReadFile(path); err != nil || string(b) != "new" {
				t.Errorf("read back %q, %v", b, err)
			}
			for name, b := range before {
				if e := snapshot(t, dir)[name]; b.mode != e.mode {
					t.Errorf("%s changed type or mode: %v to %v", name, b.mode, e.mode)
				}
			}
		})
	}
}

// New files get 0666 less the umask, from WriteFile and Create alike.
func TestNewFilesFollowTheUmask(t *testing.T) {
	old := syscall.Umask(0o022)
	t.Cleanup(func() { syscall.Umask(old) })
	for _, umask := range []int{0o022, 0o002, 0o077} {
		syscall.Umask(umask)
		want := fs.FileMode(0o666 &^ umask)
		dir := t.TempDir()
		a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.c3rec")
		if err := WriteFile(a, Options{}, func(io.Writer) error { return nil }); err != nil {
			t.Fatal(err)
		}
		f, err := Create(b, Options{})
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		for _, p := range []string{a, b} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("umask %03o: %s has mode %v, want %v", umask, filepath.Base(p), fi.Mode().Perm(), want)
			}
		}
	}
}

// Rescue writes to the first folder that takes the file, under a name
// nothing holds yet.
func TestRescue(t *testing.T) {
	dir := t.TempDir()
	taken := filepath.Join(dir, "r.json")
	if err := os.WriteFile(taken, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(w io.Writer) error { _, err := io.WriteString(w, "saved"); return err }
	for _, tc := range []struct {
		name string
		dirs []string
		want string // "" for a failure
	}{
		{"first folder", []string{dir}, filepath.Join(dir, "r-2.json")},
		{"missing first folder", []string{filepath.Join(dir, "gone"), dir}, filepath.Join(dir, "r-3.json")},
		{"no folder takes it", []string{filepath.Join(dir, "gone"), filepath.Join(dir, "gone2")}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Rescue(tc.dirs, "r.json", write)
			if tc.want == "" {
				if err == nil || !strings.Contains(err.Error(), "gone2") || strings.Contains(err.Error(), "\n") {
					t.Errorf("got %q, %v; want one line naming each folder", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
			if b, _ := os.ReadFile(got); string(b) != "saved" {
				t.Errorf("%s holds %q", got, b)
			}
		})
	}
	if b, _ := os.ReadFile(taken); string(b) != "old" {
		t.Errorf("the taken name was overwritten: %q", b)
	}
}

// wantErr checks err against a case: nil when want is "", else an error of
// one line containing want (and wrapping wantIs when set).
func wantErr(t *testing.T, err, wantIs error, want string) {
	t.Helper()
	if want == "" {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("no error; want one containing %q", want)
	}
	if !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
		t.Errorf("error %q; want one line containing %q", err, want)
	}
	if wantIs != nil && !errors.Is(err, wantIs) {
		t.Errorf("error %q does not wrap %v", err, wantIs)
	}
}

func listing(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// entry is what a snapshot keeps of a folder entry.
type entry struct {
	mode fs.FileMode
	data string
	link string
}

// snapshot records each entry of dir: its type and mode, a regular file's
// content and a link's target.
func snapshot(t *testing.T, dir string) map[string]entry {
	t.Helper()
	out := map[string]entry{}
	for _, name := range listing(t, dir) {
		p := filepath.Join(dir, name)
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		e := entry{mode: fi.Mode()}
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			e.data = string(b)
		case fi.Mode()&fs.ModeSymlink != 0:
			e.link, _ = os.Readlink(p)
		}
		out[name] = e
	}
	return out
}

func equalSnapshots(a, b map[string]entry) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
