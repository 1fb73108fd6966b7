package telemetry

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// GPUState is one GPU's machine state at one moment, as NVML reports it:
// what can make the same work run at another speed (clocks, power,
// temperature, the reasons the driver holds the clocks down). A field NVML
// could not read is 0 and its name is listed in Missing.
type GPUState struct {
	Device int `json:"device"`
	// At is when the state was read.
	At time.Time `json:"at"`
	// SMClockMHz and MemClockMHz are the current SM and memory clocks.
	SMClockMHz  float64 `json:"sm_clock_mhz"`
	MemClockMHz float64 `json:"mem_clock_mhz"`
	// PowerW is the board power draw in watts.
	PowerW float64 `json:"power_w"`
	// TempC is the GPU temperature in degrees Celsius.
	TempC float64 `json:"temp_c"`
	// Throttle is NVML's clocks-event (throttle) reason mask
	// (nvml.ClocksEventReason*); ThrottleNames spells it out.
	Throttle uint64 `json:"throttle"`
	// Missing names the fields NVML could not read on this device.
	Missing []string `json:"missing,omitempty"`
}

// throttleNames names NVML's clocks-event reason bits.
var throttleNames = [...]struct {
	bit  uint64
	name string
}{
	{nvml.ClocksEventReasonGpuIdle, "idle"},
	{nvml.ClocksEventReasonApplicationsClocksSetting, "app-clocks"},
	{nvml.ClocksEventReasonSwPowerCap, "sw-power-cap"},
	{nvml.ClocksThrottleReasonHwSlowdown, "hw-slowdown"},
	{nvml.ClocksEventReasonSyncBoost, "sync-boost"},
	{nvml.ClocksEventReasonSwThermalSlowdown, "sw-thermal"},
	{nvml.ClocksThrottleReasonHwThermalSlowdown, "hw-thermal"},
	{nvml.ClocksThrottleReasonHwPowerBrakeSlowdown, "hw-power-brake"},
	{nvml.ClocksEventReasonDisplayClockSetting, "display-clocks"},
	{nvml.ClocksEventReasonBoardLimit, "board-limit"},
	{nvml.ClocksEventReasonReliability, "reliability"},
}

// ThrottleNames spells out a throttle reason mask ("sw-power-cap,
// hw-thermal"); unknown bits are named by their value; "none" for 0.
func ThrottleNames(mask uint64) string {
	if mask == 0 {
		return "none"
	}
	var out []string
	for _, t := range throttleNames {
		if mask&t.bit != 0 {
			out = append(out, t.name)
			mask &^= t.bit
		}
	}
	for mask != 0 {
		b := uint64(1) << bits.TrailingZeros64(mask)
		out = append(out, fmt.Sprintf("0x%x", b))
		mask &^= b
	}
	return strings.Join(out, ", ")
}

// StateReader reads the machine state of some GPUs through NVML. Create it
// with OpenState; it is cheap enough to read around every run of a
// measurement and every few milliseconds during it (a handful of NVML
// queries per GPU). State changes nothing in the reader, and NVML is
// thread-safe, so it may be called from any goroutine.
type StateReader struct {
	lib  nvml.Interface
	devs []stateDev
	now  func() time.Time
}

type stateDev struct {
	index int
	h     nvml.Device
}

// OpenState initialises NVML for the GPUs listed (NVML indices; empty is
// all). Without NVML (no driver, the simulator's machine) it fails, and
// nothing is read or claimed.
func OpenState(lib nvml.Interface, devices []int) (*StateReader, error) {
	hs, err := openDevices(lib, devices, "no machine state is recorded")
	if err != nil {
		return nil, err
	}
	s := &StateReader{lib: lib, now: time.Now}
	for _, h := range hs {
		s.devs = append(s.devs, stateDev(h))
	}
	return s, nil
}

// openDevices initialises NVML and returns the handles of the GPUs listed
// (NVML indices; empty is all). On failure NVML is shut down again and
// the error ends with what the caller then goes without (off).
func openDevices(lib nvml.Interface, devices []int, off string) ([]stateDev, error) {
	if ret := lib.Init(); ret != nvml.SUCCESS {
		return nil, fmt.Errorf("NVML is unavailable (%v): %s", ret, off)
	}
	n, ret := lib.DeviceGetCount()
	if ret != nvml.SUCCESS {
		lib.Shutdown()
		return nil, fmt.Errorf("NVML cannot count GPUs: %v", ret)
	}
	if len(devices) == 0 {
		for i := range n {
			devices = append(devices, i)
		}
	}
	var out []stateDev
	for _, i := range devices {
		if i < 0 || i >= n {
			lib.Shutdown()
			return nil, fmt.Errorf("GPU %d does not exist; NVML sees %d", i, n)
		}
		h, ret := lib.DeviceGetHandleByIndex(i)
		if ret != nvml.SUCCESS {
			lib.Shutdown()
			return nil, fmt.Errorf("NVML handle of GPU %d: %v", i, ret)
		}
		out = append(out, stateDev{index: i, h: h})
	}
	return out, nil
}

// State reads every GPU's state now.
func (s *StateReader) State() []GPUState {
	if s == nil {
		return nil
	}
	out := make([]GPUState, 0, len(s.devs))
	for _, d := range s.devs {
		st := GPUState{Device: d.index, At: s.now()}
		miss := func(name string) { st.Missing = append(st.Missing, name) }
		if c, ret := d.h.GetClockInfo(nvml.CLOCK_SM); ret == nvml.SUCCESS {
			st.SMClockMHz = float64(c)
		} else {
			miss("sm_clock")
		}
		if c, ret := d.h.GetClockInfo(nvml.CLOCK_MEM); ret == nvml.SUCCESS {
			st.MemClockMHz = float64(c)
		} else {
			miss("mem_clock")
		}
		if p, ret := d.h.GetPowerUsage(); ret == nvml.SUCCESS {
			st.PowerW = float64(p) / 1000
		} else {
			miss("power")
		}
		if t, ret := d.h.GetTemperature(nvml.TEMPERATURE_GPU); ret == nvml.SUCCESS {
			st.TempC = float64(t)
		} else {
			miss("temp")
		}
		if r, ret := d.h.GetCurrentClocksEventReasons(); ret == nvml.SUCCESS {
			st.Throttle = r
		} else {
			miss("throttle")
		}
		out = append(out, st)
	}
	return out
}

// Close shuts NVML down.
func (s *StateReader) Close() error {
	if s == nil {
		return nil
	}
	if ret := s.lib.Shutdown(); ret != nvml.SUCCESS {
		return fmt.Errorf("NVML shutdown: %v", ret)
	}
	return nil
}
