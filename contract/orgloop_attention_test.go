package contract

import (
	"errors"
	"testing"
)

// attentionBlock is the attention block of a supervisor.tick, as the
// ledger holds it (internal/attention.Block's JSON).
func attentionBlock(state string, episode int, closed map[string]any) map[string]any {
	b := map[string]any{"state": state, "since_epoch_ms": 1778100003250, "source": "hook", "evidence": "PermissionRequest",
		"detail": "Bash", "turn": 1, "waited_ms": map[string]any{"needs_permission": 0}}
	if episode != 0 {
		b["episode"] = episode
	}
	if closed != nil {
		b["closed"] = closed
	}
	return ledgerJSON(b)
}

// TestOrgLoopAttention: a change of attention to a waiting state is an
// active resource.changed with the state as its reason, keyed by session
// and episode (a takeover of the same episode has the same key), that
// conforms and carries the block without the episode it closed; a
// change to working, an interval tick with the same block and a tick
// without attention have no event; the webhook has no hook for it.
func TestOrgLoopAttention(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessClaudeCode}
	tick := func(seq uint64, trigger string, block map[string]any) LifecycleReceipt {
		return receipt(EventSupervisorTick, StatusObserved, seq, ledgerJSON(map[string]any{"state": "running", "trigger": trigger, "attention": block}))
	}
	for _, c := range []struct {
		state string
		seq   uint64
	}{{"needs_permission", 7}, {"needs_answer", 8}, {"waiting_for_input", 9}, {"stopped_on_error", 10}} {
		closed := map[string]any{"id": 1, "kind": "needs_permission", "duration_ms": 7500}
		ev, err := ProjectOrgLoop(tick(c.seq, "attention_changed", attentionBlock(c.state, 2, closed)), o)
		if err != nil {
			t.Fatalf("%s: %v", c.state, err)
		}
		lc := ev.Payload.Lifecycle
		if lc.Phase != PhaseActive || lc.Terminal || lc.Reason != c.state || ev.Type != OrgLoopResourceChanged || lc.DedupeKey != "claude-code:ses_A:active:attention.2" {
			t.Errorf("%s: lifecycle %+v type %s", c.state, lc, ev.Type)
		}
		if err := AssertLifecycleConformance(ev); err != nil {
			t.Errorf("%s: %v", c.state, err)
		}
		att := ev.Payload.Attention
		if att["state"] != c.state || att["episode"] != 2.0 || att["detail"] != "Bash" || att["closed"] != nil {
			t.Errorf("%s: payload.attention %v", c.state, att)
		}
		if ev.Provenance.PlatformEvent != "session.active" {
			t.Errorf("%s: platform_event %s", c.state, ev.Provenance.PlatformEvent)
		}
		if _, err := OrgLoopWebhookPost(tick(c.seq, "attention_changed", attentionBlock(c.state, 2, nil)), o); !errors.Is(err, ErrNoOrgLoopPhase) {
			t.Errorf("%s: webhook post: %v, want ErrNoOrgLoopPhase", c.state, err)
		}
	}
	// The hook takes over an episode the screen opened: the same key.
	screen, hook := tick(20, "attention_changed", attentionBlock("needs_permission", 3, nil)), tick(21, "attention_changed", attentionBlock("needs_permission", 3, nil))
	screen.ReceiptID, hook.ReceiptID = "lfr_20", "lfr_21"
	a, _ := ProjectOrgLoop(screen, o)
	b, _ := ProjectOrgLoop(hook, o)
	if a.Payload.Lifecycle.DedupeKey != b.Payload.Lifecycle.DedupeKey || a.ID == b.ID {
		t.Errorf("one episode's changes: keys %s, %s; ids %s, %s", a.Payload.Lifecycle.DedupeKey, b.Payload.Lifecycle.DedupeKey, a.ID, b.ID)
	}
	// A continuation's wrapper numbers its episodes from 1 again: its
	// session part keeps them apart.
	cont := tick(30, "attention_changed", attentionBlock("needs_permission", 3, nil))
	cont.TelemetrySummary[SummaryContinuation] = 1.0
	if ev, _ := ProjectOrgLoop(cont, o); ev.Payload.Lifecycle.DedupeKey != "claude-code:ses_A.c1:active:attention.3" {
		t.Errorf("continuation key %s", ev.Payload.Lifecycle.DedupeKey)
	}
	for name, r := range map[string]LifecycleReceipt{
		"to working":          tick(11, "attention_changed", attentionBlock("working", 0, map[string]any{"id": 2})),
		"interval tick":       tick(12, "interval", attentionBlock("needs_permission", 2, nil)),
		"no attention":        receipt(EventSupervisorTick, StatusObserved, 13, map[string]any{"state": "running", "trigger": "attention_changed"}),
		"waiting, no episode": tick(14, "attention_changed", attentionBlock("waiting_for_input", 0, nil)),
	} {
		if _, err := ProjectOrgLoop(r, o); !errors.Is(err, ErrNoOrgLoopPhase) {
			t.Errorf("%s: %v, want ErrNoOrgLoopPhase", name, err)
		}
	}
	// A summary built in memory may hold the block as a struct.
	type block struct {
		State   string `json:"state"`
		Episode int    `json:"episode"`
	}
	mem := receipt(EventSupervisorTick, StatusObserved, 40, map[string]any{"trigger": "attention_changed", "attention": block{"needs_answer", 4}})
	if ev, err := ProjectOrgLoop(mem, o); err != nil || ev.Payload.Lifecycle.Reason != "needs_answer" || ev.Payload.Attention["episode"] != 4.0 {
		t.Errorf("a block built in memory: %+v, %v", ev.Payload, err)
	}
	// The frame events keep running and idle, without attention.
	ev, err := ProjectOrgLoop(receipt(EventFrameEnded, StatusObserved, 15, ledgerJSON(map[string]any{"frame_id": "f1", "attention": map[string]any{"waited_ms": map[string]any{"needs_permission": 7500}, "episodes": 1}})), o)
	if err != nil || ev.Payload.Lifecycle.Reason != "idle" || ev.Payload.Attention != nil {
		t.Errorf("frame.ended: %+v, %v", ev.Payload, err)
	}
}

// TestOrgLoopAttentionAtTheEnd: a stop whose session.ended carries the
// session's attention (state unknown, its waiting per kind, the episode
// the end closed) has that block as payload.attention, and the webhook
// stop as meta.attention; a stop without it has none.
func TestOrgLoopAttentionAtTheEnd(t *testing.T) {
	o := OrgLoopOptions{SessionID: "ses_A", Harness: HarnessCodex}
	sum := ledgerJSON(map[string]any{"phase": "stopped", "outcome": "cancelled", "reason": "sigterm", "signal": 15,
		"attention": map[string]any{"state": "unknown", "since_epoch_ms": 1778100090400, "turn": 2,
			"waited_ms": map[string]any{"needs_permission": 7500, "stopped_on_error": 17800},
			"closed":    map[string]any{"id": 3, "kind": "stopped_on_error", "duration_ms": 17800}}})
	ev, err := ProjectOrgLoop(receipt(EventSessionEnded, StatusObserved, 50, sum), o)
	if err != nil {
		t.Fatal(err)
	}
	closed, _ := ev.Payload.Attention["closed"].(map[string]any)
	if ev.Payload.Attention["state"] != "unknown" || closed["duration_ms"] != 17800.0 || ev.Payload.Lifecycle.Phase != PhaseStopped {
		t.Errorf("payload %+v", ev.Payload)
	}
	if err := AssertLifecycleConformance(ev); err != nil {
		t.Error(err)
	}
	post, err := OrgLoopWebhookPost(receipt(EventSessionEnded, StatusObserved, 50, sum), o)
	if err != nil {
		t.Fatal(err)
	}
	if att, _ := post.Meta["attention"].(map[string]any); att["waited_ms"].(map[string]any)["needs_permission"] != 7500.0 {
		t.Errorf("webhook meta.attention %v", post.Meta["attention"])
	}
	delete(sum, "attention")
	ev, _ = ProjectOrgLoop(receipt(EventSessionEnded, StatusObserved, 50, sum), o)
	post, _ = OrgLoopWebhookPost(receipt(EventSessionEnded, StatusObserved, 50, sum), o)
	if ev.Payload.Attention != nil || post.Meta["attention"] != nil {
		t.Errorf("a stop without attention has some: %v, %v", ev.Payload.Attention, post.Meta["attention"])
	}
}
