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
// read as such without colour.
func statusLine(st Styles, s status, w int) string {
	s.text = strings.ReplaceAll(s.text, "\n", " ")
	switch s.kind {
	case statusError:
		return fit(st.Error.Render("error: "+s.text), w)
	case statusWarn:
		return fit(st.Warn.Render("! "+s.text), w)
	}
	return fit(st.Dim.Render(s.text), w)
}
