package contract

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestWireFieldNames pins the wire keys of every envelope, fully populated,
// against lists written out here independently of the struct tags.
func TestWireFieldNames(t *testing.T) {
	s := Ptr("x")
	body := Ptr("b")
	payload := PayloadEnvelope{
		SchemaVersion: Version, PayloadID: "p", ClientID: "c", PayloadKind: "k", Format: "f", ContentEncoding: EncodingUTF8,
		Body: body, BodyRef: s, ByteSize: 1, ContentDigest: s,
		AcceptablePlacements: []AcceptablePlacement{{Placement: PlacementReceiptOnly, Requirement: RequirementOptional}},
		IdempotencyKey:       s, ExpiresAtEpochS: Ptr(int64(1)), Redaction: s, Metadata: map[string]any{"a": 1},
	}
	request := CallbackRequest{
		SchemaVersion: Version, Event: EventFrameOpening, EventID: "e", AdapterID: "a", AdapterVersion: "v",
		IntegrationMode: ModeNativeHook, InvocationID: "i", HarnessSessionID: s, HarnessRunID: s, HarnessTaskID: s,
		FrameContext:          &FrameContext{FrameID: "f", ParentFrameID: s, FrameClass: FrameSubcall},
		CapabilitySnapshotRef: s, PayloadRefs: []PayloadRef{{PayloadID: "p", PayloadKind: "k", ContentDigest: s, ByteSize: Ptr(uint64(1))}},
		Sequence: Ptr(uint64(1)), IdempotencyKey: s, Metadata: map[string]any{"a": 1},
	}
	tests := []struct {
		name string
		v    any
		want string
	}{
		{"payload envelope", payload, "acceptable_placements body body_ref byte_size client_id content_digest content_encoding expires_at_epoch_s format idempotency_key metadata payload_id payload_kind redaction schema_version"},
		{"acceptable placement", payload.AcceptablePlacements[0], "placement requirement"},
		{"callback request", request, "adapter_id adapter_version capability_snapshot_ref event event_id frame_context harness_run_id harness_session_id harness_task_id idempotency_key integration_mode invocation_id metadata payload_refs schema_version sequence"},
		{"frame context", *request.FrameContext, "frame_class frame_id parent_frame_id"},
		{"payload ref", request.PayloadRefs[0], "byte_size content_digest payload_id payload_kind"},
		{"callback response", CallbackResponse{SchemaVersion: Version, Status: StatusFailed, ClientPayloads: []PayloadEnvelope{payload},
			ReceiptRefs: []string{"r"}, Warnings: []Warning{{Code: "c", Message: "m"}}, Metadata: map[string]any{"a": 1}},
			"client_payloads failure_class metadata receipt_refs retry_class schema_version status warnings"},
		{"dispatch envelope", DispatchEnvelope{SchemaVersion: Version, Request: request, Payloads: []PayloadEnvelope{payload}}, "payloads request schema_version"},
		{"lifecycle receipt", LifecycleReceipt{
			SchemaVersion: Version, ReceiptID: "r", IdempotencyKey: s, ClientID: "c", AdapterID: "a", InvocationID: "i", Event: EventFrameOpening,
			EventID: "e", Sequence: Ptr(uint64(1)), ParentReceiptID: s, IntegrationMode: ModeNativeHook, Status: StatusFailed, AtEpochS: 1,
			HarnessSessionID: s, HarnessRunID: s, HarnessTaskID: s, PayloadReceipts: []PayloadReceipt{{}}, TelemetrySummary: map[string]any{"a": 1},
			CapabilityDegradations: []CapabilityDegradation{{}}, FailureClass: Ptr(FailureTimeout), RetryClass: Ptr(RetrySafe), Warnings: []Warning{{}},
		}, "adapter_id at_epoch_s capability_degradations client_id event event_id failure_class harness_run_id harness_session_id harness_task_id idempotency_key integration_mode invocation_id parent_receipt_id payload_receipts receipt_id retry_class schema_version sequence status telemetry_summary warnings"},
		{"payload receipt", PayloadReceipt{ContentDigest: s}, "byte_size content_digest payload_id payload_kind placement status"},
		{"capability degradation", CapabilityDegradation{ObservedAtEpochS: Ptr(int64(1)), Evidence: s, RetryClass: Ptr(RetrySafe)}, "capability current_support evidence observed_at_epoch_s previous_support retry_class"},
		{"warning", Warning{Capability: s}, "capability code message"},
		{"manifest", AdapterManifest{
			SessionIdentity: &SessionIdentitySupport{}, SessionRename: &SupportClaim{}, Renewal: &RenewalSupport{Profiles: []string{"p"}, Evidence: s},
			ApprovalSurface: &SupportClaim{}, FailureModes: []FailureClass{FailureTimeout}, TelemetrySources: []TelemetrySource{{}},
			KnownDegradations: []KnownDegradation{{Evidence: s}},
		}, "adapter_id adapter_version approval_surface context_pressure contract_version display_name failure_modes integration_modes known_degradations lifecycle_events placement receipts renewal role session_identity session_rename telemetry_sources"},
		{"event support", EventSupport{Modes: []IntegrationMode{ModeNativeHook}}, "modes support"},
		{"placement support", PlacementSupport{MaxBytes: Ptr(1)}, "max_bytes support"},
		{"context pressure", ContextPressureSupport{Evidence: s}, "evidence support"},
		{"receipts", ReceiptsSupport{}, "lifeloop_synthesized native receipt_ledger"},
		{"session identity", SessionIdentitySupport{}, "harness_run_id harness_session_id harness_task_id"},
		{"renewal", RenewalSupport{Profiles: []string{"p"}, Evidence: s}, "continuation evidence profiles reset"},
		{"renewal reset", RenewalReset{}, "manual native wrapper_mediated"},
		{"renewal continuation", RenewalContinuation{}, "observation payload_delivery"},
		{"telemetry source", TelemetrySource{}, "source support"},
		{"known degradation", KnownDegradation{Evidence: s}, "capability current_support evidence previous_support"},
		{"capability request", CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventSessionStarted: {}},
			Placements: map[ManifestPlacementClass]Requirement{ManifestPreSession: {}}, ContextPressure: &Requirement{}, ReceiptLedger: &Requirement{},
			SessionIdentity: map[string]Requirement{"harness_run_id": {}}, Renewal: map[string]Requirement{"reset.native": {}}},
			"client_id context_pressure events placements receipt_ledger renewal session_identity"},
		{"requirement", Requirement{Level: RequirementRequired, MinSupport: Ptr(SupportNative), AcceptPartial: true}, "accept_partial level min_support"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.v)
			if err != nil {
				t.Fatal(err)
			}
			want := strings.Fields(tt.want)
			slices.Sort(want)
			if got := keysOf(t, b); !slices.Equal(got, want) {
				t.Fatalf("keys %v\nwant %v", got, want)
			}
		})
	}
}
