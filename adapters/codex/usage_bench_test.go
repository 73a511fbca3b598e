package codex

import (
	"os"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// BenchmarkUsageParse is a usage parser over a rollout, every line as
// `lifeloop usage` hands it over: "onepass" reads token counts in one
// pass, "decoded" with encoding/json (as before the one pass). The
// rollout is the bundled real one's turn 100 times ("real", as the e2e
// BenchmarkUsage/cold-codex writes it) or a generated one ("gen", more
// token counts per byte).
func BenchmarkUsageParse(b *testing.B) {
	real, err := os.ReadFile("testdata/codex-tool-turn.rollout.jsonl")
	if err != nil {
		b.Fatal(err)
	}
	turn := splitAll(real)
	lines := turn[:1]
	for range 100 {
		lines = append(lines, turn[1:]...)
	}
	b.Run("real", func(b *testing.B) { benchUsageParse(b, lines) })
	b.Run("gen", func(b *testing.B) { benchUsageParse(b, splitAll(genRollout(200))) })
}

func benchUsageParse(b *testing.B, lines [][]byte) {
	n := 0
	for _, l := range lines {
		n += len(l) + 1
	}
	for _, c := range []struct {
		name       string
		decodeOnly bool
	}{{"onepass", false}, {"decoded", true}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(n))
			b.ReportAllocs()
			var dst []adapters.UsageEntry
			for b.Loop() {
				p := Harness{}.NewUsageParser("/h/.codex/sessions/rollout-x.jsonl", nil).(*usageParser)
				p.decodeOnly = c.decodeOnly
				for _, l := range lines {
					dst, _ = p.Parse(dst[:0], l)
				}
			}
		})
	}
}
