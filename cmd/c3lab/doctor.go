package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/c3lab/c3lab/backends/cuda"
	"github.com/c3lab/c3lab/backends/sim"
	"github.com/c3lab/c3lab/profiler/doctor"
)

// doctorReport is `c3lab doctor --json`.
type doctorReport struct {
	CUDA    cuda.Report       `json:"cuda"`
	NVML    doctor.NVMLReport `json:"nvml"`
	Backend string            `json:"default_backend"`
	Note    string            `json:"note"`
}

func runDoctor(_ context.Context, args []string, s stdio) error {
	fs := newFlags("doctor", "doctor [--json]", s)
	asJSON := fs.Bool("json", false, "print the report as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	r := doctorReport{CUDA: cuda.Probe(), NVML: doctor.ProbeNVML(nvml.New()), Backend: cuda.Name}
	if !r.CUDA.Usable {
		r.Backend = sim.Name
	}
	r.Note = doctorNote(r.CUDA)
	if *asJSON {
		return writeJSON(s.out, r)
	}
	w := s.out
	fmt.Fprintf(w, "cuda driver API  %s\n", orDash(r.CUDA.CUDA))
	if r.NVML.Available {
		fmt.Fprintf(w, "driver           %s (NVML %s)\n", r.NVML.Driver, r.NVML.Version)
	} else {
		fmt.Fprintf(w, "NVML             %s\n", r.NVML.Error)
	}
	fmt.Fprintln(w, "libraries")
	for _, l := range r.CUDA.Libraries {
		mark := "ok     " + l.Version
		switch {
		case !l.Found && l.Optional:
			mark = "absent  " + l.Error
		case !l.Found:
			mark = "MISSING " + l.Error
		}
		fmt.Fprintf(w, "  %-16s %-40s (%s)\n", l.Name, mark, l.NeededFor)
	}
	nv := map[int]doctor.NVMLDevice{}
	for _, d := range r.NVML.Devices {
		nv[d.Index] = d
	}
	for _, d := range r.CUDA.Devices {
		fmt.Fprintf(w, "GPU %d  %s (%s), %s, %d SMs, %.0f GiB, %d copy engines\n", d.Index, d.Name, d.UUID, d.Arch, d.SMs, float64(d.MemoryBytes)/(1<<30), d.CopyEngines)
		fmt.Fprintf(w, "       stream priorities %d (lowest) .. %d (highest), green contexts %s, peer access to %v\n",
			d.PriorityLeast, d.PriorityGreatest, yesNo(d.GreenContexts), d.PeerAccess)
		if n, ok := nv[d.Index]; ok {
			var peers []string
			for p, links := range n.NVLinkPeers {
				name := fmt.Sprintf("GPU %d", p)
				if p < 0 {
					name = "switch"
				}
				peers = append(peers, fmt.Sprintf("%d to %s", links, name))
			}
			fmt.Fprintf(w, "       NVLink %d active links (%s), GPM %s\n", n.NVLinksActive, strings.Join(peers, ", "), yesNo(n.GPM))
		}
	}
	fmt.Fprintln(w, r.Note)
	return nil
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// doctorNote says what c3lab runs where it finds the GPUs of r: the
// simulator without one; on one GPU its host copies (collectives need a
// second GPU); on several every scenario, and whether copy-engine
// collectives can reach every peer.
func doctorNote(r cuda.Report) string {
	n := len(r.Devices)
	switch {
	case !r.Usable:
		return "no usable GPU (" + r.Reason + "): c3lab uses the simulator (" + strings.ToUpper(sim.DefaultProfile().Name) + " profile)"
	case n == 1:
		return "c3lab runs on this one GPU (--backend cuda) the C3 one GPU has: GEMMs and stream ops next to host<->device copies (the h2d, d2h and swap scenarios; c3lab scenarios marks them); collectives need 2 GPUs, --backend sim runs them on a simulated node"
	}
	var missing []string
	for _, d := range r.Devices {
		for q := range n {
			if q != d.Index && !slices.Contains(d.PeerAccess, q) {
				missing = append(missing, fmt.Sprintf("%d->%d", d.Index, q))
			}
		}
	}
	note := fmt.Sprintf("c3lab runs on these %d GPUs by default (--backend cuda)", n)
	if len(missing) > 0 {
		note += "; copy-engine collectives (--comm-engine dma) need peer access, which " + strings.Join(missing, ", ") + " lack"
	}
	return note
}
