// Command gen writes native/shim_gen.h and native/shim_gen.c from the
// declaration table native/shim.api: the function-pointer table of each
// NVIDIA library the shim loads, its opener (dlopen, then dlsym of every
// call) and a c3_* wrapper per call for cgo. Run it with
// `go generate ./native`; a test fails when the committed files differ
// from what it writes.
//
// Usage (from native/): go run ./internal/gen [-table shim.api] [-header shim_gen.h] [-source shim_gen.c]
package main

import (
	"bytes"
	"flag"
	"fmt"
	"os"
)

func main() {
	table := flag.String("table", "shim.api", "the declaration table")
	header := flag.String("header", "shim_gen.h", "the header to write")
	source := flag.String("source", "shim_gen.c", "the C source to write")
	flag.Parse()
	if err := run(*table, *header, *source); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}

func run(table, header, source string) error {
	in, err := os.ReadFile(table)
	if err != nil {
		return fmt.Errorf("reading the declaration table: %w", err)
	}
	h, s, err := generate(bytes.NewReader(in))
	if err != nil {
		return fmt.Errorf("%s: %w", table, err)
	}
	for path, b := range map[string][]byte{header: h, source: s} {
		if err := os.WriteFile(path, b, 0o644); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
	}
	return nil
}
