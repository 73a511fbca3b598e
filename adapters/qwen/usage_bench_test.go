package qwen

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
)

// BenchmarkUsageParser reads the recorded tool turn (0.24.4: a prompt,
// two calls, a tool result, system records) through the usage parser,
// as `lifeloop usage` does.
func BenchmarkUsageParser(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "qwen-usage-tool.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(raw), []byte("\n"))
	b.SetBytes(int64(len(raw)))
	p := Harness{}.NewUsageParser("f.jsonl", nil)
	var dst []adapters.UsageEntry
	for b.Loop() {
		dst = dst[:0]
		for _, l := range lines {
			dst, _ = p.Parse(dst, l)
		}
	}
	if len(dst) != 2 {
		b.Fatalf("%d calls, want 2", len(dst))
	}
}
