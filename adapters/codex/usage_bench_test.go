package codex

import (
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// BenchmarkUsageParse is a usage parser over a generated rollout, every
// line as `lifeloop usage` hands it over: "onepass" reads token counts
// in one pass, "decoded" with encoding/json (as before the one pass).
func BenchmarkUsageParse(b *testing.B) {
	lines := splitAll(genRollout(200))
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
