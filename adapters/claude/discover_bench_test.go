package claude_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// BenchmarkDiscoveryScan is one scan for a pinned launch's transcript
// beside 2 000 past transcripts of the same project folder (a folder
// that many one-shots ran in): before the launch's file is there (the
// first scan of a launch, and a later one), and once it is.
func BenchmarkDiscoveryScan(b *testing.B) {
	cfg, cwd := b.TempDir(), b.TempDir()
	dir := filepath.Join(cfg, "projects", claude.ProjectDirName(cwd))
	for i := range 2000 {
		telemetrytest.WriteFile(b, filepath.Join(dir, fmt.Sprintf("%08x-0000-4000-8000-000000000000.jsonl", i)), `{"type":"mode","sessionId":"x"}`+"\n")
	}
	const sid = "feedface-0000-4000-8000-000000000000"
	launch := time.Now().Add(time.Minute)
	scan := func(b *testing.B, d *claude.Discoverer, want int) {
		if got, err := d.Candidates(); err != nil || len(got) != want {
			b.Fatalf("candidates %v, %v; want %d", got, err, want)
		}
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			scan(b, &claude.Discoverer{ConfigDir: cfg, Cwd: cwd, Launch: launch, SessionID: sid}, 0)
		}
	})
	b.Run("later", func(b *testing.B) {
		d := &claude.Discoverer{ConfigDir: cfg, Cwd: cwd, Launch: launch, SessionID: sid}
		scan(b, d, 0)
		for b.Loop() {
			scan(b, d, 0)
		}
	})
	telemetrytest.WriteFile(b, filepath.Join(dir, sid+".jsonl"), `{"type":"mode","sessionId":"`+sid+`"}`+"\n")
	b.Run("found", func(b *testing.B) {
		d := &claude.Discoverer{ConfigDir: cfg, Cwd: cwd, Launch: launch, SessionID: sid}
		scan(b, d, 1)
		for b.Loop() {
			scan(b, d, 1)
		}
	})
}
