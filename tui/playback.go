package tui

import (
	"fmt"
	"slices"
	"sort"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
)

// Playback is a recorded session to play back in the lab: its results in
// recording order, each with the time it was recorded at, and what the
// session recorded around them.
type Playback struct {
	Results []profiler.Result
	Times   []time.Duration
	// Context, when given, says for each result (Context[i] for
	// Results[i]) when it was asked for and what was noted before it.
	Context []PlayContext
	// Telemetry is the telemetry recorded beside the results (a GPU
	// node's live NVML samples), in recording order. The utilization panel
	// shows it as the lab did live, for results without NVML-type
	// telemetry of their own.
	Telemetry []PlayBatch
}

// PlayContext is a recorded result's place in the session.
type PlayContext struct {
	// From is when the measurement was asked for: the utilization panel
	// shows the telemetry recorded from then until the result.
	From time.Duration
	// BackToBack says it was measured right after the result before (the
	// lab's live mode): the panel shows the recent history instead, as
	// live mode does.
	BackToBack bool
	// Notes are the markers and errors recorded since the result before;
	// the status line shows them with the result.
	Notes []string
}

// PlayBatch is a batch of recorded telemetry: its samples, on the
// sampler's clock, and when it was recorded.
type PlayBatch struct {
	At      time.Duration
	Samples []backends.Sample
}

// playClock maps a time in the recording to the wall-clock time the live
// telemetry code works with.
func playClock(d time.Duration) time.Time { return time.Unix(0, 0).UTC().Add(d) }

// player is the lab's playback state.
type player struct {
	pb      Playback
	idx     int
	playing bool
	speed   float64
	seq     int // tags ticks, so a stale tick after a seek or pause is dropped
}

// playSpeeds are the playback speeds, slowest first.
func playSpeeds() []float64 { return []float64{0.5, 1, 2, 4, 8, 16} }

// playTickMsg advances playback when its seq is still current.
type playTickMsg struct{ seq int }

// Delays between playback steps are kept in this range, whatever the
// recorded gap and speed, so playback neither crawls nor flickers.
const (
	minPlayDelay = 50 * time.Millisecond
	maxPlayDelay = 2 * time.Second
)

// playKeys are the player's keys (fixed: they sit beside the lab's own;
// speed is on { and }, as + and - zoom the timeline).
const (
	keyPlayPause = "space"
	keyStepNext  = "right"
	keyStepPrev  = "left"
	keyFaster    = "}"
	keySlower    = "{"
	keyStart     = "home"
	keyEnd       = "end"
)

// show puts result idx on screen. Stepping to the next result adds it to
// the metrics panel's history; any other move rebuilds the history from
// the results before it, so it holds what playing through would have.
func (m *Model) show(idx int) {
	p := m.play
	prev := p.idx
	p.idx = max(0, min(idx, len(p.pb.Results)-1))
	if p.idx != prev+1 || m.result == nil {
		m.sums, m.trail, m.hist = map[string]summary{}, map[string][]trailPoint{}, map[string][]fracPoint{}
		for _, r := range p.pb.Results[:p.idx] {
			m.noteResult(r)
		}
	}
	r := p.pb.Results[p.idx]
	for i, sc := range m.suite {
		if sc.Name == r.Scenario.Name {
			m.active, m.cursor = i, i
		}
	}
	m.strategy = r.Strategy
	m.playTelemetry(p.idx)
	m.setResult(r)
	m.status = status{statusInfo, m.playStatus()}
	m.renderAll()
}

// playTelemetry puts the lab's live telemetry where it was when result idx
// arrived: the last liveHistory batches recorded up to then (the sampler
// hands over one sample per metric and device per batch), and the window
// of the measurement unless it ran back to back.
func (m *Model) playTelemetry(idx int) {
	pb := &m.play.pb
	if len(pb.Telemetry) == 0 || idx >= len(pb.Times) {
		return
	}
	at := pb.Times[idx]
	if first := pb.Telemetry[0]; m.liveEpoch.IsZero() && len(first.Samples) > 0 {
		// The sampler's clock, from the first batch, as live.
		m.liveEpoch = playClock(first.At - time.Duration(first.Samples[0].Time))
	}
	cut := sort.Search(len(pb.Telemetry), func(i int) bool { return pb.Telemetry[i].At > at })
	m.live, m.liveOn, m.liveDevs = nvtel.NewHistory(liveHistory), false, nil
	for _, b := range pb.Telemetry[max(cut-liveHistory, 0):cut] {
		m.addLive(nvtel.Batch{At: playClock(b.At), Samples: b.Samples})
	}
	m.measuredFrom, m.measuredTo = time.Time{}, time.Time{}
	if idx < len(pb.Context) && !pb.Context[idx].BackToBack {
		m.measuredFrom, m.measuredTo = playClock(pb.Context[idx].From), playClock(at)
	}
}

// playStatus is the status line during playback.
func (m *Model) playStatus() string {
	p := m.play
	state := "paused"
	if p.playing {
		state = "playing"
	}
	at := time.Duration(0)
	if p.idx < len(p.pb.Times) {
		at = p.pb.Times[p.idx]
	}
	notes := ""
	if p.idx < len(p.pb.Context) {
		for _, n := range p.pb.Context[p.idx].Notes {
			notes += " · " + n
		}
	}
	return fmt.Sprintf("replay %d/%d at %s%s · %s · %gx · space play/pause, ←/→ step, {/} speed, home/end", p.idx+1, len(p.pb.Results), at.Round(time.Millisecond), notes, state, p.speed)
}

// nextTick schedules the step after the current one at the recorded pace.
func (m *Model) nextTick() tea.Cmd {
	p := m.play
	if !p.playing || p.idx+1 >= len(p.pb.Results) {
		p.playing = false
		return nil
	}
	gap := time.Second
	if p.idx+1 < len(p.pb.Times) {
		gap = p.pb.Times[p.idx+1] - p.pb.Times[p.idx]
	}
	d := time.Duration(float64(gap) / p.speed)
	d = max(minPlayDelay, min(d, maxPlayDelay))
	seq := p.seq
	return tea.Tick(d, func(time.Time) tea.Msg { return playTickMsg{seq} })
}

// onPlayTick advances playback by one step.
func (m Model) onPlayTick(msg playTickMsg) (tea.Model, tea.Cmd) {
	if m.play == nil || msg.seq != m.play.seq || !m.play.playing {
		return m, nil
	}
	m.show(m.play.idx + 1)
	cmd := m.nextTick()
	if cmd == nil { // the end: the status says it stopped
		m.status = status{statusInfo, m.playStatus()}
		m.renderFooter()
	}
	return m, cmd
}

// onPlayKey handles the player's keys; ok is false for other keys.
func (m Model) onPlayKey(k string) (tea.Model, tea.Cmd, bool) {
	p := m.play
	step := func(idx int) (tea.Model, tea.Cmd, bool) {
		p.seq++
		p.playing = false
		m.show(idx)
		return m, nil, true
	}
	switch k {
	case keyPlayPause:
		p.seq++
		p.playing = !p.playing
		if p.playing && p.idx+1 >= len(p.pb.Results) {
			m.show(0) // at the end, play from the start
		}
		m.status = status{statusInfo, m.playStatus()}
		m.renderFooter()
		return m, m.nextTick(), true
	case keyStepNext:
		return step(p.idx + 1)
	case keyStepPrev:
		return step(p.idx - 1)
	case keyStart:
		return step(0)
	case keyEnd:
		return step(len(p.pb.Results) - 1)
	case keyFaster, keySlower:
		speeds := playSpeeds()
		i := slices.Index(speeds, p.speed)
		if k == keyFaster {
			i = min(i+1, len(speeds)-1)
		} else {
			i = max(i-1, 0)
		}
		p.speed = speeds[i]
		p.seq++
		m.status = status{statusInfo, m.playStatus()}
		m.renderFooter()
		return m, m.nextTick(), true
	}
	return m, nil, false
}
