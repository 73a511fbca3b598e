package contract

import (
	"os"
	"slices"
	"testing"
	"time"
)

var fixedNow = time.Unix(1778100000, 0)

func TestEnumListsAreComplete(t *testing.T) {
	tests := []struct {
		name string
		got  []string
		want []string
	}{
		{"events", strs(Events), []string{
			"session.starting", "session.started", "frame.opening", "frame.opened",
			"context.pressure_observed", "context.compacted", "frame.ending", "frame.ended",
			"session.ending", "session.ended", "supervisor.tick", "capability.degraded",
			"receipt.emitted", "receipt.gap_detected"}},
		{"support", strs(SupportStates), []string{"native", "synthesized", "manual", "partial", "unavailable"}},
		{"modes", strs(IntegrationModes), []string{"manual_skill", "launcher_wrapper", "native_hook", "reference_adapter", "telemetry_only"}},
		{"roles", strs(AdapterRoles), []string{"primary_worker", "worker", "supervisor", "observer"}},
		{"receipt status", strs(ReceiptStatuses), []string{"observed", "delivered", "skipped", "degraded", "failed"}},
		{"placement outcome", strs(PlacementOutcomes), []string{"delivered", "skipped", "degraded", "failed"}},
		{"placement", strs(PlacementClasses), []string{"developer_equivalent_frame", "pre_prompt_frame", "side_channel_context", "receipt_only"}},
		{"manifest placement", strs(ManifestPlacementClasses), []string{"pre_session", "pre_frame_leading", "pre_frame_trailing", "tool_result", "manual_operator"}},
		{"requirement", strs(RequirementLevels), []string{"required", "preferred", "optional"}},
		{"negotiation", strs(NegotiationOutcomes), []string{"satisfied", "degraded", "unsupported", "requires_operator"}},
		{"frame class", strs(FrameClasses), []string{"top_level", "subcall"}},
		{"retry", strs(RetryClasses), []string{"safe_retry", "retry_after_reread", "retry_after_reconfigure", "retry_after_operator", "do_not_retry"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !slices.Equal(tt.got, tt.want) {
				t.Fatalf("got %v\nwant %v", tt.got, tt.want)
			}
		})
	}
}

func strs[T ~string](v []T) []string {
	out := make([]string, len(v))
	for i, s := range v {
		out[i] = string(s)
	}
	return out
}

func TestFailureClassDefaultRetry(t *testing.T) {
	// The contract's default mapping table, written out independently.
	want := map[FailureClass]RetryClass{
		"adapter_unavailable":    "retry_after_reconfigure",
		"capability_unsupported": "do_not_retry",
		"capability_degraded":    "retry_after_reread",
		"placement_unavailable":  "retry_after_reconfigure",
		"payload_too_large":      "do_not_retry",
		"payload_rejected":       "retry_after_reconfigure",
		"identity_unavailable":   "retry_after_reconfigure",
		"transport_error":        "safe_retry",
		"timeout":                "safe_retry",
		"operator_required":      "retry_after_operator",
		"state_conflict":         "retry_after_reread",
		"invalid_request":        "do_not_retry",
		"internal_error":         "retry_after_reread",
	}
	if len(FailureClasses) != len(want) {
		t.Fatalf("%d failure classes, want %d", len(FailureClasses), len(want))
	}
	for _, fc := range FailureClasses {
		t.Run(string(fc), func(t *testing.T) {
			if got := fc.DefaultRetry(); got != want[fc] {
				t.Fatalf("DefaultRetry = %s, want %s", got, want[fc])
			}
		})
	}
	if got := FailureClass("bogus").DefaultRetry(); got != RetryDoNot {
		t.Fatalf("unknown class retries as %s", got)
	}
}

func TestEventFamilies(t *testing.T) {
	for _, e := range Events {
		t.Run(string(e), func(t *testing.T) {
			prefixFrame := len(e) > 6 && e[:6] == "frame."
			prefixSession := len(e) > 8 && e[:8] == "session."
			if e.IsFrame() != prefixFrame || e.IsSession() != prefixSession {
				t.Fatalf("IsFrame=%v IsSession=%v", e.IsFrame(), e.IsSession())
			}
		})
	}
}

func readFile(name string) ([]byte, error) { return os.ReadFile(name) }
