package hcp

import (
	"encoding/json"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
)

// hcpUsageBlock is a usage block as a ledger holds it: calls of
// claude-sonnet-4-5 with their cost, unknown (no usd) when unpriced.
func hcpUsageBlock(calls int, priced bool) map[string]any {
	cost := map[string]any{"provenance": "unknown"}
	if priced {
		cost = map[string]any{"usd": 0.00708 * float64(calls), "provenance": "estimated"}
	}
	tokens := map[string]any{"input": 1200 * calls, "cache_read": 4000 * calls, "cache_write": 300 * calls, "output": 77 * calls, "reasoning": 0, "total": 5577 * calls}
	b := map[string]any{"calls": calls, "tokens": tokens, "cost": cost, "models": map[string]any{"claude-sonnet-4-5": map[string]any{"calls": calls, "tokens": tokens, "cost": cost}}}
	raw, _ := json.Marshal(b)
	var out map[string]any
	_ = json.Unmarshal(raw, &out)
	return out
}

// TestUsageMetadata: each turn's frame.ended progress carries its usage
// block as metadata.usage, and the session.ended's state_changed the
// session's totals; progress of the other frame moments, and a frame.ended without a
// block, carry none; an unpriced cost stays unknown with no figure; the
// stream is still seed 001's.
func TestUsageMetadata(t *testing.T) {
	for _, priced := range []bool{true, false} {
		var b rb
		total := hcpUsageBlock(2, priced)
		total["harness_sessions"] = []any{hcpUsageBlock(2, priced)}
		rs := []contract.LifecycleReceipt{
			b.next(contract.EventSessionStarting, nil),
			b.next(contract.EventSessionStarted, nil),
			b.next(contract.EventFrameOpened, map[string]any{"frame_id": "frm_1"}),
			b.next(contract.EventFrameEnded, map[string]any{"frame_id": "frm_1", "usage": hcpUsageBlock(1, priced)}),
			b.next(contract.EventFrameOpened, map[string]any{"frame_id": "frm_2"}),
			b.next(contract.EventFrameEnded, map[string]any{"frame_id": "frm_2", "usage": hcpUsageBlock(1, priced)}),
			b.next(contract.EventFrameEnded, map[string]any{"frame_id": "frm_3"}),
			b.next(contract.EventSessionEnded, map[string]any{"phase": "completed", "outcome": "success", "reason": "exit_code_0", "exit_status": 0, "usage": total}),
		}
		es := project(NewProjector(sid), rs)
		checkEnvelopes(t, es)
		checkSeed001(t, es)
		var turns []map[string]any
		var final map[string]any
		for _, e := range es {
			d := e.Payload.Data
			meta, _ := d["metadata"].(map[string]any)
			u, _ := meta["usage"].(map[string]any)
			switch {
			case e.Payload.EventType == Progress && d["stage"] == string(contract.EventFrameEnded) && d["frame_id"] != "frm_3":
				turns = append(turns, u)
			case e.Payload.EventType == StateChanged && d["to_state"] == StateCompleted:
				final = u
			case u != nil:
				t.Errorf("priced %v: %s %v carries metadata.usage", priced, e.Payload.EventType, d)
			}
		}
		if len(turns) != 2 || final == nil {
			t.Fatalf("priced %v: turns' usage %v, final state_changed's %v", priced, turns, final)
		}
		for what, u := range map[string]map[string]any{"turn 1": turns[0], "turn 2": turns[1], "session": final} {
			calls := 1.0
			if what == "session" {
				calls = 2
			}
			tok, _ := u["tokens"].(map[string]any)
			cost, _ := u["cost"].(map[string]any)
			usd, has := cost["usd"].(float64)
			if u["calls"] != calls || tok["input"] != 1200*calls || tok["cache_read"] != 4000*calls || tok["cache_write"] != 300*calls || tok["output"] != 77*calls {
				t.Errorf("priced %v: %s metadata.usage %v", priced, what, u)
			}
			if priced && (!has || usd != 0.00708*calls || cost["provenance"] != "estimated") || !priced && (has || cost["provenance"] != "unknown") {
				t.Errorf("priced %v: %s cost %v", priced, what, cost)
			}
		}
		if hs, _ := final["harness_sessions"].([]any); len(hs) != 1 {
			t.Errorf("priced %v: session's harness_sessions %v", priced, final["harness_sessions"])
		}
	}
}
