package cli

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/contract"
)

func TestStatusShowsHarnessDrift(t *testing.T) {
	degraded := func(reason, capability string, cur contract.SupportState, evidence string) contract.LifecycleReceipt {
		return contract.LifecycleReceipt{Event: contract.EventCapabilityDegraded, TelemetrySummary: map[string]any{"reason": reason},
			CapabilityDegradations: []contract.CapabilityDegradation{{Capability: capability, PreviousSupport: contract.SupportSynthesized, CurrentSupport: cur, Evidence: &evidence}}}
	}
	var sum sessionview.Summary
	for _, r := range []contract.LifecycleReceipt{
		{Event: contract.EventSessionStarting, TelemetrySummary: map[string]any{"argv0": "claude"}},
		{Event: contract.EventSessionStarted, TelemetrySummary: map[string]any{"pid": 42, "harness_version": "2.1.400"}},
		degraded("harness_version_unproven", "telemetry", contract.SupportPartial, "Claude Code 2.1.400 is newer than the newest version lifeloop's tests proved (2.1.330)"),
		degraded("source_not_found", "telemetry", contract.SupportUnavailable, "no transcript"),
		degraded("harness_drift", "context_pressure", contract.SupportPartial, "the harness (version 2.1.400) wrote an assistant line without a readable message.usage"),
	} {
		sum.Apply(r)
	}
	facts := factsOf(sum)
	var out bytes.Buffer
	facts.print(&out)
	got := out.String()
	for _, want := range []string{"harness   version 2.1.400\n", "drift     telemetry synthesized → partial: Claude Code 2.1.400 is newer", "drift     context_pressure synthesized → partial: the harness (version 2.1.400) wrote an assistant line"} {
		if !strings.Contains(got, want) {
			t.Errorf("status lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "no transcript") || strings.Count(got, "drift") != 2 {
		t.Errorf("status shows more than the drift:\n%s", got)
	}
	// `status --json` carries the same facts.
	b, err := json.Marshal(struct{ harnessFacts }{facts})
	if err != nil || !strings.Contains(string(b), `"harness_version":"2.1.400"`) || strings.Count(string(b), "partial") != 2 {
		t.Errorf("status --json facts: %s %v", b, err)
	}
}
