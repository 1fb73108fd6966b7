package main

import (
	"flag"
	"testing"
	"time"

	"github.com/c3lab/c3lab/profiler"
)

// TestSettleFlag: --settle reaches profiler.Options.Settle: auto (0, the
// backend's), off (negative) or the duration given.
func TestSettleFlag(t *testing.T) {
	cases := []struct {
		args []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"--settle", "auto"}, 0},
		{[]string{"--settle", "off"}, -1},
		{[]string{"--settle", "0"}, -1},
		{[]string{"--settle", "500ms"}, 500 * time.Millisecond},
	}
	for _, tc := range cases {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		var pf precisionFlags
		pf.register(fs, "off", timeCap{}, "")
		if err := fs.Parse(tc.args); err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		opt, err := pf.options(profiler.Options{})
		if err != nil {
			t.Fatalf("%v: %v", tc.args, err)
		}
		if opt.Settle != tc.want {
			t.Errorf("%v: Settle %v, want %v", tc.args, opt.Settle, tc.want)
		}
	}
}
