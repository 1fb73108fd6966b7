// Package recordings holds c3lab's session file format, its crash-safe
// recorder and its reader.
//
// A recording is a small preamble (magic and schema version), a header
// frame describing where the session ran, and an append-only stream of
// checksummed frames, one per event: scenario and strategy changes,
// iteration results, span and telemetry batches, user markers and errors.
// FORMAT.md describes the bytes.
//
// A Recorder takes events off the caller's path (each call queues and
// returns) and writes them from its own goroutine, at least once a second.
// A crash leaves a readable prefix; a write failure stops the recorder, not
// the run. A Reader returns every intact frame's events; where the file is
// damaged it says which byte range and why, as a *DamageError, and goes on
// from the next intact frame.
package recordings
