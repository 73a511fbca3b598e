package codex

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/telemetry"
)

// genRollout is genLines's rollout with the bulk real ones carry: each
// turn also has reasoning (encrypted), a tool's output and an answer of
// a few KB.
func genRollout(turns int) []byte {
	text := strings.Repeat("The quick brown fox jumps over the lazy dog; pack my box with five dozen liquor jugs.\n", 40)
	var b strings.Builder
	for i, l := range genLines(turns, rand.New(rand.NewPCG(uint64(turns), 3))) {
		b.Write(l)
		b.WriteByte('\n')
		if i%4 == 2 {
			fmt.Fprintf(&b, `{"timestamp":"2026-11-21T22:12:19.254Z","type":"response_item","payload":{"type":"reasoning","id":"rs_%d","summary":[],"encrypted_content":"%s"}}`+"\n", i, strings.Repeat("gAAAAABpQ0xyZ", 150))
			fmt.Fprintf(&b, `{"timestamp":"2026-11-21T22:12:19.254Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":%q}}`+"\n", i, text[:500+i*37%2900])
			fmt.Fprintf(&b, `{"timestamp":"2026-11-21T22:12:19.254Z","type":"event_msg","payload":{"type":"agent_message","message":%q}}`+"\n", text[:200+i*17%800])
		}
	}
	return []byte(b.String())
}

// BenchmarkParse is the parser alone over a generated rollout; ref is
// the parser as it was before its fast path (oldparser_test.go).
func BenchmarkParse(b *testing.B) {
	lines := splitAll(genRollout(200))
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	for _, c := range []struct {
		name string
		new  func() telemetry.Parser
	}{{"fast", func() telemetry.Parser { return NewParser() }}, {"ref", func() telemetry.Parser { return newOldParser() }}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var dst []telemetry.Observation
			for b.Loop() {
				p := c.new()
				for _, l := range lines {
					dst, _ = p.Parse(dst[:0], l, telemetry.Provenance{})
				}
			}
		})
	}
}

func splitAll(b []byte) [][]byte {
	var out [][]byte
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" {
			out = append(out, []byte(l))
		}
	}
	return out
}

// BenchmarkCatchUp measures reading a finished multi-MiB rollout from the
// start: tailer and parser, as `lifeloop watch` does when it attaches.
func BenchmarkCatchUp(b *testing.B) {
	turns := 1
	for len(genRollout(turns)) < 4<<20 {
		turns *= 2
	}
	content := genRollout(turns)
	b.Run(fmt.Sprintf("%.1fMiB", float64(len(content))/(1<<20)), func(b *testing.B) {
		path := filepath.Join(b.TempDir(), "r.jsonl")
		if err := os.WriteFile(path, content, 0o600); err != nil {
			b.Fatal(err)
		}
		size := int64(len(content))
		b.SetBytes(size)
		for b.Loop() {
			ctx, cancel := context.WithCancel(context.Background())
			p := NewParser()
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
