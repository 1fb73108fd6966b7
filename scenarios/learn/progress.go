package learn

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// State is where a learner stands in a lesson.
type State string

// A lesson's states; a lesson not in the progress file is new.
const (
	StateNew     State = ""
	StateDone    State = "done"
	StateSkipped State = "skipped"
)

// Record is what the progress file keeps of one lesson: its state and,
// once done, the learner's prediction against the measured answer.
type Record struct {
	State      State     `json:"state"`
	Figure     Figure    `json:"figure,omitempty"`
	Prediction *float64  `json:"prediction,omitempty"`
	Answer     *float64  `json:"answer,omitempty"`
	Backend    string    `json:"backend,omitempty"`
	At         time.Time `json:"at"`
}

// Progress is a learner's progress over the lessons, by lesson ID.
type Progress struct {
	Version int               `json:"version"`
	Lessons map[string]Record `json:"lessons"`
}

// progressVersion is the progress file's format version.
const progressVersion = 1

// NewProgress is an empty progress.
func NewProgress() Progress {
	return Progress{Version: progressVersion, Lessons: map[string]Record{}}
}

// Of is the record of a lesson (the zero Record, state new, if none).
func (p Progress) Of(id string) Record { return p.Lessons[id] }

// With returns p with id's record set to r (p itself is not changed).
func (p Progress) With(id string, r Record) Progress {
	out := Progress{Version: progressVersion, Lessons: make(map[string]Record, len(p.Lessons)+1)}
	for k, v := range p.Lessons {
		out.Lessons[k] = v
	}
	out.Lessons[id] = r
	return out
}

// Without returns p without id's record: the lesson is new again.
func (p Progress) Without(id string) Progress {
	out := Progress{Version: progressVersion, Lessons: make(map[string]Record, len(p.Lessons))}
	for k, v := range p.Lessons {
		if k != id {
			out.Lessons[k] = v
		}
	}
	return out
}

// Next is the index of the first lesson neither done nor skipped, or 0
// when every lesson is.
func (p Progress) Next(lessons []Lesson) int {
	for i, l := range lessons {
		if p.Of(l.ID).State == StateNew {
			return i
		}
	}
	return 0
}

// StatePath is the progress file's path: c3lab/learn.json under
// $XDG_STATE_HOME, or ~/.local/state when it is unset or not absolute.
func StatePath() (string, error) {
	dir := os.Getenv("XDG_STATE_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding where to keep lesson progress: %w (set XDG_STATE_HOME)", err)
		}
		dir = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(dir, "c3lab", "learn.json"), nil
}

// maxProgressSize bounds the progress file read: it holds a few lines per
// lesson.
const maxProgressSize = 1 << 20

// LoadProgress reads the progress file at path; a file that does not
// exist is an empty progress.
func LoadProgress(path string) (Progress, error) {
	st, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return NewProgress(), nil
	}
	if err != nil {
		return Progress{}, fmt.Errorf("reading lesson progress: %w", err)
	}
	if !st.Mode().IsRegular() {
		return Progress{}, fmt.Errorf("lesson progress %s is not a regular file; move it away", path)
	}
	if st.Size() > maxProgressSize {
		return Progress{}, fmt.Errorf("lesson progress %s is over 1 MiB; it is not c3lab's, move it away", path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Progress{}, fmt.Errorf("reading lesson progress: %w", err)
	}
	p := NewProgress()
	if err := json.Unmarshal(data, &p); err != nil {
		return Progress{}, fmt.Errorf("lesson progress %s is damaged (%v); c3lab learn --reset starts afresh", path, err)
	}
	if p.Version != progressVersion {
		return Progress{}, fmt.Errorf("lesson progress %s has version %d, this c3lab reads %d; c3lab learn --reset starts afresh", path, p.Version, progressVersion)
	}
	if p.Lessons == nil {
		p.Lessons = map[string]Record{}
	}
	return p, nil
}

// SaveProgress writes p to path atomically (a temporary file beside it,
// then a rename), creating the directory.
func SaveProgress(path string, p Progress) error {
	if st, err := os.Lstat(path); err == nil && !st.Mode().IsRegular() {
		return fmt.Errorf("saving lesson progress: %s is not a regular file; move it away", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("saving lesson progress: %w", err)
	}
	p.Version = progressVersion
	data, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return fmt.Errorf("saving lesson progress: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".learn-*.json")
	if err != nil {
		return fmt.Errorf("saving lesson progress: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(append(data, '\n'))
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(name)
		return fmt.Errorf("saving lesson progress: %w", err)
	}
	if err := os.Rename(name, path); err != nil {
		os.Remove(name)
		return fmt.Errorf("saving lesson progress: %w", err)
	}
	return nil
}
