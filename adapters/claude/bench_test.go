package claude_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
	"github.com/lifeloop/lifeloop/telemetry"
)

// BenchmarkCatchUp measures reading a finished multi-MiB Claude transcript
// from the start: tailer (split + JSON validity) and parser. MB/s is the
// catch-up speed when lifeloop attaches to a long session.
func BenchmarkCatchUp(b *testing.B) {
	for _, mib := range []int{4} {
		turns := 1
		for len(genClaude(turns)) < mib<<20 {
			turns *= 2
		}
		content := genClaude(turns)
		b.Run(fmt.Sprintf("%.1fMiB", float64(len(content))/(1<<20)), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				b.Fatal(err)
			}
			size := int64(len(content))
			b.SetBytes(size)
			b.ResetTimer()
			for range b.N {
				ctx, cancel := context.WithCancel(context.Background())
				p := claude.NewParser(claude.WindowConfig{})
				var obs []telemetry.Observation
				var n int
				err := telemetry.Tail(ctx, telemetry.TailConfig{Path: path, FromStart: true, ForcePoll: true, SkipValidate: true}, func(ev telemetry.TailEvent) {
					if ev.Kind == telemetry.EventLine {
						obs, _ = p.Parse(obs[:0], ev.Line, telemetry.Provenance{Path: path, Line: ev.LineNo, Offset: ev.Offset})
						n += len(obs)
					}
					if ev.Offset+ev.Size+1 == size {
						cancel()
					}
				})
				cancel()
				if err != nil || n == 0 {
					b.Fatalf("err %v, %d observations", err, n)
				}
			}
		})
	}
}

// appendLatency appends one assistant line per iteration to path (tailed by
// a Watch from its end) and returns how long each took to come back as an
// observation.
func appendLatency(b *testing.B, path string, forcePoll bool) []time.Duration {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	got := make(chan telemetry.Observation, 16)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = telemetry.Watch(ctx, telemetry.WatchConfig{Path: path, NewParser: func() telemetry.Parser { return claude.NewParser(claude.WindowConfig{}) }, Tail: telemetry.TailConfig{ForcePoll: forcePoll, Poll: time.Millisecond}}, func(o telemetry.Observation) {
			if o.Kind == telemetry.ObsUsage || o.Kind == telemetry.ObsSourceMode {
				got <- o
			}
		})
	}()
	defer func() { cancel(); <-done }()
	<-got // mode: the tailer is positioned
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		line := cAsst(fmt.Sprintf("m%d", i), "r", "claude-opus-4-8", "", i, 0, 0, 1, "") + "\n"
		start := time.Now()
		if _, err := f.WriteString(line); err != nil {
			b.Fatal(err)
		}
		<-got
		lat = append(lat, time.Since(start))
	}
	b.StopTimer()
	return lat
}

func reportPercentiles(b *testing.B, lat []time.Duration) {
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds())
	}
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
}

// BenchmarkAppendLatency is the time from a line appended to the
// transcript to its observation delivered to the sink (fsnotify mode, and
// the 1 ms polling fallback for comparison).
func BenchmarkAppendLatency(b *testing.B) {
	for _, mode := range []struct {
		name string
		poll bool
	}{{"fsnotify", false}, {"poll1ms", true}} {
		b.Run(mode.name, func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "t.jsonl")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				b.Fatal(err)
			}
			reportPercentiles(b, appendLatency(b, path, mode.poll))
		})
	}
}

// BenchmarkAppendCostVsFileSize appends to a 1 MiB and a 256 MiB transcript
// (sparse, ending in a newline): the cost per appended line must not depend
// on the file size, since only the bytes past the offset are read.
func BenchmarkAppendCostVsFileSize(b *testing.B) {
	for _, mib := range []int64{1, 256} {
		b.Run(fmt.Sprintf("%dMiB", mib), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "t.jsonl")
			f, err := os.Create(path)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := f.WriteAt([]byte("\n"), mib<<20-1); err != nil {
				b.Fatal(err)
			}
			if err := f.Close(); err != nil {
				b.Fatal(err)
			}
			reportPercentiles(b, appendLatency(b, path, false))
		})
	}
}
