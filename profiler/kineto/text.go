package kineto

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/c3lab/c3lab/profiler/report"
)

// DefaultWidth is the width the text report is laid out for when the
// caller has no terminal width.
const DefaultWidth = 100

// MaxKinds is how many kinds of ops the text report lists per rank.
const MaxKinds = 12

// WriteText writes the reports for people, laid out within width columns.
func WriteText(w io.Writer, reps []*Report, width int) error {
	width = max(width, 60)
	var b strings.Builder
	for i, r := range reps {
		if i > 0 {
			b.WriteString("\n")
		}
		writeOne(&b, r, width)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func writeOne(b *strings.Builder, r *Report, width int) {
	head := "rank ?"
	if r.Rank >= 0 {
		head = fmt.Sprintf("rank %d", r.Rank)
		if r.WorldSize > 0 {
			head += fmt.Sprintf(" of %d", r.WorldSize)
		}
	}
	for _, s := range []string{r.Device, r.File, r.Selection} {
		if s != "" {
			head += " · " + s
		}
	}
	line(b, width, head)
	row := func(k, v string) {
		for i, l := range wrap(v, width-16) {
			if i == 0 {
				line(b, width, fmt.Sprintf("  %-13s %s", k, l))
			} else {
				line(b, width, strings.Repeat(" ", 16)+l)
			}
		}
	}
	row("GPU activity", fmt.Sprintf("%s span · %s busy · %s idle · %d compute ops · %d comm ops",
		report.Duration(float64(r.SpanNs)), report.Duration(float64(r.BusyNs)), report.Duration(float64(r.IdleNs)), r.ComputeOps, r.CommOps))
	if len(r.Steps) > 0 && !strings.HasPrefix(r.Selection, "ProfilerStep#") {
		row("steps", fmt.Sprintf("%d in the trace (%s..%s); --step N picks one", len(r.Steps),
			strings.TrimPrefix(r.Steps[0], "ProfilerStep#"), strings.TrimPrefix(r.Steps[len(r.Steps)-1], "ProfilerStep#")))
	}
	if r.Overlap == nil {
		row("overlap", "no communication in "+r.Selection)
	} else {
		v := report.Percent(*r.Overlap) + " of communication time under compute"
		if r.HTAOverlap != nil {
			v += " · HTA's (NCCL vs kernels) " + report.Percent(*r.HTAOverlap)
		}
		row("overlap", v)
		row("exposed comm", fmt.Sprintf("%s of %s communication", report.Duration(float64(r.ExposedCommNs)), report.Duration(float64(r.CommNs))))
	}
	row("T_serial", fmt.Sprintf("%s · compute %s + comm %s; alone times from the trace for %d of %d ops",
		report.Duration(r.TSerialNs), report.Duration(r.TSerialComputeNs), report.Duration(r.TSerialCommNs), r.AloneFromTrace, r.ComputeOps+r.CommOps))
	row("T_ideal", report.Duration(r.TIdealNs)+" · streams in order at those times; no waits between streams in the trace")
	row("T_c3", report.Duration(r.TC3Ns)+" · the GPU's busy time")
	f := report.NA
	if r.FractionOfIdeal != nil {
		f = report.Percent(*r.FractionOfIdeal)
	}
	row("speedup", fmt.Sprintf("ideal %s · realized %s · %s of ideal", report.Ratio(r.IdealSpeedup), report.Ratio(r.RealizedSpeedup), f))

	line(b, width, "  kinds of ops, longest first (alone: no op of the other role beside it)")
	cols := []string{"role", "n", "total", "alone", "overlapped", "slowdown"}
	widths := []int{7, 5, 8, 15, 15, 8}
	fixed := 4
	for _, w := range widths {
		fixed += w + 1
	}
	// Where the kinds' names do not fit beside the figures, each name
	// takes a line of its own with its figures under it.
	keyW, own := min(width-fixed, 56), false
	if keyW < 26 {
		keyW, own = 2, true
	}
	hdr := fmt.Sprintf("    %-*s", keyW, "kind")
	if own {
		hdr = "    " + strings.Repeat(" ", keyW)
	}
	for i, c := range cols {
		hdr += fmt.Sprintf(" %*s", widths[i], c)
	}
	line(b, width, hdr)
	for i, c := range r.Classes {
		if i == MaxKinds {
			line(b, width, fmt.Sprintf("    … %d more kinds (--json lists them all)", len(r.Classes)-MaxKinds))
			break
		}
		sd := "—"
		if c.Slowdown != nil {
			sd = report.Ratio(*c.Slowdown)
		}
		key := c.Key
		if c.Unmapped != "" {
			key = "?" + key
		}
		vals := []string{string(c.Role), fmt.Sprint(c.Count), report.Duration(float64(c.TotalNs)),
			medianN(c.AloneMedianNs, c.AloneN), medianN(c.OverlappedMedianNs, c.OverlappedN), sd}
		s := fmt.Sprintf("    %-*s", keyW, fit(key, keyW))
		if own {
			line(b, width, "    "+key)
			s = "    " + strings.Repeat(" ", keyW)
		}
		for i, v := range vals {
			s += fmt.Sprintf(" %*s", widths[i], v)
		}
		line(b, width, s)
	}
	if r.Unmapped > 0 {
		line(b, width, fmt.Sprintf("  ? no scenario op for %d of them (%s); by kind:", r.Unmapped, report.Duration(float64(r.UnmappedNs))))
		n := 0
		for _, c := range r.Classes {
			if c.Unmapped == "" {
				continue
			}
			if n == MaxKinds {
				line(b, width, "    … (--json lists them all)")
				break
			}
			n++
			for i, l := range wrap(fmt.Sprintf("%s ×%d: %s", c.Key, c.Count, c.Unmapped), width-6) {
				if i == 0 {
					line(b, width, "    "+l)
				} else {
					line(b, width, "      "+l)
				}
			}
		}
	}
}

func medianN(v float64, n int) string {
	if n == 0 {
		return "—"
	}
	return fmt.Sprintf("%s (%d)", report.Duration(v), n)
}

// wrap breaks text into lines of at most width columns at spaces (a word
// longer than that is cut by line).
func wrap(text string, width int) []string {
	width = max(width, 20)
	var out []string
	cur := ""
	for _, w := range strings.Fields(text) {
		switch {
		case cur == "":
			cur = w
		case utf8.RuneCountInString(cur)+1+utf8.RuneCountInString(w) <= width:
			cur += " " + w
		default:
			out = append(out, cur)
			cur = w
		}
	}
	if cur != "" || len(out) == 0 {
		out = append(out, cur)
	}
	return out
}

// fit cuts s to n columns, marking the cut.
func fit(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func line(b *strings.Builder, width int, s string) {
	b.WriteString(fit(s, width))
	b.WriteString("\n")
}

// jsonReport is the JSON form: the reports and the version of the format.
type jsonReport struct {
	Format  string    `json:"format"`
	Reports []*Report `json:"ranks"`
}

// WriteJSON writes the reports as one JSON object ("format":
// "c3lab-import/1", "ranks": [...]); undefined ratios are null.
func WriteJSON(w io.Writer, reps []*Report) error {
	for _, r := range reps {
		for _, p := range []*float64{&r.IdealSpeedup, &r.RealizedSpeedup} {
			if math.IsNaN(*p) || math.IsInf(*p, 0) {
				*p = 0
			}
		}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(jsonReport{Format: "c3lab-import/1", Reports: reps})
}
