// Package recordings will hold c3lab's session file format, its crash-safe
// recorder and reader, and sample recordings taken on real H200 GPUs.
//
// It is empty in this build: recording and replay arrive with issue 6.
package recordings
