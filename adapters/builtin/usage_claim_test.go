package builtin

import (
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// TestUsageClaims: a harness whose records lifeloop reads usage from
// (adapters.UsageReader or UsageStore) claims the telemetry sources
// usage.tokens (native) and usage.cost (native where the harness prices
// its calls itself, synthesized where lifeloop's price table does), as
// docs/usage.md's table says; a harness without a reader claims neither.
func TestUsageClaims(t *testing.T) {
	want := map[string]contract.SupportState{
		"claude": contract.SupportSynthesized, "codex": contract.SupportSynthesized, "gemini": contract.SupportSynthesized,
		"copilot": contract.SupportSynthesized, "qwen": contract.SupportSynthesized,
		"pi": contract.SupportNative, "opencode": contract.SupportNative, "openclaw": contract.SupportNative,
	}
	seen := 0
	for _, a := range Default().All() {
		claims := adapters.Claims(a.Manifest())
		tokens, hasTokens := claims["telemetry_sources."+adapters.UsageTokensSource]
		cost, hasCost := claims["telemetry_sources."+adapters.UsageCostSource]
		_, reader := a.Harness().(adapters.UsageReader)
		_, store := a.Harness().(adapters.UsageStore)
		wantCost, listed := want[a.ID]
		switch {
		case listed != (reader || store):
			t.Errorf("%s: reads usage %v, but the test's table lists it %v: update the table with its cost's provenance", a.ID, reader || store, listed)
		case !listed && (hasTokens || hasCost):
			t.Errorf("%s: no usage reader, but claims usage: tokens %q, cost %q", a.ID, tokens, cost)
		case listed && (tokens != contract.SupportNative || cost != wantCost):
			t.Errorf("%s: usage claims tokens %q, cost %q; want native and %s", a.ID, tokens, cost, wantCost)
		case listed:
			seen++
		}
	}
	if seen != len(want) {
		t.Errorf("%d of the %d harnesses with usage claim it", seen, len(want))
	}
}
