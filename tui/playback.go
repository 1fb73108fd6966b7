package tui

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"charm.land/bubbles/v2/key"
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

// player is the playback mode: at the bottom of the mode stack of a lab
// that plays a recording back instead of measuring. It takes the player's
// keys, lets the keys that only change the view through, and refuses the
// rest (they would measure).
type player struct {
	size
	keys    playKeys
	pb      Playback
	idx     int
	playing bool
	speed   float64
	seq     int // tags ticks, so a stale tick after a seek or pause is dropped
}

func newPlayer(pb Playback) *player {
	return &player{pb: pb, speed: 1, keys: defaultPlayKeys()}
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

// The player's keys (fixed: they sit beside the lab's own; speed is on {
// and }, as + and - zoom the timeline).
const (
	keyPlayPause = "space"
	keyStepNext  = "right"
	keyStepPrev  = "left"
	keyFaster    = "}"
	keySlower    = "{"
	keyStart     = "home"
	keyEnd       = "end"
)

// playKeys are the player's key bindings.
type playKeys struct {
	playPause, next, prev, faster, slower, start, end key.Binding
	// step, speed and ends name pairs of the keys above in the hint.
	step, speed, ends key.Binding
}

func defaultPlayKeys() playKeys {
	return playKeys{
		playPause: key.NewBinding(key.WithKeys(keyPlayPause), key.WithHelp("space", "play/pause")),
		next:      key.NewBinding(key.WithKeys(keyStepNext)),
		prev:      key.NewBinding(key.WithKeys(keyStepPrev)),
		faster:    key.NewBinding(key.WithKeys(keyFaster)),
		slower:    key.NewBinding(key.WithKeys(keySlower)),
		start:     key.NewBinding(key.WithKeys(keyStart)),
		end:       key.NewBinding(key.WithKeys(keyEnd)),
		step:      key.NewBinding(key.WithKeys(keyStepPrev, keyStepNext), key.WithHelp("←/→", "step")),
		speed:     key.NewBinding(key.WithKeys(keySlower, keyFaster), key.WithHelp("{/}", "speed")),
		ends:      key.NewBinding(key.WithKeys(keyStart, keyEnd), key.WithHelp("home/end", "")),
	}
}

// ShortHelp lists the player's keys, as the status line shows them.
func (p *player) ShortHelp() []key.Binding {
	return []key.Binding{p.keys.playPause, p.keys.step, p.keys.speed, p.keys.ends}
}

// FullHelp lists the player's keys.
func (p *player) FullHelp() [][]key.Binding { return fullHelp(p) }

// View draws nothing over the panels: they show the recorded result.
func (p *player) View(*Model) []string { return nil }

// show puts result idx on screen. Stepping to the next result adds it to
// the metrics panel's history; any other move rebuilds the history from
// the results before it, so it holds what playing through would have.
func (m *Model) show(idx int) {
	p := m.play()
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
			m.active, m.list.cursor = i, i
		}
	}
	m.strategy = r.Strategy
	m.playTelemetry(p.idx)
	m.setResult(r)
	m.status = status{statusInfo, p.status()}
}

// playTelemetry puts the lab's live telemetry where it was when result idx
// arrived: the last liveHistory batches recorded up to then (the sampler
// hands over one sample per metric and device per batch), and the window
// of the measurement unless it ran back to back.
func (m *Model) playTelemetry(idx int) {
	pb := &m.play().pb
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

// status is the status line during playback.
func (p *player) status() string {
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
	return fmt.Sprintf("replay %d/%d at %s%s · %s · %gx · %s", p.idx+1, len(p.pb.Results), at.Round(time.Millisecond), notes, state, p.speed, hint(p.ShortHelp(), ", "))
}

// nextTick schedules the step after the current one at the recorded pace.
func (p *player) nextTick() tea.Cmd {
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

// Update handles the player's keys and its ticks. The keys that only
// change the view (the GPU and zoom keys, help, the list cursor, the
// detail tab) and quit pass to the lab; any other key would measure, and
// the status line says why it does nothing.
func (p *player) Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse) {
	switch msg := msg.(type) {
	case playTickMsg:
		return p.onTick(m, msg), took
	case tea.KeyPressMsg:
		k := m.keys
		if key.Matches(msg, k.Quit, k.GPU, k.ZoomIn, k.ZoomOut, k.ZoomReset, k.PanLeft, k.PanRight) {
			return nil, passed
		}
		if cmd, ok := p.onKey(m, msg); ok {
			return cmd, took
		}
		if key.Matches(msg, k.Help, k.Up, k.Down, k.NextPanel) {
			return nil, passed
		}
		m.status = status{statusWarn, "playback shows what was recorded; c3lab replay FILE --lab measures the recorded strategies instead"}
		return nil, took
	}
	return nil, passed
}

// onTick advances playback by one step.
func (p *player) onTick(m *Model, msg playTickMsg) tea.Cmd {
	if msg.seq != p.seq || !p.playing {
		return nil
	}
	m.show(p.idx + 1)
	cmd := p.nextTick()
	if cmd == nil { // the end: the status says it stopped
		m.status = status{statusInfo, p.status()}
	}
	return cmd
}

// onKey handles the player's keys; ok is false for other keys.
func (p *player) onKey(m *Model, msg tea.KeyPressMsg) (tea.Cmd, bool) {
	k := p.keys
	step := func(idx int) (tea.Cmd, bool) {
		p.seq++
		p.playing = false
		m.show(idx)
		return nil, true
	}
	switch {
	case key.Matches(msg, k.playPause):
		p.seq++
		p.playing = !p.playing
		if p.playing && p.idx+1 >= len(p.pb.Results) {
			m.show(0) // at the end, play from the start
		}
		m.status = status{statusInfo, p.status()}
		return p.nextTick(), true
	case key.Matches(msg, k.next):
		return step(p.idx + 1)
	case key.Matches(msg, k.prev):
		return step(p.idx - 1)
	case key.Matches(msg, k.start):
		return step(0)
	case key.Matches(msg, k.end):
		return step(len(p.pb.Results) - 1)
	case key.Matches(msg, k.faster, k.slower):
		speeds := playSpeeds()
		i := slices.Index(speeds, p.speed)
		if key.Matches(msg, k.faster) {
			i = min(i+1, len(speeds)-1)
		} else {
			i = max(i-1, 0)
		}
		p.speed = speeds[i]
		p.seq++
		m.status = status{statusInfo, p.status()}
		return p.nextTick(), true
	}
	return nil, false
}
