package scenarios

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/lexer"
	"github.com/goccy/go-yaml/parser"
	"github.com/goccy/go-yaml/token"
)

// MaxFileSize is the largest scenario file Parse accepts. A scenario is a
// few hundred bytes; the cap keeps a stray multi-megabyte file (or a
// pathological one: the YAML parser is super-linear in nesting) from
// stalling the CLI.
const MaxFileSize = 64 << 10

// maxNesting bounds how deeply a scenario file may nest block and flow
// collections. A format-2 scenario needs scenarioNesting; as the depth is
// estimated from indentation, where a list entry's "- " and its keys count
// as two levels, a block-style file reaches 9, so 16 leaves room without
// letting the parser's super-linear cost in deep nesting run away.
const maxNesting = 16

// scenarioNesting is the deepest a valid scenario nests: the top-level
// mapping, streams, a stream, its ops, an op, its after list.
const scenarioNesting = 6

// Problem is one thing wrong with a scenario file, at a 1-based line and
// column. Msg says what is wrong and, after a "; ", what is allowed.
type Problem struct {
	Line, Col int
	// Path is the YAML path of the field concerned ("$.strategy.comm_sms"),
	// "$" for the document as a whole, or empty for a YAML syntax error.
	Path string
	Msg  string
}

// FileError lists every problem found in one scenario file. Its Error text
// has one "file:line:col: message" line per problem, in file order, ready
// to print; the CLI exits with status 2 on it.
type FileError struct {
	File     string
	Problems []Problem
}

// Error returns one "file:line:col: message" line per problem, joined by "\n".
func (e *FileError) Error() string {
	lines := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		lines[i] = fmt.Sprintf("%s:%d:%d: %s", e.File, p.Line, p.Col, p.Msg)
	}
	return strings.Join(lines, "\n")
}

// Load reads the scenario file at path and parses it with Parse. An error
// reading the file is returned wrapped (errors.Is(err, fs.ErrNotExist)
// works); every problem with its content is a *FileError.
func Load(path string, lim Limits) (Scenario, error) {
	f, err := os.Open(path)
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario file: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return Scenario{}, fmt.Errorf("scenario file: %s is a directory: %w", path, fs.ErrInvalid)
	}
	// Read one byte past the cap so that Parse can report the size.
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return Scenario{}, fmt.Errorf("scenario file: %w", err)
	}
	return Parse(data, path, lim)
}

// Parse decodes one scenario from YAML and validates it against lim. The
// decoding is strict: unknown fields, values of the wrong type, several
// documents and anything but a single mapping are errors. filename is only
// used in messages ("<input>" when empty).
//
// Every problem, from YAML syntax to Validate's field errors, is reported
// at once in a *FileError, each at the line and column of the offending
// node (for a missing field, of its nearest parent; for an entry of a
// list, such as $.streams[1].ops[0].after[2], of the entry).
//
// A file holds either compute and comm (format 1) or streams (format 2);
// for the latter the returned scenario's Compute and Comm are its lead ops
// (Scenario.WithLead).
func Parse(data []byte, filename string, lim Limits) (Scenario, error) {
	return StrategyKnobs().Parse(data, filename, lim)
}

// Parse is the package's Parse with the strategy's fields read and
// checked through this knob table.
func (ks Knobs) Parse(data []byte, filename string, lim Limits) (Scenario, error) {
	if filename == "" {
		filename = "<input>"
	}
	d := &decoder{knobs: ks}
	sc, ok := d.decode(data)
	if ok && sc.IsGraph() && !d.isFailed("$.compute") {
		// Compute and comm of a format-2 scenario are its lead ops.
		sc = sc.WithLead()
	}
	if ok {
		// A stream field that failed to decode leaves a graph with holes:
		// its ops are still checked, but not what they make together.
		if err := ks.validate(sc, lim, !d.failedWithin("$.streams")); err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) {
				d.add(1, 1, "$", err.Error())
			} else {
				for _, f := range ve.Fields {
					if d.coveredByFailure(f.Path) {
						continue
					}
					line, col, present := d.position(f.Path)
					msg := f.Msg
					if _, allowed, found := strings.Cut(msg, "; "); found && !present {
						// The field is not in the file, so its zero value
						// is what Validate saw: say so, keep what is allowed.
						msg = label(f.Path) + " is missing; " + allowed
					}
					d.add(line, col, f.Path, msg)
				}
			}
		}
	}
	if len(d.problems) == 0 {
		return sc, nil
	}
	slices.SortStableFunc(d.problems, func(a, b Problem) int {
		if a.Line != b.Line {
			return a.Line - b.Line
		}
		return a.Col - b.Col
	})
	return Scenario{}, &FileError{File: filename, Problems: d.problems}
}

// Marshal writes sc as YAML in the form Parse reads back to an equal value:
// fields in declaration order, sizes in exact units ("256MiB"), and zero
// optional fields (reps, an all-default strategy) left out.
//
// A format-2 scenario is written as its streams: compute and comm, its lead
// ops, are left out, and Parse fills them in again.
func Marshal(sc Scenario) ([]byte, error) {
	if sc.IsGraph() {
		sc.Compute, sc.Comm = ComputeOp{}, CommOp{}
	}
	out, err := yaml.MarshalWithOptions(sc, yaml.Indent(2),
		textAsYAML[string](), textAsYAML[ComputeKind](), textAsYAML[OpKind](), textAsYAML[DType](),
		textAsYAML[Collective](), textAsYAML[LaunchOrder](), textAsYAML[CommEngine]())
	if err != nil {
		return nil, err
	}
	return unquoteN(out), nil
}

// textAsYAML writes strings of type T with yamlText instead of goccy's own
// quoting, which leaves some strings unquoted that do not read back the
// same (".inf", "? x", a lone newline, leading tabs, control characters).
func textAsYAML[T ~string]() yaml.EncodeOption {
	return yaml.CustomMarshaler[T](func(v T) ([]byte, error) { return yamlText(string(v)), nil })
}

// yamlText writes s as a plain YAML scalar when that provably reads back
// as the same string, and otherwise double-quoted with escapes (Go's
// escapes for valid UTF-8 are all valid YAML escapes).
func yamlText(s string) []byte {
	if plainSafe(s) {
		return []byte(s)
	}
	return []byte(strconv.Quote(s))
}

// plainSafe reports whether s can be written as an unquoted scalar.
func plainSafe(s string) bool {
	if s == "" || strings.TrimSpace(s) != s || strings.ContainsAny(s[:1], "-?:,[]{}#&*!|>'\"%@`.") ||
		strings.Contains(s, ": ") || strings.Contains(s, " #") || strings.HasSuffix(s, ":") {
		return false
	}
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return false
		}
	}
	// Plain scalars that YAML reads as something else (null, true, 12,
	// 1e3, a date) must be quoted: ask the decoder.
	var v map[string]any
	if err := yaml.Unmarshal([]byte("k: "+s+"\n"), &v); err != nil {
		return false
	}
	got, isString := v["k"].(string)
	return isString && got == s
}

// unquoteN writes the n key of GEMMs bare. goccy quotes it because YAML
// 1.1 read a bare n as "no"; YAML 1.2, which Parse follows, reads it as the
// string it is. Only the compute block and the streams block are touched
// (the top-level key at the start of a line and the lines under it), and
// in them only a line that starts with the key (after its indentation and
// a list entry's "- "): every string yamlText writes is one line, so no
// line of a string's text starts there.
func unquoteN(out []byte) []byte {
	for _, head := range []string{"\ncompute:\n", "\nstreams:\n"} {
		start := bytes.Index(out, []byte(head))
		if start < 0 {
			continue
		}
		end := start + len(head)
		var block []byte
		block = append(block, out[start:end]...)
		for end < len(out) && (out[end] == ' ' || bytes.HasPrefix(out[end:], []byte("- "))) {
			nl := bytes.IndexByte(out[end:], '\n')
			line := out[end:]
			if nl >= 0 {
				line = out[end : end+nl+1]
			}
			end += len(line)
			body := bytes.TrimLeft(line, " ")
			body = bytes.TrimPrefix(body, []byte("- "))
			if rest, quoted := bytes.CutPrefix(body, []byte(`"n": `)); quoted {
				lead := line[:len(line)-len(body)]
				line = slices.Concat(lead, []byte("n: "), rest)
			}
			block = append(block, line...)
		}
		out = slices.Concat(out[:start], block, out[end:])
	}
	return out
}

// decoder turns the AST of one scenario file into a Scenario, collecting
// problems instead of stopping at the first.
type decoder struct {
	// knobs reads the strategy's fields.
	knobs    Knobs
	problems []Problem
	// failed holds the paths of fields whose value could not be decoded, so
	// that Validate's complaints about their zero value are not reported too.
	failed []string
	// body is the document's top-level node, for position lookups.
	body ast.Node
	// anchors maps anchor names to their nodes, to follow aliases.
	anchors map[string]ast.Node
}

func (d *decoder) add(line, col int, path, msg string) {
	// One line per problem, whatever the file held.
	msg = strings.NewReplacer("\n", `\n`, "\r", `\r`).Replace(msg)
	d.problems = append(d.problems, Problem{Line: line, Col: col, Path: path, Msg: msg})
}

func (d *decoder) addAt(tk *token.Token, path, msg string) {
	line, col := tokenPos(tk)
	d.add(line, col, path, msg)
}

func (d *decoder) fail(tk *token.Token, path, msg string) {
	d.addAt(tk, path, msg)
	d.failed = append(d.failed, path)
}

// failedWithin reports whether a field at or inside path failed to decode.
func (d *decoder) failedWithin(path string) bool {
	return slices.ContainsFunc(d.failed, func(f string) bool { return f == path || within(f, path) })
}

// isFailed reports whether the field at path failed to decode.
func (d *decoder) isFailed(path string) bool { return slices.Contains(d.failed, path) }

// coveredByFailure reports whether path is, contains or lies inside a field
// that already failed to decode.
func (d *decoder) coveredByFailure(path string) bool {
	for _, f := range d.failed {
		if path == f || within(path, f) || within(f, path) || f == "$" {
			return true
		}
	}
	return false
}

// within reports whether path lies inside the field at parent: a field of
// it ("$.strategy.launch" in "$.strategy") or an entry of it
// ("$.streams[1].ops" in "$.streams").
func within(path, parent string) bool {
	rest, found := strings.CutPrefix(path, parent)
	return found && rest != "" && (rest[0] == '.' || rest[0] == '[')
}

func tokenPos(tk *token.Token) (int, int) {
	if tk == nil || tk.Position == nil || tk.Position.Line < 1 {
		return 1, 1
	}
	return tk.Position.Line, max(tk.Position.Column, 1)
}

func nodeToken(n ast.Node) *token.Token {
	if n == nil {
		return nil
	}
	return n.GetToken()
}

// tokenValue is the source text of n's token, or "" if it has none.
func tokenValue(n ast.Node) string {
	if tk := nodeToken(n); tk != nil {
		return tk.Value
	}
	return ""
}

// decode runs every check that precedes validation. ok is false when the
// document could not be read as a mapping at all.
func (d *decoder) decode(data []byte) (sc Scenario, ok bool) {
	if len(data) > MaxFileSize {
		d.add(1, 1, "$", fmt.Sprintf("file is larger than %s; a scenario file is at most %s (a few hundred bytes is typical)", ByteSize(MaxFileSize), ByteSize(MaxFileSize)))
		return sc, false
	}
	src, ok := d.checkText(data)
	if !ok {
		return sc, false
	}
	tokens := lexer.Tokenize(src)
	if tk := tooDeep(tokens, maxNesting); tk != nil {
		d.addAt(tk, "$", fmt.Sprintf("nesting is deeper than %d levels; a scenario nests at most %d (streams, a stream's ops, an op's after list)", maxNesting, scenarioNesting))
		return sc, false
	}
	file, err := parseTokens(tokens)
	if err != nil {
		d.syntaxProblem(err)
		return sc, false
	}
	var docs []*ast.DocumentNode
	for _, doc := range file.Docs {
		if doc != nil && doc.Body != nil {
			if _, isComment := doc.Body.(*ast.CommentGroupNode); !isComment {
				docs = append(docs, doc)
			}
		}
	}
	switch {
	case len(docs) == 0:
		d.add(1, 1, "$", "file is empty; want a YAML mapping with at least name, gpus, and compute and comm (or streams)")
		return sc, false
	case len(docs) > 1:
		line, col := firstPos(d.resolve(docs[1].Body))
		d.add(line, col, "$", fmt.Sprintf("file holds %d YAML documents; want exactly one scenario per file (remove the '---' separators)", len(docs)))
		return sc, false
	}
	d.body = docs[0].Body
	d.anchors = map[string]ast.Node{}
	for _, n := range ast.Filter(ast.AnchorType, d.body) {
		if a, isAnchor := n.(*ast.AnchorNode); isAnchor && a.Value != nil {
			d.anchors[tokenValue(a.Name)] = a.Value
		}
	}
	root := d.resolve(d.body)
	if _, isMap := root.(ast.MapNode); !isMap {
		d.fail(nodeToken(root), "$", fmt.Sprintf("file holds %s; want a mapping of scenario fields (%s)", describeNode(root), strings.Join(fieldNames(reflect.TypeFor[Scenario]()), ", ")))
		return sc, false
	}
	d.decodeStruct(root, reflect.ValueOf(&sc).Elem(), "$")
	d.checkFormat(root.(ast.MapNode))
	if len(d.problems) == 0 {
		// The walk above is the authority on what the file means and says
		// everything wrong at once; goccy's strict decoder runs as well as a
		// safety net for anything the walk might let through.
		var strict Scenario
		if err := nodeToValue(d.body, &strict, yaml.Strict(), d.strictStrategy()); err != nil {
			tk, msg := yamlErrorParts(err)
			d.fail(tk, "$", msg+"; check the field against the scenario format")
		}
	}
	return sc, true
}

// checkFormat reports a file that mixes the two scenario formats (compute
// and comm next to streams) or whose streams are empty, once, at the key
// concerned; Validate's complaints about the same fields are then dropped.
func (d *decoder) checkFormat(root ast.MapNode) {
	keys := map[string]*token.Token{}
	var streams ast.Node
	it := root.MapRange()
	for it.Next() {
		k := keyText(it.Key())
		keys[k] = nodeToken(it.Key())
		if k == "streams" {
			streams = d.resolve(it.Value())
		}
	}
	streamsTok, hasStreams := keys["streams"]
	if !hasStreams {
		return
	}
	for _, k := range []string{"compute", "comm"} {
		if tk, both := keys[k]; both {
			d.fail(tk, "$."+k, k+" belongs to a one-pair scenario (format 1) and this file also has streams (format 2); a scenario file has either compute and comm or streams, never both: move the op into a stream, or remove streams")
			d.failed = append(d.failed, "$.compute", "$.comm")
			return
		}
	}
	if seq, isSeq := streams.(*ast.SequenceNode); !isSeq || len(seq.Values) == 0 {
		if streams == nil || streams.Type() == ast.NullType || isSeq {
			d.fail(streamsTok, "$.streams", "streams is empty; want a list of streams, each a mapping of name and ops (at least a compute stream and a communication stream)")
		}
		// A value of the wrong type was reported by the walk.
		d.failed = append(d.failed, "$.compute", "$.comm")
	}
}

// checkText rejects input that is not UTF-8 text: binary junk, NUL and
// other control characters. It strips a leading byte-order mark.
func (d *decoder) checkText(data []byte) (string, bool) {
	src := string(data)
	src = strings.TrimPrefix(src, "\uFEFF")
	line, col := 1, 1
	for i, r := range src {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(src[i:]); size == 1 {
				d.add(line, col, "$", fmt.Sprintf("byte 0x%02x is not UTF-8 text; a scenario file is YAML text", src[i]))
				return "", false
			}
		}
		if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
			d.add(line, col, "$", fmt.Sprintf("control character %U in the file; a scenario file is plain YAML text", r))
			return "", false
		}
		if r == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return src, true
}

// tooDeep returns the first token at which collections nest deeper than
// limit, or nil. Depth is estimated from the tokens alone, before parsing:
// open flow collections plus the stack of block indentation levels.
func tooDeep(tokens token.Tokens, limit int) *token.Token {
	flow := 0
	var indents []int
	for i, tk := range tokens {
		if tk == nil || tk.Position == nil {
			continue
		}
		switch tk.Type {
		case token.SequenceStartType, token.MappingStartType:
			flow++
		case token.SequenceEndType, token.MappingEndType:
			flow = max(flow-1, 0)
		case token.SequenceEntryType, token.MappingKeyType, token.MappingValueType:
			if flow > 0 {
				break
			}
			// A mapping value's indentation is its key's, on the same line.
			if tk.Type == token.MappingValueType && i > 0 && tokens[i-1] != nil && tokens[i-1].Position != nil &&
				tokens[i-1].Position.Line == tk.Position.Line {
				tk = tokens[i-1]
			}
			col := tk.Position.Column
			for len(indents) > 0 && indents[len(indents)-1] > col {
				indents = indents[:len(indents)-1]
			}
			if len(indents) == 0 || indents[len(indents)-1] < col {
				indents = append(indents, col)
			}
		}
		if flow+len(indents) > limit {
			return tk
		}
	}
	return nil
}

// parseTokens runs goccy's parser, turning a panic inside it into an error
// so that no input can crash the caller.
func parseTokens(tokens token.Tokens) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the YAML parser failed on this input (%v)", r)
		}
	}()
	return parser.Parse(tokens, 0)
}

// nodeToValue is yaml.NodeToValue with a panic inside goccy turned into an error.
func nodeToValue(n ast.Node, v any, opts ...yaml.DecodeOption) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the YAML decoder failed on this value (%v)", r)
		}
	}()
	return yaml.NodeToValue(n, v, opts...)
}

// yamlErrorParts splits a goccy error into its token and bare message.
func yamlErrorParts(err error) (*token.Token, string) {
	var ye yaml.Error
	if errors.As(err, &ye) {
		return ye.GetToken(), ye.GetMessage()
	}
	return nil, err.Error()
}

func (d *decoder) syntaxProblem(err error) {
	tk, msg := yamlErrorParts(err)
	hint := "a scenario file is YAML: one 'field: value' per line, nested fields indented under their parent"
	switch {
	case strings.Contains(msg, "already defined"):
		hint = "each field may appear only once"
	case strings.Contains(msg, "'\t'") || strings.Contains(msg, "tab"):
		hint = "indent with spaces, not tabs"
	case strings.Contains(msg, "quote") || strings.Contains(msg, "quoted"):
		hint = "close the quote on the same line"
	case strings.Contains(msg, "',' or ']' must be specified"):
		hint = "an op reference with an instance inside [ ] needs quotes, as in after: [\"ag[0]\", \"rs[i]\"], or write the list one entry per line"
	}
	d.addAt(tk, "", "invalid YAML: "+msg+"; "+hint)
}

// resolve follows aliases and strips anchors and tags to reach the node
// that holds the value. Unresolvable aliases come back as they are.
func (d *decoder) resolve(n ast.Node) ast.Node {
	for range 32 {
		switch v := n.(type) {
		case *ast.AnchorNode:
			n = v.Value
		case *ast.TagNode:
			n = v.Value
		case *ast.AliasNode:
			target, found := d.anchors[tokenValue(v.Value)]
			if !found || target == nil {
				return n
			}
			n = target
		default:
			return n
		}
	}
	return n
}

// field is one YAML-tagged field of a struct.
type field struct {
	name  string
	index int
}

func yamlFields(t reflect.Type) []field {
	var out []field
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "-" && t.Field(i).IsExported() {
			out = append(out, field{name: name, index: i})
		}
	}
	return out
}

func fieldNames(t reflect.Type) []string {
	var names []string
	for _, f := range yamlFields(t) {
		names = append(names, f.name)
	}
	return names
}

func keyText(n ast.Node) string {
	switch k := n.(type) {
	case nil:
		return ""
	case *ast.StringNode:
		return k.Value
	case *ast.MappingKeyNode:
		return keyText(k.Value)
	case *ast.MergeKeyNode:
		return "<<"
	}
	if tk := n.GetToken(); tk != nil {
		return tk.Value
	}
	return ""
}

// label turns "$.strategy.comm_sms" into "strategy.comm_sms" for messages.
func label(path string) string { return strings.TrimPrefix(path, "$.") }

// decodeStruct fills dst (a struct) from the mapping node n.
func (d *decoder) decodeStruct(n ast.Node, dst reflect.Value, path string) {
	m, isMap := n.(ast.MapNode)
	if !isMap {
		return
	}
	fields := yamlFields(dst.Type())
	byName := make(map[string]field, len(fields))
	for _, f := range fields {
		byName[f.name] = f
	}
	d.eachKey(m, path, func(keyTok *token.Token, key string, value ast.Node) {
		f, known := byName[key]
		if !known {
			d.addAt(keyTok, joinPath(path, key), unknownFieldMsg(key, path, fieldNames(dst.Type())))
			return
		}
		d.decodeField(keyTok, value, dst.Field(f.index), joinPath(path, key))
	})
}

// eachKey calls f for every key of the mapping m but merge keys, which it
// refuses at the key (scenario files spell their fields out).
func (d *decoder) eachKey(m ast.MapNode, path string, f func(keyTok *token.Token, key string, value ast.Node)) {
	it := m.MapRange()
	for it.Next() {
		keyNode := it.Key()
		key := keyText(keyNode)
		keyTok := nodeToken(keyNode)
		if _, isMerge := keyNode.(*ast.MergeKeyNode); isMerge || key == "<<" {
			d.fail(keyTok, path, "merge keys (<<) are not supported in scenario files; write the fields out")
			continue
		}
		f(keyTok, key, it.Value())
	}
}

// decodeStrategy fills st from the mapping node n, a field per knob of
// the decoder's table.
func (d *decoder) decodeStrategy(n ast.Node, st *Strategy, path string) {
	m, isMap := n.(ast.MapNode)
	if !isMap {
		return
	}
	d.eachKey(m, path, func(keyTok *token.Token, key string, value ast.Node) {
		k, known := d.knobs.Find(key)
		if !known {
			d.addAt(keyTok, joinPath(path, key), unknownFieldMsg(key, path, d.knobs.Keys()))
			return
		}
		d.decodeField(keyTok, value, reflect.ValueOf(k.Value(st)).Elem(), joinPath(path, key))
	})
}

// strictStrategy makes the strict safety-net decode read a strategy
// through the decoder's knob table: a key the table lacks is an error, and
// the fields of Strategy are decoded strictly.
func (d *decoder) strictStrategy() yaml.DecodeOption {
	return yaml.CustomUnmarshaler[Strategy](func(st *Strategy, data []byte) error {
		var raw yaml.MapSlice
		if err := yaml.UnmarshalWithOptions(data, &raw, yaml.UseOrderedMap()); err != nil {
			return err
		}
		fields := fieldNames(reflect.TypeFor[Strategy]())
		var own yaml.MapSlice
		for _, item := range raw {
			key := fmt.Sprint(item.Key)
			if _, known := d.knobs.Find(key); !known {
				return fmt.Errorf("unknown field %q in strategy; allowed %s", clip(key), strings.Join(d.knobs.Keys(), ", "))
			}
			if slices.Contains(fields, key) {
				own = append(own, item)
			}
		}
		if len(own) == 0 {
			return nil
		}
		b, err := yaml.Marshal(own)
		if err != nil {
			return err
		}
		return yaml.UnmarshalWithOptions(b, st, yaml.Strict())
	})
}

func joinPath(path, key string) string { return path + "." + key }

func unknownFieldMsg(key, path string, allowed []string) string {
	where := "at the top level"
	if path != "$" {
		where = "in " + label(path)
	}
	msg := fmt.Sprintf("unknown field %q %s", clip(key), where)
	if near := Closest(key, allowed, 1); len(near) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", near[0])
	}
	return msg + "; allowed " + strings.Join(allowed, ", ")
}

// decodeField decodes the value node v into dst, the field at path whose
// key token is keyTok.
func (d *decoder) decodeField(keyTok *token.Token, v ast.Node, dst reflect.Value, path string) {
	n := d.resolve(v)
	if alias, isAlias := n.(*ast.AliasNode); isAlias {
		name := clip(tokenValue(alias.Value))
		d.fail(nodeToken(v), path, fmt.Sprintf("%s refers to an undefined anchor %q; define it with &%s before using *%s", label(path), name, name, name))
		return
	}
	valTok := nodeToken(n)
	if n == nil || n.Type() == ast.NullType {
		// An empty value leaves the field at its zero value; Validate says
		// whether the field is required.
		return
	}
	t := dst.Type()
	if (t.Kind() == reflect.Int || t == reflect.TypeFor[ByteSize]()) && hasLeadingZero(n) {
		d.fail(valTok, path, fmt.Sprintf("%s is %s, ambiguous: YAML 1.1 reads a leading 0 as octal, YAML 1.2 as decimal; write it without the leading zeros (or as 0o%s for octal)",
			label(path), clip(valTok.Value), strings.TrimLeft(strings.TrimLeft(valTok.Value, "+-"), "0_")))
		return
	}
	switch {
	case t == reflect.TypeFor[Strategy]():
		if _, isMap := n.(ast.MapNode); !isMap {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s, not a mapping; want a mapping of %s", label(path), describeNode(n), strings.Join(d.knobs.Keys(), ", ")))
			return
		}
		d.decodeStrategy(n, dst.Addr().Interface().(*Strategy), path)
	case t.Kind() == reflect.Struct:
		if _, isMap := n.(ast.MapNode); !isMap {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s, not a mapping; want a mapping of %s", label(path), describeNode(n), strings.Join(fieldNames(t), ", ")))
			return
		}
		d.decodeStruct(n, dst, path)
	case t.Kind() == reflect.Slice:
		seq, isSeq := n.(*ast.SequenceNode)
		if !isSeq {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s, not a list; want %s", label(path), describeNode(n), listHint(t, path)))
			return
		}
		out := reflect.MakeSlice(t, 0, len(seq.Values))
		for i, v := range seq.Values {
			elem := reflect.New(t.Elem()).Elem()
			// A list entry has no key: its problems point at the entry.
			d.decodeField(entryToken(d.resolve(v)), v, elem, fmt.Sprintf("%s[%d]", path, i))
			out = reflect.Append(out, elem)
		}
		dst.Set(out)
	case t == reflect.TypeFor[ByteSize]():
		if !isScalar(n) {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s; want a byte count such as 268435456 or 256MiB", label(path), describeNode(n)))
			return
		}
		var b ByteSize
		if err := nodeToValue(n, &b); err != nil {
			_, msg := yamlErrorParts(err)
			d.fail(valTok, path, label(path)+": "+msg)
			return
		}
		dst.Set(reflect.ValueOf(b))
	case t.Kind() == reflect.Int:
		if !isScalar(n) {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s, not a whole number; want an integer such as 8", label(path), describeNode(n)))
			return
		}
		i, msg := d.intValue(n)
		if msg != "" {
			d.fail(valTok, path, label(path)+" is "+msg)
			return
		}
		dst.SetInt(i)
	case t.Kind() == reflect.String:
		if !isScalar(n) {
			d.fail(keyTok, path, fmt.Sprintf("%s is %s, not text; want a plain string", label(path), describeNode(n)))
			return
		}
		var s string
		if err := nodeToValue(n, &s); err != nil {
			_, msg := yamlErrorParts(err)
			d.fail(valTok, path, fmt.Sprintf("%s: %s; want a plain string", label(path), msg))
			return
		}
		dst.SetString(s)
	default:
		// Not reachable with the scenario types; keep going rather than panic.
		d.fail(keyTok, path, fmt.Sprintf("%s has an unsupported Go type %s; this is a c3lab bug", label(path), t))
	}
}

// entryToken is the token a list entry's problems point at: a mapping's
// first key, or the entry itself.
func entryToken(n ast.Node) *token.Token {
	if m, isMap := n.(ast.MapNode); isMap {
		it := m.MapRange()
		if it.Next() {
			return nodeToken(it.Key())
		}
	}
	return nodeToken(n)
}

// listHint says what a list field of type t at path holds, for messages.
func listHint(t reflect.Type, path string) string {
	e := t.Elem()
	switch {
	case e.Kind() == reflect.Struct:
		return fmt.Sprintf("a list of mappings of %s, one entry per line starting with '- '", strings.Join(fieldNames(e), ", "))
	case strings.HasSuffix(path, ".after"):
		return "a list of op references such as [ag] or [ag[i], rs[3]]"
	}
	return "a list of " + e.Kind().String() + " values"
}

// intValue reads a whole number from the scalar node n.
// On failure msg completes "<field> is ...".
func (d *decoder) intValue(n ast.Node) (int64, string) {
	shown := describeNode(n)
	const want = "; want an integer such as 8"
	if s, isStr := n.(*ast.StringNode); isStr {
		if tk := s.GetToken(); tk != nil && (tk.Type == token.DoubleQuoteType || tk.Type == token.SingleQuoteType) {
			return 0, shown + ", quoted text, not a whole number" + want + " (without quotes)"
		}
		// The lexer leaves integers too long for 64 bits as plain text.
		if digits := strings.TrimLeft(s.Value, "+-"); digits != "" && strings.Trim(digits, "0123456789_") == "" {
			return 0, clip(s.Value) + ", far out of range" + want
		}
	}
	var raw any
	if err := nodeToValue(n, &raw); err != nil {
		_, msg := yamlErrorParts(err)
		return 0, shown + ", not a whole number (" + msg + ")" + want
	}
	switch x := raw.(type) {
	case nil:
		return 0, ""
	case int64:
		return x, ""
	case uint64:
		if x > 1<<62 {
			return 0, shown + ", far out of range" + want
		}
		return int64(x), ""
	case float64:
		switch {
		case math.IsNaN(x) || math.IsInf(x, 0) || x != math.Trunc(x):
			return 0, shown + ", not a whole number" + want
		case math.Abs(x) > 1<<53:
			return 0, shown + ", far out of range" + want
		}
		return int64(x), ""
	}
	return 0, shown + ", not a whole number" + want
}

// hasLeadingZero reports whether n is an unquoted number written with a
// leading zero, such as 010 (octal 8 to goccy) or 0089 (text to goccy).
func hasLeadingZero(n ast.Node) bool {
	tk := nodeToken(n)
	if tk == nil || (tk.Type != token.IntegerType && tk.Type != token.OctetIntegerType && tk.Type != token.StringType) {
		return false
	}
	v := strings.TrimLeft(tk.Value, "+-")
	return len(v) > 1 && v[0] == '0' && strings.Trim(v[1:], "0123456789_") == ""
}

func isScalar(n ast.Node) bool {
	switch n.(type) {
	case ast.MapNode, *ast.SequenceNode, *ast.MappingKeyNode:
		return false
	}
	return n != nil
}

// describeNode names a node for messages: a quoted scalar or "a mapping".
func describeNode(n ast.Node) string {
	switch v := n.(type) {
	case nil:
		return "empty"
	case ast.MapNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.NullNode:
		return "null"
	case *ast.StringNode:
		return strconv.Quote(clip(v.Value))
	case *ast.LiteralNode:
		return "a block of text"
	}
	if tk := n.GetToken(); tk != nil {
		return clip(tk.Value)
	}
	return "a " + n.Type().YAMLName()
}

func clip(s string) string {
	const maxLen = 40
	if utf8.RuneCountInString(s) <= maxLen {
		return s
	}
	r := []rune(s)
	return string(r[:maxLen]) + "..."
}

// firstPos is the position of a node's first key if it is a mapping, or
// of the node itself.
func firstPos(n ast.Node) (int, int) {
	if m, isMap := n.(ast.MapNode); isMap {
		it := m.MapRange()
		if it.Next() {
			return tokenPos(nodeToken(it.Key()))
		}
	}
	return tokenPos(nodeToken(n))
}

// position returns the line and column where the field at path (a
// Validate path such as "$.strategy.comm_sms" or
// "$.streams[1].ops[0].after[2]") is written: the value of a scalar field
// or list entry, the key of a mapping-valued, list-valued or empty field,
// the first key of a mapping in a list, and for a missing field the key of
// its nearest existing parent (or the first field of the file). present is
// false when the field is missing or empty.
func (d *decoder) position(path string) (line, col int, present bool) {
	root := d.resolve(d.body)
	line, col = firstPos(root)
	if path == "$" || !strings.HasPrefix(path, "$.") {
		return line, col, true
	}
	cur, raw := root, root
	for seg := range strings.SplitSeq(strings.TrimPrefix(path, "$."), ".") {
		key, idxs, ok := splitSegment(seg)
		if !ok {
			return line, col, false
		}
		m, isMap := cur.(ast.MapNode)
		if !isMap {
			return line, col, false
		}
		var keyNode, val ast.Node
		it := m.MapRange()
		for it.Next() {
			if keyText(it.Key()) == key {
				keyNode, val = it.Key(), it.Value()
			}
		}
		if keyNode == nil {
			return line, col, false
		}
		line, col = tokenPos(nodeToken(keyNode))
		cur, raw = d.resolve(val), val
		for _, i := range idxs {
			seq, isSeq := cur.(*ast.SequenceNode)
			if !isSeq || i >= len(seq.Values) {
				return line, col, false
			}
			raw = seq.Values[i]
			cur = d.resolve(raw)
			if _, isMap := cur.(ast.MapNode); isMap {
				line, col = firstPos(cur)
			} else {
				line, col = tokenPos(nodeToken(raw))
			}
		}
	}
	if cur == nil || cur.Type() == ast.NullType {
		return line, col, false
	}
	if isScalar(cur) {
		line, col = tokenPos(nodeToken(raw))
	}
	return line, col, true
}

// splitSegment reads one segment of a field path: a key and the list
// indexes after it ("ops[0]" is ops and [0]; "after[2]" is after and [2]).
func splitSegment(seg string) (key string, idxs []int, ok bool) {
	key, rest, _ := strings.Cut(seg, "[")
	if key == "" {
		return "", nil, false
	}
	if rest == "" {
		return key, nil, true
	}
	for part := range strings.SplitSeq(strings.TrimSuffix(rest, "]"), "][") {
		i, err := strconv.Atoi(part)
		if err != nil || i < 0 {
			return "", nil, false
		}
		idxs = append(idxs, i)
	}
	return key, idxs, true
}
