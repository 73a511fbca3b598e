package sessionview

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

func usageReceipt(ev contract.Event, calls, input float64, usd any, prov string) contract.LifecycleReceipt {
	cost := map[string]any{"provenance": prov}
	if usd != nil {
		cost["usd"] = usd
	}
	return contract.LifecycleReceipt{Event: ev, TelemetrySummary: map[string]any{"usage": map[string]any{
		"calls": calls, "tokens": map[string]any{"input": input, "output": 1.0, "total": input + 1}, "cost": cost}}}
}

// TestUsageFolds: turns add up, priced and unpriced alike; session.ended's
// total replaces them, and a turn after it (a renewal's) adds to it. An
// unpriced cost reads "?", never $0.00.
func TestUsageFolds(t *testing.T) {
	var s Summary
	s.Apply(usageReceipt(contract.EventFrameEnded, 1, 10, 0.5, "estimated"))
	s.Apply(usageReceipt(contract.EventFrameEnded, 2, 20, nil, "unknown"))
	if u := s.Usage; u == nil || u.Calls != 3 || u.Input != 30 || *u.USD != 0.5 || u.Provenance != "estimated+unknown" || u.CostText() != "$0.50+?" {
		t.Fatalf("after two turns %+v (%s), want 3 calls, 30 input, $0.50+? estimated+unknown", s.Usage, s.Usage.CostText())
	}
	s.Apply(usageReceipt(contract.EventSessionEnded, 3, 30, 0.5, "estimated+unknown"))
	s.Apply(usageReceipt(contract.EventFrameEnded, 1, 5, 0.25, "native"))
	if u := s.Usage; u.Calls != 4 || u.Input != 35 || *u.USD != 0.75 || u.Provenance != "native+estimated+unknown" {
		t.Fatalf("after the session's end and a turn %+v, want 4 calls, 35 input, $0.75 native+estimated+unknown", u)
	}
	if got, want := s.Usage.Text(), "4 calls · 37 tokens (35 input, 0 cache read, 0 cache write, 2 output) · $0.75+? native+estimated+unknown"; got != want {
		t.Fatalf("status text %q, want %q", got, want)
	}
	var unknown Summary
	unknown.Apply(usageReceipt(contract.EventFrameEnded, 1, 10, nil, "unknown"))
	if unknown.Usage.USD != nil || unknown.Usage.CostText() != "?" {
		t.Fatalf("an unpriced turn %+v costs %q, want no usd and ?", unknown.Usage, unknown.Usage.CostText())
	}
}
