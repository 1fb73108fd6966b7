package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/c3lab/c3lab/recordings/outfile"
)

// output is a file a command writes for the user (--out, --record, the
// export targets). Every one is checked before any work starts and
// written through recordings/outfile.
type output struct {
	path  string
	force bool   // the user allowed replacing an existing file
	flag  string // the flag that named it, for messages: "--out"
	// forceFlag allows replacing it: "--force".
	forceFlag string
	// what it holds, for the message when it is saved elsewhere: "the results".
	what string
}

// check refuses, as a usage error of one line, a path that cannot be
// written now: its folder is missing or takes no file, it is not a
// regular file (a folder, a device, a FIFO, a socket, a link to one), or
// it exists and the user did not allow replacing it.
func (o output) check() error {
	err := outfile.Check(o.path, outfile.Options{Overwrite: o.force})
	switch {
	case err == nil:
		return nil
	case errors.Is(err, outfile.ErrExists):
		return badInput("%s exists; pick another %s file or add %s", o.path, o.flag, o.forceFlag)
	}
	return usageError{fmt.Errorf("%s: %w", o.flag, err)}
}

// write writes the file. Should that fail after all (a full disk, the
// folder removed meanwhile), it saves the same content in a new file in
// the working directory, else in the temp directory, so nothing is lost,
// and the error it returns says where.
func (o output) write(write func(io.Writer) error) error {
	err := outfile.WriteFile(o.path, outfile.Options{Overwrite: o.force}, write)
	if err == nil {
		return nil
	}
	saved, rerr := outfile.Rescue([]string{".", os.TempDir()}, rescueName(o.path, time.Now()), write)
	if rerr != nil {
		return fmt.Errorf("%w; saving %s elsewhere failed too: %v", err, o.what, rerr)
	}
	if abs, aerr := filepath.Abs(saved); aerr == nil {
		saved = abs
	}
	return fmt.Errorf("%w; saved %s in %s instead", err, o.what, saved)
}

// rescueName names the file that holds what could not be written to
// path: r.json becomes r-rescued-20261201-150405.json.
func rescueName(path string, t time.Time) string {
	base := filepath.Base(path)
	ext := filepath.Ext(base)
	return strings.TrimSuffix(base, ext) + "-rescued-" + t.Format("20060102-150405") + ext
}

// checkOutputs checks each output named (an empty path is none) and
// refuses two that name the same file.
func checkOutputs(outs ...output) error {
	seen := map[string]string{}
	for _, o := range outs {
		if o.path == "" {
			continue
		}
		key := o.path
		if abs, err := filepath.Abs(o.path); err == nil {
			key = abs
		}
		if prev, ok := seen[key]; ok {
			return badInput("%s and %s name the same file %s; give each its own", prev, o.flag, o.path)
		}
		seen[key] = o.flag
		if err := o.check(); err != nil {
			return err
		}
	}
	return nil
}
