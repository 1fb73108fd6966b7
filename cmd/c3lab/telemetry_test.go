package main

import (
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// The stop of a run or sweep waits for recordBatches: without a tap it
// must not wait at all (a range over the nil tap hung every sweep without
// --record on the GPUs), and with one it must end once the tap closes,
// after recording what the tap held.
func TestRecordBatchesEnds(t *testing.T) {
	select {
	case <-recordBatches(nil, nil):
	case <-time.After(5 * time.Second):
		t.Fatal("without a tap, recordBatches did not end: a sweep without --record would hang at its end")
	}

	tap := make(chan telemetry.Batch, 2)
	tap <- telemetry.Batch{Samples: []backends.Sample{{Metric: "power_w", Value: 1}}}
	close(tap)
	select {
	case <-recordBatches(tap, nil): // a nil recorder records nothing, safely
	case <-time.After(5 * time.Second):
		t.Fatal("recordBatches did not end after its tap closed")
	}
}
