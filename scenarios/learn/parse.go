package learn

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/scenarios"
)

// MaxFileSize is the largest lesson file Parse accepts: a lesson is a few
// kilobytes of text.
const MaxFileSize = 64 << 10

// maxDepth bounds how deeply a lesson file nests brackets and braces
// (the YAML parser is super-linear in nesting); a lesson needs 3.
const maxDepth = 16

// fields are a lesson file's top-level keys, in the order a file lists
// them.
var fields = []string{"title", "scenario", "scenario_yaml", "intro", "question", "figure", "from", "knob", "to", "explain", "h200"}

// required are the keys every lesson file has.
var required = []string{"title", "intro", "question", "figure", "knob", "to", "explain", "h200"}

// Refs says whether a committed H200 run exists, so that a lesson never
// shows one that is not there.
type Refs interface {
	// Has reports whether scenario was measured under strategy (in the
	// sweep source, or in any when source is empty).
	Has(scenario, strategy, source string) bool
}

// Parse decodes one lesson file and validates it: its scenario against
// lim, its strategies against the sweep grids and lim, and its H200
// reference against refs. id names the lesson (the file's base name),
// filename is for messages. Every problem comes back at once in a
// *scenarios.FileError, each at its line and column.
func Parse(data []byte, id, filename string, lim scenarios.Limits, refs Refs) (Lesson, error) {
	if filename == "" {
		filename = "<input>"
	}
	d := &decoder{file: filename, lim: lim, refs: refs}
	l := d.decode(data)
	l.ID = id
	if len(d.problems) > 0 {
		slices.SortStableFunc(d.problems, func(a, b scenarios.Problem) int {
			if a.Line != b.Line {
				return a.Line - b.Line
			}
			return a.Col - b.Col
		})
		return Lesson{}, &scenarios.FileError{File: filename, Problems: d.problems}
	}
	return l, nil
}

// Load reads a lesson file and parses it with Parse; the lesson's ID is
// the file's base name without its extension.
func Load(path string, lim scenarios.Limits, refs Refs) (Lesson, error) {
	f, err := os.Open(path)
	if err != nil {
		return Lesson{}, fmt.Errorf("lesson file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && !st.Mode().IsRegular() {
		return Lesson{}, fmt.Errorf("lesson file: %s is not a regular file: %w", path, fs.ErrInvalid)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Lesson{}, fmt.Errorf("lesson file: %w", err)
	}
	return Parse(data, IDOf(path), path, lim, refs)
}

// IDOf is the lesson ID of a file: its base name without the extension.
func IDOf(path string) string {
	b := filepath.Base(path)
	return strings.TrimSuffix(b, filepath.Ext(b))
}

type decoder struct {
	file     string
	lim      scenarios.Limits
	refs     Refs
	problems []scenarios.Problem
}

func (d *decoder) add(line, col int, path, msg string) {
	d.problems = append(d.problems, scenarios.Problem{Line: max(line, 1), Col: max(col, 1), Path: path, Msg: msg})
}

func (d *decoder) addAt(n ast.Node, path, msg string) {
	line, col := 1, 1
	if n != nil {
		if tk := n.GetToken(); tk != nil && tk.Position != nil {
			line, col = tk.Position.Line, tk.Position.Column
		}
	}
	d.add(line, col, path, msg)
}

// parseFile runs goccy's parser, turning a panic inside it into an error.
func parseFile(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed on this input (%v)", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

// depth is the deepest nesting of flow brackets in data, outside quotes
// and comments (enough to refuse a file that would stall the parser).
func depth(data []byte) int {
	deepest, cur := 0, 0
	var quote byte
	comment := false
	for _, c := range data {
		switch {
		case c == '\n':
			comment, quote = false, 0
		case comment:
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '#':
			comment = true
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			cur++
			deepest = max(deepest, cur)
		case c == ']' || c == '}':
			cur = max(cur-1, 0)
		}
	}
	return deepest
}

func (d *decoder) decode(data []byte) Lesson {
	var l Lesson
	switch {
	case len(data) > MaxFileSize:
		d.add(1, 1, "$", fmt.Sprintf("the file is over %d KiB; a lesson is a few kilobytes of text", MaxFileSize>>10))
		return l
	case depth(data) > maxDepth:
		d.add(1, 1, "$", fmt.Sprintf("brackets nest more than %d deep; a lesson nests 3 at most", maxDepth))
		return l
	case strings.ContainsRune(string(data), 0):
		d.add(1, 1, "$", "the file holds a NUL byte; a lesson file is YAML text")
		return l
	}
	f, err := parseFile(data)
	if err != nil {
		d.syntax(err)
		return l
	}
	var docs []*ast.DocumentNode
	for _, doc := range f.Docs {
		if doc != nil && doc.Body != nil {
			docs = append(docs, doc)
		}
	}
	if len(docs) == 0 {
		d.add(1, 1, "$", "the file is empty; a lesson has "+strings.Join(required, ", "))
		return l
	}
	if len(docs) > 1 {
		d.addAt(docs[1].Body, "$", "one lesson per file; remove the '---' and what follows")
		return l
	}
	root, ok := docs[0].Body.(*ast.MappingNode)
	if !ok {
		d.addAt(docs[0].Body, "$", "a lesson file is a mapping of fields ("+strings.Join(required, ", ")+")")
		return l
	}
	seen := map[string]ast.Node{}
	for _, mv := range root.Values {
		key, ok := scalar(mv.Key)
		path := "$." + key
		switch {
		case !ok:
			d.addAt(mv.Key, "$", "a field name must be plain text")
			continue
		case !slices.Contains(fields, key):
			d.addAt(mv.Key, path, fmt.Sprintf("unknown field %q; a lesson has %s", key, strings.Join(fields, ", ")))
			continue
		case seen[key] != nil:
			d.addAt(mv.Key, path, fmt.Sprintf("field %q appears twice; give it once", key))
			continue
		}
		if mv.Value == nil {
			d.addAt(mv.Key, path, fmt.Sprintf("field %q has no value", key))
			continue
		}
		seen[key] = mv.Value
		d.field(&l, key, mv.Value, path)
	}
	for _, k := range required {
		if seen[k] == nil && !d.failed("$."+k) {
			d.addAt(root, "$", fmt.Sprintf("missing field %q", k))
		}
	}
	switch {
	case seen["scenario"] == nil && seen["scenario_yaml"] == nil:
		d.addAt(root, "$", "missing field \"scenario\" (a built-in scenario's name) or \"scenario_yaml\" (a scenario written out)")
	case seen["scenario"] != nil && seen["scenario_yaml"] != nil:
		d.addAt(seen["scenario_yaml"], "$.scenario_yaml", "give scenario or scenario_yaml, not both")
	}
	if len(d.problems) == 0 {
		d.check(&l, seen)
	}
	return l
}

// failed reports whether a problem was already reported at path.
func (d *decoder) failed(path string) bool {
	for _, p := range d.problems {
		if p.Path == path {
			return true
		}
	}
	return false
}

func (d *decoder) syntax(err error) {
	msg := err.Error()
	line, col := 1, 1
	if tk := syntaxToken(err); tk != nil && tk.Position != nil {
		line, col = tk.Position.Line, tk.Position.Column
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = positionPrefix.ReplaceAllString(msg, "")
	d.add(line, col, "", "invalid YAML: "+msg+"; a lesson file is 'field: value' lines, long text as 'field: |' with the text indented below")
}

// positionPrefix is goccy's "[line:col] " at the start of a message,
// which the problem's own position replaces.
var positionPrefix = regexp.MustCompile(`^\[\d+:\d+\] `)

func syntaxToken(err error) *token.Token {
	type tokener interface{ GetToken() *token.Token }
	if t, ok := err.(tokener); ok {
		return t.GetToken()
	}
	return nil
}

// scalar is the text of a scalar node (a string, a block of text, a
// number or a boolean as written).
func scalar(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case *ast.StringNode:
		return v.Value, true
	case *ast.LiteralNode:
		if v.Value == nil {
			return "", true
		}
		return v.Value.Value, true
	case *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode:
		return n.GetToken().Value, true
	}
	return "", false
}

// text reads a text field: a non-empty string without control
// characters other than newlines and tabs.
func (d *decoder) text(n ast.Node, path string) string {
	s, ok := scalar(n)
	if !ok {
		d.addAt(n, path, "must be text; write long text as '"+strings.TrimPrefix(path, "$.")+": |' with the text indented below")
		return ""
	}
	s = strings.TrimSpace(s)
	if s == "" {
		d.addAt(n, path, "is empty; write the text")
		return ""
	}
	for _, r := range s {
		if r < 0x20 && r != '\n' && r != '\t' || r == 0x7f {
			d.addAt(n, path, fmt.Sprintf("holds the control character %U; remove it", r))
			return ""
		}
	}
	return s
}

func (d *decoder) field(l *Lesson, key string, n ast.Node, path string) {
	switch key {
	case "title":
		l.Title = d.text(n, path)
		if strings.Contains(l.Title, "\n") {
			d.addAt(n, path, "is one line; move the rest to intro")
		}
	case "intro":
		l.Intro = d.text(n, path)
	case "question":
		l.Question = d.text(n, path)
	case "knob":
		l.Knob = d.text(n, path)
	case "explain":
		l.Explain = d.text(n, path)
	case "figure":
		s := d.text(n, path)
		if s != "" && !Figure(s).Valid() {
			var names []string
			for _, f := range Figures() {
				names = append(names, string(f))
			}
			d.addAt(n, path, fmt.Sprintf("unknown figure %q; allowed %s", s, strings.Join(names, ", ")))
			return
		}
		l.Figure = Figure(s)
	case "scenario":
		name := d.text(n, path)
		if name == "" {
			return
		}
		sc, err := scenarios.Find(name)
		if err != nil {
			d.addAt(n, path, fmt.Sprintf("no built-in scenario %q; c3lab scenarios lists them, or write one out under scenario_yaml", name))
			return
		}
		l.Scenario = sc
	case "scenario_yaml":
		d.inlineScenario(l, n, path)
	case "from":
		if s, ok := d.strategy(n, path); ok {
			l.From = &s
		}
	case "to":
		if s, ok := d.strategy(n, path); ok {
			l.To = s
		}
	case "h200":
		d.reference(l, n, path)
	}
}

// inlineScenario parses a scenario written out as a block of YAML text;
// its problems point into the lesson file.
func (d *decoder) inlineScenario(l *Lesson, n ast.Node, path string) {
	lit, ok := n.(*ast.LiteralNode)
	if !ok || lit.Value == nil {
		d.addAt(n, path, "must be a block of YAML: 'scenario_yaml: |' with the scenario indented below")
		return
	}
	sc, err := scenarios.Parse([]byte(lit.Value.Value), d.file, d.lim)
	if err == nil {
		l.Scenario = sc
		return
	}
	// The block's first line is the line after the '|'.
	first, indent := 1, 0
	if tk := lit.Value.GetToken(); tk != nil && tk.Position != nil {
		first, indent = tk.Position.Line, tk.Position.Column-1
	}
	if tk := lit.GetToken(); tk != nil && tk.Position != nil {
		first = tk.Position.Line + 1
	}
	var fe *scenarios.FileError
	if !errors.As(err, &fe) {
		d.addAt(n, path, "the scenario: "+err.Error())
		return
	}
	for _, p := range fe.Problems {
		d.add(first+p.Line-1, indent+p.Col, path+strings.TrimPrefix(p.Path, "$"), "the scenario: "+p.Msg)
	}
}

// strategy reads a strategy: a grid name, or a mapping of knobs.
func (d *decoder) strategy(n ast.Node, path string) (StrategySpec, bool) {
	if m, ok := n.(*ast.MappingNode); ok {
		var st scenarios.Strategy
		ks := scenarios.StrategyKnobs()
		bad := false
		for _, mv := range m.Values {
			key, _ := scalar(mv.Key)
			k, found := ks.Find(key)
			if !found {
				d.addAt(mv.Key, path+"."+key, fmt.Sprintf("unknown knob %q; allowed %s", key, strings.Join(ks.Keys(), ", ")))
				bad = true
				continue
			}
			val, ok := scalar(mv.Value)
			if !ok || mv.Value == nil {
				d.addAt(mv.Key, path+"."+key, "must be a value, like the flag --"+k.Flag+" takes")
				bad = true
				continue
			}
			if err := k.Set(&st, val); err != nil {
				d.addAt(mv.Value, path+"."+key, err.Error())
				bad = true
			}
		}
		if bad {
			return StrategySpec{}, false
		}
		for _, fe := range ks.ValidateStrategy(st, d.lim) {
			d.addAt(n, path+strings.TrimPrefix(fe.Path, "$"), fe.Msg)
			bad = true
		}
		return StrategySpec{Knobs: st}, !bad
	}
	name, ok := scalar(n)
	if !ok || strings.TrimSpace(name) == "" {
		d.addAt(n, path, "must be a strategy's name (c3lab sweep --help lists them) or a mapping of knobs, like {launch: comm-first}")
		return StrategySpec{}, false
	}
	name = strings.TrimSpace(name)
	if err := profiler.CheckGridNames([]string{name}); err != nil {
		d.addAt(n, path, err.Error())
		return StrategySpec{}, false
	}
	return StrategySpec{Name: name}, true
}

func (d *decoder) reference(l *Lesson, n ast.Node, path string) {
	m, ok := n.(*ast.MappingNode)
	if !ok {
		d.addAt(n, path, "must be a mapping: scenario, strategies and, optionally, source")
		return
	}
	for _, mv := range m.Values {
		key, _ := scalar(mv.Key)
		p := path + "." + key
		if mv.Value == nil {
			d.addAt(mv.Key, p, "has no value")
			continue
		}
		switch key {
		case "scenario":
			l.H200.Scenario = d.text(mv.Value, p)
		case "source":
			l.H200.Source = d.text(mv.Value, p)
		case "strategies":
			seq, ok := mv.Value.(*ast.SequenceNode)
			if !ok || len(seq.Values) == 0 {
				d.addAt(mv.Value, p, "must be a list of strategy names, like [baseline, comm-first+prio]")
				continue
			}
			for i, v := range seq.Values {
				s := d.text(v, fmt.Sprintf("%s[%d]", p, i))
				if s != "" {
					l.H200.Strategies = append(l.H200.Strategies, s)
				}
			}
		default:
			d.addAt(mv.Key, p, fmt.Sprintf("unknown field %q; h200 has scenario, strategies, source", key))
		}
	}
	if len(l.H200.Strategies) == 0 && !d.failed(path+".strategies") {
		d.addAt(n, path, "missing field \"strategies\": the committed strategies to show")
	}
}

// check runs the checks that need the whole lesson: the committed H200
// runs it names exist.
func (d *decoder) check(l *Lesson, seen map[string]ast.Node) {
	ref := seen["h200"]
	if l.H200.Scenario == "" {
		l.H200.Scenario = l.Scenario.Name
	}
	for _, st := range l.H200.Strategies {
		if d.refs == nil || !d.refs.Has(l.H200.Scenario, st, l.H200.Source) {
			where := "the committed H200 measurements"
			if l.H200.Source != "" {
				where = l.H200.Source
			}
			d.addAt(ref, "$.h200", fmt.Sprintf("no run of %s under %s in %s; name a committed run (heuristics/measured/h200.json lists them)", l.H200.Scenario, st, where))
		}
	}
}
