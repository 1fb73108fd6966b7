package tui

import "strings"

// statusKind is the tone of a status line.
type statusKind int

// Status tones.
const (
	statusInfo statusKind = iota
	statusWarn
	statusError
)

// status is the one-line message above the help line.
type status struct {
	kind statusKind
	text string
}

// statusLine renders the status at width w; errors say "error:" so they
// read as such without colour. A message too long for the line is cut at
// a word boundary and says that help (helpKey) shows all of it.
func statusLine(st Styles, s status, w int, helpKey string) string {
	style := st.Dim
	switch s.kind {
	case statusError:
		style = st.Error
	case statusWarn:
		style = st.Warn
	}
	body, _ := cutWords(statusText(s), w, " … ("+helpKey+" shows all)")
	return fit(style.Render(body), w)
}

// statusText is the status as one line of plain text, with the prefix of
// its tone ("error: ", "! ").
func statusText(s status) string {
	text := strings.ReplaceAll(s.text, "\n", " ")
	switch s.kind {
	case statusError:
		return "error: " + text
	case statusWarn:
		return "! " + text
	}
	return text
}

// statusCut reports whether the status line at width w cannot show all of s.
func statusCut(s status, w int) bool { return ansiWidth(statusText(s)) > w }
