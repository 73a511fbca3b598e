package qwen

import (
	"encoding/json"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// Attention (measured with 0.24.4 and the mock model): the TUI in its
// default approval mode (--approval-mode default; the out-of-the-box
// mode is "auto", where a classifier may approve a command unasked)
// asks before it runs a shell command the model asked for, in a dialog
// that reads "Allow execution of: '<command>'?"
// (testdata/attention/qwen-permission.screen.txt,
// TestAttentionQwenPermission, run without the hook bridge). The
// session file records no dialog.
//
// Under the hook bridge (hooks.go), the Notification hook tells it too:
// notification_type "permission_prompt" when a tool call waits for
// approval ("Qwen Code needs your permission to use <tool>"), whatever
// the dialog (read in the bundle: the scheduler fires it beside the
// dialog; measured with the shell dialog,
// TestAttentionQwenPermissionHook), and "idle_prompt" once the TUI waits
// for the next prompt (measured). "auth_success" says nothing of
// attention. The screen rule matches the English texts only (Qwen Code
// translates them); the hook's types do not change with the language.

// AttentionScreen implements adapters.AttentionReader: the shell
// command's permission dialog.
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Allow execution of: '", State: adapters.AttentionNeedsPermission, Evidence: "qwen:shell-confirmation"},
	}
}

// qwenHook is the part of a Qwen Code hook payload the attention mapping
// reads.
type qwenHook struct {
	Event            string `json:"hook_event_name"`
	NotificationType string `json:"notification_type"`
	Message          string `json:"message"`
}

// AttentionEvent implements adapters.AttentionReader: one Qwen Code hook
// payload, received at. Stop ends the turn; Notification tells a tool
// call waiting for approval or the TUI waiting for input. No hook tells
// an answered dialog: the key typed (or the turn's end) clears it.
func (Harness) AttentionEvent(payload []byte, at time.Time) (adapters.AttentionFact, bool) {
	var h qwenHook
	if json.Unmarshal(payload, &h) != nil {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: at, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromHook, Evidence: h.Event}
	switch h.Event {
	case "Stop":
		f.Kind = adapters.AttentionTurnEnded
	case "Notification":
		f.Evidence = h.Event + ":" + h.NotificationType
		switch h.NotificationType {
		case "permission_prompt":
			f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(h.Message)
		case "idle_prompt":
			f.State = adapters.AttentionWaitingForInput
		default:
			return adapters.AttentionFact{}, false
		}
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}
