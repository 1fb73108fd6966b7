package tui

import (
	"math"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// fit pads or truncates s (which may hold ANSI styling) to exactly w cells.
func fit(s string, w int) string {
	if w <= 0 {
		return ""
	}
	sw := ansi.StringWidth(s)
	switch {
	case sw > w:
		return ansi.Truncate(s, w, "…")
	case sw < w:
		return s + strings.Repeat(" ", w-sw)
	}
	return s
}

// wrapWords wraps s (which may hold ANSI styling) into lines of at most w
// cells, breaking at spaces and hyphens; only a word longer than w is
// broken inside.
func wrapWords(s string, w int) []string {
	if w <= 0 {
		return nil
	}
	return strings.Split(ansi.Wrap(s, w, "-"), "\n")
}

// cutWords shortens plain text s to at most w cells at a word boundary,
// ending it with tail; ok is false when s fits and is returned whole. A
// first word too long for the room is cut inside, as nothing else fits.
func cutWords(s string, w int, tail string) (out string, ok bool) {
	if ansi.StringWidth(s) <= w {
		return s, false
	}
	room := w - ansi.StringWidth(tail)
	if room <= 0 {
		return ansi.Truncate(s, w, ""), true
	}
	head := ansi.Truncate(s, room, "")
	// Keep whole words: back up to the last space unless the cut fell
	// on one.
	if next := s[len(head):]; !strings.HasPrefix(next, " ") {
		if i := strings.LastIndexByte(head, ' '); i > 0 {
			head = head[:i]
		}
	}
	return strings.TrimRight(head, " ") + tail, true
}

// alignRight pads s on the left to w cells (truncating when wider).
func alignRight(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw >= w {
		return fit(s, w)
	}
	return strings.Repeat(" ", w-sw) + s
}

// spread places left and right on one line of w cells, right-aligned,
// truncating left first when both do not fit.
func spread(left, right string, w int) string {
	rw := ansi.StringWidth(right)
	if rw >= w {
		return fit(right, w)
	}
	return fit(left, w-rw) + right
}

// box draws a rounded frame of exactly w x h cells with title in the top
// edge and lines inside, each fitted to the inner width. Lines that do not
// fit vertically are cut, and the last visible line says how many were.
func box(st Styles, title string, lines []string, w, h int) []string {
	out := make([]string, 0, max(h, 0))
	if w < 4 || h < 2 {
		for range h {
			out = append(out, strings.Repeat(" ", max(w, 0)))
		}
		return out
	}
	inner := w - 2
	innerH := h - 2
	// Top edge: "╭─ title ─────╮".
	top := st.Border.Render("╭")
	tw := 0
	if title != "" && inner > 4 {
		t := ansi.Truncate(title, inner-3, "…")
		tw = 3 + ansi.StringWidth(t)
		top += st.Border.Render("─ ") + st.Title.Render(t) + " "
	}
	top += st.Border.Render(strings.Repeat("─", inner-tw) + "╮")
	out = append(out, top)
	if len(lines) > innerH && innerH > 0 {
		cut := len(lines) - innerH + 1
		lines = append(lines[:innerH-1:innerH-1], st.Dim.Render("… "+strconv.Itoa(cut)+" more lines (enlarge the terminal)"))
	}
	side := st.Border.Render("│")
	for i := range innerH {
		l := ""
		if i < len(lines) {
			l = lines[i]
		}
		out = append(out, side+fit(l, inner)+side)
	}
	out = append(out, st.Border.Render("╰"+strings.Repeat("─", inner)+"╯"))
	return out
}

// padLines appends empty lines to lines until it holds n.
func padLines(lines []string, n int) []string {
	for len(lines) < n {
		lines = append(lines, "")
	}
	return lines
}

// eighth returns the left-aligned partial block of i eighths (0..7).
func eighth(i int) string {
	return [...]string{"", "▏", "▎", "▍", "▌", "▋", "▊", "▉"}[i]
}

// bar draws frac (clamped to 0..1) as a bar of w cells with eighth-cell
// resolution: filled "█", the partial cell, then "░" for the rest, so it
// reads without colour too.
func bar(frac float64, w int) (filled, empty string) {
	if w <= 0 {
		return "", ""
	}
	if math.IsNaN(frac) || frac < 0 {
		frac = 0
	}
	frac = min(frac, 1)
	n := int(math.Round(frac * float64(w) * 8))
	full, part := n/8, n%8
	filled = strings.Repeat("█", full)
	used := full
	if part > 0 && full < w {
		filled += eighth(part)
		used++
	}
	return filled, strings.Repeat("░", w-used)
}

// styledBar renders bar with the filled part in style s.
func styledBar(st Styles, s lipgloss.Style, frac float64, w int) string {
	f, e := bar(frac, w)
	return s.Render(f) + st.Track.Render(e)
}
