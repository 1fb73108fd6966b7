package main

import (
	"strings"
	"testing"
	"time"
)

func TestImportProgress(t *testing.T) {
	var b strings.Builder
	clock := time.Unix(0, 0)
	progress, done := importProgress(stdio{errOut: &b, terminal: true}, "/data/rank0.json.gz", func() time.Time { return clock })
	done() // nothing shown yet: nothing to clear
	if b.Len() != 0 {
		t.Fatalf("done before any progress wrote %q", b.String())
	}
	clock = clock.Add(2 * time.Second)
	progress(100<<20, 500<<20) // 50 MB/s, 400 MB left: 8 s
	mustContain(t, "progress", b.String(), "\r\033[Kimport rank0.json.gz  100/500 MB  50 MB/s  ETA 8s")
	b.Reset()
	progress(500<<20, 500<<20)
	if got := b.String(); got != "\r\033[Kimport rank0.json.gz  500/500 MB" {
		t.Errorf("at the end: %q", got)
	}
	b.Reset()
	done()
	if got := b.String(); got != "\r\033[K" {
		t.Errorf("done wrote %q, want the line cleared", got)
	}
}
