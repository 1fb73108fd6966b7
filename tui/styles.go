package tui

import "charm.land/lipgloss/v2"

// Styles are every style the lab draws with. Colour is an extra: each thing
// colour says is also said by a glyph or a word, so the screen reads the
// same under NO_COLOR (where the renderer drops the colours).
type Styles struct {
	Border   lipgloss.Style // panel frames
	Title    lipgloss.Style // panel titles
	Header   lipgloss.Style // the top status bar
	Label    lipgloss.Style // metric names
	Value    lipgloss.Style // metric values
	Dim      lipgloss.Style // secondary text, disabled knobs
	Good     lipgloss.Style // a good outcome (fraction of ideal high)
	Bad      lipgloss.Style // a bad outcome (slower than serial)
	Warn     lipgloss.Style // a knob the backend lacks, a refused key
	Error    lipgloss.Style // an error line
	Compute  lipgloss.Style // the compute op (bars, spans)
	Comm     lipgloss.Style // the collective (bars, spans)
	Util     lipgloss.Style // utilization bars
	Track    lipgloss.Style // the empty part of a bar
	Cursor   lipgloss.Style // the list cursor row
	Active   lipgloss.Style // the scenario on screen
	Key      lipgloss.Style // a key in help
	Overlay  lipgloss.Style // the help overlay frame
	Spinner  lipgloss.Style // the running indicator
	Selected lipgloss.Style // the knob values in the help overlay
	Rec      lipgloss.Style // the recording indicator (● REC)
	Chart    lipgloss.Style // the fraction-of-ideal history line
	Marker   lipgloss.Style // a strategy change on a history chart (┴)
}

// DefaultStyles returns the lab's styles for a dark or light background.
func DefaultStyles(dark bool) Styles {
	ld := lipgloss.LightDark(dark)
	dim := ld(lipgloss.Color("#8a8a8a"), lipgloss.Color("#7c7c7c"))
	accent := ld(lipgloss.Color("#5f3dc4"), lipgloss.Color("#b197fc"))
	return Styles{
		Border:   lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#adb5bd"), lipgloss.Color("#495057"))),
		Title:    lipgloss.NewStyle().Bold(true).Foreground(accent),
		Header:   lipgloss.NewStyle().Bold(true),
		Label:    lipgloss.NewStyle().Foreground(dim),
		Value:    lipgloss.NewStyle().Bold(true),
		Dim:      lipgloss.NewStyle().Foreground(dim),
		Good:     lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#2b8a3e"), lipgloss.Color("#69db7c"))),
		Bad:      lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#c92a2a"), lipgloss.Color("#ff6b6b"))),
		Warn:     lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#e67700"), lipgloss.Color("#ffd43b"))),
		Error:    lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#c92a2a"), lipgloss.Color("#ff6b6b"))),
		Compute:  lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#1864ab"), lipgloss.Color("#4dabf7"))),
		Comm:     lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#d9480f"), lipgloss.Color("#ffa94d"))),
		Util:     lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#087f5b"), lipgloss.Color("#38d9a9"))),
		Track:    lipgloss.NewStyle().Foreground(ld(lipgloss.Color("#dee2e6"), lipgloss.Color("#343a40"))),
		Cursor:   lipgloss.NewStyle().Bold(true).Reverse(true),
		Active:   lipgloss.NewStyle().Bold(true).Foreground(accent),
		Key:      lipgloss.NewStyle().Bold(true).Foreground(accent),
		Overlay:  lipgloss.NewStyle().Foreground(accent),
		Spinner:  lipgloss.NewStyle().Foreground(accent),
		Selected: lipgloss.NewStyle().Bold(true),
		Rec:      lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#c92a2a"), lipgloss.Color("#ff6b6b"))),
		Chart:    lipgloss.NewStyle().Foreground(accent),
		Marker:   lipgloss.NewStyle().Bold(true).Foreground(ld(lipgloss.Color("#e67700"), lipgloss.Color("#ffd43b"))),
	}
}
