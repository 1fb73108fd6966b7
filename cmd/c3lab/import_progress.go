package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/c3lab/c3lab/profiler/kineto"
)

// importProgressFrom is the size from which reading a trace shows its
// progress: smaller ones read in well under a second.
const importProgressFrom = 32 << 20

// importProgress shows the reading of one trace file on a terminal: one
// line on s's error stream, rewritten in place, with the MB read, the
// rate and the time left; done clears it (the report follows on stdout).
func importProgress(s stdio, file string, now func() time.Time) (progress kineto.Progress, done func()) {
	start, shown := now(), false
	progress = func(read, size int64) {
		line := fmt.Sprintf("import %s  %d/%d MB", filepath.Base(file), read>>20, size>>20)
		if el := now().Sub(start); read > 0 && read < size && el > 0 {
			rate := float64(read) / el.Seconds()
			eta := time.Duration(float64(size-read) / rate * float64(time.Second))
			line += fmt.Sprintf("  %.0f MB/s  ETA %s", rate/(1<<20), eta.Round(time.Second))
		}
		fmt.Fprintf(s.errOut, "\r\033[K%s", line)
		shown = true
	}
	done = func() {
		if shown {
			fmt.Fprint(s.errOut, "\r\033[K")
		}
	}
	return progress, done
}
