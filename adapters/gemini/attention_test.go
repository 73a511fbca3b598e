package gemini

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
		// Measured with 0.61 (shared harnesses/gemini.md).
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool Confirm Shell Command requires execution","details":{"type":"exec","title":"Confirm Shell Command","command":"touch notify-file.txt","rootCommand":"touch"}}`, true, claim, adapters.AttentionNeedsPermission, "Confirm Shell Command: touch"},
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool requires confirmation","details":{"type":"ask_user","title":"Question"}}`, true, claim, adapters.AttentionNeedsAnswer, "Question"},
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","details":{"type":"edit","title":"Confirm Edit","fileDiff":"secret"}}`, true, claim, adapters.AttentionNeedsPermission, "Confirm Edit"},
		{`{"hook_event_name":"Notification","notification_type":"Other"}`, false, "", "", ""},
		{`{"hook_event_name":"BeforeAgent","prompt":"hi"}`, true, turnStarted, "", ""},
		{`{"hook_event_name":"AfterAgent","prompt_response":"done"}`, true, turnEnded, "", ""},
		{`{"hook_event_name":"AfterTool","tool_name":"run_shell_command"}`, true, claim, adapters.AttentionWorking, ""},
		{`{"hook_event_name":"AfterModel"}`, false, "", "", ""},
	})
}
