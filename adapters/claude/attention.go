package claude

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.AttentionReader = Harness{}

// claudeHook is the part of a Claude Code hook payload the attention
// mapping reads (measured with 2.1.197:
// testdata/attention/claude-*.hooks.jsonl).
type claudeHook struct {
	Event            string          `json:"hook_event_name"`
	NotificationType string          `json:"notification_type"`
	Message          string          `json:"message"`
	ToolName         string          `json:"tool_name"`
	ToolInput        json.RawMessage `json:"tool_input"`
	Error            string          `json:"error"`
	MCPServer        string          `json:"mcp_server_name"`
}

// askUserQuestion is Claude's question tool: its permission dialog is the
// question (its checkPermissions always asks; read in 2.1.197).
const askUserQuestion = "AskUserQuestion"

// AttentionEvent implements adapters.AttentionReader: one Claude Code
// hook payload, received at. Turn boundaries (UserPromptSubmit, Stop)
// duplicate the frame receipts the wrapper records from the same hooks:
// a ledger reader drops them (Kind.Boundary) and feeds frames instead.
func (Harness) AttentionEvent(payload []byte, at time.Time) (adapters.AttentionFact, bool) {
	var h claudeHook
	if json.Unmarshal(payload, &h) != nil {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: at, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromHook, Evidence: h.Event}
	switch h.Event {
	case "UserPromptSubmit":
		f.Kind = adapters.AttentionTurnStarted
	case "Stop":
		f.Kind = adapters.AttentionTurnEnded
	case "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied", "ElicitationResult":
		f.State = adapters.AttentionWorking
	case "PermissionRequest":
		f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(h.ToolName)
		if h.ToolName == askUserQuestion {
			f.State, f.Detail = adapters.AttentionNeedsAnswer, claudeQuestion(h.ToolInput)
		}
	case "Elicitation":
		f.State, f.Detail = adapters.AttentionNeedsAnswer, adapters.BoundDetail(h.MCPServer)
	case "StopFailure":
		f.State, f.Detail = adapters.AttentionStoppedOnError, adapters.BoundDetail(h.Error)
	case "Notification":
		f.Evidence = h.Event + ":" + h.NotificationType
		switch h.NotificationType {
		case "permission_prompt", "worker_permission_prompt":
			f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(h.Message)
		case "elicitation_dialog", "elicitation_url_dialog":
			f.State, f.Detail = adapters.AttentionNeedsAnswer, adapters.BoundDetail(h.Message)
		case "idle_prompt":
			f.State = adapters.AttentionWaitingForInput
		case "elicitation_complete", "elicitation_response":
			f.State = adapters.AttentionWorking
		default:
			return adapters.AttentionFact{}, false
		}
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// claudeQuestion summarizes AskUserQuestion's input: the first question's
// header, else its text, bounded.
func claudeQuestion(input json.RawMessage) string {
	var in struct {
		Questions []struct {
			Header   string `json:"header"`
			Question string `json:"question"`
		} `json:"questions"`
	}
	if json.Unmarshal(input, &in) != nil || len(in.Questions) == 0 {
		return askUserQuestion
	}
	if q := in.Questions[0]; q.Header != "" {
		return adapters.BoundDetail(q.Header)
	} else {
		return adapters.BoundDetail(q.Question)
	}
}

// claudeTranscriptLine is the part of a Claude Code transcript line the
// attention mapping reads (measured with 2.1.197:
// testdata/attention/claude-stopfailure.transcript.jsonl).
type claudeTranscriptLine struct {
	Type        string    `json:"type"`
	Timestamp   time.Time `json:"timestamp"`
	IsAPIError  bool      `json:"isApiErrorMessage"`
	Error       string    `json:"error"`
	ErrorStatus int       `json:"apiErrorStatus"`
	Message     struct {
		StopReason string `json:"stop_reason"`
	} `json:"message"`
}

// AttentionRecord implements adapters.AttentionReader: one line of a
// Claude Code transcript. An API error is an assistant line with
// isApiErrorMessage, its error kind (StopFailure's) and HTTP status; an
// assistant line with stop_reason end_turn ends the turn.
func (Harness) AttentionRecord(line []byte) (adapters.AttentionFact, bool) {
	var l claudeTranscriptLine
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: l.Timestamp, Source: adapters.AttentionFromTranscript}
	switch {
	case l.IsAPIError:
		f.Kind, f.State, f.Evidence, f.Detail = adapters.AttentionClaim, adapters.AttentionStoppedOnError, "transcript:api_error", adapters.BoundDetail(l.Error)
		if l.ErrorStatus != 0 {
			f.Detail = adapters.BoundDetail(fmt.Sprintf("%s (%d)", l.Error, l.ErrorStatus))
		}
	case l.Message.StopReason == "end_turn":
		f.Kind, f.Evidence = adapters.AttentionTurnEnded, "transcript:end_turn"
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// AttentionScreen implements adapters.AttentionReader: what Claude Code
// 2.1.197 draws in its permission dialog (measured:
// testdata/attention/claude-permission.screen.txt).
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Do you want to proceed?", State: adapters.AttentionNeedsPermission, Evidence: "claude:permission-dialog"},
	}
}
