package contract

import (
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// usageSummaryBlock is a usage block as the wrapper records it
// (docs/contract.md, "Usage travels on frame ends"): one call of
// claude-sonnet-4-5, priced (estimated), or unpriced (unknown, no usd).
func usageSummaryBlock(priced bool) map[string]any {
	cost := map[string]any{"provenance": "unknown"}
	if priced {
		cost = map[string]any{"usd": 0.00708, "provenance": "estimated"}
	}
	tokens := map[string]any{"input": 1200, "cache_read": 4000, "cache_write": 300, "output": 77, "reasoning": 0, "total": 5577}
	model := map[string]any{"calls": 1, "tokens": tokens, "cost": cost}
	return map[string]any{"calls": 1, "tokens": tokens, "cost": cost, "models": map[string]any{"claude-sonnet-4-5": model}}
}

// TestOrgLoopUsage: a turn's frame.ended (active/idle) carries its usage
// block as payload.usage, and so does the stop (its session.ended's
// totals, with the harness sessions), which the webhook posts as
// meta.usage; an unpriced cost stays unknown without a figure; a receipt
// without a block, and an event that is neither (frame.opened, the
// start), has no payload.usage. Every event conforms.
func TestOrgLoopUsage(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode}
	for _, priced := range []bool{true, false} {
		turn := receipt(EventFrameEnded, StatusObserved, 7, ledgerJSON(map[string]any{"frame_id": "frm_1", "usage": usageSummaryBlock(priced)}))
		ev, err := ProjectOrgLoop(turn, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := AssertLifecycleConformance(ev); err != nil {
			t.Error(err)
		}
		u := ev.Payload.Usage
		tok, _ := u["tokens"].(map[string]any)
		cost, _ := u["cost"].(map[string]any)
		if ev.Payload.Lifecycle.Reason != "idle" || u["calls"] != 1.0 || tok["input"] != 1200.0 || tok["cache_read"] != 4000.0 || tok["cache_write"] != 300.0 || tok["output"] != 77.0 {
			t.Errorf("priced %v: turn's event %+v, payload.usage %v", priced, ev.Payload.Lifecycle, u)
		}
		if m, _ := u["models"].(map[string]any); m["claude-sonnet-4-5"] == nil {
			t.Errorf("priced %v: payload.usage models %v", priced, u["models"])
		}
		if _, has := cost["usd"]; priced && (cost["usd"] != 0.00708 || cost["provenance"] != "estimated") || !priced && (has || cost["provenance"] != "unknown") {
			t.Errorf("priced %v: payload.usage cost %v", priced, cost)
		}

		start := time.Unix(1778100000, 0)
		total := usageSummaryBlock(priced)
		total["harness_sessions"] = []any{usageSummaryBlock(priced)}
		sum := SessionEndedSummary(ClassifyExit(ExitFacts{Code: 0}), ExitFacts{Code: 0}, start, start.Add(time.Minute), "/w")
		sum["usage"] = total
		end := receipt(EventSessionEnded, StatusObserved, 9, ledgerJSON(sum))
		stop, err := ProjectOrgLoop(end, o)
		if err != nil {
			t.Fatal(err)
		}
		if err := AssertLifecycleConformance(stop); err != nil {
			t.Error(err)
		}
		b, _ := json.Marshal(stop)
		if err := CheckOrgLoopJSON(b); err != nil {
			t.Error(err)
		}
		if hs, _ := stop.Payload.Usage["harness_sessions"].([]any); !stop.Payload.Lifecycle.Terminal || len(hs) != 1 || stop.Payload.Usage["calls"] != 1.0 {
			t.Errorf("priced %v: stop %+v payload.usage %v", priced, stop.Payload.Lifecycle, stop.Payload.Usage)
		}
		post, err := OrgLoopWebhookPost(end, o)
		if err != nil {
			t.Fatal(err)
		}
		mu, _ := post.Meta["usage"].(map[string]any)
		if mc, _ := mu["cost"].(map[string]any); mu["calls"] != 1.0 || !priced && mc["usd"] != nil || priced && mc["usd"] != 0.00708 {
			t.Errorf("priced %v: webhook stop meta.usage %v", priced, post.Meta["usage"])
		}
	}

	opened := receipt(EventFrameOpened, StatusObserved, 6, ledgerJSON(map[string]any{"frame_id": "frm_1", "usage": usageSummaryBlock(true)}))
	started := receipt(EventSessionStarted, StatusObserved, 2, ledgerJSON(map[string]any{"usage": usageSummaryBlock(true)}))
	bare := receipt(EventFrameEnded, StatusObserved, 8, ledgerJSON(map[string]any{"frame_id": "frm_2"}))
	for name, r := range map[string]LifecycleReceipt{"frame.opened": opened, "session.started": started, "frame.ended without a block": bare} {
		ev, err := ProjectOrgLoop(r, o)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if ev.Payload.Usage != nil {
			t.Errorf("%s: payload.usage %v, want none", name, ev.Payload.Usage)
		}
	}
	if post, err := OrgLoopWebhookPost(started, o); err != nil || post.Meta["usage"] != nil {
		t.Errorf("webhook start: %v, meta.usage %v, want none", err, post.Meta["usage"])
	}
	if _, err := OrgLoopWebhookPost(receipt(EventFrameEnded, StatusObserved, 7, ledgerJSON(map[string]any{"usage": usageSummaryBlock(true)})), o); !errors.Is(err, ErrNoOrgLoopPhase) {
		t.Errorf("webhook of a turn's end: %v, want ErrNoOrgLoopPhase (no hook for it)", err)
	}
}
