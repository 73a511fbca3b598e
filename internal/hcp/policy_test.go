package hcp

import (
	"encoding/json"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/renewal"
)

// policyEvidence is the "policy" object of a policy renewal's receipts.
func policyEvidence() map[string]any {
	return renewal.Policy{
		Client: renewal.PolicyClientID, ThresholdPercent: 70, TriggerPercent: 71.3, TriggerTokens: 71300, Window: 100000,
		NoteDigest: "sha256:ab12", NoteBytes: 1234, NoteSource: "builtin", ThisHour: 2, PerHour: 3,
	}.Map()
}

// TestPolicyRenewalMetadata: the state_changed events of a renewal a
// policy client asked for carry its evidence as metadata.policy; a
// person's renewal carries no metadata; the stream is still seed 001's.
func TestPolicyRenewalMetadata(t *testing.T) {
	rs := renewalLedger(false)
	for _, r := range rs {
		if r.TelemetrySummary["reason"] == "renewal" {
			r.TelemetrySummary["policy"] = policyEvidence()
		}
	}
	es := project(NewProjector(sid), rs)
	checkEnvelopes(t, es)
	checkSeed001(t, es)
	for _, i := range []int{3, 5} { // RUNNING → PAUSED (renewal), PAUSED → RUNNING (renewed)
		d := es[i].Payload.Data
		meta, _ := d["metadata"].(map[string]any)
		pol, _ := meta["policy"].(map[string]any)
		if d["reason"] != []string{3: "renewal", 5: "renewed"}[i] || pol["client"] != renewal.PolicyClientID || pol["trigger_percent"] != 71.3 || pol["note_digest"] != "sha256:ab12" {
			t.Errorf("event %d (%v): data %v, want the policy evidence in metadata", i, d["reason"], d)
		}
	}
	// Encoded and decoded as a consumer reads it.
	b, err := json.Marshal(es[3])
	if err != nil {
		t.Fatal(err)
	}
	dec, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	if pol := dec.Payload.Data["metadata"].(map[string]any)["policy"].(map[string]any); pol["per_hour"] != json.Number("3") {
		t.Errorf("decoded policy %v", pol)
	}

	for _, e := range project(NewProjector(sid), renewalLedger(false)) {
		if _, ok := e.Payload.Data["metadata"]; ok && e.Payload.EventType == StateChanged {
			t.Errorf("a person's renewal has metadata: %v", e.Payload.Data)
		}
	}
}

// TestPolicyReportWarning: a policy client's report (capability.degraded
// of capability renewal.policy) is a warning whose details carry the
// policy object: decision, reason, detail and evidence.
func TestPolicyReportWarning(t *testing.T) {
	var b rb
	p := NewProjector(sid)
	project(p, []contract.LifecycleReceipt{b.next(contract.EventSessionStarting, nil), b.next(contract.EventSessionStarted, nil)})
	report := policyEvidence()
	report["decision"], report["reason"], report["detail"] = "gave_up", "session_limit", "3 policy renewals in the last hour (limit 3)"
	detail := report["detail"].(string)
	es := p.Project(b.next(contract.EventCapabilityDegraded, map[string]any{"policy": report}, func(r *contract.LifecycleReceipt) {
		r.Status = contract.StatusDegraded
		r.CapabilityDegradations = []contract.CapabilityDegradation{{Capability: "renewal.policy", PreviousSupport: contract.SupportSynthesized, CurrentSupport: contract.SupportUnavailable, Evidence: &detail}}
	}))
	if len(es) != 1 || es[0].Payload.EventType != Warning {
		t.Fatalf("report: %+v", es)
	}
	details := es[0].Payload.Data["details"].(map[string]any)
	pol, _ := details["policy"].(map[string]any)
	if details["capability"] != "renewal.policy" || details["evidence"] != detail || pol["decision"] != "gave_up" || pol["reason"] != "session_limit" || pol["renewals_this_hour"] != 2 {
		t.Errorf("report details %v", details)
	}
}

// TestPolicyRenewalWhoseRelaunchDied: the fallback's resume of a policy
// renewal whose relaunch died (reason renewal_failed) carries the
// evidence too.
func TestPolicyRenewalWhoseRelaunchDied(t *testing.T) {
	var b rb
	step := func(s string) map[string]any {
		return map[string]any{"reason": "renewal", "renewal_attempt": 1, "renewal_step": s, "policy": policyEvidence()}
	}
	es := project(NewProjector(sid), []contract.LifecycleReceipt{
		b.next(contract.EventSessionStarting, nil),
		b.next(contract.EventSessionStarted, nil),
		b.next(contract.EventSessionEnding, step("ending")),
		b.next(contract.EventSessionStarting, step("fallback_starting")),
		b.next(contract.EventSessionStarted, step(contract.RenewalStepFallbackStarted)),
	})
	checkSeed001(t, es)
	last := es[len(es)-1].Payload.Data
	meta, _ := last["metadata"].(map[string]any)
	if pol, _ := meta["policy"].(map[string]any); last["reason"] != "renewal_failed" || pol["note_source"] != "builtin" {
		t.Errorf("the fallback's resume %v", last)
	}
}
