package telemetry

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"

	"github.com/c3lab/c3lab/backends"
)

// stateNode is node (sampler_test.go) with the state queries stubbed too:
// GPU 1 cannot report its temperature.
func stateNode(n int) *mock.Interface {
	lib, _ := node(n, true, 18)
	for i := range n {
		h, _ := lib.DeviceGetHandleByIndex(i)
		d := h.(*mock.Device)
		d.GetClockInfoFunc = func(c nvml.ClockType) (uint32, nvml.Return) {
			if c == nvml.CLOCK_MEM {
				return 3201, nvml.SUCCESS
			}
			return 1980, nvml.SUCCESS
		}
		d.GetTemperatureFunc = func(nvml.TemperatureSensors) (uint32, nvml.Return) {
			if i == 1 {
				return 0, nvml.ERROR_NOT_SUPPORTED
			}
			return 41, nvml.SUCCESS
		}
		d.GetCurrentClocksEventReasonsFunc = func() (uint64, nvml.Return) {
			return nvml.ClocksEventReasonSwPowerCap, nvml.SUCCESS
		}
	}
	return lib
}

func TestStateReader(t *testing.T) {
	lib := stateNode(2)
	s, err := OpenState(lib, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.now = func() time.Time { return time.Unix(5, 0) }
	got := s.State()
	if len(got) != 2 {
		t.Fatalf("%d states", len(got))
	}
	want := GPUState{Device: 0, At: time.Unix(5, 0), SMClockMHz: 1980, MemClockMHz: 3201, PowerW: 612, TempC: 41, Throttle: nvml.ClocksEventReasonSwPowerCap}
	if g := got[0]; g.Device != want.Device || !g.At.Equal(want.At) || g.SMClockMHz != want.SMClockMHz || g.MemClockMHz != want.MemClockMHz ||
		g.PowerW != want.PowerW || g.TempC != want.TempC || g.Throttle != want.Throttle || g.Missing != nil {
		t.Errorf("GPU 0: %+v, want %+v", g, want)
	}
	if g := got[1]; g.TempC != 0 || !slices.Equal(g.Missing, []string{"temp"}) {
		t.Errorf("GPU 1 without a temperature: %+v", g)
	}
	if err := s.Close(); err != nil {
		t.Error(err)
	}
	var none *StateReader
	if none.State() != nil || none.Close() != nil {
		t.Error("a nil reader reads something")
	}
}

func TestOpenStateFails(t *testing.T) {
	noDriver := &mock.Interface{InitFunc: func() nvml.Return { return nvml.ERROR_LIBRARY_NOT_FOUND }}
	if _, err := OpenState(noDriver, nil); err == nil || !strings.Contains(err.Error(), "no machine state") {
		t.Errorf("no driver: %v", err)
	}
	if _, err := OpenState(stateNode(2), []int{3}); err == nil || !strings.Contains(err.Error(), "GPU 3 does not exist") {
		t.Errorf("a GPU past the end: %v", err)
	}
}

func TestThrottleNames(t *testing.T) {
	for mask, want := range map[uint64]string{
		0:                             "none",
		nvml.ClocksEventReasonGpuIdle: "idle",
		nvml.ClocksEventReasonSwPowerCap | nvml.ClocksThrottleReasonHwThermalSlowdown: "sw-power-cap, hw-thermal",
		1 << 20: "0x100000",
	} {
		if got := ThrottleNames(mask); got != want {
			t.Errorf("%#x: %q, want %q", mask, got, want)
		}
	}
}

func batch(at int64, v float64) Batch {
	return Batch{At: time.Unix(0, at), Samples: []backends.Sample{{Device: 0, Metric: backends.MetricSMUtil, Value: v}}}
}

func TestClip(t *testing.T) {
	// Samples every 100 ns: the interval 0-100 at 0.1, 100-200 at 0.9,
	// 200-300 at 0.5.
	bs := []Batch{batch(0, 7), batch(100, 0.1), batch(200, 0.9), batch(300, 0.5)}
	win := func(a, b int64) Window { return Window{Start: time.Unix(0, a), End: time.Unix(0, b)} }
	tests := []struct {
		name    string
		windows []Window
		want    float64
		covered float64
	}{
		{"one interval", []Window{win(100, 200)}, 0.9, 1},
		{"inside one interval", []Window{win(120, 140)}, 0.9, 1},
		{"straddling two", []Window{win(150, 250)}, (0.9*50 + 0.5*50) / 100, 1},
		{"two windows", []Window{win(0, 100), win(200, 300)}, (0.1 + 0.5) / 2, 1},
		{"past the samples", []Window{win(250, 450)}, 0.5, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clip(bs, tt.windows)
			if len(got) != 1 {
				t.Fatalf("got %+v", got)
			}
			if d := got[0].Value - tt.want; d > 1e-12 || d < -1e-12 || got[0].Covered != tt.covered {
				t.Errorf("value %v covered %v, want %v, %v", got[0].Value, got[0].Covered, tt.want, tt.covered)
			}
		})
	}
	for name, ws := range map[string][]Window{"none": nil, "before": {win(-100, -50)}, "empty": {win(150, 150)}, "backwards": {win(200, 100)}} {
		if got := Clip(bs, ws); got != nil {
			t.Errorf("%s: %+v", name, got)
		}
	}
	if got := Clip(bs[:1], []Window{win(0, 300)}); got != nil {
		t.Errorf("one batch has no interval: %+v", got)
	}
}

func TestMonitor(t *testing.T) {
	lib := stateNode(1)
	m, err := OpenMonitor(lib, Config{Interval: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if st := m.State(); len(st) != 1 || st[0].SMClockMHz != 1980 {
		t.Errorf("state %+v", st)
	}
	deadline := time.Now().Add(5 * time.Second)
	var use []Use
	for time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
		use = m.Use([]Window{{Start: start, End: time.Now()}})
		if len(use) > 0 {
			break
		}
	}
	found := false
	for _, u := range use {
		if u.Metric == backends.MetricSMUtil && u.Value == 0.5 {
			found = true
		}
	}
	if !found {
		t.Errorf("no SM use of 0.5 over the window: %+v", use)
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
}

// The monitor's batches reach a tap, the lab's live view, without a
// second sampler; a full tap drops batches there, not in the monitor; the
// tap closes with the monitor.
func TestMonitorTap(t *testing.T) {
	tap := make(chan Batch, 1)
	m, err := OpenMonitorTap(stateNode(1), Config{Interval: time.Millisecond}, tap)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-tap:
		if len(b.Samples) == 0 {
			t.Error("an empty batch on the tap")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no batch on the tap")
	}
	// Nobody reads the tap now: the monitor keeps sampling.
	start := time.Now()
	time.Sleep(30 * time.Millisecond)
	if use := m.Use([]Window{{Start: start, End: time.Now()}}); len(use) == 0 {
		t.Error("the monitor stopped while its tap was full")
	}
	if err := m.Close(); err != nil {
		t.Error(err)
	}
	for range tap { // drains and ends: closed
	}
}
