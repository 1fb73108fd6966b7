package tui

import (
	"strings"

	"charm.land/bubbles/v2/help"
	tea "charm.land/bubbletea/v2"
)

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

// footerBar is the status line and the help line under it, the help line
// built from the lab's key map.
type footerBar struct {
	size
	help help.Model
}

// Update handles no message: the footer shows the lab's status.
func (f *footerBar) Update(*Model, tea.Msg) (tea.Cmd, bool) { return nil, false }

// View is the status line, then the help line.
func (f *footerBar) View(m *Model) []string {
	h := f.help
	h.SetWidth(f.w)
	h.Styles.ShortKey = m.styles.Key
	h.Styles.ShortDesc = m.styles.Dim
	return []string{
		statusLine(m.styles, m.status, f.w, m.keys.Help.Help().Key),
		fit(h.ShortHelpView(m.keys.ShortHelp()), f.w),
	}
}
