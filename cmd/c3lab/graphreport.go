package main

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/report"
	"github.com/c3lab/c3lab/scenarios"
)

// graphShape counts what a scenario written as streams expands to under a
// strategy: its ops, their instances, its streams, and the chunk counts
// of its decomposed pairs (none when every pair runs whole).
type graphShape struct {
	ops, instances, streams int
	chunks                  []int
}

// shapeOf expands sc under st; ok is false when sc is not written as
// streams or does not expand (the caller then says nothing of its graph).
func shapeOf(sc scenarios.Scenario, st scenarios.Strategy) (graphShape, bool) {
	if !sc.IsGraph() {
		return graphShape{}, false
	}
	g, err := sc.Graph(st)
	if err != nil {
		return graphShape{}, false
	}
	s := graphShape{ops: len(g.Ops), instances: len(g.Instances), streams: len(g.Streams)}
	for _, o := range g.Ops {
		if o.Chunks > 1 && !slices.Contains(s.chunks, o.Chunks) {
			s.chunks = append(s.chunks, o.Chunks)
		}
	}
	slices.Sort(s.chunks)
	return s, true
}

// chunkList is "4" or "2 and 4".
func (s graphShape) chunkList() string {
	var c []string
	for _, n := range s.chunks {
		c = append(c, strconv.Itoa(n))
	}
	if len(c) <= 1 {
		return strings.Join(c, "")
	}
	return strings.Join(c[:len(c)-1], ", ") + " and " + c[len(c)-1]
}

// long is the run report's words: "2 streams, 2 ops, 8 instances on 2
// GPUs; decomposed into 4 chunks".
func (s graphShape) long(gpus int) string {
	out := plural(s.streams, "stream") + ", " + plural(s.ops, "op")
	if s.instances != s.ops {
		out += ", " + plural(s.instances, "instance")
	}
	out += " on " + plural(gpus, "GPU")
	if len(s.chunks) > 0 {
		out += "; decomposed into " + s.chunkList() + " chunks"
	}
	return out
}

// short is the scenario list's cell: "2 ops · 8 inst · 2 streams ·
// decomp 4".
func (s graphShape) short() string {
	out := plural(s.ops, "op")
	if s.instances != s.ops {
		out += fmt.Sprintf(" · %d inst", s.instances)
	}
	out += " · " + plural(s.streams, "stream")
	if len(s.chunks) > 0 {
		out += " · decomp " + strings.ReplaceAll(s.chunkList(), " and ", ",")
	}
	return out
}

// graphSummary is the run report's line on a graph: its streams, ops,
// instances and decomposition under st; a plain count of streams where it
// does not expand.
func graphSummary(sc scenarios.Scenario, st scenarios.Strategy) string {
	if s, ok := shapeOf(sc, st); ok {
		return s.long(sc.GPUs)
	}
	return plural(len(sc.Streams), "stream") + " on " + plural(sc.GPUs, "GPU")
}

// writeOpTable prints a graph result's per-op table, grouped by stream:
// each op's label, what it waits for (op[i] for a decomposed pair, chunk
// by chunk), and its time alone and in C3 summed over its instances.
func writeOpTable(w io.Writer, r profiler.Result) {
	rows := report.OpRows(r)
	if len(rows) == 0 {
		return
	}
	streamOf := make([]string, len(rows))
	after := make([]string, len(rows))
	if g, err := r.Scenario.Graph(r.Strategy); err == nil && len(g.Ops) == len(rows) {
		var written []scenarios.StreamOp
		for _, ss := range r.Scenario.Streams {
			written = append(written, ss.Ops...)
		}
		for i, o := range g.Ops {
			if o.Name != r.Ops[i].Name {
				streamOf, after = make([]string, len(rows)), make([]string, len(rows))
				break
			}
			streamOf[i] = g.Streams[o.Stream].Name
			if len(written) != len(g.Ops) {
				continue
			}
			var deps []string
			for _, a := range written[i].After {
				if o.Chunks > 1 && o.FedBy >= 0 && a == g.Ops[o.FedBy].Name {
					a += "[i]"
				}
				deps = append(deps, a)
			}
			after[i] = clipRunes(strings.Join(deps, ","), 16)
		}
	}
	lines := opTableLines(rows, streamOf, after, true)
	for _, l := range lines {
		if utf8.RuneCountInString(l) > reportWidth {
			// Too wide with a column for it: each dependency goes on a
			// line of its own under its op.
			lines = opTableLines(rows, streamOf, after, false)
			break
		}
	}
	fmt.Fprintln(w, "\nper op (times summed over its instances)")
	for _, l := range lines {
		fmt.Fprintln(w, l)
	}
}

// opTableLines lays the per-op table out, each op under its stream's
// name, what it waits for in a column (column) or on a line below it.
func opTableLines(rows []report.OpRow, streamOf, after []string, column bool) []string {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	h := report.OpHeader()
	if column {
		fmt.Fprintf(tw, "%s\tafter\t%s\t%s\t%s\n", h[0], h[2], h[3], h[4])
	} else {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", h[0], h[2], h[3], h[4])
	}
	prev := "\x00"
	for i, o := range rows {
		if streamOf[i] != prev && streamOf[i] != "" {
			fmt.Fprintf(tw, "stream %s\t\t\t\t\n", streamOf[i])
		}
		prev = streamOf[i]
		indent := ""
		if streamOf[i] != "" {
			indent = "  "
		}
		if column {
			fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\t%s\n", indent, o.Op, after[i], o.Alone, o.InC3, o.Slowdown)
			continue
		}
		fmt.Fprintf(tw, "%s%s\t%s\t%s\t%s\n", indent, o.Op, o.Alone, o.InC3, o.Slowdown)
		if after[i] != "" {
			fmt.Fprintf(tw, "%s    after %s\t\t\t\n", indent, after[i])
		}
	}
	tw.Flush()
	var out []string
	for _, l := range strings.Split(strings.TrimRight(buf.String(), "\n"), "\n") {
		out = append(out, strings.TrimRight(l, " "))
	}
	return out
}

// clipRunes shortens s to n runes, ending in … when it cut.
func clipRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}
