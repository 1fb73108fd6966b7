// Package tui is c3lab's terminal lab: a bubbletea program where a GPU
// engineer picks a compute + communication scenario, flips the C3 strategy
// knobs (launch order, comm priority, SM partition, CTA cap, DMA offload,
// copy engines) and sees, for each change, the isolated and concurrent
// times, the paper's ideal and realized speedups, per-resource utilization,
// a Gantt timeline of the concurrent run and what bounded each op.
// The utilization and timeline panels show one GPU at a time (the GPU key
// cycles the devices a result reports); the timeline zooms from 1x to 16x
// and pans.
//
// Measurements run in commands (goroutines) through profiler.Measure and
// reach the model as messages tagged with a sequence number, so stale
// results are dropped. Layout is computed once per window size; panels are
// rendered to cached strings on new data or resize, and View only stitches
// them together.
package tui
