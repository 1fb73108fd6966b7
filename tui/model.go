package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/heuristics"
	"github.com/c3lab/c3lab/profiler"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/recordings"
	"github.com/c3lab/c3lab/recordings/outfile"
	"github.com/c3lab/c3lab/scenarios"
)

// Config is what the lab needs to start.
type Config struct {
	// Backend runs the measurements (the simulator, a GPU backend, a replay).
	Backend backends.Backend
	// Suite is the list of scenarios offered.
	Suite []scenarios.Scenario
	// Start names the scenario measured first; empty means the first one.
	Start string
	// Strategy is the strategy to start with; the zero value means the
	// start scenario's own strategy. The knobs change it afterwards, and it
	// carries over when another scenario is picked.
	Strategy scenarios.Strategy
	// Telemetry, when set, streams live NVML batches (a GPU node); the
	// utilization panel shows them when a result carries no telemetry of
	// its own.
	Telemetry <-chan nvtel.Batch
	// Note is shown in the status line at start (why telemetry is off, say).
	Note string
	// ListNote says, in a few words, what the scenario list leaves out
	// ("36 need more GPUs"); it stays in the list's title.
	ListNote string
	// Playback, when it holds results, plays a recorded session instead of
	// measuring: the lab shows each recorded result in turn.
	Playback *Playback
	// Keys replaces the default key map (LoadUserKeyMap reads the user's).
	Keys *KeyMap
	// Recorder, when set, starts a recording at a path: it builds the
	// header for the backend, listing the gpus devices of the scenario on
	// screen, and creates the file, refusing an existing one unless the
	// caller allows it. The record key calls it (off the UI loop) with
	// RecordPath, or an automatic name once that is used.
	Recorder func(path string, gpus int) (*recordings.Recorder, error)
	// RecordPath, when set with Recorder, is recorded to from the start;
	// Run returns the error, before the lab starts, when it cannot be
	// opened. Run flushes and closes every recording before it returns.
	RecordPath string
}

// liveTickMsg starts the next live iteration if seq is still current.
type liveTickMsg struct{ seq int }

// livePace is the shortest time between live iterations.
const livePace = 100 * time.Millisecond

// liveMsg carries one batch of live telemetry.
type liveMsg struct{ batch nvtel.Batch }

// liveHistory is how many live samples per series the lab keeps (at 10 Hz,
// the last 12 seconds).
const liveHistory = 120

// Model is the lab's bubbletea model. Build it with New.
type Model struct {
	ctx     context.Context
	gate    *runGate
	backend backends.Backend
	caps    backends.Capabilities
	name    string // backend name
	devs    []backends.DeviceInfo
	suite   []scenarios.Scenario

	keys   KeyMap
	styles Styles
	help   help.Model
	spin   spinner.Model

	cursor, offset, active int
	strategy               scenarios.Strategy

	// seq is the latest measurement request; running says one is in
	// flight (at most one at a time), under runCtx, cancelled by cancel.
	seq     int
	running bool
	runCtx  context.Context
	cancel  context.CancelFunc

	result *profiler.Result
	tel    telemetry
	sums   map[string]summary
	// trail keeps each scenario's last measurements, oldest first.
	trail map[string][]trailPoint
	// hist keeps each scenario's fraction of ideal, one point per result
	// (the history chart), oldest first.
	hist map[string][]fracPoint
	// play is the playback state (nil when the lab measures).
	play *player
	// grid is the sweep heatmap while it is open.
	grid *sweepGrid
	// comp is the scenario composer while it is open.
	comp *composer
	// liveRun re-measures back to back (l toggles it), reusing the
	// isolated baselines while the scenario and collective stay the same.
	liveRun bool
	// rec is the session's recording (the record key toggles it).
	rec recording
	// live holds live NVML telemetry; liveOn says some arrived.
	live   *nvtel.History
	liveOn bool
	// liveDevs are the devices live batches reported, in arrival order.
	liveDevs []int
	// liveEpoch is the wall-clock time of live sample time 0 (from the
	// first batch); measuredFrom and measuredTo bound the last
	// measurement, so the panel can show the samples taken during it.
	liveEpoch                time.Time
	measuredFrom, measuredTo time.Time
	// gpu is the device the timeline and utilization panels show, one of
	// gpus, the devices the result (or live telemetry) reports; the GPU
	// key cycles it.
	gpu  int
	gpus []int
	// zoom is the timeline's zoom and window; a new scenario resets it.
	zoom   tlZoom
	took   time.Duration
	failed bool // the last measurement failed
	status status
	// knobNote says why the last knob turned cannot change this scenario
	// on this backend ("" when it may); it stays beside the result until
	// the next request.
	knobNote string
	// listNote is Config.ListNote.
	listNote string

	showHelp bool
	// helpTop is the help overlay's first line shown (↑/↓ scroll it).
	helpTop  int
	detail   detail
	quitting bool

	width, height int
	tracks        int
	lay           layout
	view          viewCache
}

// New builds the model for cfg; the first measurement starts with Init.
// Problems with cfg (no backend, no scenarios, an unknown start) show in
// the status line. With cfg.RecordPath it starts recording at once; Run
// closes the recordings when the lab ends.
func New(cfg Config) Model {
	return newModel(context.Background(), cfg)
}

func newModel(ctx context.Context, cfg Config) Model {
	m := Model{
		ctx:    ctx,
		gate:   &runGate{},
		suite:  cfg.Suite,
		keys:   DefaultKeyMap(),
		styles: DefaultStyles(true),
		help:   help.New(),
		spin:   spinner.New(spinner.WithSpinner(spinner.MiniDot)),
		sums:   map[string]summary{},
		trail:  map[string][]trailPoint{},
		hist:   map[string][]fracPoint{},
		tracks: 5,
		live:   nvtel.NewHistory(liveHistory),
		rec:    recording{open: cfg.Recorder, path: cfg.RecordPath, all: &recorderSet{}},
	}
	m.spin.Style = m.styles.Spinner
	if cfg.Backend == nil {
		m.status = status{statusError, "no backend"}
		return m
	}
	m.backend = cfg.Backend
	m.caps = cfg.Backend.Capabilities()
	m.name = cfg.Backend.Name()
	devs := cfg.Backend.Devices()
	m.devs = devs
	ces := m.caps.Limits.CopyEngines
	if len(devs) > 0 {
		ces = devs[0].CopyEngines
	}
	m.tracks = 2 + min(max(ces, 0), 8)
	if cfg.Keys != nil {
		m.keys = *cfg.Keys
	}
	m.keys = m.keys.withCapabilities(m.caps)
	if len(cfg.Suite) == 0 {
		m.status = status{statusError, "no scenarios to show"}
		return m
	}
	if cfg.Start != "" {
		found := false
		for i, sc := range cfg.Suite {
			if sc.Name == cfg.Start {
				m.active, found = i, true
			}
		}
		if !found {
			m.status = status{statusWarn, fmt.Sprintf("no scenario %q; showing %s", cfg.Start, cfg.Suite[0].Name)}
		}
	}
	m.cursor = m.active
	m.strategy = cfg.Strategy
	if m.strategy == (scenarios.Strategy{}) {
		m.strategy = cfg.Suite[m.active].Strategy
	}
	if cfg.Note != "" {
		m.status = status{statusInfo, cfg.Note}
	}
	m.listNote = cfg.ListNote
	var note string
	m.strategy, note = fitStrategy(m.strategy, m.suite[m.active].Comm.Collective, m.caps, m.name)
	if note != "" {
		m.status = status{statusWarn, note}
	}
	m.seq = 1
	m.running = true
	m.runCtx, m.cancel = context.WithCancel(ctx)
	if pb := cfg.Playback; pb != nil && len(pb.Results) > 0 {
		m.running = false // nothing to measure: the results are recorded
		m.play = &player{pb: *pb, speed: 1}
		m.show(0)
		return m
	}
	if m.rec.open != nil && m.rec.path != "" {
		// Before the lab starts, so nothing waits on it.
		path := m.rec.path
		m.rec.path = ""
		rec, err := m.rec.open(path, m.activeGPUs())
		if err != nil {
			m.rec.startErr = err
			m.status = status{statusError, "cannot record: " + errLine(err)}
			return m
		}
		m.rec.all.add(rec)
		m.beginRecording(rec)
	}
	return m
}

// Init starts the first measurement and asks the terminal's background.
func (m Model) Init() tea.Cmd {
	cmds := []tea.Cmd{tea.RequestBackgroundColor}
	if m.running {
		cmds = append(cmds, m.measure(), m.spin.Tick)
	}
	if m.rec.cur != nil {
		cmds = append(cmds, recTick(m.rec.cur))
	}
	return tea.Batch(cmds...)
}

// measure is the command for the latest request under the current context.
func (m Model) measure() tea.Cmd {
	var base *profiler.Baseline
	if m.liveRun && m.result != nil {
		b := m.result.Baseline()
		base = &b
	}
	return measureCmd(m.runCtx, m.gate, m.backend, m.active, m.suite[m.active], m.strategy, m.seq, base)
}

// request asks for a measurement of the active scenario under the current
// strategy. With one in flight it cancels it; its result then starts the
// latest request, so the backend runs one measurement at a time and the
// newest request wins.
func (m *Model) request() tea.Cmd {
	if m.backend == nil || len(m.suite) == 0 {
		return nil
	}
	m.seq++
	m.knobNote = ""
	m.noteSetting()
	m.renderHeader()
	if m.running {
		m.cancel()
		return nil
	}
	return m.start()
}

// start launches the latest request.
func (m *Model) start() tea.Cmd {
	m.runCtx, m.cancel = context.WithCancel(m.ctx)
	m.running = true
	m.renderHeader()
	return tea.Batch(m.measure(), m.spin.Tick)
}

// Update handles keys, window sizes, measurement results and spinner ticks.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
		m.lay = computeLayout(m.width, m.height, m.tracks)
		m.renderAll()
		return m, nil

	case tea.BackgroundColorMsg:
		m.styles = DefaultStyles(msg.IsDark())
		m.spin.Style = m.styles.Spinner
		m.renderAll()
		return m, nil

	case resultMsg:
		return m.onResult(msg)

	case recOpenedMsg, recClosedMsg, recTickMsg:
		return m.onRecording(msg)

	case playTickMsg:
		return m.onPlayTick(msg)

	case gridMsg:
		return m.onGridMsg(msg)

	case composerSavedMsg:
		if errors.Is(msg.err, outfile.ErrExists) && m.comp != nil && m.comp.confirm == "" {
			m.comp.confirm, m.comp.note = msg.path, msg.path+" exists: overwrite it? y/n"
			m.renderComposer()
			return m, nil
		}
		if msg.err != nil {
			m.status = status{statusError, "saving " + msg.path + ": " + errLine(msg.err)}
			m.rec.cur.Error(m.status.text)
		} else {
			m.status = status{statusInfo, "saved " + msg.path}
		}
		if m.comp != nil {
			m.comp.note = m.status.text
			m.renderComposer()
		}
		m.renderFooter()
		return m, nil

	case liveTickMsg:
		// The next live iteration, unless a knob or a toggle came first.
		if !m.liveRun || m.running || msg.seq != m.seq {
			return m, nil
		}
		m.seq++
		return m, m.start()

	case liveMsg:
		m.rec.cur.Samples(msg.batch.Samples)
		m.addLive(msg.batch)
		if m.liveShown() {
			m.refreshDevices()
			m.renderResultPanels()
		}
		return m, nil

	case spinner.TickMsg:
		if !m.running {
			return m, nil
		}
		var cmd tea.Cmd
		m.spin, cmd = m.spin.Update(msg)
		m.renderHeader()
		return m, cmd

	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	return m, nil
}

// addLive adds a batch of live telemetry to the history; the first batch
// sets the sampler's clock.
func (m *Model) addLive(b nvtel.Batch) {
	m.live.Add(b)
	m.liveOn = true
	if m.liveEpoch.IsZero() && !b.At.IsZero() && len(b.Samples) > 0 {
		m.liveEpoch = b.At.Add(-time.Duration(b.Samples[0].Time))
	}
	devs := make([]int, 0, 2)
	for _, s := range b.Samples {
		devs = append(devs, s.Device)
	}
	m.noteLiveDevices(devs)
}

// onResult applies a measurement, or drops it when a newer one is wanted.
func (m Model) onResult(msg resultMsg) (tea.Model, tea.Cmd) {
	m.running = false
	if m.cancel != nil {
		m.cancel()
	}
	if m.quitting {
		return m, nil
	}
	if msg.seq != m.seq {
		return m, m.start()
	}
	m.failed = msg.err != nil
	if msg.err != nil {
		m.status = status{statusError, errLine(msg.err)}
		m.rec.cur.Error(m.status.text)
		m.renderHeader()
		m.renderFooter()
		return m, nil
	}
	m.took = msg.took
	m.measuredFrom, m.measuredTo = msg.started, msg.started.Add(msg.took)
	m.rec.cur.Result(msg.result)
	m.setResult(msg.result)
	m.status = status{statusInfo, fmt.Sprintf("%s · %s: %s of ideal (%s realized, %s ideal)",
		msg.result.Scenario.Name, msg.result.Strategy.String(), fracText(msg.result), fmtX(msg.result.RealizedSpeedup), fmtX(msg.result.IdealSpeedup))}
	if m.knobNote != "" {
		// The knob was applied and measured; say again why it could not matter.
		m.status = status{statusWarn, m.knobNote + " · measured: " + fracText(msg.result) + " of ideal"}
	}
	if m.liveRun {
		m.status.text = "live · " + m.status.text
		m.renderAll()
		// At most livePace apart, so a fast backend does not spin the UI.
		seq := m.seq
		return m, tea.Tick(max(livePace-msg.took, time.Millisecond), func(time.Time) tea.Msg { return liveTickMsg{seq} })
	}
	m.renderAll()
	return m, nil
}

// errLine is an error as one line.
func errLine(err error) string {
	if errors.Is(err, context.Canceled) {
		return "measurement cancelled"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// fracText is a result's fraction of ideal as text.
func fracText(r profiler.Result) string {
	f, ok := r.Fraction()
	if !ok {
		return "n/a"
	}
	return fmtPct(f)
}

// setResult stores a result and what is derived from it once.
func (m *Model) setResult(r profiler.Result) {
	if m.result == nil || m.result.Scenario.Name != r.Scenario.Name {
		m.zoom = tlZoom{}
	}
	m.result = &r
	m.refreshDevices()
	m.noteResult(r)
}

// noteResult adds a result to its scenario's summary, trail and history.
func (m *Model) noteResult(r profiler.Result) {
	f, ok := r.Fraction()
	m.sums[r.Scenario.Name] = summary{class: r.Class, fraction: f, ok: ok}
	t := m.trail[r.Scenario.Name]
	p := trailPoint{strategy: r.Strategy.String(), fraction: f, ok: ok}
	if n := len(t); n > 0 && t[n-1].strategy == p.strategy {
		t[n-1] = p // the same strategy again (live mode): update its point
	} else {
		t = append(t, p)
	}
	if len(t) > maxTrail {
		t = t[len(t)-maxTrail:]
	}
	m.trail[r.Scenario.Name] = t
	m.hist[r.Scenario.Name] = addFrac(m.hist[r.Scenario.Name], p.strategy, f, ok)
}

// onKey handles one key press.
func (m Model) onKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := m.keys
	if key.Matches(msg, k.Quit) {
		m.quitting = true
		if m.cancel != nil {
			m.cancel()
		}
		m.closeGrid()
		return m, tea.Quit
	}
	if m.showHelp {
		switch {
		case key.Matches(msg, k.Help, k.Close):
			m.showHelp = false
		case key.Matches(msg, k.Up):
			m.helpTop--
			m.renderOverlay()
		case key.Matches(msg, k.Down):
			m.helpTop++
			m.renderOverlay()
		}
		return m, nil
	}
	if m.grid != nil {
		return m.onGridKey(msg)
	}
	if m.comp != nil {
		return m.onComposerKey(msg)
	}
	if nm, ok := m.viewKey(msg); ok {
		return nm, nil
	}
	if m.play != nil {
		if nm, cmd, ok := m.onPlayKey(msg.String()); ok {
			return nm, cmd
		}
		if !key.Matches(msg, k.Help, k.Up, k.Down, k.NextPanel) {
			m.status = status{statusWarn, "playback shows what was recorded; c3lab replay FILE --lab measures the recorded strategies instead"}
			m.renderFooter()
			return m, nil
		}
	}
	switch {
	case key.Matches(msg, k.Help):
		m.showHelp = true
		m.helpTop = 0
		m.renderOverlay()
	case key.Matches(msg, k.Up):
		m.moveCursor(-1)
	case key.Matches(msg, k.Down):
		m.moveCursor(1)
	case key.Matches(msg, k.Pick):
		if len(m.suite) == 0 {
			return m, nil
		}
		m.active = m.cursor
		var note string
		m.strategy, note = fitStrategy(m.strategy, m.suite[m.active].Comm.Collective, m.caps, m.name)
		m.status = status{statusInfo, "measuring " + m.suite[m.active].Name}
		if note != "" {
			m.status = status{statusWarn, note}
		}
		cmd := m.request()
		m.renderList()
		m.renderFooter()
		return m, cmd
	case key.Matches(msg, k.NextPanel):
		if m.lay.tabbed {
			m.detail = (m.detail + 1) % detailCount
			m.renderResultPanels()
		} else {
			m.status = status{statusInfo, "all panels are on screen"}
			m.renderFooter()
		}
	case key.Matches(msg, k.Compose):
		m.comp = newComposer(m.suite[m.active])
		_, m.comp.errs = m.comp.scenario(m.caps.Limits)
		m.renderComposer()
		return m, nil
	case key.Matches(msg, k.Sweep):
		m.grid = newGrid(m.ctx, m.suite[m.active], m.caps)
		m.status = status{statusInfo, fmt.Sprintf("sweeping %s over %d strategies", m.suite[m.active].Name, m.grid.total())}
		m.rec.cur.Marker("key " + msg.String() + ": " + m.status.text)
		m.renderFooter()
		m.renderGrid()
		return m, m.grid.measureNext(m.gate, m.backend)
	case key.Matches(msg, k.Live):
		m.liveRun = !m.liveRun
		if !m.liveRun {
			m.status = status{statusInfo, "live off: measuring only when a knob changes"}
			m.renderFooter()
			return m, nil
		}
		m.status = status{statusInfo, "live: measuring back to back"}
		cmd := m.request()
		m.renderFooter()
		return m, cmd
	case key.Matches(msg, k.Advice):
		a := heuristics.Advise(m.suite[m.active], m.caps)
		m.strategy = a.Strategy
		m.status = status{statusInfo, "applied the advice: " + a.Strategy.String()}
		m.rec.cur.Marker("key " + msg.String() + ": " + m.status.text)
		cmd := m.request()
		m.renderFooter()
		return m, cmd
	case key.Matches(msg, k.Rerun):
		m.status = status{statusInfo, "measuring again"}
		cmd := m.request()
		m.renderFooter()
		return m, cmd
	case key.Matches(msg, k.Record):
		return m.toggleRecording()
	default:
		kn, ok := m.knobFor(msg)
		if !ok {
			return m, nil
		}
		return m.turnKnob(kn, msg.String())
	}
	return m, nil
}

// knobFor maps a key to the knob it turns.
func (m Model) knobFor(msg tea.KeyPressMsg) (knob, bool) {
	return keyKnob(scenarios.StrategyKnobs(), m.keys, msg)
}

// turnKnob changes the strategy and measures again, or says why it cannot.
// A recording notes which key turned it.
func (m Model) turnKnob(kn knob, keyName string) (tea.Model, tea.Cmd) {
	if m.backend == nil || len(m.suite) == 0 {
		return m, nil
	}
	st, note, err := turn(kn, m.strategy, m.suite[m.active].Comm.Collective, m.caps, m.name)
	if err != nil {
		m.status = status{statusWarn, err.Error()}
		m.renderFooter()
		return m, nil
	}
	moot := m.cannotMatter(m.strategy, st)
	m.strategy = st
	if moot != "" {
		// Applied all the same (the user asked), never silently.
		m.rec.cur.Marker("key " + keyName + ": " + note + " · " + moot)
		m.status = status{statusWarn, note + " · " + moot + " · measuring anyway…"}
	} else {
		m.rec.cur.Marker("key " + keyName + ": " + note)
		m.status = status{statusInfo, note + " · measuring…"}
	}
	cmd := m.request()
	m.knobNote = moot
	m.renderFooter()
	if m.showHelp {
		m.renderOverlay()
	}
	return m, cmd
}

// moveCursor moves the list cursor by d rows.
func (m *Model) moveCursor(d int) {
	if len(m.suite) == 0 {
		return
	}
	m.cursor = min(max(m.cursor+d, 0), len(m.suite)-1)
	m.renderList()
}

// View stitches the cached panels together; it measures and renders
// nothing itself.
func (m Model) View() tea.View {
	v := tea.NewView(m.compose())
	v.AltScreen = true
	v.WindowTitle = "c3lab"
	return v
}
