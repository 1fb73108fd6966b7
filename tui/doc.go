// Package tui is c3lab's terminal lab: a bubbletea program where a GPU
// engineer picks a compute + communication scenario, flips the C3 strategy
// knobs (launch order, comm priority, SM partition, CTA cap, DMA offload,
// copy engines) and sees, for each change, the isolated and concurrent
// times, the paper's ideal and realized speedups, per-resource utilization,
// a Gantt timeline of the concurrent run and what bounded each op.
// The utilization and timeline panels show one GPU at a time (the GPU key
// cycles the devices a result reports); the timeline zooms from 1x to 16x
// and pans. Every figure of a result with confidence intervals carries its
// "± x"; a fraction of ideal past 100 % inside its interval reads "within
// noise"; a deterministic result (the simulator) says it has none; and
// uplifts whose intervals overlap are not ranked (≈ in the trail, the
// history chart and the sweep heatmap): interval.go.
//
// Measurements run in commands (goroutines) through profiler.Measure and
// reach the model as messages tagged with a sequence number, so stale
// results are dropped.
//
// The lab is built of components (component.go): each panel (header, list,
// metrics, utilization, timeline, why, footer) and each mode (playback,
// live, help, the sweep grid, the composer) is a model with its own size,
// Update and View and its own keys. The root, Model, holds the state they
// share (lab), lays the panels out once per window size, and routes every
// message: a key goes to the top of the mode stack first, down the stack,
// then to the panels' keys and last to the lab's; esc closes the top mode.
// View draws every panel and mode from the state each time (well under
// 5 ms at 200x60): nothing is cached, so no panel can be left stale.
package tui
