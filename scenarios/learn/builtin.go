package learn

import (
	"embed"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/c3lab/c3lab/scenarios"
)

// lessonFiles are the built-in lessons, one file each, in the order of
// their names ("01-...", "02-...").
//
//go:embed lessons/*.yaml
var lessonFiles embed.FS

// Builtin parses the built-in lessons against lim and refs, in order.
// A problem in any is an error naming the file and line.
func Builtin(lim scenarios.Limits, refs Refs) ([]Lesson, error) {
	names, err := lessonFiles.ReadDir("lessons")
	if err != nil {
		return nil, fmt.Errorf("reading the built-in lessons: %w", err)
	}
	var out []Lesson
	var errs []error
	for _, n := range names {
		p := path.Join("lessons", n.Name())
		data, err := lessonFiles.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		l, err := Parse(data, IDOf(p), "learn/"+p, lim, refs)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, l)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

// BuiltinFiles returns the built-in lesson files' contents by ID, for
// tests and for teachers who start from one.
func BuiltinFiles() (map[string][]byte, error) {
	names, err := lessonFiles.ReadDir("lessons")
	if err != nil {
		return nil, fmt.Errorf("reading the built-in lessons: %w", err)
	}
	out := map[string][]byte{}
	for _, n := range names {
		p := path.Join("lessons", n.Name())
		data, err := lessonFiles.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", p, err)
		}
		out[IDOf(p)] = data
	}
	return out, nil
}

// Find returns the index of the lesson arg names: its number, from 1, or
// its ID.
func Find(lessons []Lesson, arg string) (int, error) {
	var n int
	if _, err := fmt.Sscanf(arg, "%d", &n); err == nil && fmt.Sprint(n) == arg {
		if n < 1 || n > len(lessons) {
			return 0, fmt.Errorf("no lesson %d; there are %d (c3lab learn --list)", n, len(lessons))
		}
		return n - 1, nil
	}
	i := slices.IndexFunc(lessons, func(l Lesson) bool { return l.ID == arg })
	if i < 0 {
		return 0, fmt.Errorf("no lesson %q; give its number or its name (c3lab learn --list)", arg)
	}
	return i, nil
}
