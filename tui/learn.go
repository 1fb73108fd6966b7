package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/learn"
)

// LearnConfig is what the lessons need to start.
type LearnConfig struct {
	// Backend runs the lessons' measurements.
	Backend backends.Backend
	// Lessons are the lessons offered, in order.
	Lessons []learn.Lesson
	// Progress is the learner's progress so far; Save keeps a new one (it
	// runs off the UI loop, in a command). nil Save keeps nothing.
	Progress learn.Progress
	Save     func(learn.Progress) error
	// H200 holds the committed H200 runs the lessons show.
	H200 learn.Committed
	// Start is the lesson opened first, an index into Lessons; -1 opens
	// the list.
	Start int
	// Note is shown in the status line at start.
	Note string
	// Advisor, when set, advises in the answer's why panel with a model,
	// as in the lab (Config.Advisor): the lesson's scenario is ranked in
	// the background when the lesson opens (after a measurement on real
	// GPUs, never during one), and the rules of thumb stand in, saying
	// why, when the model cannot advise. nil leaves the rules alone.
	Advisor Advisor
}

// learnStage is where the learner is.
type learnStage int

const (
	stageList    learnStage = iota // the lesson list
	stageAsk                       // reading the lesson, typing a prediction
	stageFlip                      // the prediction is in; the knob is to flip and the run to start
	stageRunning                   // measuring
	stageAnswer                    // the answer, the H200 runs and the why
	stageFailed                    // the run failed
)

// learnResultMsg carries one of a lesson's measurements: which is 0 for
// the from strategy, 1 for the to strategy.
type learnResultMsg struct {
	seq, which int
	result     profiler.Result
	err        error
}

// learnSavedMsg says whether the progress was kept.
type learnSavedMsg struct{ err error }

// LearnModel is the bubbletea model of c3lab learn: the lesson list and
// one lesson at a time, from the question to the answer.
type LearnModel struct {
	ctx     context.Context
	backend backends.Backend
	caps    backends.Capabilities
	name    string
	lessons []learn.Lesson
	prog    learn.Progress
	save    func(learn.Progress) error
	h200    learn.Committed
	styles  Styles

	cur    int // the lesson on screen
	cursor int // the list's cursor
	stage  learnStage

	input      textinput.Model
	inputErr   string
	prediction float64
	flipped    bool

	// seq is the latest run; results of older ones are dropped. cancel
	// stops the one in flight.
	seq    int
	gate   *runGate
	runCtx context.Context
	cancel context.CancelFunc
	from   *profiler.Result
	to     *profiler.Result
	runErr string

	// adv is the model's advice on the lessons' scenarios
	// (LearnConfig.Advisor); advFirst ranks the first lesson's (Init).
	adv      advising
	advFirst tea.Cmd

	scroll        int
	width, height int
	status        string
	quitting      bool
}

// NewLearn builds the lessons' model for cfg.
func NewLearn(cfg LearnConfig) LearnModel {
	return newLearn(context.Background(), cfg)
}

func newLearn(ctx context.Context, cfg LearnConfig) LearnModel {
	in := textinput.New()
	in.Prompt = "> "
	in.CharLimit = 12
	in.SetWidth(14)
	in.SetVirtualCursor(true)
	// A steady cursor: nothing redraws the screen while the learner thinks.
	ist := in.Styles()
	ist.Cursor.Blink = false
	in.SetStyles(ist)
	m := LearnModel{
		ctx: ctx, backend: cfg.Backend, lessons: cfg.Lessons, prog: cfg.Progress,
		save: cfg.Save, h200: cfg.H200, styles: DefaultStyles(true), input: in, gate: &runGate{},
		width: 80, height: 24, status: cfg.Note,
	}
	if m.prog.Lessons == nil {
		m.prog = learn.NewProgress()
	}
	if cfg.Backend != nil {
		m.caps = cfg.Backend.Capabilities()
		m.name = cfg.Backend.Name()
	}
	switch {
	case len(cfg.Lessons) == 0:
		m.status = "no lessons to show"
	case cfg.Start >= 0 && cfg.Start < len(cfg.Lessons):
		m.open(cfg.Start)
	default:
		m.cursor = m.prog.Next(cfg.Lessons)
	}
	m.adv = newAdvising(ctx, cfg.Advisor)
	m.advFirst = m.adviseNext()
	return m
}

// Init asks the terminal's background, focuses the input when a lesson
// is open and starts ranking its scenario.
func (m LearnModel) Init() tea.Cmd {
	if m.stage == stageAsk {
		return tea.Batch(tea.RequestBackgroundColor, m.input.Focus(), m.advFirst)
	}
	return tea.Batch(tea.RequestBackgroundColor, m.advFirst)
}

// lesson is the lesson on screen.
func (m LearnModel) lesson() learn.Lesson { return m.lessons[m.cur] }

// open starts lesson i from its question.
func (m *LearnModel) open(i int) tea.Cmd {
	m.stopRun()
	m.cur, m.cursor = i, i
	m.stage = stageAsk
	m.input.Reset()
	m.input.Placeholder = m.lesson().Figure.Example()
	m.inputErr, m.runErr = "", ""
	m.flipped = false
	m.from, m.to = nil, nil
	m.scroll = 0
	return m.input.Focus()
}

// stopRun cancels the run in flight, if any.
func (m *LearnModel) stopRun() {
	m.seq++
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
}

// strategies resolves the lesson's from and to strategies on the backend.
func (m LearnModel) strategies() (from *scenarios.Strategy, to scenarios.Strategy, err error) {
	l := m.lesson()
	lim := m.caps.Limits
	if l.From != nil {
		f, err := l.From.Resolve(lim)
		if err != nil {
			return nil, to, err
		}
		from = &f
	}
	to, err = l.To.Resolve(lim)
	return from, to, err
}

// run starts the lesson's measurements: from (when the lesson has one),
// then to.
func (m *LearnModel) run() tea.Cmd {
	m.stopRun()
	from, to, err := m.strategies()
	if err != nil {
		m.stage, m.runErr = stageFailed, err.Error()
		return nil
	}
	m.stage, m.runErr = stageRunning, ""
	m.from, m.to = nil, nil
	ctx, cancel := context.WithCancel(m.ctx)
	m.runCtx, m.cancel = ctx, cancel
	if from != nil {
		return learnMeasure(ctx, m.gate, m.backend, m.lesson().Scenario, *from, m.seq, 0)
	}
	return learnMeasure(ctx, m.gate, m.backend, m.lesson().Scenario, to, m.seq, 1)
}

// learnMeasure measures sc under st off the UI loop, at the lab's
// precision.
func learnMeasure(ctx context.Context, g *runGate, b backends.Backend, sc scenarios.Scenario, st scenarios.Strategy, seq, which int) tea.Cmd {
	return func() tea.Msg {
		if !g.enter() {
			return learnResultMsg{seq: seq, which: which, err: context.Canceled}
		}
		defer g.leave()
		r, err := profiler.Measure(ctx, b, sc, st, labOptions(nil, nil, labTimeCap))
		return learnResultMsg{seq: seq, which: which, result: r, err: err}
	}
}

// saveCmd keeps p off the UI loop.
func (m LearnModel) saveCmd(p learn.Progress) tea.Cmd {
	if m.save == nil {
		return nil
	}
	save := m.save
	return func() tea.Msg { return learnSavedMsg{err: save(p)} }
}

// setRecord records lesson i's new state and keeps the progress.
func (m *LearnModel) setRecord(i int, r learn.Record) tea.Cmd {
	r.At = time.Now().UTC().Truncate(time.Second)
	m.prog = m.prog.With(m.lessons[i].ID, r)
	return m.saveCmd(m.prog)
}

// Update handles keys, window sizes, the lessons' results and the
// model's advice, then starts ranking the open lesson's scenario when
// the model has not advised on it yet.
func (m LearnModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	nm, cmd := m.update(msg)
	lm := nm.(LearnModel)
	if next := lm.adviseNext(); next != nil {
		cmd = tea.Batch(cmd, next)
	}
	return lm, cmd
}

// adviseNext starts ranking the open lesson's scenario (and its run's),
// unless the model advised on it already or is ranking, the lessons are
// ending, or a measurement runs on real GPUs (the ranking's CPU time
// would disturb its launches; it waits for the answer).
func (m *LearnModel) adviseNext() tea.Cmd {
	if m.adv.advisor == nil || len(m.lessons) == 0 || m.stage == stageList {
		return nil
	}
	wanted := []scenarios.Scenario{m.lesson().Scenario}
	if m.to != nil {
		wanted = append(wanted, m.to.Scenario)
	}
	return m.adv.next(wanted, m.quitting || (m.stage == stageRunning && !m.caps.Deterministic))
}

// adviceView is what the answer's why panel shows of the model's advice.
func (m LearnModel) adviceView() adviceView {
	if m.to == nil {
		return adviceView{}
	}
	v := m.adv.view(m.to.Scenario)
	v.noKey = true
	return v
}

// quit ends the lessons: the run in flight and the ranking stop.
func (m LearnModel) quit() (tea.Model, tea.Cmd) {
	m.stopRun()
	m.adv.end()
	m.quitting = true
	return m, tea.Quit
}

func (m LearnModel) update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case adviceMsg:
		m.adv.keep(msg)
		return m, nil
	case tea.WindowSizeMsg:
		m.width, m.height = max(msg.Width, 20), max(msg.Height, 6)
		return m, nil
	case tea.BackgroundColorMsg:
		m.styles = DefaultStyles(msg.IsDark())
		return m, nil
	case learnSavedMsg:
		if msg.err != nil {
			m.status = "progress not kept: " + errLine(msg.err)
		}
		return m, nil
	case learnResultMsg:
		return m.result(msg)
	case tea.KeyPressMsg:
		return m.key(msg)
	}
	if m.stage == stageAsk {
		var cmd tea.Cmd
		m.input, cmd = m.input.Update(msg)
		return m, cmd
	}
	return m, nil
}

func (m LearnModel) result(msg learnResultMsg) (tea.Model, tea.Cmd) {
	if msg.seq != m.seq || m.stage != stageRunning {
		return m, nil
	}
	if msg.err != nil {
		m.stopRun()
		m.stage, m.runErr = stageFailed, errLine(msg.err)
		return m, nil
	}
	r := msg.result
	if msg.which == 0 {
		m.from = &r
		_, to, _ := m.strategies()
		return m, learnMeasure(m.runCtx, m.gate, m.backend, m.lesson().Scenario, to, m.seq, 1)
	}
	m.to = &r
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	m.stage, m.scroll = stageAnswer, 0
	l := m.lesson()
	answer, ok := l.Figure.Of(r)
	if !ok {
		m.stage, m.runErr = stageFailed, fmt.Sprintf("the run has no %s to compare with", l.Figure.Name())
		return m, nil
	}
	// Show the answer at the top of the body: the lesson's text is above.
	for i, line := range m.lessonLines(m.width) {
		if strings.Contains(ansi.Strip(line), "Answer: ") {
			m.scroll = i
			break
		}
	}
	pred := m.prediction
	return m, m.setRecord(m.cur, learn.Record{State: learn.StateDone, Figure: l.Figure, Prediction: &pred, Answer: &answer, Backend: m.name})
}

func (m LearnModel) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if k == "ctrl+c" {
		return m.quit()
	}
	if len(m.lessons) == 0 {
		if k == "q" || k == "esc" {
			return m.quit()
		}
		return m, nil
	}
	switch m.stage {
	case stageList:
		return m.listKey(k)
	case stageAsk:
		return m.askKey(msg)
	}
	switch k {
	case "q":
		return m.quit()
	case "esc", "l":
		if m.stage == stageRunning {
			m.stopRun()
			m.stage = stageFlip
			m.status = "run stopped"
			return m, nil
		}
		m.stopRun()
		m.stage, m.cursor = stageList, m.cur
		return m, nil
	case "s":
		if m.stage != stageAnswer {
			return m.skip(m.cur)
		}
	case "up", "k":
		m.scroll = max(m.scroll-1, 0)
		return m, nil
	case "down", "j":
		m.scroll++
		return m, nil
	case "pgup":
		m.scroll = max(m.scroll-(m.height-4), 0)
		return m, nil
	case "pgdown", "space":
		m.scroll += m.height - 4
		return m, nil
	}
	switch m.stage {
	case stageFlip:
		switch k {
		case "f":
			m.flipped = !m.flipped
			m.status = ""
		case "r", "enter":
			if !m.flipped {
				m.status = "flip the knob first: press f"
				return m, nil
			}
			return m, m.run()
		}
	case stageFailed:
		if k == "r" {
			return m, m.run()
		}
	case stageAnswer:
		switch k {
		case "n", "enter":
			if m.cur+1 < len(m.lessons) {
				return m, m.open(m.cur + 1)
			}
			m.stage, m.cursor = stageList, m.cur
			m.status = "every lesson is behind you; replay any from the list"
		case "p":
			return m, m.open(m.cur)
		}
	}
	return m, nil
}

func (m LearnModel) listKey(k string) (tea.Model, tea.Cmd) {
	switch k {
	case "q", "esc":
		return m.quit()
	case "up", "k":
		m.cursor = max(m.cursor-1, 0)
	case "down", "j":
		m.cursor = min(m.cursor+1, len(m.lessons)-1)
	case "enter", "p":
		return m, m.open(m.cursor)
	case "s":
		return m.skip(m.cursor)
	case "x":
		id := m.lessons[m.cursor].ID
		m.prog = m.prog.Without(id)
		m.status = fmt.Sprintf("lesson %d reset", m.cursor+1)
		return m, m.saveCmd(m.prog)
	}
	return m, nil
}

func (m LearnModel) askKey(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	switch msg.String() {
	case "esc":
		m.input.Blur()
		m.stage, m.cursor = stageList, m.cur
		return m, nil
	case "enter":
		v, err := m.lesson().Figure.ParsePrediction(m.input.Value())
		if err != nil {
			m.inputErr = err.Error()
			return m, nil
		}
		m.prediction, m.inputErr = v, ""
		m.input.Blur()
		m.stage = stageFlip
		return m, nil
	case "up", "down", "pgup", "pgdown":
		return m, nil
	}
	var cmd tea.Cmd
	m.input, cmd = m.input.Update(msg)
	return m, cmd
}

// skip marks lesson i skipped and moves on to the next lesson not done.
func (m LearnModel) skip(i int) (tea.Model, tea.Cmd) {
	m.stopRun()
	save := m.setRecord(i, learn.Record{State: learn.StateSkipped})
	m.status = fmt.Sprintf("lesson %d skipped", i+1)
	if i+1 < len(m.lessons) {
		return m, tea.Batch(save, m.open(i+1))
	}
	m.stage, m.cursor = stageList, i
	return m, save
}

// View draws the list or the lesson.
func (m LearnModel) View() tea.View {
	v := tea.NewView(m.screen())
	v.AltScreen = true
	v.WindowTitle = "c3lab learn"
	return v
}

// screen is the whole screen, exactly width x height cells.
func (m LearnModel) screen() string {
	if m.quitting {
		return ""
	}
	return strings.Join(m.screenLines(), "\n")
}

// screenLines is the screen as lines of exactly width cells: a header,
// the body (scrolled) and the keys.
func (m LearnModel) screenLines() []string {
	w, h := m.width, m.height
	st := m.styles
	var body []string
	title := "c3lab learn · " + m.name
	if len(m.lessons) == 0 {
		body = []string{st.Error.Render(m.status)}
	} else if m.stage == stageList {
		body = m.listLines(w)
		title += fmt.Sprintf(" · %d lessons", len(m.lessons))
	} else {
		body = m.lessonLines(w)
		title += fmt.Sprintf(" · lesson %d of %d", m.cur+1, len(m.lessons))
	}
	out := []string{fit(st.Header.Render(title), w)}
	room := h - 3
	scroll := min(m.scroll, max(len(body)-room, 0))
	if m.stage == stageList {
		scroll = max(m.cursor-room+3, 0)
		scroll = min(scroll, max(len(body)-room, 0))
	}
	for i := range room {
		l := ""
		if j := scroll + i; j < len(body) {
			l = body[j]
		}
		out = append(out, fit(l, w))
	}
	status := m.status
	if more := len(body) - scroll - room; more > 0 && m.stage != stageList {
		status = strings.TrimPrefix(status+fmt.Sprintf(" · ↓ %d more lines (j, space)", more), " · ")
	}
	out = append(out, fit(st.Warn.Render(status), w))
	out = append(out, fit(m.keyLine(), w))
	return out
}

// keyLine lists the keys of the current stage.
func (m LearnModel) keyLine() string {
	st := m.styles
	var pairs [][2]string
	switch m.stage {
	case stageList:
		pairs = [][2]string{{"↑/↓", "choose"}, {"enter", "open"}, {"s", "skip"}, {"x", "reset"}, {"q", "quit"}}
	case stageAsk:
		pairs = [][2]string{{"type", "your prediction"}, {"enter", "submit"}, {"esc", "lessons"}, {"ctrl+c", "quit"}}
	case stageFlip:
		pairs = [][2]string{{"f", "flip the knob"}, {"r", "run"}, {"s", "skip"}, {"l", "lessons"}, {"q", "quit"}}
	case stageRunning:
		pairs = [][2]string{{"esc", "stop"}, {"q", "quit"}}
	case stageAnswer:
		pairs = [][2]string{{"n", "next lesson"}, {"p", "replay"}, {"↑/↓", "scroll"}, {"l", "lessons"}, {"q", "quit"}}
	case stageFailed:
		pairs = [][2]string{{"r", "retry"}, {"s", "skip"}, {"l", "lessons"}, {"q", "quit"}}
	}
	parts := make([]string, len(pairs))
	for i, p := range pairs {
		parts[i] = st.Key.Render(p[0]) + " " + st.Dim.Render(p[1])
	}
	return strings.Join(parts, st.Dim.Render(" · "))
}

// RunLearn runs the lessons until the learner quits, then stops a
// measurement still in flight and waits for it (up to 30 s), so the
// caller may close the backend.
func RunLearn(ctx context.Context, cfg LearnConfig) error {
	if cfg.Backend == nil {
		return fmt.Errorf("tui: no backend")
	}
	if len(cfg.Lessons) == 0 {
		return fmt.Errorf("tui: no lessons")
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := newLearn(ctx, cfg)
	_, err := tea.NewProgram(m, tea.WithContext(ctx)).Run()
	cancel()
	if !m.gate.closeAndWait(30 * time.Second) {
		return fmt.Errorf("a lesson's measurement did not stop within 30 s")
	}
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && ctx.Err() == nil {
		return fmt.Errorf("the lessons' screen: %w", err)
	}
	return nil
}
