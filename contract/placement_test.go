package contract

import (
	"strings"
	"testing"
)

func TestPlacementRoutes(t *testing.T) {
	tests := []struct {
		event Event
		want  map[PlacementClass]string
	}{
		{EventSessionStarting, map[PlacementClass]string{
			PlacementDeveloperEquivalentFrame: "pre_session", PlacementPrePromptFrame: "pre_session", PlacementSideChannelContext: "tool_result"}},
		{EventSessionStarted, map[PlacementClass]string{
			PlacementDeveloperEquivalentFrame: "pre_session", PlacementPrePromptFrame: "pre_session", PlacementSideChannelContext: "tool_result"}},
		{EventFrameOpening, map[PlacementClass]string{
			PlacementDeveloperEquivalentFrame: "pre_frame_leading", PlacementPrePromptFrame: "pre_frame_leading,pre_frame_trailing", PlacementSideChannelContext: "tool_result"}},
		{EventFrameEnded, map[PlacementClass]string{PlacementSideChannelContext: "tool_result"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.event), func(t *testing.T) {
			r := PlacementRoutes(tt.event)
			if len(r) != len(tt.want) {
				t.Fatalf("routes %v", r)
			}
			for pc, want := range tt.want {
				if got := strings.Join(strs(r[pc]), ","); got != want {
					t.Errorf("%s -> %s, want %s", pc, got, want)
				}
			}
		})
	}
}

func TestResolvePlacement(t *testing.T) {
	m := testManifest(t) // pre_session, pre_frame_leading native max 8192; trailing, tool_result unavailable
	ap := func(p PlacementClass, l RequirementLevel) AcceptablePlacement {
		return AcceptablePlacement{Placement: p, Requirement: l}
	}
	big := strings.Repeat("x", 9000)
	tests := []struct {
		name     string
		event    Event
		body     string
		places   []AcceptablePlacement
		edit     func(m *AdapterManifest)
		outcome  PlacementOutcome
		place    PlacementClass
		target   string
		failure  FailureClass
		keepBody bool
	}{
		{"first satisfiable wins", EventFrameOpening, "hi",
			[]AcceptablePlacement{ap(PlacementDeveloperEquivalentFrame, RequirementPreferred), ap(PlacementPrePromptFrame, RequirementRequired)},
			nil, PlacementOutcomeDelivered, PlacementDeveloperEquivalentFrame, "pre_frame_leading", "", true},
		{"falls through to next alternative", EventFrameOpening, "hi",
			[]AcceptablePlacement{ap(PlacementSideChannelContext, RequirementPreferred), ap(PlacementPrePromptFrame, RequirementRequired)},
			nil, PlacementOutcomeDelivered, PlacementPrePromptFrame, "pre_frame_leading", "", true},
		{"second route of a class", EventFrameOpening, "hi",
			[]AcceptablePlacement{ap(PlacementPrePromptFrame, RequirementRequired)},
			func(m *AdapterManifest) {
				m.Placement[ManifestPreFrameLeading] = PlacementSupport{Support: SupportUnavailable}
				m.Placement[ManifestPreFrameTrailing] = PlacementSupport{Support: SupportSynthesized}
			}, PlacementOutcomeDelivered, PlacementPrePromptFrame, "pre_frame_trailing", "", true},
		{"partial support delivers degraded", EventSessionStarting, "hi",
			[]AcceptablePlacement{ap(PlacementDeveloperEquivalentFrame, RequirementRequired)},
			func(m *AdapterManifest) { m.Placement[ManifestPreSession] = PlacementSupport{Support: SupportPartial} },
			PlacementOutcomeDegraded, PlacementDeveloperEquivalentFrame, "pre_session", "", true},
		{"required unmet fails placement_unavailable", EventFrameEnded, "hi",
			[]AcceptablePlacement{ap(PlacementPrePromptFrame, RequirementRequired)},
			nil, PlacementOutcomeFailed, PlacementPrePromptFrame, "", FailurePlacementUnavailable, false},
		{"required over max_bytes fails payload_too_large", EventSessionStarting, big,
			[]AcceptablePlacement{ap(PlacementDeveloperEquivalentFrame, RequirementRequired)},
			nil, PlacementOutcomeFailed, PlacementDeveloperEquivalentFrame, "", FailurePayloadTooLarge, false},
		{"oversize preferred falls back to receipt_only", EventSessionStarting, big,
			[]AcceptablePlacement{ap(PlacementDeveloperEquivalentFrame, RequirementPreferred), ap(PlacementReceiptOnly, RequirementOptional)},
			nil, PlacementOutcomeDelivered, PlacementReceiptOnly, "", "", false},
		{"preferred unmet degrades", EventFrameOpening, "hi",
			[]AcceptablePlacement{ap(PlacementSideChannelContext, RequirementPreferred), ap(PlacementSideChannelContext, RequirementOptional)},
			nil, PlacementOutcomeDegraded, PlacementSideChannelContext, "", "", false},
		{"optional unmet skips", EventFrameOpening, "hi",
			[]AcceptablePlacement{ap(PlacementSideChannelContext, RequirementOptional)},
			nil, PlacementOutcomeSkipped, PlacementSideChannelContext, "", "", false},
		{"manual placement is not automatic", EventSessionStarting, "hi",
			[]AcceptablePlacement{ap(PlacementDeveloperEquivalentFrame, RequirementRequired)},
			func(m *AdapterManifest) { m.Placement[ManifestPreSession] = PlacementSupport{Support: SupportManual} },
			PlacementOutcomeFailed, PlacementDeveloperEquivalentFrame, "", FailurePlacementUnavailable, false},
		{"missing manifest claim", EventSessionStarting, "hi",
			[]AcceptablePlacement{ap(PlacementPrePromptFrame, RequirementRequired)},
			func(m *AdapterManifest) { delete(m.Placement, ManifestPreSession) },
			PlacementOutcomeFailed, PlacementPrePromptFrame, "", FailurePlacementUnavailable, false},
		{"receipt_only never keeps the body", EventSessionStarting, "hi",
			[]AcceptablePlacement{ap(PlacementReceiptOnly, RequirementRequired)},
			nil, PlacementOutcomeDelivered, PlacementReceiptOnly, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mm := m
			mm.Placement = map[ManifestPlacementClass]PlacementSupport{}
			for k, v := range m.Placement {
				mm.Placement[k] = v
			}
			if tt.edit != nil {
				tt.edit(&mm)
			}
			p := textPayload(tt.body, tt.places...)
			d := ResolvePlacement(mm, p, PlacementRoutes(tt.event))
			if d.Outcome != tt.outcome || d.Placement != tt.place || d.KeepBody != tt.keepBody {
				t.Fatalf("decision %+v", d)
			}
			target := ""
			if d.Target != nil {
				target = string(*d.Target)
			}
			if target != tt.target {
				t.Errorf("target %q, want %q", target, tt.target)
			}
			switch {
			case tt.failure == "" && d.FailureClass != nil:
				t.Errorf("unexpected failure %s", *d.FailureClass)
			case tt.failure != "" && (d.FailureClass == nil || *d.FailureClass != tt.failure || *d.RetryClass != tt.failure.DefaultRetry()):
				t.Errorf("failure %v retry %v, want %s", d.FailureClass, d.RetryClass, tt.failure)
			}
			if d.Reason == "" || len(d.Attempts) == 0 {
				t.Errorf("no reason or attempts: %+v", d)
			}
			pr := d.Receipt(p)
			if err := pr.Validate(); err != nil {
				t.Fatalf("receipt invalid: %v", err)
			}
			if pr.Status != tt.outcome || pr.Placement != tt.place || pr.ContentDigest != p.ContentDigest || pr.ByteSize != p.ByteSize {
				t.Errorf("receipt %+v", pr)
			}
		})
	}
}

// TestManifestPlacementGivenAsPayloadPlacement: a payload that names a
// manifest placement is told which vocabulary it used and what to ask.
func TestManifestPlacementGivenAsPayloadPlacement(t *testing.T) {
	var p PlacementClass
	err := p.UnmarshalText([]byte("pre_session"))
	if err == nil || !strings.Contains(err.Error(), `"pre_session" is a manifest placement`) ||
		!strings.Contains(err.Error(), "developer_equivalent_frame or pre_prompt_frame is placed at pre_session") {
		t.Fatalf("err = %v", err)
	}
	if err := p.UnmarshalText([]byte("bogus")); err == nil || strings.Contains(err.Error(), "manifest placement") {
		t.Fatalf("err = %v", err)
	}
}
