package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/goccy/go-yaml"
	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// ProfileFormat is the format version of the profile files WriteProfileFile
// writes and the newest ReadProfileFile reads.
const ProfileFormat = 1

// ProfileFile is a device profile in a file, loaded at run time: every
// field of Profile (by reflection, under the Go field names, so a field
// added to Profile is read and written without more code), where each
// constant comes from, and, for a fitted profile, what it was fitted on.
//
//	format: 1
//	base: h200            # optional: fields the file leaves out come from this built-in (h200, or h200-fit, the calibrated H200)
//	profile:
//	  Name: "h200"
//	  SMs: 132
//	  GEMMEfficiency: {bf16: 0.768, fp16: 0.747}
//	  ...
//	provenance:
//	  HBMContention: {source: fitted, stage: 2, range: [0, 0.5], identified: {...}}
//	fit:
//	  seed: 1
//	  fit_set: [...]
//	  held_out: [...]
type ProfileFile struct {
	// Format is the file's format version (ProfileFormat).
	Format int `yaml:"format"`
	// Base names the built-in profile that fills the fields the file does
	// not set (a hand-set one, or FittedH200Name for the calibrated H200,
	// whose provenance the file's then builds on); empty when the file
	// sets every one. A file that lists its
	// own GEMMLaunches also gets the base's measured launches of the
	// shapes it does not list (withMeasuredLaunches).
	Base string `yaml:"base,omitempty"`
	// Profile is the device model.
	Profile Profile `yaml:"profile"`
	// Provenance maps a Profile field name to where it comes from. A
	// field the file does not list takes the base's (or the built-in
	// table's) entry.
	Provenance map[string]Provenance `yaml:"provenance,omitempty"`
	// Fit records how calibrate made the profile; nil for a hand-written one.
	Fit *FitRecord `yaml:"fit,omitempty"`

	// label is what the user called the profile: the built-in's name or
	// the file's path (Label).
	label string
}

// Label is what the profile was loaded as: the built-in's name
// (FittedH200Name) or the file's path; "" for one made in code.
func (pf ProfileFile) Label() string { return pf.label }

// FitRecord is what a calibrated profile was fitted on, so that validate
// can tell the scenarios it was fitted on from those held out.
type FitRecord struct {
	// Tool and Version are the program that fitted it.
	Tool string `yaml:"tool"`
	// Sweeps are the sweep files it was fitted on, as given.
	Sweeps []string `yaml:"sweeps"`
	// Seed and Holdout drew the split: Holdout is the share of scenarios
	// held out.
	Seed    uint64  `yaml:"seed"`
	Holdout float64 `yaml:"holdout"`
	// Starts and Iterations are stage 2's search: Nelder-Mead starts and
	// the most loss evaluations per start.
	Starts     int `yaml:"starts"`
	Iterations int `yaml:"iterations"`
	// Loss is stage 2's loss on the fit set at the fitted values, and
	// StartLoss at the starting profile's.
	Loss      float64 `yaml:"loss"`
	StartLoss float64 `yaml:"start_loss"`
	// Runs is how many runs of the fit set the loss replays.
	Runs int `yaml:"runs"`
	// FitSet and HeldOut are the scenario names (current names of the
	// built-in suite where the sweeps used former ones) on each side of
	// the split; no scenario is on both.
	FitSet  []string `yaml:"fit_set"`
	HeldOut []string `yaml:"held_out"`
	// HeldOutError is the profile's error on the held-out scenarios'
	// runs; nil in a profile fitted before it was kept.
	HeldOutError *HeldOutError `yaml:"held_out_error,omitempty"`
}

// ProfileError is a profile file's problem, with the line it is on (0
// when the problem is the whole file's).
type ProfileError struct {
	File string
	Line int
	Msg  string
}

func (e *ProfileError) Error() string {
	where := e.File
	if where == "" {
		where = "profile"
	}
	if e.Line > 0 {
		where += ":" + strconv.Itoa(e.Line)
	}
	return where + ": " + e.Msg
}

// LoadProfileFile reads and checks the profile file at path.
func LoadProfileFile(path string) (ProfileFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ProfileFile{}, fmt.Errorf("reading the profile: %w", err)
	}
	pf, err := ReadProfileFile(data)
	var pe *ProfileError
	if errors.As(err, &pe) {
		pe.File = path
	}
	pf.label = path
	return pf, err
}

// maxProfileFileBytes bounds what ReadProfileFile parses.
const maxProfileFileBytes = 4 << 20

// ReadProfileFile parses and checks a profile file: an unknown key, a
// value of the wrong type, outside its field's physical range (the
// provenance range) or missing when the file has no base is a
// *ProfileError naming the line.
func ReadProfileFile(data []byte) (ProfileFile, error) {
	if len(data) > maxProfileFileBytes {
		return ProfileFile{}, &ProfileError{Msg: fmt.Sprintf("%d bytes; a profile file holds at most %d", len(data), maxProfileFileBytes)}
	}
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return ProfileFile{}, syntaxError(err)
	}
	if len(f.Docs) != 1 || f.Docs[0].Body == nil {
		return ProfileFile{}, &ProfileError{Msg: "want one YAML document holding format, profile and provenance"}
	}
	root, err := yamlMapping(f.Docs[0].Body)
	if err != nil {
		return ProfileFile{}, err
	}
	// The base first: it fills what the file leaves out.
	var pf ProfileFile
	if n := yamlLookup(root, "base"); n != nil {
		s, ok := yamlScalar(n).(string)
		if !ok {
			return pf, yamlAt(n, "base is a built-in profile's name")
		}
		pf.Base = s
	}
	hasBase := false
	var base Profile
	var baseProv map[string]Provenance
	if pf.Base != "" {
		b, prov, ok := baseProfile(pf.Base)
		if !ok {
			return pf, yamlAt(yamlLookup(root, "base"), fmt.Sprintf("base %q is no built-in profile; built-in: %s", pf.Base, strings.Join(append(builtinNames(), FittedH200Name), ", ")))
		}
		hasBase = true
		base, baseProv = b, prov
		pf.Profile = cloneProfileDeep(b)
	}
	d := yamlDecoder{lines: map[string]int{}}
	if err := d.decode(f.Docs[0].Body, reflect.ValueOf(&pf).Elem(), ""); err != nil {
		return ProfileFile{}, err
	}
	if _, own := d.lines["profile.GEMMLaunches"]; own && hasBase {
		pf.Profile.GEMMLaunches = withMeasuredLaunches(pf.Profile.GEMMLaunches, base.GEMMLaunches)
	}
	if pf.Format != ProfileFormat {
		line := d.lines["format"]
		if pf.Format > ProfileFormat {
			return ProfileFile{}, &ProfileError{Line: line, Msg: fmt.Sprintf("profile format %d is newer than this c3lab reads (%d): update c3lab", pf.Format, ProfileFormat)}
		}
		return ProfileFile{}, &ProfileError{Line: line, Msg: fmt.Sprintf("format is %d; want format: %d", pf.Format, ProfileFormat)}
	}
	if _, ok := d.lines["profile"]; !ok {
		return ProfileFile{}, &ProfileError{Msg: "no profile: section"}
	}
	// Every field set, unless a base fills it.
	if !hasBase {
		for _, name := range ProfileFields() {
			if _, ok := d.lines["profile."+name]; !ok && !defaultedField(name) {
				return ProfileFile{}, &ProfileError{Line: d.lines["profile"], Msg: fmt.Sprintf("profile sets no %s; set it, or add base: h200 to take the built-in H200's", name)}
			}
		}
	}
	for name, p := range pf.Provenance {
		line := d.lines["provenance."+name]
		if !slices.Contains(ProfileFields(), name) {
			return ProfileFile{}, &ProfileError{Line: line, Msg: fmt.Sprintf("provenance of %q, which is no profile field", name)}
		}
		if !slices.Contains(Sources(), p.Source) {
			return ProfileFile{}, &ProfileError{Line: line, Msg: fmt.Sprintf("%s's source is %q; allowed %s", name, p.Source, joinSources())}
		}
		if p.Range != nil && (len(p.Range) != 2 || !(p.Range[0] <= p.Range[1]) || math.IsInf(p.Range[0], 0) || math.IsInf(p.Range[1], 0)) {
			return ProfileFile{}, &ProfileError{Line: line, Msg: fmt.Sprintf("%s's range is %v; want [min, max] with min <= max", name, p.Range)}
		}
	}
	// Over the base's provenance as the base was read: the calibrated
	// H200's file is parsed once, not again for its provenance.
	var prov map[string]Provenance
	if hasBase {
		prov = pf.provenanceOver(baseProv)
	} else {
		prov = pf.EffectiveProvenance()
	}
	if err := checkProfile(pf.Profile, prov, d.lines); err != nil {
		return ProfileFile{}, err
	}
	if pf.Fit != nil {
		fit := map[string]bool{}
		for _, s := range pf.Fit.FitSet {
			fit[s] = true
		}
		for _, s := range pf.Fit.HeldOut {
			if fit[s] {
				return ProfileFile{}, &ProfileError{Line: d.lines["fit.held_out"], Msg: fmt.Sprintf("scenario %s is both in the fit set and held out", s)}
			}
		}
		if h := pf.Fit.HeldOutError; h != nil {
			if err := h.check(); err != nil {
				return ProfileFile{}, &ProfileError{Line: d.lines["fit.held_out_error"], Msg: "held_out_error: " + err.Error()}
			}
		}
	}
	return pf, nil
}

// withMeasuredLaunches is a file's launch table with the base's measured
// launches of the shapes and SM targets it does not list appended: a
// launch measured since the file was written (ncu's statistics of the
// kernel cuBLASLt runs) is hardware behaviour, not a fitted constant, so
// it replaces the tile rule for the file's profile too. The file's own
// entries win.
func withMeasuredLaunches(own, base []GEMMLaunch) []GEMMLaunch {
	out := slices.Clone(own)
	type key struct {
		m, n, k, sms int
		d            string
	}
	have := map[key]bool{}
	for _, l := range own {
		have[key{l.M, l.N, l.K, l.SMTarget, string(l.DType)}] = true
	}
	for _, l := range base {
		if l.Source == LaunchMeasured && !have[key{l.M, l.N, l.K, l.SMTarget, string(l.DType)}] {
			out = append(out, l)
		}
	}
	return out
}

// baseProfile is the built-in profile a file's base: names, with its
// provenance: a hand-set one (Profiles) or the calibrated H200
// (FittedH200Name), whose file builds on the hand-set H200 in turn.
func baseProfile(name string) (Profile, map[string]Provenance, bool) {
	if name == FittedH200Name {
		fit, err := FittedH200()
		if err != nil {
			return Profile{}, nil, false
		}
		return fit.Profile, fit.EffectiveProvenance(), true
	}
	p, ok := Profiles()[name]
	prov, _ := BuiltinProvenance(name)
	return p, prov, ok
}

// EffectiveProvenance is the file's provenance over the built-in table of
// its base (or of the profile's name), or over the calibrated H200's
// provenance for that base: one entry per field that has one.
func (pf ProfileFile) EffectiveProvenance() map[string]Provenance {
	name := pf.Base
	if name == "" {
		name = pf.Profile.Name
	}
	var base map[string]Provenance
	if name == FittedH200Name {
		_, base, _ = baseProfile(name)
	} else {
		base, _ = BuiltinProvenance(name)
	}
	return pf.provenanceOver(base)
}

// provenanceOver is the file's provenance over base's (which it does not
// change): a file entry without a range takes base's range.
func (pf ProfileFile) provenanceOver(base map[string]Provenance) map[string]Provenance {
	out := maps.Clone(base)
	if out == nil {
		out = map[string]Provenance{}
	}
	for k, v := range pf.Provenance {
		b := out[k]
		if v.Range == nil {
			v.Range = b.Range
		}
		out[k] = v
	}
	return out
}

// defaultedField reports whether a Profile field was added after profile
// files were first written: a file without a base may leave it out, and
// the model then takes its default (Profile.peerLoadCTABandwidth,
// Profile.hostWriteStall; StreamFillsCopySMs off; no host-write end wait,
// launch gap, stall threshold, tile scaling or tail), as before the field.
func defaultedField(name string) bool {
	switch name {
	case "PeerLoadCTABandwidth", "HostWriteStreamStall", "StreamFillsCopySMs", "HostCopyKernelBusyGain",
		"HostWriteEndWait", "HostWriteLaunchGap", "HostWriteLaunchGapWeight",
		"HostWriteStallFrom", "HostWriteStallAlone", "HostWriteStallTiles", "HostWriteTail", "HostReadLaunchGap",
		"HostReadStall", "HostReadEndWait", "HostReadStallFrom", "HostReadStallSteep", "HostReadStallTiles":
		return true
	}
	return false
}

// ProfileFields lists Profile's field names in declaration order.
func ProfileFields() []string {
	t := reflect.TypeFor[Profile]()
	var out []string
	for i := range t.NumField() {
		if f := t.Field(i); f.IsExported() {
			out = append(out, f.Name)
		}
	}
	return out
}

func builtinNames() []string {
	var n []string
	for k := range Profiles() {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func joinSources() string {
	var s []string
	for _, x := range Sources() {
		s = append(s, string(x))
	}
	return strings.Join(s, ", ")
}

// checkProfile holds every numeric value of p (every entry of a map field)
// to its field's range, or to finite and >= 0 when it has none, and the
// names to non-empty. lines gives the line of each value by path.
func checkProfile(p Profile, prov map[string]Provenance, lines map[string]int) error {
	v := reflect.ValueOf(p)
	t := v.Type()
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		path := "profile." + f.Name
		rng := prov[f.Name].Range
		var bad error
		walkProfileNumbers(v.Field(i), path, func(at string, x float64) bool {
			lo, hi := 0.0, math.Inf(1)
			if rng != nil {
				lo, hi = rng[0], rng[1]
			}
			if math.IsNaN(x) || math.IsInf(x, 0) || x < lo || x > hi {
				allowed := fmt.Sprintf("allowed %s..%s", yamlNum(lo), yamlNum(hi))
				if rng == nil {
					allowed = "allowed a finite value of 0 or more"
				}
				bad = &ProfileError{Line: yamlLineOf(lines, at), Msg: fmt.Sprintf("%s is %s, out of its physical range; %s", strings.TrimPrefix(at, "profile."), yamlNum(x), allowed)}
				return false
			}
			return true
		})
		if bad != nil {
			return bad
		}
	}
	if p.Name == "" {
		return &ProfileError{Line: yamlLineOf(lines, "profile.Name"), Msg: "Name is empty; a profile needs a name (h200)"}
	}
	return nil
}

// lineOf is the line of path, or of its closest parent that has one.
func yamlLineOf(lines map[string]int, path string) int {
	for {
		if l, ok := lines[path]; ok {
			return l
		}
		i := strings.LastIndexByte(path, '.')
		if i < 0 {
			return 0
		}
		path = path[:i]
	}
}

// walkNumbers calls f on every number in v (scalars, map values, slice
// elements, struct fields), with its path, until f returns false.
func walkProfileNumbers(v reflect.Value, path string, f func(string, float64) bool) bool {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		return f(path, v.Float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return f(path, float64(v.Int()))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return f(path, float64(v.Uint()))
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(yamlKeyString(a), yamlKeyString(b)) })
		for _, k := range keys {
			if !walkProfileNumbers(v.MapIndex(k), path+"."+yamlKeyString(k), f) {
				return false
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if !walkProfileNumbers(v.Index(i), path+"."+strconv.Itoa(i), f) {
				return false
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() && !walkProfileNumbers(v.Field(i), path+"."+v.Type().Field(i).Name, f) {
				return false
			}
		}
	case reflect.Pointer:
		if !v.IsNil() {
			return walkProfileNumbers(v.Elem(), path, f)
		}
	}
	return true
}

func yamlNum(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// syntaxError turns the YAML parser's error into one line with its line.
func syntaxError(err error) error {
	var ye yaml.Error
	if errors.As(err, &ye) && ye.GetToken() != nil {
		return &ProfileError{Line: ye.GetToken().Position.Line, Msg: "not valid YAML: " + yamlFirstLine(ye.GetMessage())}
	}
	return &ProfileError{Msg: "not valid YAML: " + yamlFirstLine(err.Error())}
}

func yamlFirstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

func yamlAt(n ast.Node, msg string) error {
	line := 0
	if n != nil && n.GetToken() != nil {
		line = n.GetToken().Position.Line
	}
	return &ProfileError{Line: line, Msg: msg}
}

// mappingValues returns a mapping node's entries (a lone entry is a
// mapping of one).
func yamlMapping(n ast.Node) ([]*ast.MappingValueNode, error) {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values, nil
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}, nil
	}
	return nil, yamlAt(n, fmt.Sprintf("want a mapping (key: value lines), found %s", yamlKind(n)))
}

func yamlLookup(m []*ast.MappingValueNode, key string) ast.Node {
	for _, e := range m {
		if k, ok := yamlScalar(e.Key).(string); ok && k == key {
			return e.Value
		}
	}
	return nil
}

// scalar is a scalar node's value (string, int64, uint64, float64, bool,
// nil), or a non-nil error marker for anything else.
func yamlScalar(n ast.Node) any {
	switch s := n.(type) {
	case *ast.StringNode:
		return s.Value
	case *ast.LiteralNode:
		return s.Value.Value
	case *ast.IntegerNode:
		return s.Value
	case *ast.FloatNode:
		return s.Value
	case *ast.InfinityNode:
		return s.Value
	case *ast.NanNode:
		return math.NaN()
	case *ast.BoolNode:
		return s.Value
	case *ast.NullNode:
		return nil
	case *ast.AnchorNode, *ast.AliasNode, *ast.TagNode:
		return yamlNotScalar{}
	case ast.MapKeyNode:
		if sn, ok := n.(ast.ScalarNode); ok {
			return sn.GetValue()
		}
	}
	return yamlNotScalar{}
}

type yamlNotScalar struct{}

func yamlKind(n ast.Node) string {
	switch n.(type) {
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.SequenceNode:
		return "a list"
	case *ast.AnchorNode, *ast.AliasNode:
		return "an anchor or alias (not supported)"
	case *ast.TagNode:
		return "a tagged value (not supported)"
	case nil:
		return "nothing"
	}
	switch yamlScalar(n).(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	case yamlNotScalar:
		return "an unsupported node"
	}
	return "a number"
}

// yamlDecoder fills Go values from YAML nodes by reflection, recording the
// line of each path it sets.
type yamlDecoder struct {
	lines map[string]int
	depth int
}

// yamlName is a struct field's key: its yaml tag's name, else its Go name.
func yamlName(f reflect.StructField) (name string, omitEmpty bool) {
	tag := f.Tag.Get("yaml")
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = f.Name
	}
	return name, strings.Contains(opts, "omitempty")
}

func yamlJoin(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func (d *yamlDecoder) decode(n ast.Node, v reflect.Value, path string) error {
	d.depth++
	defer func() { d.depth-- }()
	if d.depth > 32 {
		return yamlAt(n, "nested too deep")
	}
	if n != nil && n.GetToken() != nil && path != "" {
		d.lines[path] = n.GetToken().Position.Line
	}
	what := strings.TrimPrefix(path, "profile.")
	if what == "" {
		what = "the file"
	}
	if _, ok := n.(*ast.NullNode); ok && v.Kind() != reflect.Struct {
		v.Set(reflect.Zero(v.Type()))
		return nil
	}
	switch v.Kind() {
	case reflect.Struct:
		m, err := yamlMapping(n)
		if err != nil {
			return &ProfileError{Line: err.(*ProfileError).Line, Msg: fmt.Sprintf("%s: want a mapping, found %s", what, yamlKind(n))}
		}
		t := v.Type()
		seen := map[string]bool{}
		for _, e := range m {
			key, ok := yamlScalar(e.Key).(string)
			if !ok {
				return yamlAt(e.Key, fmt.Sprintf("%s: a key must be a name", what))
			}
			if seen[key] {
				return yamlAt(e.Key, fmt.Sprintf("%s: key %s given twice", what, key))
			}
			seen[key] = true
			idx := -1
			var known []string
			for i := range t.NumField() {
				if !t.Field(i).IsExported() {
					continue
				}
				name, _ := yamlName(t.Field(i))
				known = append(known, name)
				if name == key {
					idx = i
				}
			}
			if idx < 0 {
				return yamlAt(e.Key, fmt.Sprintf("unknown key %q in %s%s", key, yamlSection(path), yamlSuggest(key, known)))
			}
			sub := yamlJoin(path, key)
			if e.Key.GetToken() != nil {
				d.lines[sub] = e.Key.GetToken().Position.Line
			}
			if err := d.decode(e.Value, v.Field(idx), sub); err != nil {
				return err
			}
			if e.Key.GetToken() != nil {
				d.lines[sub] = e.Key.GetToken().Position.Line
			}
		}
		return nil
	case reflect.Map:
		m, err := yamlMapping(n)
		if err != nil {
			return yamlAt(n, fmt.Sprintf("%s: want a mapping, found %s", what, yamlKind(n)))
		}
		if v.IsNil() {
			v.Set(reflect.MakeMap(v.Type()))
		}
		seen := map[string]bool{}
		for _, e := range m {
			ks := yamlScalar(e.Key)
			var key string
			switch k := ks.(type) {
			case string:
				key = k
			case int64, uint64:
				key = fmt.Sprint(k)
			default:
				return yamlAt(e.Key, fmt.Sprintf("%s: a key must be a name or an integer", what))
			}
			if seen[key] {
				return yamlAt(e.Key, fmt.Sprintf("%s: key %s given twice", what, key))
			}
			seen[key] = true
			kv := reflect.New(v.Type().Key()).Elem()
			if err := yamlSetScalar(kv, key); err != nil {
				return yamlAt(e.Key, fmt.Sprintf("%s: key %q: %v", what, key, err))
			}
			ev := reflect.New(v.Type().Elem()).Elem()
			if old := v.MapIndex(kv); old.IsValid() {
				ev.Set(old)
			}
			if err := d.decode(e.Value, ev, yamlJoin(path, key)); err != nil {
				return err
			}
			v.SetMapIndex(kv, ev)
		}
		return nil
	case reflect.Slice:
		s, ok := n.(*ast.SequenceNode)
		if !ok {
			return yamlAt(n, fmt.Sprintf("%s: want a list, found %s", what, yamlKind(n)))
		}
		out := reflect.MakeSlice(v.Type(), len(s.Values), len(s.Values))
		for i, e := range s.Values {
			if err := d.decode(e, out.Index(i), yamlJoin(path, strconv.Itoa(i))); err != nil {
				return err
			}
		}
		v.Set(out)
		return nil
	case reflect.Pointer:
		nv := reflect.New(v.Type().Elem())
		if err := d.decode(n, nv.Elem(), path); err != nil {
			return err
		}
		v.Set(nv)
		return nil
	}
	val := yamlScalar(n)
	if _, bad := val.(yamlNotScalar); bad {
		return yamlAt(n, fmt.Sprintf("%s: want a single value, found %s", what, yamlKind(n)))
	}
	if err := yamlSetScalar(v, val); err != nil {
		return yamlAt(n, fmt.Sprintf("%s: %v", what, err))
	}
	return nil
}

func yamlSection(path string) string {
	if path == "" {
		return "the file (known: format, base, profile, provenance, fit)"
	}
	return path
}

// suggest names the known key closest to key, when one differs only in
// case or by a prefix.
func yamlSuggest(key string, known []string) string {
	for _, k := range known {
		if strings.EqualFold(k, key) {
			return fmt.Sprintf("; did you mean %s?", k)
		}
	}
	return ""
}

// setScalar sets a scalar Go value from a YAML scalar (or a map key's text).
func yamlSetScalar(v reflect.Value, val any) error {
	switch v.Kind() {
	case reflect.String:
		s, ok := val.(string)
		if !ok {
			return fmt.Errorf("want a string, found %v", val)
		}
		v.SetString(s)
	case reflect.Bool:
		b, ok := val.(bool)
		if !ok {
			return fmt.Errorf("want true or false, found %v", val)
		}
		v.SetBool(b)
	case reflect.Float32, reflect.Float64:
		x, ok := yamlFloat(val)
		if !ok {
			return fmt.Errorf("want a number, found %v", yamlQuoteIfString(val))
		}
		v.SetFloat(x)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		x, ok := yamlFloat(val)
		if !ok || x != math.Trunc(x) || math.Abs(x) > 1<<53 {
			return fmt.Errorf("want an integer, found %v", yamlQuoteIfString(val))
		}
		if v.OverflowInt(int64(x)) {
			return fmt.Errorf("%v does not fit", val)
		}
		v.SetInt(int64(x))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if u, ok := val.(uint64); ok {
			v.SetUint(u)
			return nil
		}
		x, ok := yamlFloat(val)
		if !ok || x != math.Trunc(x) || x < 0 || x > 1<<53 {
			return fmt.Errorf("want an integer of 0 or more, found %v", yamlQuoteIfString(val))
		}
		if v.OverflowUint(uint64(x)) {
			return fmt.Errorf("%v does not fit", val)
		}
		v.SetUint(uint64(x))
	default:
		return fmt.Errorf("cannot hold a value of Go type %s", v.Type())
	}
	return nil
}

func yamlQuoteIfString(val any) any {
	if s, ok := val.(string); ok {
		return strconv.Quote(s)
	}
	return val
}

func yamlFloat(val any) (float64, bool) {
	switch x := val.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case string:
		// A map key's text ("4096"), not a quoted number in a value.
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

// WriteProfileFile writes pf as YAML: the header comment, then every
// field by reflection in declaration order, map keys sorted. The same
// ProfileFile always gives the same bytes.
func WriteProfileFile(w io.Writer, pf ProfileFile, header string) error {
	pf.Format = ProfileFormat
	var b bytes.Buffer
	for _, l := range strings.Split(strings.TrimRight(header, "\n"), "\n") {
		if l != "" {
			b.WriteString("# " + l + "\n")
		}
	}
	yamlWriteValue(&b, reflect.ValueOf(pf), 0)
	_, err := w.Write(b.Bytes())
	return err
}

// MarshalProfileFile is WriteProfileFile into bytes.
func MarshalProfileFile(pf ProfileFile, header string) []byte {
	var b bytes.Buffer
	_ = WriteProfileFile(&b, pf, header)
	return b.Bytes()
}

func yamlIsZero(v reflect.Value) bool { return v.IsZero() }

// inline reports whether v is written on its key's line.
func yamlInline(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Struct:
		return false
	case reflect.Pointer:
		return v.IsNil()
	case reflect.Map:
		if v.IsNil() || v.Len() == 0 {
			return true
		}
		// A map of scalars fits one line.
		k := v.Type().Elem().Kind()
		return k != reflect.Struct && k != reflect.Map && k != reflect.Slice && k != reflect.Pointer && v.Len() <= 8
	case reflect.Slice:
		if v.IsNil() || v.Len() == 0 {
			return true
		}
		k := v.Type().Elem().Kind()
		return k != reflect.Struct && k != reflect.Map && k != reflect.Slice && k != reflect.Pointer && v.Len() <= 4
	}
	return true
}

// writeValue writes a struct or map as block YAML at indent.
func yamlWriteValue(b *bytes.Buffer, v reflect.Value, indent int) {
	pad := strings.Repeat("  ", indent)
	switch v.Kind() {
	case reflect.Pointer:
		yamlWriteValue(b, v.Elem(), indent)
	case reflect.Struct:
		t := v.Type()
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name, omit := yamlName(f)
			fv := v.Field(i)
			if omit && yamlIsZero(fv) {
				continue
			}
			yamlWriteEntry(b, pad, name, fv, indent)
		}
	case reflect.Map:
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(yamlKeyString(a), yamlKeyString(b)) })
		for _, k := range keys {
			yamlWriteEntry(b, pad, yamlKey(yamlKeyString(k)), v.MapIndex(k), indent)
		}
	case reflect.Slice:
		for i := range v.Len() {
			e := v.Index(i)
			if yamlInline(e) {
				b.WriteString(pad + "- " + yamlFlow(e) + "\n")
				continue
			}
			// A block element: its first line after the dash.
			var sub bytes.Buffer
			yamlWriteValue(&sub, e, indent+1)
			s := sub.String()
			b.WriteString(pad + "- " + strings.TrimPrefix(s, pad+"  "))
		}
	}
}

func yamlWriteEntry(b *bytes.Buffer, pad, key string, v reflect.Value, indent int) {
	if yamlInline(v) {
		b.WriteString(pad + key + ": " + yamlFlow(v) + "\n")
		return
	}
	b.WriteString(pad + key + ":\n")
	yamlWriteValue(b, v, indent+1)
}

// flow writes v on one line.
func yamlFlow(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "null"
		}
		return yamlFlow(v.Elem())
	case reflect.String:
		return strconv.Quote(v.String())
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Float32, reflect.Float64:
		return yamlNum(v.Float())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Map:
		if v.IsNil() {
			return "null"
		}
		keys := v.MapKeys()
		slices.SortFunc(keys, func(a, b reflect.Value) int { return strings.Compare(yamlKeyString(a), yamlKeyString(b)) })
		var parts []string
		for _, k := range keys {
			parts = append(parts, yamlKey(yamlKeyString(k))+": "+yamlFlow(v.MapIndex(k)))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case reflect.Slice:
		if v.IsNil() {
			return "null"
		}
		var parts []string
		for i := range v.Len() {
			parts = append(parts, yamlFlow(v.Index(i)))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case reflect.Struct:
		// Only reached for an empty struct.
		return "{}"
	}
	return "null"
}

func yamlKeyString(k reflect.Value) string {
	switch k.Kind() {
	case reflect.String:
		return k.String()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(k.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(k.Uint(), 10)
	}
	return fmt.Sprint(k.Interface())
}

// yamlKey writes a map key bare when it is a plain name, quoted otherwise.
func yamlKey(s string) string {
	plain := s != "" && !slices.Contains([]string{"null", "true", "false", "yes", "no", "on", "off", "~"}, strings.ToLower(s))
	for i, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '_' || i > 0 && (r >= '0' && r <= '9' || r == '-' || r == '.')
		if !ok {
			plain = false
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

// cloneProfileDeep copies p with its maps and slices, so a change to the
// copy leaves p alone.
func cloneProfileDeep(p Profile) Profile {
	var q Profile
	deepCopyValue(reflect.ValueOf(&q).Elem(), reflect.ValueOf(p))
	q.tables = nil // a clone is made to be changed; New indexes it again
	return q
}

// CloneProfile returns a deep copy of p: its maps and slices are its own.
func CloneProfile(p Profile) Profile { return cloneProfileDeep(p) }

func deepCopyValue(dst, src reflect.Value) {
	switch src.Kind() {
	case reflect.Map:
		if src.IsNil() {
			return
		}
		m := reflect.MakeMapWithSize(src.Type(), src.Len())
		for _, k := range src.MapKeys() {
			e := reflect.New(src.Type().Elem()).Elem()
			deepCopyValue(e, src.MapIndex(k))
			m.SetMapIndex(k, e)
		}
		dst.Set(m)
	case reflect.Slice:
		if src.IsNil() {
			return
		}
		s := reflect.MakeSlice(src.Type(), src.Len(), src.Len())
		for i := range src.Len() {
			deepCopyValue(s.Index(i), src.Index(i))
		}
		dst.Set(s)
	case reflect.Struct:
		for i := range src.NumField() {
			if src.Type().Field(i).IsExported() {
				deepCopyValue(dst.Field(i), src.Field(i))
			} else {
				// Unexported fields cannot be set by reflection: copy the whole
				// struct first and replace the exported ones.
				dst.Set(src)
				for j := range src.NumField() {
					if src.Type().Field(j).IsExported() {
						deepCopyValue(dst.Field(j), src.Field(j))
					}
				}
				return
			}
		}
	case reflect.Pointer:
		if src.IsNil() {
			return
		}
		n := reflect.New(src.Type().Elem())
		deepCopyValue(n.Elem(), src.Elem())
		dst.Set(n)
	default:
		dst.Set(src)
	}
}
