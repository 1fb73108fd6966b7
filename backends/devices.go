package backends

// DeviceFacts is what c3lab knows of a GPU model beyond what the driver
// reports: bandwidths it measured or NVIDIA publishes. The cuda backend
// looks its devices up here by name, the simulator's profile of the same
// model starts from them, and both report them in DeviceInfo, so that
// generic code (the bound metric, telemetry, a replay) never looks a
// device up by name itself.
type DeviceFacts struct {
	// Profile is the device profile's key ("h200").
	Profile string
	// Name is the device's name as the driver reports it ("NVIDIA H200").
	Name string
	// HBMBandwidth is the HBM bandwidth c3lab's stream op reaches, read +
	// write, bytes/s; 0 when not measured.
	HBMBandwidth float64
	// LinkBandwidth is one GPU's NVLink bandwidth per direction over all
	// its links, bytes/s.
	LinkBandwidth float64
	// PCIeLinkBandwidth is the PCIe link's raw rate per direction, what
	// NVML's PCIe utilization is a share of, bytes/s.
	PCIeLinkBandwidth float64
}

// KnownDevices lists the device models c3lab has facts for.
func KnownDevices() []DeviceFacts {
	return []DeviceFacts{H200Facts()}
}

// H200Facts are an NVIDIA H200 SXM's.
func H200Facts() DeviceFacts {
	return DeviceFacts{
		Profile: "h200",
		Name:    "NVIDIA H200",
		// Measured: c3lab's stream op moved 3.92-4.04 TB/s on 2026-11-30
		// (backends/cuda/results/2026-11-30-h200x2, NOTES.md).
		HBMBandwidth: 4.0e12,
		// Datasheet: 18 NVLink 4 links of 26.5625 GB/s per direction.
		LinkBandwidth: 18 * 26.5625e9,
		// Datasheet: PCIe Gen 5 x16, 32 GT/s per lane in 128b/130b.
		PCIeLinkBandwidth: 16 * 32e9 / 8 * 128 / 130,
	}
}

// FactsOf returns the facts of the device model the driver calls name, and
// whether c3lab knows it.
func FactsOf(name string) (DeviceFacts, bool) {
	for _, f := range KnownDevices() {
		if f.Name == name {
			return f, true
		}
	}
	return DeviceFacts{}, false
}

// Apply fills d's bandwidths from the facts.
func (f DeviceFacts) Apply(d DeviceInfo) DeviceInfo {
	d.HBMBandwidth, d.LinkBandwidth, d.PCIeLinkBandwidth = f.HBMBandwidth, f.LinkBandwidth, f.PCIeLinkBandwidth
	return d
}
