package otelmap_test

import (
	"testing"

	"go.opentelemetry.io/otel/trace"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/otelid"
	"github.com/lifeloop/lifeloop/internal/otelmap"
)

// TestSwitchIsTwoIncarnationsOfOneSession: a switch to a new harness
// session inside the process ends the first incarnation, not the
// session; the session span ends once, at the process's end.
func TestSwitchIsTwoIncarnationsOfOneSession(t *testing.T) {
	m := otelmap.New("ses_switch")
	sw := map[string]any{"reason": contract.HarnessSessionSwitched, contract.SummarySwitch: 1.0}
	var out otelmap.Output
	for i, r := range []struct {
		ev  contract.Event
		sum map[string]any
	}{
		{contract.EventSessionStarting, nil},
		{contract.EventSessionStarted, nil},
		{contract.EventSessionEnded, map[string]any{"reason": contract.HarnessSessionSwitched, contract.SummarySwitch: 1.0, "phase": "stopped", "outcome": "success"}},
		{contract.EventSessionStarting, sw},
		{contract.EventSessionStarted, sw},
		{contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0", "exit_status": 0.0}},
	} {
		seq := uint64(i + 1)
		o := m.Map(ledger.Entry{Sequence: seq, Receipt: contract.LifecycleReceipt{
			ReceiptID: "r" + string(rune('a'+i)), Sequence: &seq, Event: r.ev, AdapterID: "claude",
			AtEpochS: 1778100000 + int64(i), TelemetrySummary: r.sum,
		}})
		out.Spans = append(out.Spans, o.Spans...)
	}
	sessions, incs := spansNamed(out, otelmap.SpanSession), spansNamed(out, "invoke_agent claude")
	if len(sessions) != 1 || len(incs) != 2 {
		t.Fatalf("%d session spans, %d incarnations; want 1, 2", len(sessions), len(incs))
	}
	// The process keeps the TRACEPARENT it was launched with: its first
	// incarnation's; the switch opens another span of the same process.
	keys := []string{otelid.ProcessSpan(1), otelid.ProcessSwitchSpan(1, 2)}
	for i, inc := range incs {
		if inc.Parent != sessions[0].ID {
			t.Errorf("incarnation %d: parent %v, want the session", i+1, inc.Parent)
		}
		if want := trace.SpanID(otelid.SpanID("ses_switch", keys[i])); inc.ID != want {
			t.Errorf("incarnation %d: id %v, want %v (%s)", i+1, inc.ID, want, keys[i])
		}
	}
	if !sessions[0].End.After(incs[0].End) {
		t.Errorf("the session span ended at %v, with the first incarnation (%v)", sessions[0].End, incs[0].End)
	}
}
