package tui

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	tea "charm.land/bubbletea/v2"
)

// ctrl+s in the composer writes the scenario's YAML as every user-named
// output is written (recordings/outfile): a new file gets 0666 less the
// umask, an existing one is replaced only after y, and what is not a
// regular file (a link to a device, a folder) is refused, not written to
// or replaced.
func TestComposerSaveWritesOnlyRegularFiles(t *testing.T) {
	old := syscall.Umask(0o002)
	t.Cleanup(func() { syscall.Umask(old) })
	const name = "ag-gemm-balanced-custom.yaml" // what ctrl+s saves the composed scenario as
	for _, tc := range []struct {
		name   string
		before func(t *testing.T, path string)
		answer string // the key pressed if it asks before overwriting
		status string // in the status line after the save
		kept   bool   // what was at the path is unchanged
	}{
		{"new file", nil, "", "saved " + name, false},
		{"existing file, n", regular, "n", "", true},
		{"existing file, y", regular, "y", "saved " + name, false},
		{"link to a device", linkToDevNull, "y", "not a regular file", true},
		{"folder", folderAt, "y", "is a folder", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir)
			path := filepath.Join(dir, name)
			if tc.before != nil {
				tc.before(t, path)
			}
			was := describe(path)
			m := New(Config{Backend: newFake(), Suite: testSuite(), Start: "ag-gemm-balanced"})
			m.cancel()
			m.running = false
			m, _ = key1(m, 'n', "n")
			m = feed(t, m, tea.KeyPressMsg{Code: 's', Mod: tea.ModCtrl})
			if strings.Contains(m.comp().note, "overwrite it? y/n") {
				if tc.answer == "" {
					t.Fatalf("asked to overwrite a new file: %q", m.comp().note)
				}
				m = feed(t, m, tea.KeyPressMsg{Code: rune(tc.answer[0]), Text: tc.answer})
			} else if tc.answer == "n" {
				t.Fatalf("did not ask before overwriting: note %q, status %q", m.comp().note, m.status.text)
			}
			if tc.status != "" && !strings.Contains(m.status.text, tc.status) {
				t.Errorf("status %q, want it to say %q", m.status.text, tc.status)
			}
			now := describe(path)
			if tc.kept {
				if now != was {
					t.Errorf("%s changed: %s, then %s", name, was, now)
				}
				return
			}
			data, err := os.ReadFile(path)
			if err != nil || !strings.Contains(string(data), "name: ag-gemm-balanced-custom") {
				t.Fatalf("saved %q: %v", data, err)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o664 {
				t.Errorf("mode %v, want 0664 under umask 002", fi.Mode().Perm())
			}
		})
	}
}

func regular(t *testing.T, path string) {
	if err := os.WriteFile(path, []byte("mine"), 0o664); err != nil {
		t.Fatal(err)
	}
}

func linkToDevNull(t *testing.T, path string) {
	if fi, err := os.Stat("/dev/null"); err != nil || fi.Mode()&fs.ModeCharDevice == 0 {
		t.Skip("no /dev/null device here")
	}
	if err := os.Symlink("/dev/null", path); err != nil {
		t.Fatal(err)
	}
}

func folderAt(t *testing.T, path string) {
	if err := os.Mkdir(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// describe is what is at path: its type and mode, a file's content, a
// link's target.
func describe(path string) string {
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
