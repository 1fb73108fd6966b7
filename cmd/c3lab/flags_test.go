package main

import (
	"bytes"
	"flag"
	"os"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
	"github.com/c3lab/c3lab/scenarios/knobtest"
)

// Every knob of the table is a flag, with its help; setting one overrides
// the scenario's own strategy and nothing else.
func TestStrategyFlagsFromTheKnobTable(t *testing.T) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	var sf strategyFlags
	sf.register(fs)
	var args []string
	for _, k := range scenarios.StrategyKnobs() {
		f := fs.Lookup(k.Flag)
		if f == nil || f.Usage != k.Usage {
			t.Errorf("knob %s: flag --%s missing or without the knob's help", k.Key, k.Flag)
			continue
		}
		args = append(args, "--"+k.Flag, k.Examples[0])
	}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	if got := sf.given(); len(got) != len(scenarios.StrategyKnobs()) {
		t.Errorf("given %v", got)
	}
	got := sf.apply(scenarios.Strategy{CommEngine: scenarios.EngineSM, CommSMs: 8})
	for _, k := range scenarios.StrategyKnobs() {
		if k.Text(got) != k.Examples[0] {
			t.Errorf("--%s %s gave %s %q", k.Flag, k.Examples[0], k.Key, k.Text(got))
		}
	}
	// Only the flags given override.
	fs = flag.NewFlagSet("run", flag.ContinueOnError)
	sf = strategyFlags{}
	sf.register(fs)
	if err := fs.Parse([]string{"--comm-ctas", "8"}); err != nil {
		t.Fatal(err)
	}
	base := scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5}
	if got, want := sf.apply(base), (scenarios.Strategy{Launch: scenarios.CommFirst, CommPriority: -5, CommCTAs: 8}); got != want {
		t.Errorf("apply: %s, want %s", got, want)
	}
}

// A knob added to a copy of the table is a flag with its help, counts as
// given, is validated with the others and reaches the strategy.
func TestDummyKnobReachesTheFlags(t *testing.T) {
	ks, depth := knobtest.Table()
	lim := sim.New(sim.DefaultProfile()).Capabilities().Limits
	for _, tc := range []struct {
		args []string
		want string // "" for success, else a part of the error
	}{
		{[]string{"--" + knobtest.Flag, "3", "--launch", "comm-first"}, ""},
		{[]string{"--" + knobtest.Flag, "9"}, "strategy: " + knobtest.Key + " is 9; allowed 0 (off) or 1..8"},
	} {
		var out bytes.Buffer
		fs := newFlags("run", "run", stdio{out: &out})
		sf := strategyFlags{knobs: ks}
		sf.register(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if g := sf.given(); g[0] != knobtest.Flag {
			t.Errorf("given %v", g)
		}
		_, st, err := sf.experiment("", lim)
		switch {
		case tc.want == "" && (err != nil || *depth != 3 || st.Launch != scenarios.CommFirst || ks.Format(st) != "comm-first dummy=3"):
			t.Errorf("%v: strategy %s, depth %d, %v", tc.args, ks.Format(st), *depth, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: error %v, want one saying %q", tc.args, err, tc.want)
		}
		fs.Usage()
		if !strings.Contains(out.String(), "-"+knobtest.Flag) || !strings.Contains(out.String(), "stages of the dummy pipeline") {
			t.Errorf("the help lacks the dummy flag:\n%s", out.String())
		}
	}
}

// The README lists every strategy flag with the knob's first example, in
// table order: the list is the table's.
func TestREADMEListsTheStrategyFlags(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, k := range scenarios.StrategyKnobs() {
		flags = append(flags, "`--"+k.Flag+" "+k.Examples[0]+"`")
	}
	want := strings.Join(flags, ", ") + "."
	if readme := strings.Join(strings.Fields(string(data)), " "); !strings.Contains(readme, want) {
		t.Errorf("README.md lacks the strategy flags as the knob table has them; want (wrapped as you like):\n%s", want)
	}
}
