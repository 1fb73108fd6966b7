package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/scenarios"
)

// readmeSection returns the README's section under the heading that ends
// in title, up to the next heading of any level.
func readmeSection(t *testing.T, title string) string {
	t.Helper()
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	in, fence := false, false
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "```") {
			fence = !fence
		}
		if !fence && strings.HasPrefix(l, "#") {
			if in {
				break
			}
			in = strings.HasSuffix(l, " "+title)
			continue
		}
		if in {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		t.Fatalf("README.md has no section %q", title)
	}
	return strings.Join(out, "\n")
}

// fenced returns the blocks of a section fenced as lang, in order.
func fenced(section, lang string) []string {
	var blocks []string
	var cur []string
	in := false
	for _, l := range strings.Split(section, "\n") {
		switch {
		case !in && l == "```"+lang:
			in, cur = true, nil
		case in && l == "```":
			in = false
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
		case in:
			cur = append(cur, l)
		}
	}
	return blocks
}

// The README's section on scenarios written as streams stays true: its
// YAML example reads (scenarios.Parse), is the TP all-gather feeding a GEMM
// decomposed into 4 chunks it says it is, and runs; every c3lab command
// the section gives (but the lab, which needs a terminal) runs on the
// simulator, my.yaml being the example.
func TestREADMEStreamScenarios(t *testing.T) {
	section := readmeSection(t, "Scenarios as streams (format 2)")
	yamls := fenced(section, "yaml")
	if len(yamls) != 1 {
		t.Fatalf("the section has %d YAML examples, want 1", len(yamls))
	}
	sc, err := scenarios.Parse([]byte(yamls[0]), "README.md", sim.H200().Limits())
	if err != nil {
		t.Fatalf("the README's example does not read: %v\n%s", err, yamls[0])
	}
	g, err := sc.Graph(sc.Strategy)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Ops) != 2 || len(g.Instances) != 8 {
		t.Fatalf("the example expands to %d ops, %d instances; want 2 and 8 (4 chunks each)", len(g.Ops), len(g.Instances))
	}
	ag, gemm := g.Ops[0], g.Ops[1]
	if ag.Role != scenarios.RoleComm || ag.Comm.Collective != scenarios.AllGather || gemm.Compute.Kind != scenarios.GEMM ||
		gemm.Chunks != 4 || gemm.FedBy != 0 || ag.Feeds != 1 {
		t.Errorf("the example is not an all-gather feeding a GEMM in 4 chunks: %+v", g.Ops)
	}
	file := filepath.Join(t.TempDir(), "my.yaml")
	if err := os.WriteFile(file, []byte(yamls[0]), 0o644); err != nil {
		t.Fatal(err)
	}

	cmds := 0
	for _, block := range fenced(section, "sh") {
		for _, l := range strings.Split(block, "\n") {
			l, _, _ = strings.Cut(l, "#")
			args, ok := strings.CutPrefix(strings.TrimSpace(l), "go run ./cmd/c3lab ")
			if !ok {
				continue
			}
			a := strings.Fields(strings.ReplaceAll(args, "my.yaml", file))
			switch a[0] {
			case "lab":
				continue
			case "run":
				a = append(a, "--backend", "sim", "--reps", "1")
			case "scenarios":
				if len(a) == 1 {
					a = append(a, "--backend", "sim")
				}
			}
			cmds++
			code, out, errOut := call(t, a...)
			if code != 0 || out == "" {
				t.Errorf("c3lab %s: exit %d\n%s%s", strings.Join(a, " "), code, out, errOut)
			}
		}
	}
	if cmds < 3 {
		t.Errorf("the section gives %d c3lab commands to run; want its run, scenarios and show lines", cmds)
	}
}
