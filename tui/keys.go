package tui

import (
	"strings"

	"charm.land/bubbles/v2/key"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/scenarios"
)

// KeyMap holds every key binding of the lab; the short help line and the
// help overlay are built from it.
type KeyMap struct {
	Up        key.Binding
	Down      key.Binding
	Pick      key.Binding
	NextPanel key.Binding

	Launch   key.Binding
	Priority key.Binding
	SMsDown  key.Binding
	SMsUp    key.Binding
	CTAs     key.Binding
	DMA      key.Binding
	CEs      key.Binding
	// Decompose cycles the decompose knob (scenarios written as streams).
	Decompose key.Binding

	// GPU cycles the device the timeline and utilization panels show; the
	// zoom and pan keys move the timeline's window. They act on the main
	// screen only.
	GPU       key.Binding
	ZoomIn    key.Binding
	ZoomOut   key.Binding
	ZoomReset key.Binding
	PanLeft   key.Binding
	PanRight  key.Binding

	Advice  key.Binding
	Live    key.Binding
	Sweep   key.Binding
	Compose key.Binding
	Rerun   key.Binding
	Record  key.Binding
	Help    key.Binding
	Close   key.Binding
	Quit    key.Binding
}

// DefaultKeyMap returns the lab's default bindings.
func DefaultKeyMap() KeyMap {
	return KeyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Pick:      key.NewBinding(key.WithKeys("enter"), key.WithHelp("enter", "run scenario")),
		NextPanel: key.NewBinding(key.WithKeys("tab"), key.WithHelp("tab", "next panel (small screens)")),
		Launch:    key.NewBinding(key.WithKeys("o"), key.WithHelp("o", "order")),
		Priority:  key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "prio")),
		SMsDown:   key.NewBinding(key.WithKeys("["), key.WithHelp("[", "SMs -")),
		SMsUp:     key.NewBinding(key.WithKeys("]"), key.WithHelp("]", "SMs +")),
		CTAs:      key.NewBinding(key.WithKeys("c"), key.WithHelp("c", "CTAs")),
		DMA:       key.NewBinding(key.WithKeys("d"), key.WithHelp("d", "dma")),
		CEs:       key.NewBinding(key.WithKeys("e"), key.WithHelp("e", "CEs")),
		Decompose: key.NewBinding(key.WithKeys("D"), key.WithHelp("D", "chunks")),
		GPU:       key.NewBinding(key.WithKeys("g"), key.WithHelp("g", "GPU")),
		ZoomIn:    key.NewBinding(key.WithKeys("+", "="), key.WithHelp("+", "zoom in")),
		ZoomOut:   key.NewBinding(key.WithKeys("-"), key.WithHelp("-", "zoom out")),
		ZoomReset: key.NewBinding(key.WithKeys("0"), key.WithHelp("0", "reset zoom")),
		PanLeft:   key.NewBinding(key.WithKeys("<"), key.WithHelp("<", "pan left")),
		PanRight:  key.NewBinding(key.WithKeys(">"), key.WithHelp(">", "pan right")),
		Advice:    key.NewBinding(key.WithKeys("a"), key.WithHelp("a", "apply advice")),
		Live:      key.NewBinding(key.WithKeys("l"), key.WithHelp("l", "live (back to back)")),
		Sweep:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "sweep heatmap")),
		Compose:   key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "compose a scenario")),
		Rerun:     key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "rerun")),
		Record:    key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "record")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "help")),
		Close:     key.NewBinding(key.WithKeys("esc"), key.WithHelp("esc", "close help")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// withCapabilities marks the bindings of knobs the backend cannot apply
// "n/a" in their help. They stay bound, so pressing one says why in the
// status line instead of doing nothing. Which key needs what comes from
// the knob table.
func (k KeyMap) withCapabilities(c backends.Capabilities) KeyMap {
	bindings := k.bindingsByAction()
	for _, kk := range knobKeys(scenarios.StrategyKnobs()) {
		if b, ok := bindings[kk.key.Action]; ok && !kk.usable(c) {
			b.SetHelp(b.Help().Key, b.Help().Desc+" n/a")
		}
	}
	return k
}

// pair joins two bindings into one help item, "a/b desc".
func pair(a, b key.Binding, desc string) key.Binding {
	return key.NewBinding(
		key.WithKeys(append(a.Keys(), b.Keys()...)...),
		key.WithHelp(a.Help().Key+"/"+b.Help().Key, desc),
	)
}

// ShortHelp is the one-line help at the bottom of the screen: help and
// quit first, so they survive truncation, and the two SM keys (and the two
// zoom keys) as one item each.
func (k KeyMap) ShortHelp() []key.Binding {
	sms := pair(k.SMsDown, k.SMsUp, strings.Replace(k.SMsDown.Help().Desc, " -", "", 1))
	zoom := pair(k.ZoomIn, k.ZoomOut, "zoom")
	return []key.Binding{k.Help, k.Quit, k.Launch, k.Priority, sms, k.CTAs, k.DMA, k.CEs, k.Rerun, k.Record, k.GPU, zoom}
}

// FullHelp is the help overlay, one column per group.
func (k KeyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{
		{k.Up, k.Down, k.Pick, k.NextPanel},
		{k.Launch, k.Priority, k.SMsDown, k.SMsUp, k.CTAs, k.DMA, k.CEs, k.Decompose},
		{k.GPU, k.ZoomIn, k.ZoomOut, k.ZoomReset, k.PanLeft, k.PanRight},
		{k.Advice, k.Live, k.Sweep, k.Compose, k.Rerun, k.Record, k.Help, k.Close, k.Quit},
	}
}
