package codex

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.AttentionReader = Harness{}

// codexHook is the part of a Codex 0.169 hook payload the attention
// mapping reads: its PermissionRequest carries tool_name (and
// tool_input); it has no Notification or StopFailure (measured:
// testdata/attention/codex-*.hooks.jsonl).
type codexHook struct {
	Event    string `json:"hook_event_name"`
	ToolName string `json:"tool_name"`
}

// AttentionEvent implements adapters.AttentionReader: one Codex hook
// payload, received at. UserPromptSubmit and Stop are turn boundaries
// (a ledger reader takes frames instead).
func (Harness) AttentionEvent(payload []byte, at time.Time) (adapters.AttentionFact, bool) {
	var h codexHook
	if json.Unmarshal(payload, &h) != nil {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: at, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromHook, Evidence: h.Event}
	switch h.Event {
	case "UserPromptSubmit":
		f.Kind = adapters.AttentionTurnStarted
	case "Stop":
		f.Kind = adapters.AttentionTurnEnded
	case "PreToolUse", "PostToolUse":
		f.State = adapters.AttentionWorking
	case "PermissionRequest":
		f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(h.ToolName)
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// codexRolloutLine is the part of a Codex 0.169 rollout line the
// attention mapping reads: an event_msg task_complete, whose error says
// why the turn stopped (measured: testdata/attention/codex-error.rollout.jsonl).
type codexRolloutLine struct {
	Timestamp time.Time `json:"timestamp"`
	Type      string    `json:"type"`
	Payload   struct {
		Type  string `json:"type"`
		Error *struct {
			Info map[string]json.RawMessage `json:"codex_error_info"`
		} `json:"error"`
	} `json:"payload"`
}

// AttentionRecord implements adapters.AttentionReader: one line of a
// Codex rollout. A task_complete ends the turn; with an error (the model
// endpoint refused past the retries, …) the turn stopped on it: the
// detail is the error's kind and HTTP status, never its message.
func (Harness) AttentionRecord(line []byte) (adapters.AttentionFact, bool) {
	var l codexRolloutLine
	if json.Unmarshal(line, &l) != nil || l.Type != "event_msg" || l.Payload.Type != "task_complete" {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: l.Timestamp, Kind: adapters.AttentionTurnEnded, Source: adapters.AttentionFromTranscript, Evidence: "rollout:task_complete"}
	if e := l.Payload.Error; e != nil {
		f.Kind, f.State, f.Detail = adapters.AttentionClaim, adapters.AttentionStoppedOnError, codexErrorKind(e.Info)
	}
	return f, true
}

// codexErrorKind names the first kind in codex_error_info, with the HTTP
// status its details carry, e.g. "response_too_many_failed_attempts (429)".
func codexErrorKind(info map[string]json.RawMessage) string {
	kinds := make([]string, 0, len(info))
	for k := range info {
		kinds = append(kinds, k)
	}
	if len(kinds) == 0 {
		return "error"
	}
	sort.Strings(kinds)
	var d struct {
		Status int `json:"http_status_code"`
	}
	if json.Unmarshal(info[kinds[0]], &d) == nil && d.Status != 0 {
		return adapters.BoundDetail(fmt.Sprintf("%s (%d)", kinds[0], d.Status))
	}
	return adapters.BoundDetail(kinds[0])
}

// AttentionScreen implements adapters.AttentionReader: no Codex dialog
// text is measured yet.
func (Harness) AttentionScreen() []adapters.AttentionScreenRule { return nil }
