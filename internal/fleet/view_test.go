package fleet

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
)

// events projects a small ledger (start, a waiting tick, an abort, the
// end) of session id on machine through the real HCP projector.
func events(t *testing.T, id, machine string, at int64) []hcp.Envelope {
	t.Helper()
	p := hcp.NewProjector(id)
	p.SetMachine(machine)
	var out []hcp.Envelope
	seq := uint64(0)
	add := func(ev contract.Event, sum map[string]any) {
		seq++
		s := seq
		r := contract.LifecycleReceipt{
			SchemaVersion: contract.ReceiptSchemaVersion, ReceiptID: "lfr_" + id + string(rune('A'+s)), ClientID: "lifeloop",
			AdapterID: "generic", InvocationID: "inv", Event: ev, EventID: "evt", Sequence: &s,
			IntegrationMode: contract.ModeLauncherWrapper, Status: contract.StatusObserved, AtEpochS: at + int64(s), TelemetrySummary: sum,
		}
		out = append(out, p.Project(r)...)
	}
	add(contract.EventSessionStarting, nil)
	add(contract.EventSessionStarted, nil)
	add(contract.EventSupervisorTick, map[string]any{"state": "running", "trigger": "attention_changed",
		"attention": map[string]any{"state": "needs_permission", "since_epoch_ms": (at + 3) * 1000, "source": "hook"}})
	add(contract.EventSessionEnding, map[string]any{"reason": "abort"})
	add(contract.EventSessionEnded, map[string]any{"phase": "stopped", "outcome": "cancelled", "reason": "abort"})
	return out
}

// TestViewFoldsMachinesSessions: each session's row takes its machine
// and harness from session_created, its state and reason from the last
// transition, its attention from the stream; repeats change nothing, a
// sequence jump is counted as missing events, and only a machine silent
// past the bound makes its open sessions stale.
func TestViewFoldsMachinesSessions(t *testing.T) {
	v := NewView()
	a := events(t, "ses_a", "m1", 1_800_000_000)
	b := events(t, "ses_b", "m2", 1_800_000_100)
	for _, e := range a {
		v.Apply(e)
	}
	for _, e := range a {
		v.Apply(e) // redelivered: nothing changes
	}
	if len(b) != 6 || b[2].Payload.EventType != hcp.Progress || b[3].Payload.Data["to_state"] != hcp.StateAborting {
		t.Fatalf("m2's events changed shape: %+v", b)
	}
	for _, e := range []hcp.Envelope{b[0], b[1], b[3]} {
		v.Apply(e) // the progress lost; the abort not over yet
	}
	now := time.Unix(1_800_000_200, 0)
	rows := v.Rows(now, time.Minute)
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	ra, rb := rows[0], rows[1]
	if ra.Machine != "m1" || ra.Session != "ses_a" || ra.Harness != "generic" || ra.State != hcp.StateAborted || ra.Reason != "abort" || !ra.Closed || ra.Gaps != 0 || ra.Stale {
		t.Errorf("m1's row %+v: want generic ABORTED (abort), closed, no gap, not stale", ra)
	}
	if ra.Attention["state"] != "needs_permission" {
		t.Errorf("m1's attention %v", ra.Attention)
	}
	if rb.Machine != "m2" || rb.State != hcp.StateAborting || rb.Closed || rb.Gaps != 1 || !rb.Stale {
		t.Errorf("m2's row %+v: want ABORTING, open, 1 missing, stale (silent for 100 s, bound 1 min)", rb)
	}
	if rows := v.Rows(now, 0); rows[1].Stale {
		t.Error("a bound of 0 made a session stale")
	}
}
