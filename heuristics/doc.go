// Package heuristics will hold c3lab's strategy rules (the paper's: launch
// the collective first, give it only the SMs it needs to saturate the link,
// move pure-copy collectives to the copy engines) and a tuner that searches
// the knobs on any backend.
//
// It is empty in this build; the rules arrive with the TUI's "why" panel.
package heuristics
