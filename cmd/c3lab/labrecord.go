package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/recordings"
)

// labRecordings opens the lab's recordings (tui.Config.Recorder) and keeps
// them, so that the lab can say where they went once it ends.
type labRecordings struct {
	flags recordFlags // --record and --record-overwrite
	b     backends.Backend

	// world is the job's number of ranks under a launcher (rank 0
	// records every rank's results, rank R's next to its own file), 0 in
	// one process.
	world int

	mu   sync.Mutex
	made []*recordings.Recorder
	// companions are, per recording, the other ranks' (rank 1 first).
	companions map[*recordings.Recorder][]*recordings.Recorder
}

// open starts a recording at path with a header for the lab's backend
// that lists the devices of the scenario on screen, gpus of them (each
// result records its own too). --record-overwrite applies to the --record
// file only: any other file (the lab's automatic names) is never
// overwritten.
func (l *labRecordings) open(path string, gpus int) (*recordings.Recorder, error) {
	if path == "" {
		return nil, fmt.Errorf("starting the recording: no file")
	}
	rf := recordFlags{path: path, overwrite: l.flags.overwrite && path == l.flags.path}
	rec, err := rf.open(l.b, gpus)
	if err != nil {
		return nil, err
	}
	if l.world > 1 {
		if err := l.openCompanions(rec, rf, gpus); err != nil {
			rec.Close()
			return nil, err
		}
	}
	l.mu.Lock()
	l.made = append(l.made, rec)
	l.made = append(l.made, l.companions[rec]...)
	l.mu.Unlock()
	return rec, nil
}

// report closes every recording (tui.Run has already closed them; closing
// again does nothing) and says on w, in one line, where the session was
// recorded; a recording that stopped early says so on a line of its own.
func (l *labRecordings) report(w io.Writer) error {
	l.mu.Lock()
	made := l.made
	l.mu.Unlock()
	var saved []string
	var errs []error
	for _, rec := range made {
		failed := rec.Err() != nil
		if err := closeRecorder(rec, w); err != nil {
			errs = append(errs, err)
			continue
		}
		if !failed {
			saved = append(saved, rec.Path())
		}
	}
	if len(saved) > 0 {
		fmt.Fprintf(w, "c3lab: recorded the session to %s\n", strings.Join(saved, ", "))
	}
	return errors.Join(errs...)
}
