package attention

import (
	"testing"
	"time"
)

// mapped is what a mapping should make of one payload.
type mapped struct {
	payload string
	ok      bool
	kind    FactKind
	state   State
	detail  string
}

func checkMapping(t *testing.T, name string, mapping func([]byte, time.Time) (Fact, bool), cases []mapped) {
	t.Helper()
	for _, c := range cases {
		f, ok := mapping([]byte(c.payload), at(1))
		if ok != c.ok || (ok && (f.Kind != c.kind || f.State != c.state || f.Detail != c.detail || f.Source != SourceHook || !f.At.Equal(at(1)))) {
			t.Errorf("%s(%s) = %+v %v, want %s %s %q %v", name, c.payload, f, ok, c.kind, c.state, c.detail, c.ok)
		}
	}
}

func TestClaudeHook(t *testing.T) {
	checkMapping(t, "ClaudeHook", ClaudeHook, []mapped{
		{`{"hook_event_name":"UserPromptSubmit","prompt":"hi"}`, true, TurnStarted, "", ""},
		{`{"hook_event_name":"Stop","last_assistant_message":"done"}`, true, TurnEnded, "", ""},
		{`{"hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch secret-path"}}`, true, Claim, NeedsPermission, "Bash"},
		{`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"header":"Database","question":"Which one?"}]}}`, true, Claim, NeedsAnswer, "Database"},
		{`{"hook_event_name":"PermissionRequest","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Which one?"}]}}`, true, Claim, NeedsAnswer, "Which one?"},
		{`{"hook_event_name":"PermissionDenied","tool_name":"Bash","reason":"classifier"}`, true, Claim, Working, ""},
		{`{"hook_event_name":"PostToolUse","tool_name":"Bash"}`, true, Claim, Working, ""},
		{`{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission"}`, true, Claim, NeedsPermission, "Claude needs your permission"},
		{`{"hook_event_name":"Notification","notification_type":"idle_prompt","message":"Claude is waiting for your input"}`, true, Claim, WaitingForInput, ""},
		{`{"hook_event_name":"Notification","notification_type":"elicitation_dialog","message":"Claude Code needs your input"}`, true, Claim, NeedsAnswer, "Claude Code needs your input"},
		{`{"hook_event_name":"Notification","notification_type":"auth_success","message":"ok"}`, false, "", "", ""},
		{`{"hook_event_name":"Elicitation","mcp_server_name":"github"}`, true, Claim, NeedsAnswer, "github"},
		{`{"hook_event_name":"StopFailure","error":"rate_limit","last_assistant_message":"API Error: Request rejected (429)"}`, true, Claim, StoppedOnError, "rate_limit"},
		{`{"hook_event_name":"SessionStart","source":"startup"}`, false, "", "", ""},
		{`not json`, false, "", "", ""},
	})
}

func TestGeminiHook(t *testing.T) {
	checkMapping(t, "GeminiHook", GeminiHook, []mapped{
		// Measured with 0.61 (shared harnesses/gemini.md).
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool Confirm Shell Command requires execution","details":{"type":"exec","title":"Confirm Shell Command","command":"touch notify-file.txt","rootCommand":"touch"}}`, true, Claim, NeedsPermission, "Confirm Shell Command: touch"},
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","message":"Tool requires confirmation","details":{"type":"ask_user","title":"Question"}}`, true, Claim, NeedsAnswer, "Question"},
		{`{"hook_event_name":"Notification","notification_type":"ToolPermission","details":{"type":"edit","title":"Confirm Edit","fileDiff":"secret"}}`, true, Claim, NeedsPermission, "Confirm Edit"},
		{`{"hook_event_name":"Notification","notification_type":"Other"}`, false, "", "", ""},
		{`{"hook_event_name":"BeforeAgent","prompt":"hi"}`, true, TurnStarted, "", ""},
		{`{"hook_event_name":"AfterAgent","prompt_response":"done"}`, true, TurnEnded, "", ""},
		{`{"hook_event_name":"AfterTool","tool_name":"run_shell_command"}`, true, Claim, Working, ""},
		{`{"hook_event_name":"AfterModel"}`, false, "", "", ""},
	})
}

func TestOpenCodeEvent(t *testing.T) {
	checkMapping(t, "OpenCodeEvent", OpenCodeEvent, []mapped{
		{`{"type":"permission.asked","properties":{"id":"per_1","sessionID":"ses_1","permission":"bash","patterns":["touch *"],"metadata":{},"always":[]}}`, true, Claim, NeedsPermission, "bash"},
		{`{"type":"permission.replied","properties":{"sessionID":"ses_1","requestID":"per_1","reply":"once"}}`, true, Claim, Working, ""},
		{`{"type":"question.asked","properties":{"id":"que_1","sessionID":"ses_1","questions":[{"header":"Pick","question":"Which?"}]}}`, true, Claim, NeedsAnswer, "Pick"},
		{`{"type":"question.rejected","properties":{"sessionID":"ses_1","requestID":"que_1"}}`, true, Claim, Working, ""},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"secret body","statusCode":429}}}}`, true, Claim, StoppedOnError, "APIError (429)"},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"ProviderAuthError","data":{"message":"x"}}}}`, true, Claim, StoppedOnError, "ProviderAuthError"},
		{`{"type":"session.error","properties":{"sessionID":"ses_1","error":{"name":"MessageAbortedError"}}}`, false, "", "", ""},
		{`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"busy"}}}`, true, Claim, Working, ""},
		{`{"type":"session.status","properties":{"sessionID":"ses_1","status":{"type":"idle"}}}`, true, TurnEnded, "", ""},
		{`{"type":"message.updated","properties":{}}`, false, "", "", ""},
	})
}
