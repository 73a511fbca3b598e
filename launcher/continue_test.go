package launcher

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// TestContinuedSessionIsANewIncarnation: a wrapper continuing a session
// whose last wrapper was lost (its ledger ends with the sealed
// session.ended) marks its session.* receipts continuation 1, so its
// start and end are an incarnation of their own in OrgLoop (id.c1), not
// a repeat of the first wrapper's start and a second end of it. Its
// other receipts are left as they are.
func TestContinuedSessionIsANewIncarnation(t *testing.T) {
	f := newFixture(t, "exit 0")
	f.cfg.Tick = 0
	f.cfg.Recover = true
	f.cfg.Prior = []contract.LifecycleReceipt{
		{ReceiptID: "lfr_1", Event: contract.EventSessionStarting},
		{ReceiptID: "lfr_2", Event: contract.EventSessionStarted},
		{ReceiptID: "lfr_3", Event: contract.EventSessionEnded, Status: contract.StatusObserved,
			TelemetrySummary: map[string]any{contract.SummaryReason: "wrapper_lost", contract.SummaryPhase: "stopped"}},
	}
	f.run(t)
	const id = "ses_x"
	seen := map[contract.Event]bool{}
	f.rec.mu.Lock()
	defer f.rec.mu.Unlock()
	for _, m := range f.rec.moments {
		r := contract.LifecycleReceipt{Event: m.Event, TelemetrySummary: m.Summary}
		want := id
		switch m.Event {
		case contract.EventSessionStarting, contract.EventSessionStarted, contract.EventSessionEnded:
			want = id + ".c1"
			seen[m.Event] = true
		}
		if got := contract.OrgLoopIncarnation(r, id); got != want {
			t.Errorf("%s: incarnation %s, want %s (summary %v)", m.Event, got, want, m.Summary)
		}
	}
	if len(seen) != 3 {
		t.Errorf("recorded %v, want session.starting, session.started and session.ended", f.rec.moments)
	}
}
