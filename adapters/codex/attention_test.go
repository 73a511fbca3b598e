package codex

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// TestAttentionEvent: Codex 0.169's hooks (measured:
// testdata/attention/codex-*.hooks.jsonl).
func TestAttentionEvent(t *testing.T) {
	at := time.Date(2026, 12, 2, 12, 0, 1, 0, time.UTC)
	for _, c := range []struct {
		payload string
		ok      bool
		kind    adapters.AttentionKind
		state   adapters.AttentionState
		detail  string
	}{
		{`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, true, adapters.AttentionTurnStarted, "", ""},
		{`{"hook_event_name":"Stop","last_assistant_message":"done"}`, true, adapters.AttentionTurnEnded, "", ""},
		{`{"hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"touch x"}}`, true, adapters.AttentionClaim, adapters.AttentionWorking, ""},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch secret-path"}}`, true, adapters.AttentionClaim, adapters.AttentionNeedsPermission, "Bash"},
		{`{"hook_event_name":"SessionStart","source":"startup"}`, false, "", "", ""},
		{`not json`, false, "", "", ""},
	} {
		f, ok := Harness{}.AttentionEvent([]byte(c.payload), at)
		if ok != c.ok || (ok && (f.Kind != c.kind || f.State != c.state || f.Detail != c.detail || f.Source != adapters.AttentionFromHook || !f.At.Equal(at))) {
			t.Errorf("AttentionEvent(%s) = %+v %v, want %s %s %q %v", c.payload, f, ok, c.kind, c.state, c.detail, c.ok)
		}
	}
}

// TestAttentionRecord: the recorded rollout's task_complete carries the
// error that stopped the turn; a plain task_complete ends the turn.
func TestAttentionRecord(t *testing.T) {
	b, err := os.ReadFile("testdata/attention/codex-error.rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	f, ok := Harness{}.AttentionRecord(bytes.TrimSpace(b))
	if !ok || f.State != adapters.AttentionStoppedOnError || f.Detail != "response_too_many_failed_attempts (429)" || f.Source != adapters.AttentionFromTranscript || f.At.IsZero() {
		t.Errorf("recorded rollout: %+v %v", f, ok)
	}
	f, ok = Harness{}.AttentionRecord([]byte(`{"timestamp":"2026-12-02T12:00:00Z","type":"event_msg","payload":{"type":"task_complete"}}`))
	if !ok || f.Kind != adapters.AttentionTurnEnded || f.State != "" {
		t.Errorf("plain task_complete: %+v %v", f, ok)
	}
	if _, ok := (Harness{}).AttentionRecord([]byte(`{"type":"response_item","payload":{"type":"message"}}`)); ok {
		t.Error("a message line maps to a fact")
	}
}
