package renewal

import (
	"reflect"
	"testing"
)

func testPolicy() *Policy {
	return &Policy{Client: PolicyClientID, ThresholdPercent: 70, TriggerPercent: 72.5, Window: 200000,
		NoteDigest: "sha256:abc", NoteBytes: 812, NoteSource: "builtin", ThisHour: 1, PerHour: 4}
}

// TestPolicyRecordedInEveryStep: a policy's renewal carries its evidence
// under "policy" in the telemetry_summary of each of its receipts and in
// renewal.json; a person's carries none.
func TestPolicyRecordedInEveryStep(t *testing.T) {
	w := newWorld(t)
	o := w.orchestrator(t, "claude", "claude")
	p := testPolicy()
	if _, err := o.Renew(t.Context(), Request{Resume: true, BetweenTurns: true, Policy: p}); err != nil {
		t.Fatal(err)
	}
	if len(w.ledger) != 4 {
		t.Fatalf("recorded %v", events(w.ledger))
	}
	for _, r := range w.ledger {
		if got, _ := r.summary["policy"].(map[string]any); !reflect.DeepEqual(got, p.Map()) {
			t.Errorf("%s policy %v, want %v", r.ev, r.summary["policy"], p.Map())
		}
	}
	st, err := ReadStatus(o.StatusPath)
	if err != nil || st.Policy == nil || *st.Policy != *p {
		t.Fatalf("renewal.json policy %+v (%v), want %+v", st.Policy, err, p)
	}

	n := len(w.ledger)
	if _, err := o.Renew(t.Context(), Request{Resume: true}); err != nil {
		t.Fatal(err)
	}
	for _, r := range w.ledger[n:] {
		if _, ok := r.summary["policy"]; ok {
			t.Errorf("a person's renewal %s carries a policy: %v", r.ev, r.summary)
		}
	}
	if st, _ := ReadStatus(o.StatusPath); st.Policy != nil {
		t.Errorf("renewal.json of a person's renewal has policy %+v", st.Policy)
	}
}

// TestPolicyKeptThroughRecover: a policy renewal interrupted at any step
// is finished by Recover with the policy still on its receipts and in
// renewal.json.
func TestPolicyKeptThroughRecover(t *testing.T) {
	for _, at := range []string{"after record session.ending", "after stop", "after start"} {
		t.Run(at, func(t *testing.T) {
			w := newWorld(t)
			w.crashAt = at
			p := testPolicy()
			first := w.orchestrator(t, "claude", "claude")
			if !runUntilCrash(t, func() { _, _ = first.Renew(t.Context(), Request{Resume: true, Policy: p}) }) {
				t.Fatalf("no crash at %q", at)
			}
			w.running = false
			n := len(w.ledger)
			second := w.orchestrator(t, "claude", "claude")
			if _, err := second.Recover(t.Context()); err != nil {
				t.Fatal(err)
			}
			if len(w.ledger) == n {
				t.Fatal("Recover recorded nothing")
			}
			for _, r := range w.ledger[n:] {
				if got, _ := r.summary["policy"].(map[string]any); !reflect.DeepEqual(got, p.Map()) {
					t.Errorf("recovered %s policy %v, want %v", r.ev, r.summary["policy"], p.Map())
				}
			}
			if st, _ := ReadStatus(StatusPath(w.dir)); st.Policy == nil || *st.Policy != *p || !st.Recovered {
				t.Errorf("renewal.json after Recover: policy %+v recovered %v", st.Policy, st.Recovered)
			}
		})
	}
}
