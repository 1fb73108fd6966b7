package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/c3lab/c3lab/profiler/sweepfile"
)

// version is the release version; builds from a checkout add the VCS revision.
const version = "0.1.0-dev"

// currentVersion is this build of c3lab, as files it writes record it.
func currentVersion() sweepfile.Build {
	v := sweepfile.Build{Version: version, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				v.Revision = s.Value
			}
		}
	}
	return v
}

func runVersion(_ context.Context, args []string, s stdio) error {
	fs := newFlags("version", "version [--json]", s)
	asJSON := fs.Bool("json", false, "print the version as JSON")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	v := currentVersion()
	if *asJSON {
		return writeJSON(s.out, v)
	}
	rev := ""
	if v.Revision != "" {
		rev = " (" + v.Revision[:min(12, len(v.Revision))] + ")"
	}
	_, err := fmt.Fprintf(s.out, "c3lab %s%s, %s, %s\n", v.Version, rev, v.Go, v.Platform)
	return err
}
