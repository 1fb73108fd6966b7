package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/spinner"
	tea "charm.land/bubbletea/v2"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	nvtel "github.com/c3lab/c3lab/profiler/telemetry"
	"github.com/c3lab/c3lab/recordings"
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
	// Advisor, when set, advises with a model (the calibrated simulator,
	// as c3lab advise does) in the why panel and on the advice key; the
	// lab ranks the active scenario (and the result's) in the background,
	// one at a time, and keeps each answer per scenario definition. nil
	// leaves the rules of thumb (heuristics.Advise).
	Advisor Advisor
	// Machine, when set, is the GPUs' record (NVML) every measurement
	// reads: their state around each run, flagged when the isolated and
	// concurrent runs drifted apart (the status line warns), their clocks
	// during the runs (the status line says a cap, or modes at different
	// clocks), and the engines' use during the timed repetitions (the
	// utilization panel shows it). nil records neither: the simulator, no
	// driver.
	Machine profiler.Machine
	// Ranks, when set, makes this lab rank 0 of a multi-process job: each
	// measurement is sent to every other rank, which measures its share at
	// one start gate, and the header says how many reported and their
	// start skew. A lost rank is named in the status line and ends the lab.
	Ranks Ranks
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

// lab is the state the lab's components share: the backend and what it
// measures, the result on screen and what the lab remembers of earlier
// ones, the status line, the recording and live telemetry, and the styles
// and keys every component draws and matches with.
type lab struct {
	ctx     context.Context
	gate    *runGate
	backend backends.Backend
	caps    backends.Capabilities
	name    string // backend name
	devs    []backends.DeviceInfo
	suite   []scenarios.Scenario

	// machine is the GPUs' record (Config.Machine): each measurement reads
	// their state around its runs (drift) and during them (clocks under
	// load), and the engines' use during them.
	machine profiler.Machine

	keys   KeyMap
	styles Styles

	// active is the scenario measured and shown; strategy is the strategy
	// the knobs set.
	active   int
	strategy scenarios.Strategy

	// seq is the latest measurement request; running says one is in
	// flight (at most one at a time), under runCtx, cancelled by cancel.
	seq     int
	running bool
	runCtx  context.Context
	cancel  context.CancelFunc

	result *profiler.Result
	sums   map[string]summary
	// trail keeps each scenario's last measurements, oldest first.
	trail map[string][]trailPoint
	// hist keeps each scenario's uplift U, one point per result (the
	// history chart), oldest first.
	hist map[string][]fracPoint
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
	// gpus(), the devices the result (or live telemetry) reports; the GPU
	// key cycles it.
	gpu    int
	took   time.Duration
	failed bool // the last measurement failed
	status status
	// knobNote says why the last knob turned cannot change this scenario
	// on this backend ("" when it may); it stays beside the result until
	// the next request.
	knobNote string
	// adv is the model's advice per scenario (Config.Advisor).
	adv advising

	// ranks are the other ranks of a multi-process job (Config.Ranks);
	// rankLine is the header's word on their last request (its forms,
	// most detailed first); lost is why the job ended, once a rank is lost.
	ranks    Ranks
	rankLine []string
	lost     error
}

// Model is the lab's bubbletea model, the root of its components. Build
// it with New.
//
// It holds the state the components share (lab), the panels of the main
// screen, and the mode stack over them: the top mode gets each key first,
// a key it passes goes down the stack, then to the panels' own keys and
// last to the lab's (labKey). View draws every panel and mode from the
// state each time.
type Model struct {
	lab

	header   headerBar
	list     listPanel
	metrics  metricsPanel
	util     utilPanel
	timeline timelinePanel
	why      whyPanel
	footer   footerBar

	// modes is the mode stack, bottom first.
	modes modeStack
	// tab is the detail panel shown when they share the lower area.
	tab      detail
	quitting bool

	width, height int
	lay           layout
}

// New builds the model for cfg; the first measurement starts with Init.
// Problems with cfg (no backend, no scenarios, an unknown start) show in
// the status line. With cfg.RecordPath it starts recording at once; Run
// closes the recordings when the lab ends.
func New(cfg Config) Model {
	return newModel(context.Background(), cfg)
}

func newModel(ctx context.Context, cfg Config) Model {
	m := buildModel(ctx, cfg)
	m.adv = newAdvising(ctx, cfg.Advisor)
	m.adv.first = m.adviseNext()
	return m
}

// buildModel is the model for cfg before the advice starts.
func buildModel(ctx context.Context, cfg Config) Model {
	m := Model{lab: lab{
		ctx:    ctx,
		gate:   &runGate{},
		suite:  cfg.Suite,
		keys:   DefaultKeyMap(),
		styles: DefaultStyles(true),
		sums:   map[string]summary{},
		trail:  map[string][]trailPoint{},
		hist:   map[string][]fracPoint{},
		live:   nvtel.NewHistory(liveHistory),
		rec:    recording{open: cfg.Recorder, path: cfg.RecordPath, all: &recorderSet{}},
	}}
	m.header = newHeaderBar()
	m.footer = footerBar{help: help.New()}
	m.timeline.tracks, m.timeline.ces = 5, 3
	if cfg.Backend == nil {
		m.status = status{statusError, "no backend"}
		return m
	}
	m.backend = cfg.Backend
	m.machine = cfg.Machine
	m.ranks = cfg.Ranks
	m.caps = cfg.Backend.Capabilities()
	m.name = cfg.Backend.Name()
	devs := cfg.Backend.Devices()
	m.devs = devs
	ces := m.caps.Limits.CopyEngines
	if len(devs) > 0 {
		ces = devs[0].CopyEngines
	}
	m.timeline.ces = min(max(ces, 0), 8)
	m.timeline.tracks = 2 + m.timeline.ces
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
	m.list.cursor = m.active
	m.strategy = cfg.Strategy
	if m.strategy == (scenarios.Strategy{}) {
		m.strategy = cfg.Suite[m.active].Strategy
	}
	if cfg.Note != "" {
		m.status = status{statusInfo, cfg.Note}
	}
	m.list.note = cfg.ListNote
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
		m.push(newPlayer(*pb))
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
	cmds := []tea.Cmd{tea.RequestBackgroundColor, m.adv.first}
	if m.running {
		cmds = append(cmds, m.measure(), m.header.spin.Tick)
	}
	if m.rec.cur != nil {
		cmds = append(cmds, recTick(m.rec.cur))
	}
	return tea.Batch(cmds...)
}

// measure is the command for the latest request under the current context.
func (m Model) measure() tea.Cmd {
	var base *profiler.Baseline
	if m.liveRun() && m.result != nil {
		b := m.result.Baseline()
		base = &b
	}
	if m.ranks != nil {
		return rankMeasureCmd(m.runCtx, m.gate, m.ranks, m.backend, m.machine, m.active, m.suite[m.active], m.strategy, m.seq, base)
	}
	return measureCmd(m.runCtx, m.gate, m.backend, m.machine, m.active, m.suite[m.active], m.strategy, m.seq, base)
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
	return tea.Batch(m.measure(), m.header.spin.Tick)
}

// Update routes a message: window sizes and styles to every component,
// keys down the mode stack and then to the lab's own keys, the messages a
// mode is waiting for to that mode, and measurements, recordings and live
// telemetry to the lab. Then the components settle on the new state.
func (m Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	m, cmd := m.update(msg)
	m.settle()
	if next := m.adviseNext(); next != nil {
		cmd = tea.Batch(cmd, next)
	}
	return m, cmd
}

func (m Model) update(msg tea.Msg) (Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil

	case tea.BackgroundColorMsg:
		m.styles = DefaultStyles(msg.IsDark())
		return m, nil

	case resultMsg:
		return m.onResult(msg)

	case ranksLostMsg:
		return m.onRankLost(msg)

	case ranksQuitMsg:
		return m.quit()

	case adviceMsg:
		return m.onAdvice(msg), nil

	case recOpenedMsg, recClosedMsg, recTickMsg:
		return m.onRecording(msg)

	case liveMsg:
		m.rec.cur.Samples(msg.batch.Samples)
		m.addLive(msg.batch)
		return m, nil

	case spinner.TickMsg:
		cmd, _ := m.header.Update(&m, msg)
		return m, cmd

	case tea.KeyPressMsg:
		return m.onKey(msg)
	}
	cmd, used := m.toModes(msg)
	if used == passed {
		if saved, ok := msg.(composerSavedMsg); ok {
			// Saved after the composer closed: the status line says so.
			m.noteSaved(saved)
		}
	}
	return m, cmd
}

// toModes offers msg to the modes, top first, until one uses it; a mode
// that closes leaves the stack.
func (m *Model) toModes(msg tea.Msg) (tea.Cmd, keyUse) {
	for _, md := range slices.Backward(m.modes) {
		cmd, used := md.Update(m, msg)
		if used == closed {
			m.modes = m.modes.remove(md)
		}
		if used != passed {
			return cmd, used
		}
	}
	return nil, passed
}

// push puts a mode on top of the stack, sized to the screen.
func (m *Model) push(md mode) {
	md.SetSize(m.width, m.height)
	m.modes = m.modes.push(md)
}

// resize lays the panels out on a w x h terminal and gives every
// component its size.
func (m *Model) resize(w, h int) {
	m.width, m.height = w, h
	m.lay = computeLayout(w, h, m.timeline.tracks)
	l := m.lay
	m.header.SetSize(l.header.W, l.header.H)
	m.footer.SetSize(l.status.W, l.status.H+l.help.H)
	m.list.SetSize(l.list.W, l.list.H)
	m.metrics.SetSize(l.metrics.W, l.metrics.H)
	m.metrics.history = l.history
	details := []*detailFrame{&m.util.detailFrame, &m.timeline.detailFrame, &m.why.detailFrame}
	for d, rc := range []rect{l.util, l.timeline, l.why} {
		f := details[d]
		f.tab = ""
		if l.tabbed {
			rc = l.detail
			f.tab = "[tab " + [...]string{"1/3 utilization", "2/3 timeline", "3/3 why"}[d] + "] "
		}
		f.SetSize(rc.W, rc.H)
	}
	for _, md := range m.modes {
		md.SetSize(w, h)
	}
}

// settle brings the components' own state in line with the lab's after a
// message: the list's window follows its cursor, and the GPU shown is one
// the result reports.
func (m *Model) settle() {
	m.list.follow(len(m.suite))
	m.refreshDevices()
}

// liveRun reports whether live mode is on: measuring back to back.
func (m Model) liveRun() bool { return has[*liveMode](m.modes) }

// play is the playback on the stack, nil when the lab measures.
func (m Model) play() *player { return find[*player](m.modes) }

// grid is the sweep heatmap while it is open, nil otherwise.
func (m Model) grid() *sweepGrid { return find[*sweepGrid](m.modes) }

// comp is the scenario composer while it is open, nil otherwise.
func (m Model) comp() *composer { return find[*composer](m.modes) }

// showHelp reports whether the help overlay is open.
func (m Model) showHelp() bool { return has[*helpMode](m.modes) }

// addLive adds a batch of live telemetry to the history; the first batch
// sets the sampler's clock.
func (m *lab) addLive(b nvtel.Batch) {
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
func (m Model) onResult(msg resultMsg) (Model, tea.Cmd) {
	m.running = false
	if m.cancel != nil {
		m.cancel()
	}
	if m.quitting || m.lost != nil {
		return m, nil
	}
	if msg.seq != m.seq {
		return m, m.start()
	}
	m.failed = msg.err != nil
	if msg.ranks != nil {
		m.rankLine = rankSummary(msg.ranks, m.ranks.Size())
		m.ranks.Record(m.rec.cur, msg.ranks[1:])
	}
	if msg.err != nil {
		m.status = status{statusError, errLine(msg.err)}
		m.rec.cur.Error(m.status.text)
		return m, nil
	}
	m.took = msg.took
	m.measuredFrom, m.measuredTo = msg.started, msg.started.Add(msg.took)
	m.rec.cur.Result(msg.result)
	m.setResult(msg.result)
	m.status = resultStatus(msg.result, m.knobNote)
	if failed := rankFailures(msg.ranks); failed != "" {
		m.status = status{statusWarn, failed + " · rank 0: " + m.status.text}
	}
	if m.liveRun() {
		m.status.text = "live · " + m.status.text
		// At most livePace apart, so a fast backend does not spin the UI.
		seq := m.seq
		return m, tea.Tick(max(livePace-msg.took, time.Millisecond), func(time.Time) tea.Msg { return liveTickMsg{seq} })
	}
	return m, nil
}

// quit ends the lab: the measurement in flight is cancelled, the advice
// and the modes end.
func (m Model) quit() (Model, tea.Cmd) {
	m.quitting = true
	if m.cancel != nil {
		m.cancel()
	}
	m.adv.end()
	m.modes.closeAll()
	return m, tea.Quit
}

// onRankLost says which rank was lost, stops measuring, and ends the lab
// after lostLinger (the job cannot go on without the rank).
func (m Model) onRankLost(msg ranksLostMsg) (Model, tea.Cmd) {
	if m.lost != nil || m.quitting {
		return m, nil
	}
	m.lost = msg.err
	if m.lost == nil {
		m.lost = errors.New("a rank was lost")
	}
	m.status = status{statusError, errLine(m.lost) + " · the lab ends"}
	m.rec.cur.Error(m.status.text)
	if m.cancel != nil {
		m.cancel()
	}
	return m, tea.Tick(lostLinger, func(time.Time) tea.Msg { return ranksQuitMsg{} })
}

// resultStatus is the status line of a new result: the scenario, the
// strategy and its figures, or, when a knob could not matter (knobNote),
// why, with the fraction of ideal measured. Before them it warns, first,
// when the machine drifted between the isolated and concurrent runs
// (Result.Drift), then says what the GPUs' clocks were during the runs
// when a GPU hit a clock cap (a warning) or the modes ran at different
// clocks (information; Drift.ClockNote), then warns when the adaptive
// measurement stopped at its cap before the lab's precision
// (Result.Precision, as profiler/report says it): they qualify the
// figures, which the metrics panel shows anyway.
func resultStatus(r profiler.Result, knobNote string) status {
	s := status{statusInfo, fmt.Sprintf("%s · %s: %s (%s realized, %s ideal)",
		r.Scenario.Name, r.Strategy.String(), ofIdeal(r), report.Ratio(r.RealizedSpeedup), report.Ratio(r.IdealSpeedup))}
	if knobNote != "" {
		// The knob was applied and measured; say again why it could not matter.
		s = status{statusWarn, knobNote + " · measured: " + ofIdeal(r)}
	}
	if p := r.Precision; p != nil && !p.Reached && (p.Stop == profiler.StopTimeCap || p.Stop == profiler.StopRoundCap || p.Stop == profiler.StopPassesDiffer) {
		s.kind = max(s.kind, statusWarn)
		s.text = report.PrecisionNote(*p) + " · " + s.text
	}
	if note := r.Drift.ClockNote(); note != "" {
		if r.Drift.ClockCapped() {
			s.kind = max(s.kind, statusWarn)
		}
		s.text = note + " · " + s.text
	}
	if d := r.Drift; d != nil && d.Flagged {
		s.kind = max(s.kind, statusWarn)
		s.text = "machine drifted between isolated and concurrent runs: " + strings.Join(d.Reasons, "; ") + " · " + s.text
	}
	return s
}

// errLine is an error as one line.
func errLine(err error) string {
	if errors.Is(err, context.Canceled) {
		return "measurement cancelled"
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// fracText is a result's fraction of ideal as text, with its interval
// when it has one, "within noise (…)" past 100 % inside it (fractionText).
func fracText(r profiler.Result) string { return fractionText(&r) }

// ofIdeal is a result's fraction of ideal as the status line says it:
// "17.0% ± 1.2 of ideal", "within noise of ideal (103.1% ± 5.0)",
// "103.1% ± 1.0 of ideal: past it, beyond its interval".
func ofIdeal(r profiler.Result) string {
	f, iv, has, state := fraction(&r)
	switch state {
	case fracNoise:
		return withinNoise + " of ideal (" + percentPM(f, iv, has) + ")"
	case fracPast:
		return percentPM(f, iv, has) + " of ideal: past it, beyond its interval"
	}
	return fracText(r) + " of ideal"
}

// setResult stores a result and what is derived from it once.
func (m *Model) setResult(r profiler.Result) {
	if m.result == nil || m.result.Scenario.Name != r.Scenario.Name {
		m.timeline.zoom = tlZoom{}
	}
	m.result = &r
	m.refreshDevices()
	m.noteResult(r)
	m.fitTimeline()
}

// fitTimeline gives the timeline a row per track of the result on screen:
// compute, comm and the copy engines for a one-pair result, the streams
// (and any engine their ops ran on) for a scenario written as streams;
// the panels are laid out again when that changes.
func (m *Model) fitTimeline() {
	n := 2 + m.timeline.ces
	if m.result != nil && m.result.Scenario.IsGraph() {
		n = len(timelineTracks(m.result, m.timeline.ces, m.gpu))
	}
	if n == m.timeline.tracks {
		return
	}
	m.timeline.tracks = n
	if m.width > 0 {
		m.resize(m.width, m.height)
	}
}

// noteResult adds a result to its scenario's summary, trail and history.
func (m *lab) noteResult(r profiler.Result) {
	f, _, _, state := fraction(&r)
	m.sums[r.Scenario.Name] = summary{class: r.Class, fraction: f, ok: state != fracNone, noise: state == fracNoise}
	t := m.trail[r.Scenario.Name]
	p := trailPoint{strategy: r.Strategy.String(), upliftEst: upliftOf(r)}
	if n := len(t); n > 0 && t[n-1].strategy == p.strategy {
		t[n-1] = p // the same strategy again (live mode): update its point
	} else {
		t = append(t, p)
	}
	if len(t) > maxTrail {
		t = t[len(t)-maxTrail:]
	}
	m.trail[r.Scenario.Name] = t
	m.hist[r.Scenario.Name] = addUplift(m.hist[r.Scenario.Name], p.strategy, p.upliftEst)
}

// onKey routes a key: down the mode stack from the top, then to the
// panels' own keys (the list's cursor, the timeline's zoom), and last to
// the lab's.
func (m Model) onKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	if cmd, used := m.toModes(msg); used != passed {
		return m, cmd
	}
	for _, p := range m.panels() {
		if cmd, ok := p.Update(&m, msg); ok {
			return m, cmd
		}
	}
	return m.labKey(msg)
}

// panels are the main screen's panels.
func (m *Model) panels() []panel {
	return []panel{&m.header, &m.list, &m.metrics, &m.util, &m.timeline, &m.why, &m.footer}
}

// labKey handles the lab's own keys: those of the main screen that no
// mode or panel took.
func (m Model) labKey(msg tea.KeyPressMsg) (Model, tea.Cmd) {
	k := m.keys
	if (m.backend == nil || len(m.suite) == 0) && !key.Matches(msg, k.Quit, k.Help) {
		return m, nil // nothing to measure or act on: the status line says why
	}
	switch {
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Help):
		m.push(newHelpMode(k))
	case key.Matches(msg, k.GPU):
		m.cycleGPU()
	case key.Matches(msg, k.Pick):
		if len(m.suite) == 0 {
			return m, nil
		}
		m.active = m.list.cursor
		var note string
		m.strategy, note = fitStrategy(m.strategy, m.suite[m.active].Comm.Collective, m.caps, m.name)
		m.status = status{statusInfo, "measuring " + m.suite[m.active].Name}
		if note != "" {
			m.status = status{statusWarn, note}
		}
		return m, m.request()
	case key.Matches(msg, k.NextPanel):
		if m.lay.tabbed {
			m.tab = (m.tab + 1) % detailCount
		} else {
			m.status = status{statusInfo, "all panels are on screen"}
		}
	case key.Matches(msg, k.Compose):
		cp := newComposer(m.suite[m.active])
		_, cp.errs = cp.scenario(m.caps.Limits)
		m.push(cp)
	case key.Matches(msg, k.Sweep):
		g := newGrid(m.ctx, m.suite[m.active], m.caps)
		m.status = status{statusInfo, fmt.Sprintf("sweeping %s over %d strategies", m.suite[m.active].Name, g.total())}
		m.rec.cur.Marker("key " + msg.String() + ": " + m.status.text)
		m.push(g)
		return m, g.measureNext(m.gate, m.backend, m.machine)
	case key.Matches(msg, k.Live):
		if lm := find[*liveMode](m.modes); lm != nil {
			m.modes = m.modes.remove(lm)
			m.liveOff()
			return m, nil
		}
		m.push(newLiveMode(k))
		m.status = status{statusInfo, "live: measuring back to back"}
		return m, m.request()
	case key.Matches(msg, k.Advice):
		m.applyAdvice()
		m.rec.cur.Marker("key " + msg.String() + ": " + m.status.text)
		return m, m.request()
	case key.Matches(msg, k.Rerun):
		m.status = status{statusInfo, "measuring again"}
		return m, m.request()
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
func (m Model) turnKnob(kn knob, keyName string) (Model, tea.Cmd) {
	if m.backend == nil || len(m.suite) == 0 {
		return m, nil
	}
	st, note, err := turnIn(scenarios.StrategyKnobs(), kn, m.strategy, m.suite[m.active], m.caps, m.name)
	if err != nil {
		m.status = status{statusWarn, err.Error()}
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
	return m, cmd
}

// View draws the screen: every panel and mode from the state, each time.
func (m Model) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	v.WindowTitle = "c3lab"
	return v
}
