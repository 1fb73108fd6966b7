package tui

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/textinput"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/c3lab/c3lab/recordings/outfile"
	"github.com/c3lab/c3lab/scenarios"
)

// composerField is one editable field of the composer and the YAML path
// its validation errors carry.
type composerField struct {
	label string
	path  string
	value string
}

// composer edits a scenario: one text field at a time, validated as it
// changes, errors shown next to their field; enter adds it to the suite
// and measures it, ctrl+s writes it as YAML (asking before it overwrites).
type composer struct {
	fields  []composerField
	focus   int
	input   textinput.Model
	errs    map[string]string // YAML path -> message
	confirm string            // a file waiting for y/n before being overwritten
	note    string

	// graph, when set, is the stream composer of a scenario written as
	// streams (format 2), which then replaces fields; skeys are its keys.
	graph *streamForm
	skeys streamKeys

	// As a mode: the screen's size, and the composer's keys.
	size
	keys composerKeys
}

// composerKeys are the composer's keys; every other key edits the field.
type composerKeys struct {
	prev, next, add, save, close key.Binding
}

func defaultComposerKeys() composerKeys {
	return composerKeys{
		prev:  key.NewBinding(key.WithKeys("up", "shift+tab"), key.WithHelp("↑/↓", "field")),
		next:  key.NewBinding(key.WithKeys("down", "tab")),
		add:   key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "add and measure")),
		save:  key.NewBinding(key.WithKeys("ctrl+s"), key.WithHelp("ctrl+s", "save YAML")),
		close: key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close")),
	}
}

// ShortHelp lists the composer's keys, as its hint line shows them.
func (cp *composer) ShortHelp() []key.Binding {
	if cp.graph != nil {
		k := cp.skeys
		return []key.Binding{cp.keys.prev, k.addOp, k.remove, k.up, k.addStream, k.pick, cp.keys.add, cp.keys.save, cp.keys.close}
	}
	return []key.Binding{cp.keys.prev, cp.keys.add, cp.keys.save, cp.keys.close}
}

// FullHelp lists the composer's keys.
func (cp *composer) FullHelp() [][]key.Binding { return fullHelp(cp) }

// composerFields lays a scenario out as fields.
func composerFields(sc scenarios.Scenario) []composerField {
	c := sc.Compute
	num := func(v int) string { return strconv.Itoa(v) }
	reps := ""
	if sc.Reps > 0 {
		reps = num(sc.Reps)
	}
	return []composerField{
		{"name", "$.name", sc.Name},
		{"gpus", "$.gpus", num(sc.GPUs)},
		{"compute", "$.compute.kind", string(c.Kind)},
		{"gemm m", "$.compute.m", num(c.M)},
		{"gemm n", "$.compute.n", num(c.N)},
		{"gemm k", "$.compute.k", num(c.K)},
		{"dtype", "$.compute.dtype", string(c.DType)},
		{"stream bytes", "$.compute.bytes", c.Bytes.String()},
		{"collective", "$.comm.collective", string(sc.Comm.Collective)},
		{"bytes/rank", "$.comm.bytes", sc.Comm.Bytes.String()},
		{"reps", "$.reps", reps},
	}
}

// newComposer starts a composer on a copy of sc, named as the user's own:
// the stream composer for a scenario written as streams, the pair's
// fields for one compute op next to one collective.
func newComposer(sc scenarios.Scenario) *composer {
	if !strings.HasSuffix(sc.Name, "-custom") {
		sc.Name += "-custom"
	}
	cp := &composer{input: textinput.New(), keys: defaultComposerKeys()}
	if sc.IsGraph() {
		cp.graph, cp.skeys = newStreamForm(sc), defaultStreamKeys()
	} else {
		cp.fields = composerFields(sc)
	}
	cp.input.Prompt = ""
	cp.load()
	return cp
}

// load puts the focused field into the text input.
func (cp *composer) load() {
	if cp.graph != nil {
		cp.input.SetValue(*cp.graph.value(cp.graph.focus))
		cp.input.CursorEnd()
		cp.input.Focus()
		return
	}
	cp.input.SetValue(cp.fields[cp.focus].value)
	cp.input.CursorEnd()
	cp.input.Focus()
}

// scenario builds the scenario the fields describe; fields that do not
// parse are reported at their path.
func (cp *composer) scenario(lim scenarios.Limits) (scenarios.Scenario, map[string]string) {
	if cp.graph != nil {
		return cp.graph.scenario(lim)
	}
	errs := map[string]string{}
	v := map[string]string{}
	for _, f := range cp.fields {
		v[f.path] = strings.TrimSpace(f.value)
	}
	atoi := func(path string) int {
		if v[path] == "" {
			return 0
		}
		n, err := strconv.Atoi(v[path])
		if err != nil {
			errs[path] = fmt.Sprintf("%q is not a whole number", v[path])
		}
		return n
	}
	size := func(path string) scenarios.ByteSize {
		if v[path] == "" || v[path] == "0B" {
			return 0
		}
		b, err := scenarios.ParseByteSize(v[path])
		if err != nil {
			errs[path] = err.Error()
		}
		return b
	}
	sc := scenarios.Scenario{
		Name: v["$.name"], GPUs: atoi("$.gpus"), Reps: atoi("$.reps"),
		Compute: scenarios.ComputeOp{Kind: scenarios.ComputeKind(v["$.compute.kind"])},
		Comm:    scenarios.CommOp{Collective: scenarios.Collective(v["$.comm.collective"]), Bytes: size("$.comm.bytes")},
	}
	if sc.Compute.Kind == scenarios.GEMM {
		sc.Compute.M, sc.Compute.N, sc.Compute.K = atoi("$.compute.m"), atoi("$.compute.n"), atoi("$.compute.k")
		sc.Compute.DType = scenarios.DType(v["$.compute.dtype"])
	} else {
		sc.Compute.Bytes = size("$.compute.bytes")
	}
	var ve *scenarios.ValidationError
	if err := scenarios.Validate(sc, lim); errors.As(err, &ve) {
		for _, fe := range ve.Fields {
			if _, taken := errs[fe.Path]; !taken {
				errs[fe.Path] = fe.Msg
			}
		}
	}
	return sc, errs
}

// composerSavedMsg reports a YAML write.
type composerSavedMsg struct {
	path string
	err  error
}

// saveScenarioCmd writes a scenario as YAML off the UI loop, as every
// user-named output is written (recordings/outfile): only to a regular
// file, through a temporary file renamed into place. Without overwrite an
// existing file is left alone and the message's err is outfile.ErrExists,
// for the composer to ask.
func saveScenarioCmd(sc scenarios.Scenario, path string, overwrite bool) tea.Cmd {
	if sc.IsGraph() {
		// A file written as streams leaves the lead ops out.
		sc.Compute, sc.Comm = scenarios.ComputeOp{}, scenarios.CommOp{}
	}
	return func() tea.Msg {
		data, err := scenarios.Marshal(sc)
		if err != nil {
			return composerSavedMsg{path, err}
		}
		err = outfile.WriteFile(path, outfile.Options{Overwrite: overwrite}, func(w io.Writer) error {
			_, err := w.Write(data)
			return err
		})
		return composerSavedMsg{path, err}
	}
}

// Update handles the composer's keys and the result of a save. A key that
// types text goes to the field, whatever the lab binds it to (a name may
// hold a q); only a key that types nothing and quits the lab passes.
func (cp *composer) Update(m *Model, msg tea.Msg) (tea.Cmd, keyUse) {
	switch msg := msg.(type) {
	case composerSavedMsg:
		if errors.Is(msg.err, outfile.ErrExists) && cp.confirm == "" {
			cp.confirm, cp.note = msg.path, msg.path+" exists: overwrite it? y/n"
			return nil, took
		}
		m.noteSaved(msg)
		cp.note = m.status.text
		return nil, took
	case tea.KeyPressMsg:
		if msg.Text == "" && key.Matches(msg, m.keys.Quit) {
			return nil, passed
		}
		return cp.onKey(m, msg)
	}
	return nil, passed
}

// noteSaved says in the status line how a save went.
func (m *Model) noteSaved(msg composerSavedMsg) {
	if msg.err != nil {
		m.status = status{statusError, "saving " + msg.path + ": " + errLine(msg.err)}
		m.rec.cur.Error(m.status.text)
		return
	}
	m.status = status{statusInfo, "saved " + msg.path}
}

// onKey edits, moves between fields, applies, saves or closes.
func (cp *composer) onKey(m *Model, msg tea.KeyPressMsg) (tea.Cmd, keyUse) {
	if cp.confirm != "" {
		path := cp.confirm
		cp.confirm = ""
		if msg.String() == "y" {
			sc, _ := cp.scenario(m.caps.Limits)
			return saveScenarioCmd(sc, path, true), took
		}
		cp.note = "not overwritten: " + path
		return nil, took
	}
	k := cp.keys
	switch {
	case key.Matches(msg, k.close):
		return nil, closed
	case key.Matches(msg, k.prev) && cp.graph != nil:
		cp.graph.move(-1)
		cp.load()
	case key.Matches(msg, k.next) && cp.graph != nil:
		cp.graph.move(+1)
		cp.load()
	case key.Matches(msg, k.prev):
		cp.focus = (cp.focus + len(cp.fields) - 1) % len(cp.fields)
		cp.load()
	case key.Matches(msg, k.next):
		cp.focus = (cp.focus + 1) % len(cp.fields)
		cp.load()
	case key.Matches(msg, k.add):
		sc, errs := cp.scenario(m.caps.Limits)
		if len(errs) > 0 {
			cp.errs, cp.note = errs, "fix the fields marked ! first"
			break
		}
		replaced := false
		for i := range m.suite {
			if m.suite[i].Name == sc.Name {
				m.suite[i], m.active, replaced = sc, i, true
			}
		}
		if !replaced {
			m.suite = append(m.suite, sc)
			m.active = len(m.suite) - 1
		}
		m.list.cursor = m.active
		m.status = status{statusInfo, "composed " + sc.Name + " · measuring…"}
		return m.request(), closed
	case key.Matches(msg, k.save):
		sc, errs := cp.scenario(m.caps.Limits)
		if len(errs) > 0 {
			cp.errs, cp.note = errs, "fix the fields marked ! before saving"
			break
		}
		// An existing file comes back as outfile.ErrExists, and the
		// composer asks before overwriting it (composerSavedMsg).
		return saveScenarioCmd(sc, sc.Name+".yaml", false), took
	case cp.graph != nil:
		cmd, changed := cp.onStreamKey(msg)
		if changed {
			cp.load()
		}
		_, cp.errs = cp.scenario(m.caps.Limits)
		return cmd, took
	default:
		var cmd tea.Cmd
		cp.input, cmd = cp.input.Update(msg)
		cp.fields[cp.focus].value = cp.input.Value()
		_, cp.errs = cp.scenario(m.caps.Limits)
		cp.note = ""
		return cmd, took
	}
	_, errs := cp.scenario(m.caps.Limits)
	if cp.errs == nil || len(errs) < len(cp.errs) {
		cp.errs = errs
	}
	return nil, took
}

// composerLines renders the form: one row per field, the focused one
// editable, each error beside its field or, when it does not fit there,
// wrapped in whole words below it.
func composerLines(st Styles, cp *composer, w int) []string {
	const labelW = 14
	const indent = 2 + labelW
	var out []string
	for i, f := range cp.fields {
		mark := "  "
		val := st.Value.Render(f.value)
		if i == cp.focus {
			mark = "▸ "
			val = cp.input.View()
		}
		line := mark + st.Label.Render(fit(f.label, labelW)) + val
		e, bad := cp.errs[f.path]
		if bad && ansiWidth(line)+4+ansiWidth(e) <= w {
			line += "  " + st.Error.Render("! "+e)
			bad = false
		}
		out = append(out, fitWidth(line, w))
		if bad {
			for _, l := range wrapWords("! "+e, max(w-indent, 1)) {
				out = append(out, strings.Repeat(" ", indent)+st.Error.Render(l))
			}
		}
	}
	var loose []string
	if e, ok := cp.errs["$.compute"]; ok {
		loose = append(loose, e)
	}
	return append(out, cp.footer(st, loose, w)...)
}

// footer is the composer form's last lines at width w: the errors that
// belong to no one field, a blank line, and the note of the last action
// or else the keys.
func (cp *composer) footer(st Styles, loose []string, w int) []string {
	var out []string
	for _, e := range loose {
		for _, l := range wrapWords("! "+e, w) {
			out = append(out, st.Error.Render(l))
		}
	}
	out = append(out, "")
	note := hint(cp.ShortHelp(), " · ")
	if cp.note != "" {
		note = cp.note
	}
	for _, l := range wrapWords(note, w) {
		out = append(out, st.Dim.Render(l))
	}
	return out
}

// fitWidth cuts a styled line to w cells, leaving shorter lines as they are.
func fitWidth(s string, w int) string {
	if ansiWidth(s) <= w {
		return s
	}
	return ansi.Truncate(s, w-1, "") + "…"
}

// View is the composer overlay.
func (cp *composer) View(m *Model) []string {
	w := min(cp.w-4, 100)
	if cp.graph != nil {
		lines, at := streamLines(m.styles, cp, w-4)
		return m.overlayBox("Compose streams · validated as you type", scrollTo(m.styles, lines, at, cp.h-5), w)
	}
	return m.overlayBox("Compose a scenario · validated as you type", composerLines(m.styles, cp, w-4), w)
}
