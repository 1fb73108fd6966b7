package main

import (
	"strings"
	"testing"

	"github.com/c3lab/c3lab/backends/cuda"
)

// The doctor's last line says what runs on the GPUs it found.
func TestDoctorNote(t *testing.T) {
	dev := func(i int, peers ...int) cuda.DeviceReport {
		return cuda.DeviceReport{Index: i, Name: "NVIDIA H200", PeerAccess: peers}
	}
	for _, tt := range []struct {
		name string
		r    cuda.Report
		want []string
	}{
		{"no driver", cuda.Report{Reason: "libcuda.so.1 not found"}, []string{"no usable GPU (libcuda.so.1 not found)", "simulator"}},
		{"one GPU", cuda.Report{Usable: true, Devices: []cuda.DeviceReport{dev(0)}}, []string{"this one GPU", "host<->device copies", "collectives need 2 GPUs, --backend sim"}},
		{"two GPUs with peer access", cuda.Report{Usable: true, Devices: []cuda.DeviceReport{dev(0, 1), dev(1, 0)}}, []string{"these 2 GPUs by default"}},
		{"no peer access", cuda.Report{Usable: true, Devices: []cuda.DeviceReport{dev(0), dev(1, 0)}}, []string{"these 2 GPUs", "need peer access, which 0->1 lack"}},
	} {
		got := doctorNote(tt.r)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: note %q lacks %q", tt.name, got, w)
			}
		}
	}
}
