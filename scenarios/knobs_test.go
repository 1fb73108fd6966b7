package scenarios_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/knobtest"
)

// limits is an H200's, as the simulator reports them.
func limits() scenarios.Limits {
	return scenarios.Limits{Device: "NVIDIA H200", SMs: 132, SMStep: 8, MaxGPUs: 8, CopyEngines: 3,
		HighestPriority: -5, DTypes: scenarios.DTypes, MemoryBytes: 150109880320}
}

// Every field of Strategy is one knob of the table, under its YAML and
// JSON key, and every knob's Value points at the field of its key: the
// table and the type cannot drift apart.
func TestKnobTableCoversStrategy(t *testing.T) {
	ks := scenarios.StrategyKnobs()
	typ := reflect.TypeFor[scenarios.Strategy]()
	var fields []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		y, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		j, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if y != j {
			t.Errorf("field %s: YAML key %q, JSON key %q; want one key", f.Name, y, j)
		}
		fields = append(fields, y)
	}
	if !slices.Equal(ks.Keys(), fields) {
		t.Fatalf("knob keys %v, Strategy's fields %v (same order: String prints in table order)", ks.Keys(), fields)
	}
	for i, k := range ks {
		var st scenarios.Strategy
		p := reflect.ValueOf(k.Value(&st))
		if p.Kind() != reflect.Pointer || p.Pointer() != reflect.ValueOf(&st).Elem().Field(i).Addr().Pointer() {
			t.Errorf("knob %s: Value does not point at Strategy's %s field", k.Key, typ.Field(i).Name)
		}
	}
}

// Every knob's examples parse, are valid on an H200 (where the README's
// commands run), print in Strategy.String and need what the knob says;
// flags, keys and actions are unique.
func TestKnobExamples(t *testing.T) {
	ks := scenarios.StrategyKnobs()
	seen := map[string]string{}
	unique := func(kind, name, key string) {
		if name == "" {
			return
		}
		if other, dup := seen[kind+" "+name]; dup {
			t.Errorf("%s %q is used by %s and %s", kind, name, other, key)
		}
		seen[kind+" "+name] = key
	}
	for _, k := range ks {
		unique("flag", k.Flag, k.Key)
		for _, kk := range k.Keys {
			unique("action", kk.Action, k.Key)
			unique("key", kk.Key, k.Key)
		}
		if len(k.Examples) == 0 {
			t.Errorf("knob %s has no example", k.Key)
		}
		for i, ex := range k.Examples {
			st, err := k.Example(i)
			if err != nil {
				t.Errorf("knob %s example %q: %v", k.Key, ex, err)
				continue
			}
			if errs := scenarios.ValidateStrategy(st, limits()); len(errs) > 0 {
				t.Errorf("knob %s example %q is invalid: %v", k.Key, ex, errs)
			}
			if k.Show(st.Normalize()) == "" || !strings.Contains(st.String(), k.Show(st.Normalize())) {
				t.Errorf("knob %s example %q: String %q does not show it", k.Key, ex, st)
			}
			if got := k.Text(st); got != ex {
				t.Errorf("knob %s example %q reads back as %q", k.Key, ex, got)
			}
		}
	}
}

// A strategy's needs come from its knobs: the default needs nothing, and
// each capability is asked by the knob that sets it.
func TestKnobNeeds(t *testing.T) {
	ks := scenarios.StrategyKnobs()
	for _, tc := range []struct {
		st   scenarios.Strategy
		want []string // knob key: capability
	}{
		{scenarios.Strategy{}, nil},
		{scenarios.Strategy{Launch: scenarios.CommFirst}, nil},
		{scenarios.Strategy{CommPriority: -5, CommSMs: 16, ComputeSMs: 112},
			[]string{"comm_priority: " + string(scenarios.CapPriority), "comm_sms: " + string(scenarios.CapSMPartition), "compute_sms: " + string(scenarios.CapSMPartition)}},
		{scenarios.Strategy{CommEngine: scenarios.EngineDMA, CopyEngines: 1},
			[]string{"comm_engine: " + string(scenarios.CapDMA), "copy_engines: " + string(scenarios.CapDMA)}},
		{scenarios.Strategy{CommEngine: scenarios.EngineNCCLCE, CommCTAs: 8, GEMMSMTarget: 96},
			[]string{"comm_ctas: " + string(scenarios.CapCommCTACap), "gemm_sm_target: " + string(scenarios.CapGEMMSMTarget), "comm_engine: " + string(scenarios.CapNCCLCopyEngine)}},
	} {
		var got []string
		for _, n := range ks.Needs(tc.st) {
			got = append(got, n.Knob.Key+": "+string(n.Cap))
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s needs %v, want %v", tc.st, got, tc.want)
		}
	}
}

// A knob added to a copy of the table reaches scenario files (read, with
// line-numbered errors and the allowed keys), validation and
// Strategy.String's form, without any other change.
func TestDummyKnobReachesYAMLAndValidation(t *testing.T) {
	ks, depth := knobtest.Table()
	const head = "name: demo\ngpus: 2\ncompute:\n  kind: gemm\n  m: 4096\n  n: 4096\n  k: 4096\n  dtype: bf16\ncomm:\n  collective: all-gather\n  bytes: 256MiB\nstrategy:\n"
	sc, err := ks.Parse([]byte(head+"  launch: comm-first\n  "+knobtest.Key+": 3\n"), "dummy.yaml", limits())
	if err != nil {
		t.Fatal(err)
	}
	if *depth != 3 || sc.Strategy.Launch != scenarios.CommFirst {
		t.Fatalf("read depth %d, launch %q; want 3, comm-first", *depth, sc.Strategy.Launch)
	}
	if got := ks.Format(sc.Strategy); got != "comm-first dummy=3" {
		t.Errorf("the strategy prints as %q, want %q", got, "comm-first dummy=3")
	}

	_, err = ks.Parse([]byte(head+"  "+knobtest.Key+": 9\n"), "dummy.yaml", limits())
	var fe *scenarios.FileError
	if !errors.As(err, &fe) || len(fe.Problems) != 1 || fe.Problems[0].Line != 13 ||
		fe.Problems[0].Path != "$.strategy."+knobtest.Key || !strings.Contains(fe.Problems[0].Msg, "allowed 0 (off) or 1..8") {
		t.Errorf("a depth out of range: %v; want one problem at line 13 saying what is allowed", err)
	}
	_, err = ks.Parse([]byte(head+"  "+knobtest.Key+": deep\n"), "dummy.yaml", limits())
	if err == nil || !strings.Contains(err.Error(), "dummy.yaml:13:") || !strings.Contains(err.Error(), "not a whole number") {
		t.Errorf("a depth that is not a number: %v", err)
	}

	// The stock table does not know the key, and says which keys it does.
	_, err = scenarios.Parse([]byte(head+"  "+knobtest.Key+": 3\n"), "dummy.yaml", limits())
	if err == nil || !strings.Contains(err.Error(), `unknown field "`+knobtest.Key+`"`) || !strings.Contains(err.Error(), "chunk_bytes") {
		t.Errorf("the stock table read the dummy key: %v", err)
	}
	// An unknown key under the extended table lists the dummy among the allowed.
	_, err = ks.Parse([]byte(head+"  dummy_dept: 3\n"), "dummy.yaml", limits())
	if err == nil || !strings.Contains(err.Error(), "did you mean "+knobtest.Key) {
		t.Errorf("a misspelt dummy key: %v", err)
	}

	*depth = 0
	if errs := ks.ValidateStrategy(scenarios.Strategy{}, limits()); len(errs) != 0 {
		t.Errorf("depth 0 is invalid: %v", errs)
	}
	*depth = -1
	if errs := ks.ValidateStrategy(scenarios.Strategy{}, limits()); len(errs) != 1 || errs[0].Path != "$."+knobtest.Key {
		t.Errorf("depth -1: %v, want one error at $.%s", errs, knobtest.Key)
	}
	*depth = 2
	if n := ks.Needs(scenarios.Strategy{}); len(n) != 1 || n[0].Cap != knobtest.Need {
		t.Errorf("depth 2 needs %v, want %q", n, knobtest.Need)
	}
}
