package contract

import (
	"errors"
	"reflect"
	"testing"
)

// policyEvidence is the "policy" object of a policy renewal's receipts
// (renewal.Policy.Map(), as the ledger holds it).
func policyEvidence() map[string]any {
	return ledgerJSON(map[string]any{
		"client": "lifeloop-autorenew", "threshold_percent": 70, "trigger_percent": 71.3, "trigger_tokens": 71300,
		"window": 100000, "note_digest": "sha256:9f2c4e1a", "note_bytes": 1234, "note_source": "builtin",
		"renewals_this_hour": 2, "per_hour": 3,
	})
}

// policyRenewalStarted is the session.started of renewal 2, a policy
// renewal, of the docs' session.
func policyRenewalStarted(started LifecycleReceipt) LifecycleReceipt {
	r := started
	r.ReceiptID, r.Sequence, r.AtEpochS = "lfr_01KAQ4K0R2Y5Z7A9C1E3G5J7M9", Ptr(uint64(88)), started.AtEpochS+1800
	r.TelemetrySummary = ledgerJSON(map[string]any{"reason": "renewal", "renewal_attempt": 2, "renewal_step": "started", "resume": false})
	r.TelemetrySummary["policy"] = policyEvidence()
	return r
}

// TestOrgLoopPolicyRenewal: the stop and start of a renewal a policy
// client asked for carry its evidence (payload.renewal_policy, and
// meta.renewal_policy in the webhook post) and still conform; a person's
// renewal and any other event carry none; a policy report has no OrgLoop
// event.
func TestOrgLoopPolicyRenewal(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex}
	step := func(ev Event, s string, policy bool) LifecycleReceipt {
		sum := ledgerJSON(map[string]any{"reason": "renewal", "renewal_attempt": 2, "renewal_step": s,
			"exit_code": 0, "stopped_by": "renewal", "phase": "stopped", "outcome": "cancelled", "exit_reason": "renewal"})
		if ev == EventSessionStarted {
			sum = ledgerJSON(map[string]any{"reason": "renewal", "renewal_attempt": 2, "renewal_step": s})
		}
		if policy {
			sum["policy"] = policyEvidence()
		}
		return receipt(ev, StatusObserved, 9, sum)
	}
	for _, r := range []LifecycleReceipt{step(EventSessionEnded, "ended", true), step(EventSessionStarted, "started", true)} {
		ev, err := ProjectOrgLoop(r, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(ev.Payload.RenewalPolicy, policyEvidence()) {
			t.Errorf("%s: payload.renewal_policy %v, want the evidence", r.Event, ev.Payload.RenewalPolicy)
		}
		if err := AssertLifecycleConformance(ev); err != nil {
			t.Errorf("%s: %v", r.Event, err)
		}
		post, err := OrgLoopWebhookPost(r, o)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(post.Meta["renewal_policy"], policyEvidence()) || post.SessionID != "ses_A.r2" {
			t.Errorf("%s: post %+v, want meta.renewal_policy", r.Event, post)
		}
	}
	for _, r := range []LifecycleReceipt{step(EventSessionEnded, "ended", false), step(EventSessionStarted, "started", false)} {
		ev, _ := ProjectOrgLoop(r, o)
		post, _ := OrgLoopWebhookPost(r, o)
		if ev.Payload.RenewalPolicy != nil || post.Meta["renewal_policy"] != nil {
			t.Errorf("a person's renewal (%s) carries policy evidence", r.Event)
		}
	}
	report := policyEvidence()
	report["decision"], report["reason"], report["detail"] = "gave_up", "futile", "too big"
	if _, err := ProjectOrgLoop(receipt(EventCapabilityDegraded, StatusDegraded, 10, map[string]any{"policy": report}), o); !errors.Is(err, ErrNoOrgLoopPhase) {
		t.Errorf("a policy report: %v, want ErrNoOrgLoopPhase", err)
	}
}
