package main

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// reportWidth is the width the text reports are laid out for: a report
// reads in an 80-column terminal without lines the terminal wraps.
const reportWidth = 80

// wrapWords breaks text into lines of at most width runes, between words;
// a word longer than width stands on a line of its own.
func wrapWords(text string, width int) []string {
	var lines []string
	var cur strings.Builder
	n := 0
	for _, w := range strings.Fields(text) {
		wl := utf8.RuneCountInString(w)
		if n > 0 && n+1+wl > width {
			lines = append(lines, cur.String())
			cur.Reset()
			n = 0
		}
		if n > 0 {
			cur.WriteByte(' ')
			n++
		}
		cur.WriteString(w)
		n += wl
	}
	if n > 0 {
		lines = append(lines, cur.String())
	}
	return lines
}

// writeHanging writes text after prefix, wrapped to reportWidth, each
// further line indented to the column where text starts (the prefix's
// width in runes).
func writeHanging(w io.Writer, prefix, text string) {
	indent := utf8.RuneCountInString(prefix)
	lines := wrapWords(text, max(reportWidth-indent, 20))
	if len(lines) == 0 {
		fmt.Fprintln(w, strings.TrimRight(prefix, " "))
		return
	}
	for i, l := range lines {
		if i == 0 {
			fmt.Fprintf(w, "%s%s\n", prefix, l)
			continue
		}
		fmt.Fprintf(w, "%s%s\n", strings.Repeat(" ", indent), l)
	}
}
