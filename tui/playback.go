package tui

import (
	"fmt"
	"slices"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/profiler"
)

// Playback is a recorded session to play back in the lab: its results in
// recording order, each with the time it was recorded at.
type Playback struct {
	Results []profiler.Result
	Times   []time.Duration
}

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

// show puts result idx on screen.
func (m *Model) show(idx int) {
	p := m.play
	p.idx = max(0, min(idx, len(p.pb.Results)-1))
	r := p.pb.Results[p.idx]
	for i, sc := range m.suite {
		if sc.Name == r.Scenario.Name {
			m.active, m.cursor = i, i
		}
	}
	m.strategy = r.Strategy
	m.setResult(r)
	m.status = status{statusInfo, m.playStatus()}
	m.renderAll()
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
	return fmt.Sprintf("replay %d/%d at %s · %s · %gx · space play/pause, ←/→ step, {/} speed, home/end", p.idx+1, len(p.pb.Results), at.Round(time.Millisecond), state, p.speed)
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
