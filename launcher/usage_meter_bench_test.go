package launcher

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/claude"
)

// BenchmarkUsageMeterCatchUp: what a turn's end costs the loop when the
// meter reads a transcript of 1,000 recorded turns (the compaction
// sample, 7 lines a turn) from its start: the figure per MB read.
func BenchmarkUsageMeterCatchUp(b *testing.B) {
	lines := shifted(&testing.T{}, filepath.Join("..", "internal", "usage", "testdata", "home", ".claude", "projects", "-home-dev-project", "compact.jsonl"), time.Now())
	one := strings.Join(lines, "\n") + "\n"
	path := filepath.Join(b.TempDir(), "transcript.jsonl")
	if err := os.WriteFile(path, []byte(strings.Repeat(one, 1000)), 0o600); err != nil {
		b.Fatal(err)
	}
	ad := adapters.AdapterOf(claude.Harness{})
	src, err := ad.Telemetry().TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=" + b.TempDir()}, Cwd: b.TempDir()})
	if err != nil || src.NewParser == nil {
		b.Fatalf("telemetry source: %v", err)
	}
	b.SetBytes(int64(1000 * len(one)))
	for b.Loop() {
		u := newUsageMeter(ad, []string{"HOME=" + b.TempDir()}, slog.New(slog.DiscardHandler))
		u.noteFile(path, 0, src.NewParser)
		if u.sessionEnded() == nil {
			b.Fatal("no usage read")
		}
	}
}
