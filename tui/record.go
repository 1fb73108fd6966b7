package tui

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/scenarios"
)

// recTickEvery is how often the lab refreshes the recording's size in the
// top bar and checks that the recorder still writes.
const recTickEvery = time.Second

// recording is the lab's recording state. The record key toggles it; the
// recorder itself queues events and writes them off the UI loop, so
// recording never blocks it.
type recording struct {
	// open starts a recorder at a path (Config.Recorder); nil: the lab
	// cannot record.
	open func(path string, gpus int) (*recordings.Recorder, error)
	// path is the --record file until it is used; startErr is why it
	// could not be opened at the start (Run then refuses to start).
	path     string
	startErr error
	// all holds every recorder the lab opened, for Run to close.
	all *recorderSet
	// cur is the recording on, nil when off; opening says one is starting.
	cur     *recordings.Recorder
	opening bool
	// The scenario and strategy recorded last (noted: any yet).
	noted bool
	sc    scenarios.Scenario
	st    scenarios.Strategy
}

// recorderSet is every recorder the lab opened. Run closes them all when
// the lab ends, even one whose opening finished as the user quit.
type recorderSet struct {
	mu   sync.Mutex
	recs []*recordings.Recorder
}

func (s *recorderSet) add(r *recordings.Recorder) {
	s.mu.Lock()
	s.recs = append(s.recs, r)
	s.mu.Unlock()
}

// closeAll flushes and closes every recorder (closing one twice is fine).
// A recorder's failure is its Err, for whoever opened it to report.
func (s *recorderSet) closeAll() {
	s.mu.Lock()
	recs := s.recs
	s.mu.Unlock()
	for _, r := range recs {
		r.Close()
	}
}

// recOpenedMsg carries a recorder the record key asked for.
type recOpenedMsg struct {
	path string
	rec  *recordings.Recorder
	err  error
}

// recClosedMsg says a recording stopped: closed by the record key, or
// after its recorder failed (err).
type recClosedMsg struct {
	path  string
	stats recordings.Stats
	err   error
}

// recTickMsg refreshes the recording indicator while rec is on.
type recTickMsg struct{ rec *recordings.Recorder }

// openRecording opens a recorder off the UI loop (building its header may
// probe the GPUs): at path, or at an automatic name when path is empty,
// for a scenario on gpus devices. The gate keeps it from starting once
// the lab is ending.
func openRecording(g *runGate, all *recorderSet, open func(string, int) (*recordings.Recorder, error), path string, gpus int) tea.Cmd {
	return func() tea.Msg {
		if !g.enter() {
			return recOpenedMsg{path: path, err: errors.New("the lab is closing")}
		}
		defer g.leave()
		if path == "" {
			path = autoName(".", time.Now())
		}
		rec, err := open(path, gpus)
		if err != nil {
			return recOpenedMsg{path: path, err: err}
		}
		all.add(rec)
		return recOpenedMsg{path: path, rec: rec}
	}
}

// closeRecording flushes and closes a recorder off the UI loop.
func closeRecording(rec *recordings.Recorder) tea.Cmd {
	return func() tea.Msg {
		err := rec.Close()
		if errors.Is(err, os.ErrClosed) {
			err = nil
		}
		return recClosedMsg{path: rec.Path(), stats: rec.Stats(), err: err}
	}
}

// recTick schedules the next refresh of the recording indicator.
func recTick(rec *recordings.Recorder) tea.Cmd {
	return tea.Tick(recTickEvery, func(time.Time) tea.Msg { return recTickMsg{rec} })
}

// autoName is the file the record key records to when no --record file is
// left: c3lab-YYYYMMDD-HHMMSS.c3rec in dir, with -2, -3 … added while a
// file of that name exists. (The recorder refuses an existing file too, so
// a file made in between is not overwritten either.)
func autoName(dir string, t time.Time) string {
	base := "c3lab-" + t.Format("20060102-150405")
	name := filepath.Join(dir, base+".c3rec")
	for i := 2; ; i++ {
		if _, err := os.Lstat(name); errors.Is(err, os.ErrNotExist) {
			return name
		}
		name = filepath.Join(dir, fmt.Sprintf("%s-%d.c3rec", base, i))
	}
}

// toggleRecording is the record key: it stops the recording on, or starts
// one at the --record file if that is not used yet, else at an automatic
// name.
func (m Model) toggleRecording() (Model, tea.Cmd) {
	r := &m.rec
	var cmd tea.Cmd
	switch {
	case r.cur != nil:
		rec := r.cur
		r.cur = nil
		m.status = status{statusInfo, "closing the recording " + rec.Path() + "…"}
		cmd = closeRecording(rec)
	case r.open == nil:
		m.status = status{statusWarn, "this lab cannot record (c3lab lab records; a replay does not)"}
	case r.opening:
		m.status = status{statusInfo, "the recording is starting…"}
	default:
		r.opening = true
		path := r.path
		r.path = "" // used, whatever comes of it: the next press picks a name
		m.status = status{statusInfo, "starting a recording…"}
		cmd = openRecording(m.gate, r.all, r.open, path, m.activeGPUs())
	}
	return m, cmd
}

// activeGPUs is the GPU count of the scenario on screen (0 with none): the
// devices a recording started now lists in its header.
func (m *lab) activeGPUs() int {
	if len(m.suite) == 0 {
		return 0
	}
	return m.suite[m.active].GPUs
}

// onRecording handles the recording's messages.
func (m Model) onRecording(msg tea.Msg) (Model, tea.Cmd) {
	r := &m.rec
	var cmd tea.Cmd
	switch msg := msg.(type) {
	case recOpenedMsg:
		r.opening = false
		if msg.err != nil {
			m.status = status{statusError, "cannot record: " + errLine(msg.err)}
			break
		}
		m.beginRecording(msg.rec)
		m.status = status{statusInfo, fmt.Sprintf("recording to %s (%s stops)", msg.path, m.keys.Record.Help().Key)}
		cmd = recTick(msg.rec)
	case recClosedMsg:
		if msg.err != nil {
			m.status = status{statusError, "recording stopped: " + errLine(msg.err) + "; " + msg.path + " keeps what came before"}
			break
		}
		size := report.Size(msg.stats.Bytes)
		if n := msg.stats.Dropped; n > 0 {
			size += fmt.Sprintf(", %d events dropped: the disk was behind", n)
		}
		m.status = status{statusInfo, fmt.Sprintf("saved the recording to %s (%s)", msg.path, size)}
	case recTickMsg:
		if msg.rec != r.cur {
			return m, nil // a stopped recording's tick
		}
		if r.cur.Err() != nil {
			// The recorder failed (a full disk, say): stop it, and say so
			// once it is closed; the lab goes on.
			r.cur = nil
			return m, closeRecording(msg.rec)
		}
		return m, recTick(msg.rec)
	}
	return m, cmd
}

// beginRecording makes rec the recording on: it records the scenario and
// strategy, and the result on screen when it is theirs.
func (m *lab) beginRecording(rec *recordings.Recorder) {
	m.rec.cur = rec
	m.rec.noted = false
	m.noteSetting()
	if m.result != nil && !m.running && !m.failed {
		rec.Result(*m.result)
	}
}

// noteSetting records the scenario and the strategy when they changed
// since they were last recorded.
func (m *lab) noteSetting() {
	r := &m.rec
	if r.cur == nil || len(m.suite) == 0 {
		return
	}
	if sc := m.suite[m.active]; !r.noted || !sc.Equal(r.sc) {
		r.cur.Scenario(sc)
		r.sc = sc
	}
	if !r.noted || m.strategy != r.st {
		r.cur.Strategy(m.strategy)
		r.st = m.strategy
	}
	r.noted = true
}

// recIndicator is the top bar's recording indicator, most detailed form
// first; none when not recording.
func (m *lab) recIndicator() []string {
	rec := m.rec.cur
	if rec == nil {
		return nil
	}
	return recForms(m.styles, filepath.Base(rec.Path()), rec.Stats().Bytes)
}

// recForms is the indicator for a recording to name of size bytes: the
// glyph and the word say it without colour.
func recForms(st Styles, name string, bytes int64) []string {
	dot := st.Rec.Render("● REC")
	return []string{
		dot + " " + st.Dim.Render(name+" "+report.Size(bytes)),
		dot + " " + st.Dim.Render(report.Size(bytes)),
		dot,
	}
}
