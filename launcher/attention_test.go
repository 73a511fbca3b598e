package launcher

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/control"
)

// claudeHook sends one Claude hook call over the control socket, as
// `lifeloop host-hook` does, and returns the wrapper's answer.
func claudeHook(t *testing.T, f *fixture, hook, stdin string) hooks.HookReply {
	t.Helper()
	var r hooks.HookReply
	if err := callCtl(t, f, control.OpHook, hooks.HookArgs{Adapter: "claude", Hook: hook, Stdin: json.RawMessage(stdin)}, &r); err != nil {
		t.Fatalf("hook %s: %v", hook, err)
	}
	return r
}

// untimed returns the events recorded but the periodic ticks.
func untimed(f *fixture) []contract.Event {
	var out []contract.Event
	for _, e := range f.rec.events() {
		if e != contract.EventSupervisorTick {
			out = append(out, e)
		}
	}
	return out
}

// attentionOf returns the attention status reports.
func attentionOf(t *testing.T, f *fixture) control.Attention {
	t.Helper()
	var st control.Status
	if err := callCtl(t, f, control.OpStatus, nil, &st); err != nil {
		t.Fatal(err)
	}
	if st.Attention == nil {
		t.Fatal("status carries no attention for a Claude session")
	}
	return *st.Attention
}

// TestAttentionFromClaudeHooks: a PermissionRequest hook call puts the
// session in needs_permission (from the hook, naming the tool) without a
// receipt and with an empty answer; a renewal between turns is refused
// meanwhile; a key typed answers it (working); the turn's Stop leaves it
// waiting for input, with the time it waited counted.
func TestAttentionFromClaudeHooks(t *testing.T) {
	f, ft, done := turnFixture(t)
	defer endSession(ft, done)
	frame(t, f, contract.EventFrameOpening, "p1")
	if a := attentionOf(t, f); a.State != "working" || a.Source != "frame" {
		t.Errorf("attention in a turn: %+v, want working from frame", a)
	}
	receipts := len(untimed(f))
	r := claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p1","tool_name":"Bash","tool_input":{"command":"touch x"}}`)
	if r.Receipts != 0 || r.Response != "" || r.AdditionalContext != "" {
		t.Errorf("PermissionRequest answered %+v, want nothing recorded and an empty response", r)
	}
	a := attentionOf(t, f)
	if a.State != "needs_permission" || a.Source != "hook" || a.Detail != "Bash" || time.Since(a.Since) > 5*time.Second {
		t.Errorf("attention after PermissionRequest: %+v, want needs_permission from hook about Bash, since now", a)
	}
	claudeHook(t, f, "Notification", `{"hook_event_name":"Notification","session_id":"s1","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}`)
	if b := attentionOf(t, f); b.State != "needs_permission" || !b.Since.Equal(a.Since) {
		t.Errorf("attention after the permission notification: %+v, want the same episode %+v", b, a)
	}
	if got := len(untimed(f)); got != receipts {
		t.Errorf("%d receipts after attention hooks, want %d: the stream must not change: %v", got, receipts, untimed(f))
	}
	// The next turn's dialog, answered at the terminal.
	frame(t, f, contract.EventFrameEnded, "p1")
	frame(t, f, contract.EventFrameOpening, "p2")
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","prompt_id":"p2","tool_name":"Write"}`)
	time.Sleep(10 * time.Millisecond)
	ft.typeKey()
	if a := attentionOf(t, f); a.State != "working" || a.Source != "frame" {
		t.Errorf("attention after a key typed at the dialog: %+v, want working", a)
	}
	claudeHook(t, f, "Stop", `{"hook_event_name":"Stop","session_id":"s1","prompt_id":"p2"}`)
	a = attentionOf(t, f)
	if a.State != "waiting_for_input" || a.Source != "frame" || a.WaitedSeconds < 0.01 {
		t.Errorf("attention after Stop: %+v, want waiting_for_input from the frame, having waited ≥ 10 ms", a)
	}
}

// TestBetweenTurnsRefusedWhileDialogOpen: with no turn open by the
// frames and no key typed since, a question the harness asks (its
// permission dialog for AskUserQuestion) still refuses a renewal asked
// between turns, saying so.
func TestBetweenTurnsRefusedWhileDialogOpen(t *testing.T) {
	f, ft, done := turnFixture(t)
	frame(t, f, contract.EventFrameOpening, "p1")
	frame(t, f, contract.EventFrameEnded, "p1")
	// A question asked with no turn open by the frames (a dialog of the
	// harness's own).
	claudeHook(t, f, "PermissionRequest", `{"hook_event_name":"PermissionRequest","session_id":"s1","tool_name":"AskUserQuestion","tool_input":{"questions":[{"header":"Which file?","question":"Which file should I edit?"}]}}`)
	if a := attentionOf(t, f); a.State != "needs_answer" || a.Detail != "Which file?" {
		t.Errorf("attention after AskUserQuestion: %+v, want needs_answer about its header", a)
	}
	wantRefused(t, f, ft, policyRenew(t, f), len(f.rec.events()), "waits for the person's answer (needs_answer)")
	endSession(ft, done)
}
