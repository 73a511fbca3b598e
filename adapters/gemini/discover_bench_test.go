package gemini

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// BenchmarkDiscoveryScan is one scan for a headless launch's chat file
// (no session id: every project's chats are listed) beside 2 000 past
// chats in 20 projects: the first scan of a launch reads each one's first
// line, the later ones (a scan per poll and per write while discovering)
// answer from what it read.
func BenchmarkDiscoveryScan(b *testing.B) {
	base := b.TempDir()
	home := filepath.Join(base, ".gemini")
	cwd := filepath.Join(base, "proj")
	for i := range 2000 {
		dir := cwd
		if i%20 != 0 {
			dir = filepath.Join(base, fmt.Sprint("other", i%20))
		}
		p := filepath.Join(home, "tmp", fmt.Sprint("proj-", i%20), "chats", fmt.Sprintf("session-2026-11-23T13-%02d-%08x.jsonl", i%60, i))
		telemetrytest.WriteFile(b, p, `{"sessionId":"`+fmt.Sprintf("%08x", i)+`-0","projectHash":"`+ProjectHash(dir)+`","startTime":"2026-11-23T13:46:35.419Z","kind":"main"}`+"\n")
	}
	launch := time.Now().Add(time.Minute)
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			d := &Discoverer{Home: home, Cwd: cwd, Launch: launch}
			if _, err := d.Candidates(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("later", func(b *testing.B) {
		d := &Discoverer{Home: home, Cwd: cwd, Launch: launch}
		if _, err := d.Candidates(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := d.Candidates(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
