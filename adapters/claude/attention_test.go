package claude

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// mapped is what AttentionEvent should make of one payload.
type mapped struct {
	payload string
	ok      bool
	kind    adapters.AttentionKind
	state   adapters.AttentionState
	detail  string
}

const (
	claim       = adapters.AttentionClaim
	turnStarted = adapters.AttentionTurnStarted
	turnEnded   = adapters.AttentionTurnEnded
)

func checkAttentionEvents(t *testing.T, cases []mapped) {
	t.Helper()
	at := time.Date(2026, 12, 2, 12, 0, 1, 0, time.UTC)
	for _, c := range cases {
		f, ok := Harness{}.AttentionEvent([]byte(c.payload), at)
		if ok != c.ok || (ok && (f.Kind != c.kind || f.State != c.state || f.Detail != c.detail || f.Source != adapters.AttentionFromHook || !f.At.Equal(at))) {
			t.Errorf("AttentionEvent(%s) = %+v %v, want %s %s %q %v", c.payload, f, ok, c.kind, c.state, c.detail, c.ok)
		}
	}
}

func TestAttentionEvent(t *testing.T) {
	checkAttentionEvents(t, []mapped{
		{`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, true, turnStarted, "", ""},
		{`{"hook_event_name":"Stop","last_assistant_message":"done"}`, true, turnEnded, "", ""},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch secret-path"}}`, true, claim, adapters.AttentionNeedsPermission, "Bash"},
		{`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"header":"Database","question":"Which one?"}]}}`, true, claim, adapters.AttentionNeedsAnswer, "Database"},
		{`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which one?"}]}}`, true, claim, adapters.AttentionNeedsAnswer, "Which one?"},
		{`{"hook_event_name":"PermissionDenied","tool_name":"Bash","reason":"classifier"}`, true, claim, adapters.AttentionWorking, ""},
		{`{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, true, claim, adapters.AttentionWorking, ""},
		{`{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission"}`, true, claim, adapters.AttentionNeedsPermission, "Claude needs your permission"},
		{`{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`, true, claim, adapters.AttentionWaitingForInput, ""},
		{`{"hook_event_name":"Notification","notification_type":"elicitation_dialog","message":"Claude Code needs your input"}`, true, claim, adapters.AttentionNeedsAnswer, "Claude Code needs your input"},
		{`{"hook_event_name":"Notification","notification_type":"auth_success","message":"ok"}`, false, "", "", ""},
		{`{"hook_event_name":"Elicitation","mcp_server_name":"github"}`, true, claim, adapters.AttentionNeedsAnswer, "github"},
		{`{"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}`, true, claim, adapters.AttentionStoppedOnError, "rate_limit"},
		{`{"hook_event_name":"SessionStart","source":"startup"}`, false, "", "", ""},
		{`not json`, false, "", "", ""},
	})
}
