package contract

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func testManifest(t *testing.T) AdapterManifest {
	t.Helper()
	m, err := DecodeManifest(readExample(t, "adapter_manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestNegotiateOutcomes(t *testing.T) {
	req := func(level RequirementLevel) Requirement { return Requirement{Level: level} }
	tests := []struct {
		name        string
		mode        IntegrationMode
		req         CapabilityRequest
		outcomes    map[string]NegotiationOutcome // capability -> outcome; capabilities not listed must be absent
		proceed     bool
		failure     FailureClass
		warningCaps []string
	}{
		{
			name:     "native required is satisfied",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventSessionStarted: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.session.started": OutcomeSatisfied},
			proceed:  true,
		},
		{
			name:     "synthesized satisfies by default",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", ContextPressure: Ptr(req(RequirementRequired))},
			outcomes: map[string]NegotiationOutcome{"context_pressure": OutcomeSatisfied},
			proceed:  true,
		},
		{
			name:     "synthesized below min_support native refuses a required capability",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", ContextPressure: &Requirement{Level: RequirementRequired, MinSupport: Ptr(SupportNative)}},
			outcomes: map[string]NegotiationOutcome{"context_pressure": OutcomeDegraded},
			failure:  FailureCapabilityUnsupported,
		},
		{
			name:     "partial degrades a preferred capability with a warning",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventContextCompacted: req(RequirementPreferred)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.context.compacted": OutcomeDegraded},
			proceed:  true, warningCaps: []string{"lifecycle_events.context.compacted"},
		},
		{
			name:     "partial refuses a required capability unless accepted",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventContextCompacted: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.context.compacted": OutcomeDegraded},
			failure:  FailureCapabilityUnsupported,
		},
		{
			name:     "accepted partial is satisfied",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventContextCompacted: {Level: RequirementRequired, AcceptPartial: true}}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.context.compacted": OutcomeSatisfied},
			proceed:  true,
		},
		{
			name:     "manual required needs an operator",
			mode:     ModeManualSkill,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventSessionEnding: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.session.ending": OutcomeRequiresOperator},
			failure:  FailureOperatorRequired,
		},
		{
			name:     "manual preferred proceeds with a warning",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Placements: map[ManifestPlacementClass]Requirement{ManifestManualOperator: req(RequirementPreferred)}},
			outcomes: map[string]NegotiationOutcome{"placement.manual_operator": OutcomeRequiresOperator},
			proceed:  true, warningCaps: []string{"placement.manual_operator"},
		},
		{
			name:     "unavailable required refuses",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Placements: map[ManifestPlacementClass]Requirement{ManifestToolResult: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"placement.tool_result": OutcomeUnsupported},
			failure:  FailureCapabilityUnsupported,
		},
		{
			name:     "unavailable preferred degrades with a warning",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", SessionIdentity: map[string]Requirement{"harness_task_id": req(RequirementPreferred)}},
			outcomes: map[string]NegotiationOutcome{"session_identity.harness_task_id": OutcomeUnsupported},
			proceed:  true, warningCaps: []string{"session_identity.harness_task_id"},
		},
		{
			name:     "unavailable optional is omitted silently",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventReceiptGapDetected: req(RequirementOptional)}},
			outcomes: map[string]NegotiationOutcome{},
			proceed:  true,
		},
		{
			name:     "event claim counts only for its modes",
			mode:     ModeLauncherWrapper,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventFrameOpening: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.frame.opening": OutcomeUnsupported},
			failure:  FailureCapabilityUnsupported,
		},
		{
			name:     "same event claim counts in its mode",
			mode:     ModeNativeHook,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventFrameOpening: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.frame.opening": OutcomeSatisfied},
			proceed:  true,
		},
		{
			name: "renewal claims",
			mode: ModeLauncherWrapper,
			req: CapabilityRequest{ClientID: "c", Renewal: map[string]Requirement{
				"reset.wrapper_mediated": req(RequirementRequired), "reset.native": req(RequirementPreferred),
				"continuation.payload_delivery": req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{
				"renewal.reset.wrapper_mediated": OutcomeSatisfied, "renewal.reset.native": OutcomeUnsupported,
				"renewal.continuation.payload_delivery": OutcomeSatisfied},
			proceed: true, warningCaps: []string{"renewal.reset.native"},
		},
		{
			name:     "mode the adapter lacks refuses",
			mode:     ModeReferenceAdapter,
			req:      CapabilityRequest{ClientID: "c"},
			outcomes: map[string]NegotiationOutcome{},
			failure:  FailureCapabilityUnsupported,
		},
		{
			name:     "unsupported outranks operator in the verdict",
			mode:     ModeManualSkill,
			req:      CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventSessionEnding: req(RequirementRequired), EventReceiptGapDetected: req(RequirementRequired)}},
			outcomes: map[string]NegotiationOutcome{"lifecycle_events.session.ending": OutcomeRequiresOperator, "lifecycle_events.receipt.gap_detected": OutcomeUnsupported},
			failure:  FailureCapabilityUnsupported,
		},
	}
	m := testManifest(t)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.req.Validate(); err != nil {
				t.Fatalf("test request invalid: %v", err)
			}
			res := Negotiate(m, tt.mode, tt.req)
			got := map[string]NegotiationOutcome{}
			for _, c := range res.Capabilities {
				got[c.Capability] = c.Outcome
				if c.Reason == "" {
					t.Errorf("%s has no reason", c.Capability)
				}
			}
			if len(got) != len(tt.outcomes) {
				t.Errorf("capabilities = %v, want %v", got, tt.outcomes)
			}
			for k, want := range tt.outcomes {
				if got[k] != want {
					t.Errorf("%s = %q, want %q", k, got[k], want)
				}
			}
			if res.Verdict.Proceed != tt.proceed {
				t.Fatalf("proceed = %v, want %v (%v)", res.Verdict.Proceed, tt.proceed, res.Verdict.Reasons)
			}
			if tt.proceed {
				if res.Verdict.FailureClass != nil {
					t.Errorf("failure class on proceed: %v", *res.Verdict.FailureClass)
				}
			} else {
				if res.Verdict.FailureClass == nil || *res.Verdict.FailureClass != tt.failure {
					t.Fatalf("failure class = %v, want %s", res.Verdict.FailureClass, tt.failure)
				}
				if *res.Verdict.RetryClass != tt.failure.DefaultRetry() || len(res.Verdict.Reasons) == 0 {
					t.Errorf("verdict = %+v", res.Verdict)
				}
			}
			var warned []string
			for _, w := range res.Warnings {
				warned = append(warned, *w.Capability)
			}
			if !slices.Equal(warned, tt.warningCaps) {
				t.Errorf("warnings for %v, want %v", warned, tt.warningCaps)
			}
		})
	}
}

func TestNegotiateTelemetryOnlyCannotInject(t *testing.T) {
	m, err := DecodeManifest(readExample(t, "adapter_manifest_telemetry_only.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Hand-edit a claim the validator would refuse, to prove negotiation
	// does not trust it either.
	m.Placement[ManifestPreSession] = PlacementSupport{Support: SupportNative}
	res := Negotiate(m, ModeTelemetryOnly, CapabilityRequest{ClientID: "c", Placements: map[ManifestPlacementClass]Requirement{
		ManifestPreSession: {Level: RequirementRequired}, ManifestManualOperator: {Level: RequirementPreferred},
	}})
	if res.Verdict.Proceed || res.Capabilities[0].Offered != SupportUnavailable || !strings.Contains(res.Capabilities[0].Reason, "telemetry_only") {
		t.Fatalf("got %+v", res)
	}
	if res.Capabilities[1].Outcome != OutcomeRequiresOperator {
		t.Fatalf("manual_operator = %+v", res.Capabilities[1])
	}
}

func TestNegotiateDocumentedExample(t *testing.T) {
	req, err := DecodeCapabilityRequest(readExample(t, "capability_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := Negotiate(testManifest(t), ModeLauncherWrapper, req)
	// frame.opening is claimed only through native_hook.
	if res.Verdict.Proceed {
		t.Fatalf("proceeded: %+v", res)
	}
	res = Negotiate(testManifest(t), ModeNativeHook, req)
	b, _ := json.Marshal(res)
	// context.compacted is claimed (partial) only through launcher_wrapper,
	// so in native_hook mode it is unsupported; it is preferred, so the
	// verdict proceeds with exactly one warning.
	if !res.Verdict.Proceed || len(res.Warnings) != 1 || *res.Warnings[0].Capability != "lifecycle_events.context.compacted" {
		t.Fatalf("got %s", b)
	}
	if !strings.Contains(string(b), `"capability":"lifecycle_events.context.compacted","requirement":{"level":"preferred","accept_partial":true},"offered":"unavailable","outcome":"unsupported"`) {
		t.Fatalf("context.compacted not unsupported: %s", b)
	}
	if len(res.Capabilities) != 9 { // receipt.gap_detected (optional, unavailable) and tool_result (optional, unavailable) are left out
		t.Fatalf("%d capabilities: %s", len(res.Capabilities), b)
	}
}

func TestCapabilityRequestValidate(t *testing.T) {
	tests := []struct {
		name string
		req  CapabilityRequest
		want string
	}{
		{"empty client", CapabilityRequest{}, "client_id"},
		{"bad session identity key", CapabilityRequest{ClientID: "c", SessionIdentity: map[string]Requirement{"harness_user_id": {Level: RequirementRequired}}}, "session_identity.harness_user_id: unknown key"},
		{"bad renewal key", CapabilityRequest{ClientID: "c", Renewal: map[string]Requirement{"reset": {Level: RequirementRequired}}}, "renewal.reset: unknown key"},
		{"min support manual", CapabilityRequest{ClientID: "c", ReceiptLedger: &Requirement{Level: RequirementRequired, MinSupport: Ptr(SupportManual)}}, "receipt_ledger.min_support"},
		{"bad level", CapabilityRequest{ClientID: "c", Events: map[Event]Requirement{EventSessionStarted: {Level: "must"}}}, "events.session.started.level"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.req.Validate()
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func FuzzNegotiate(f *testing.F) {
	f.Add([]byte(`{"client_id":"c","events":{"frame.opening":{"level":"required"}}}`), "native_hook")
	f.Add([]byte(`{"client_id":"c","renewal":{"reset.native":{"level":"preferred","accept_partial":true}}}`), "launcher_wrapper")
	f.Add(readExampleF(f, "capability_request.json"), "manual_skill")
	f.Add([]byte(`{"client_id":"c","placements":{"pre_session":{"level":"required"}}}`), "telemetry_only")
	base, err := readFile("testdata/examples/adapter_manifest.json")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reqJSON []byte, mode string) {
		req, err := DecodeCapabilityRequest(reqJSON)
		if err != nil {
			return
		}
		m, err := DecodeManifest(base)
		if err != nil {
			t.Fatal(err)
		}
		res := Negotiate(m, IntegrationMode(mode), req)
		again := Negotiate(m, IntegrationMode(mode), req)
		a, _ := json.Marshal(res)
		b, _ := json.Marshal(again)
		if string(a) != string(b) {
			t.Fatalf("not deterministic:\n%s\n%s", a, b)
		}
		refused := false
		for _, c := range res.Capabilities {
			if !c.Outcome.Valid() || !c.Offered.Valid() {
				t.Fatalf("invalid values in %+v", c)
			}
			if c.Requirement.Level == RequirementOptional && c.Outcome == OutcomeUnsupported {
				t.Fatalf("unsupported optional capability listed: %+v", c)
			}
			if c.Requirement.Level == RequirementRequired && c.Outcome != OutcomeSatisfied {
				refused = true
			}
		}
		if refused && res.Verdict.Proceed {
			t.Fatalf("proceeded with an unmet required capability: %s", a)
		}
		if res.Verdict.Proceed == (res.Verdict.FailureClass != nil) {
			t.Fatalf("verdict inconsistent: %+v", res.Verdict)
		}
	})
}

// TestNegotiateGolden pins the documented negotiation example: the example
// manifest and capability request in native_hook mode.
func TestNegotiateGolden(t *testing.T) {
	req, err := DecodeCapabilityRequest(readExample(t, "capability_request.json"))
	if err != nil {
		t.Fatal(err)
	}
	res := Negotiate(testManifest(t), ModeNativeHook, req)
	got, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden := "testdata/examples/negotiation_result.golden.json"
	if *update {
		if err := os.WriteFile(golden, append(got, '\n'), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if string(got)+"\n" != string(want) {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

func readExampleF(f *testing.F, name string) []byte {
	f.Helper()
	b, err := os.ReadFile("testdata/examples/" + name)
	if err != nil {
		f.Fatal(err)
	}
	return b
}
