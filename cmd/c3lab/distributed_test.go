package main

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// Without a launcher's variables a command runs exactly as before: the
// wrapped command gets the very arguments, streams and context, and its
// error comes back untouched. A launcher of one process changes nothing
// either.
func TestNoLauncherRunsTheCommandAsIs(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"HOME": "/root", "SLURM_PROCID": "0", "SLURM_NTASKS": "4"}, // a batch script, not srun
		{"RANK": "0", "WORLD_SIZE": "1"},
		{"OMPI_COMM_WORLD_RANK": "0", "OMPI_COMM_WORLD_SIZE": "1"},
	} {
		ctx := context.WithValue(context.Background(), struct{}{}, "mine")
		var out, errOut bytes.Buffer
		s := stdio{in: strings.NewReader("x"), out: &out, errOut: &errOut, terminal: true}
		args := []string{"--scenario", "a", "--json"}
		want := errors.New("the command's own error")
		calls := 0
		run := func(c context.Context, a []string, got stdio) error {
			calls++
			if c != ctx || !slices.Equal(a, args) || got != s {
				t.Errorf("%v: the command got other arguments, streams or context", env)
			}
			return want
		}
		o := defaultDistOptions()
		o.getenv = func(k string) string { return env[k] }
		if err := runDistributed(ctx, "run", run, args, s, o); err != want || calls != 1 {
			t.Errorf("%v: error %v after %d calls", env, err, calls)
		}
		if out.Len()+errOut.Len() > 0 {
			t.Errorf("%v: the wrapper printed %q %q", env, out.String(), errOut.String())
		}
	}
}

// A launcher's environment that contradicts itself is a usage error of
// one line, before the command runs.
func TestBadLauncherEnvironment(t *testing.T) {
	o := defaultDistOptions()
	o.getenv = func(k string) string {
		return map[string]string{"RANK": "3", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1"}[k]
	}
	err := runDistributed(context.Background(), "run", func(context.Context, []string, stdio) error {
		t.Error("the command ran")
		return nil
	}, nil, stdio{}, o)
	var ue usageError
	if !errors.As(err, &ue) || err.Error() != "torchrun environment: rank 3 is not below the world size 2" {
		t.Errorf("%v", err)
	}
	o.getenv = func(k string) string {
		return map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1", envJoinTimeout: "soon"}[k]
	}
	err = runDistributed(context.Background(), "run", nil, []string{"--backend", "sim"}, stdio{}, o)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `C3LAB_JOIN_TIMEOUT is "soon"`) {
		t.Errorf("%v", err)
	}
	o.getenv = func(k string) string {
		return map[string]string{"RANK": "0", "WORLD_SIZE": "2", "MASTER_ADDR": "h", "MASTER_PORT": "1", envRankTimeout: "-1s"}[k]
	}
	err = runDistributed(context.Background(), "run", nil, []string{"--backend", "sim"}, stdio{}, o)
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), `C3LAB_RANK_TIMEOUT is "-1s"`) {
		t.Errorf("%v", err)
	}
	// Two ranks on one node are no longer refused with the cuda backend
	// (each runs one process per GPU): they go on to join the job, which
	// here has no rank 0 to reach.
	for _, args := range [][]string{nil, {"--backend", "cuda"}, {"--backend=auto"}} {
		o.getenv = func(k string) string {
			return map[string]string{"RANK": "1", "WORLD_SIZE": "2", "LOCAL_WORLD_SIZE": "2", "LOCAL_RANK": "1", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "1", envJoinTimeout: "200ms"}[k]
		}
		err = runDistributed(context.Background(), "run", nil, args, stdio{}, o)
		if err == nil || strings.Contains(err.Error(), "drives every GPU") {
			t.Errorf("%q: %v; want the join to fail, not a refusal", args, err)
		}
	}
}

func TestFlagHelpers(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		name  string
		value string
		found bool
	}{
		{[]string{"--out", "a.json", "--json"}, "out", "a.json", true},
		{[]string{"-out=b.json"}, "out", "b.json", true},
		{[]string{"--outx", "c"}, "out", "", false},
		{[]string{"--", "--out", "d"}, "out", "", false},
		{[]string{"--out"}, "out", "", false},
	} {
		v, ok := flagValue(tc.args, tc.name)
		if v != tc.value || ok != tc.found {
			t.Errorf("flagValue(%q, %q) = %q, %v", tc.args, tc.name, v, ok)
		}
	}
	for _, tc := range []struct {
		args []string
		want bool
	}{
		{[]string{"--json"}, true},
		{[]string{"-json=true"}, true},
		{[]string{"--json=false"}, false},
		{[]string{"--jsonx"}, false},
		{[]string{"--", "--json"}, false},
	} {
		if got := boolFlag(tc.args, "json"); got != tc.want {
			t.Errorf("boolFlag(%q) = %v", tc.args, got)
		}
	}
	for _, tc := range []struct{ args, want []string }{
		{[]string{"--out", "a", "--json"}, []string{"--out", "/s/out.json", "--json"}},
		{[]string{"--out=a"}, []string{"--out=/s/out.json"}},
		{[]string{"--json"}, []string{"--json", "--out", "/s/out.json"}},
	} {
		if got := setFlag(tc.args, "out", "/s/out.json"); !slices.Equal(got, tc.want) {
			t.Errorf("setFlag(%q) = %q", tc.args, got)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"results.json", "results.rank1.json"},
		{"dir/run.c3rec", "dir/run.rank1.c3rec"},
		{"noext", "noext.rank1"},
	} {
		if got := rankPath(tc.in, 1); got != tc.want {
			t.Errorf("rankPath(%q) = %q", tc.in, got)
		}
	}
}
