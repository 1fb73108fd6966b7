package cuda

import (
	"errors"
	"fmt"
	"runtime"

	"github.com/c3lab/c3lab/native"
)

// LibraryStatus says whether one NVIDIA library loaded.
type LibraryStatus struct {
	Name      string `json:"name"`
	NeededFor string `json:"needed_for"`
	Found     bool   `json:"found"`
	// Optional libraries add a feature; the backend runs without them.
	Optional bool   `json:"optional,omitempty"`
	Version  string `json:"version,omitempty"`
	Error    string `json:"error,omitempty"`
}

// DeviceReport is the CUDA view of one GPU.
type DeviceReport struct {
	Index       int    `json:"index"`
	Name        string `json:"name"`
	UUID        string `json:"uuid"`
	SMs         int    `json:"sms"`
	MemoryBytes int64  `json:"memory_bytes"`
	Arch        string `json:"arch"`
	CopyEngines int    `json:"copy_engines"`
	// PriorityLeast and PriorityGreatest bound stream priorities.
	PriorityLeast    int  `json:"priority_least"`
	PriorityGreatest int  `json:"priority_greatest"`
	GreenContexts    bool `json:"green_contexts"`
	// PeerAccess lists the GPUs whose memory this one can map.
	PeerAccess []int `json:"peer_access"`
}

// Report is what the doctor finds.
type Report struct {
	// Usable is whether the cuda backend can run here; Reason says why not.
	Usable    bool            `json:"usable"`
	Reason    string          `json:"reason,omitempty"`
	CUDA      string          `json:"cuda_driver_api,omitempty"`
	Libraries []LibraryStatus `json:"libraries"`
	Devices   []DeviceReport  `json:"devices,omitempty"`
}

// cuptiStatus says whether CUPTI, which only C3LAB_CUPTI=1 needs, loads.
func cuptiStatus() LibraryStatus {
	s := LibraryStatus{Name: "libcupti.so", NeededFor: "copy and kernel records on the timeline (optional, C3LAB_CUPTI=1)", Optional: true}
	v, err := native.ProbeCUPTI()
	var ml *native.MissingLibraryError
	switch {
	case err == nil:
		s.Found = true
		if v > 0 {
			s.Version = fmt.Sprintf("API %d", v)
		}
	case errors.As(err, &ml):
		s.Error = ml.Detail
	default:
		s.Error = err.Error()
	}
	return s
}

// Probe loads each library and reads every GPU's facts without running
// anything on them. It never fails: what is missing is in the report.
func Probe() Report {
	ch := make(chan Report)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		ch <- probe()
	}()
	return <-ch
}

func probe() Report {
	var r Report
	lib := func(name, need string, open func() (string, error)) bool {
		v, err := open()
		s := LibraryStatus{Name: name, NeededFor: need, Found: err == nil, Version: v}
		var ml *native.MissingLibraryError
		switch {
		case errors.As(err, &ml):
			s.Error = ml.Detail
		case err != nil:
			s.Error = err.Error()
		}
		r.Libraries = append(r.Libraries, s)
		return err == nil
	}
	var drv *native.Driver
	lib("libcuda.so.1", "the driver API: everything on the GPU", func() (string, error) {
		var err error
		if drv, err = native.OpenDriver(); err != nil {
			return "", err
		}
		if err = drv.Init(); err != nil {
			return "", err
		}
		v, err := drv.Version()
		r.CUDA = fmt.Sprintf("%d.%d", v/1000, v%1000/10)
		return r.CUDA, err
	})
	lib("libcublasLt.so", "GEMMs", func() (string, error) {
		b, err := native.OpenCUBLASLt()
		if err != nil {
			return "", err
		}
		v := b.Version()
		return fmt.Sprintf("%d.%d.%d", v/10000, v/100%100, v%100), nil
	})
	lib("libnccl.so.2", "collectives on the SMs", func() (string, error) {
		n, err := native.OpenNCCL()
		if err != nil {
			return "", err
		}
		v, err := n.Version()
		if err != nil {
			return "", err
		}
		return native.VersionString(v), nil
	})
	lib("libnvrtc.so", "c3lab's own kernels", func() (string, error) {
		n, err := native.OpenNVRTC()
		if err != nil {
			return "", err
		}
		ma, mi := n.Version()
		return fmt.Sprintf("%d.%d", ma, mi), nil
	})
	r.Libraries = append(r.Libraries, cuptiStatus())
	for _, l := range r.Libraries {
		if !l.Found && !l.Optional {
			r.Reason = fmt.Sprintf("%s: %s", l.Name, l.Error)
			return r
		}
	}
	devs, err := probeDevices(drv)
	r.Devices = devs
	switch {
	case err != nil:
		r.Reason = err.Error()
	case len(devs) == 0:
		r.Reason = "the CUDA driver sees no GPU"
	default:
		r.Usable = true
	}
	return r
}

func probeDevices(drv *native.Driver) ([]DeviceReport, error) {
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	var out []DeviceReport
	handles := make([]native.Device, n)
	for i := range n {
		h, err := drv.Device(i)
		if err != nil {
			return out, err
		}
		handles[i] = h
		d := DeviceReport{Index: i, GreenContexts: drv.HasGreenContexts()}
		d.Name, _ = drv.DeviceName(h)
		d.UUID, _ = drv.UUID(h)
		attr := func(a int) int { v, _ := drv.Attribute(h, a); return v }
		d.SMs = attr(native.AttrMultiprocessorCount)
		d.CopyEngines = attr(native.AttrAsyncEngineCount)
		d.Arch = fmt.Sprintf("sm_%d%d", attr(native.AttrComputeCapMajor), attr(native.AttrComputeCapMinor))
		d.GreenContexts = d.GreenContexts && attr(native.AttrComputeCapMajor) >= 9
		d.MemoryBytes, _ = drv.TotalMemory(h)
		ctx, err := drv.PrimaryContext(h)
		if err != nil {
			return out, fmt.Errorf("GPU %d: %w", i, err)
		}
		err = drv.SetCurrent(ctx)
		if err == nil {
			d.PriorityLeast, d.PriorityGreatest, err = drv.PriorityRange()
		}
		drv.ReleasePrimaryContext(h)
		if err != nil {
			return out, fmt.Errorf("GPU %d: %w", i, err)
		}
		out = append(out, d)
	}
	for i := range out {
		for j := range out {
			if i == j {
				continue
			}
			if ok, err := drv.CanAccessPeer(handles[i], handles[j]); err == nil && ok {
				out[i].PeerAccess = append(out[i].PeerAccess, j)
			}
		}
	}
	return out, nil
}

// IsMissingDriver reports whether err means there is no NVIDIA driver or GPU
// here at all (as opposed to a broken one): the case where GPU tests skip
// and "auto" picks the simulator quietly.
func IsMissingDriver(err error) bool {
	var ml *native.MissingLibraryError
	if errors.As(err, &ml) && ml.Library == "libcuda.so.1" {
		return true
	}
	var ce *native.CUDAError
	// CUDA_ERROR_NO_DEVICE (100), CUDA_ERROR_INSUFFICIENT_DRIVER (35).
	return errors.As(err, &ce) && (ce.Code == 100 || ce.Code == 35)
}

// IsMissingDriverReason reports whether a doctor report failed only because
// there is no driver or GPU.
func IsMissingDriverReason(r Report) bool {
	if len(r.Libraries) > 0 && !r.Libraries[0].Found {
		return true
	}
	return !r.Usable && r.Reason == "the CUDA driver sees no GPU"
}

// LibraryVersions maps each library found, and the CUDA driver API, to its
// version, as a recording's header lists them ("cuda": "13.0").
func (r Report) LibraryVersions() map[string]string {
	libs := map[string]string{Name: r.CUDA}
	for _, l := range r.Libraries {
		libs[l.Name] = l.Version
	}
	return libs
}
