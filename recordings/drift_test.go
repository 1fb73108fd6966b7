package recordings

import (
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/c3lab/c3lab/backends"
	"github.com/c3lab/c3lab/profiler"
	"github.com/c3lab/c3lab/profiler/telemetry"
)

// testDrift is a machine record with readings during the runs: the GPU at
// 1980 MHz around every run and at its power cap during the compute runs.
func testDrift(during bool) *profiler.Drift {
	at := time.Date(2026, 12, 2, 1, 0, 0, 0, time.UTC)
	around := []telemetry.GPUState{{Device: 0, At: at, SMClockMHz: 1980, MemClockMHz: 3201, PowerW: 90, TempC: 40, Throttle: 1}}
	d := &profiler.Drift{}
	for k, m := range []backends.Mode{backends.ModeCompute, backends.ModeComm, backends.ModeConcurrent} {
		run := profiler.DriftRun{Round: 0, Mode: m, Start: around, End: around}
		if during {
			run.During = []profiler.DuringState{{Device: 0, Readings: 10 + k, SMClockMHz: 1560 + 200*float64(k), MinSMClockMHz: 1545,
				MemClockMHz: 3201, PowerW: 693, TempC: 55, MaxTempC: 57, Throttle: 4}}
			if k == 1 {
				run.During[0].Missing = []string{"temp"}
			}
		}
		d.Runs = append(d.Runs, run)
	}
	if during {
		d.DuringIntervalNs = 2e6
	}
	d.Check(profiler.DefaultDriftThresholds())
	return d
}

// TestDriftDuringRecorded: the readings during the runs survive a record
// and replay, copied when recorded (the caller may change them after);
// a record made before them reads back without them and says nothing of
// the clocks during the runs.
func TestDriftDuringRecorded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "during.c3rec")
	rec, err := Create(path, testHeader(), Options{FlushEvery: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	r := testResult()
	r.Drift = testDrift(true)
	rec.Result(r)
	r.Drift.Runs[0].During[0].SMClockMHz = 9
	r.Drift.Runs[1].During[0].Missing[0] = "x"
	r.Drift.During[0].Readings = 9
	old := testResult()
	old.Drift = testDrift(false)
	rec.Result(old)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadAll(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Events) != 2 || got.Events[0].Result == nil || got.Events[1].Result == nil {
		t.Fatalf("events %+v", got.Events)
	}
	want := testDrift(true)
	if d := got.Events[0].Result.Drift; !reflect.DeepEqual(d, want) {
		t.Errorf("replayed drift\n%+v\nwant\n%+v", d, want)
	}
	if note := got.Events[0].Result.Drift.ClockNote(); note == "" || note != want.ClockNote() {
		t.Errorf("replayed note %q", note)
	}
	d := got.Events[1].Result.Drift
	if !reflect.DeepEqual(d, testDrift(false)) || d.During != nil || d.Runs[0].During != nil || d.ClockNote() != "" {
		t.Errorf("a record without readings during the runs: %+v", d)
	}
}

// TestOldRecordingLoads: a recording made before the readings during the
// runs loads as it did, with nothing said of them.
func TestOldRecordingLoads(t *testing.T) {
	got, err := ReadAll(filepath.Join("testdata", "v1-strategies.c3rec"))
	if err != nil {
		t.Fatal(err)
	}
	results := 0
	for _, ev := range got.Events {
		if ev.Result == nil {
			continue
		}
		results++
		if d := ev.Result.Drift; d != nil && (d.During != nil || d.ClockNote() != "") {
			t.Errorf("%s: clocks during the runs in an old recording: %+v", ev.Result.Scenario.Name, d.During)
		}
	}
	if results != 14 || got.Damage != nil {
		t.Errorf("%d results, damage %v", results, got.Damage)
	}
}
