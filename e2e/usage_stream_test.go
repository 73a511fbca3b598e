package e2e

import (
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// usageBlock is the usage block of a receipt's telemetry_summary, nil
// when it has none. The stream's usage is checked for every harness with
// a reader in TestUsageEverywhere (usage_everywhere_test.go), which took
// over the one-shot Claude Code check this file held.
func usageBlock(r map[string]any) map[string]any {
	sum, _ := r["telemetry_summary"].(map[string]any)
	u, _ := sum["usage"].(map[string]any)
	return u
}

// checkUsageTokens: block (a usage block, or one of its harness
// sessions) counts calls calls, each with the mock's usage u.
func checkUsageTokens(t *testing.T, what string, block map[string]any, calls int, u mockmodel.Usage) {
	t.Helper()
	tok, _ := block["tokens"].(map[string]any)
	got := []any{block["calls"], tok["input"], tok["cache_read"], tok["cache_write"], tok["output"]}
	n := float64(calls)
	want := []any{n, n * float64(u.InputTokens), n * float64(u.CacheReadInputTokens), n * float64(u.CacheCreationInputTokens), n * float64(u.OutputTokens)}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("%s: calls, input, cache read, cache write, output = %v, want %v\nblock: %v", what, got, want, block)
		}
	}
}
