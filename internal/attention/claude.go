package attention

import (
	"encoding/json"
	"fmt"
	"time"
)

// claudeHook is the part of a Claude Code hook payload the mapping reads
// (measured with 2.1.197: testdata/claude-*.hooks.jsonl).
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

// ClaudeHook maps one Claude Code hook payload, received at, to a fact
// (Codex 0.169's hooks use the same fields, so it reads those too: its
// PermissionRequest carries tool_name and tool_input; it has no
// Notification or StopFailure);
// ok is false for events that say nothing about attention. Turn
// boundaries (UserPromptSubmit, Stop) duplicate the frame receipts the
// wrapper records from the same hooks: a ledger reader drops them
// (Fact.Kind.Boundary) and feeds frames instead.
func ClaudeHook(payload []byte, at time.Time) (Fact, bool) {
	var h claudeHook
	if json.Unmarshal(payload, &h) != nil {
		return Fact{}, false
	}
	f := Fact{At: at, Kind: Claim, Source: SourceHook, Evidence: h.Event}
	switch h.Event {
	case "UserPromptSubmit":
		f.Kind = TurnStarted
	case "Stop":
		f.Kind = TurnEnded
	case "PreToolUse", "PostToolUse", "PostToolUseFailure", "PermissionDenied", "ElicitationResult":
		f.State = Working
	case "PermissionRequest":
		f.State, f.Detail = NeedsPermission, Bound(h.ToolName)
		if h.ToolName == askUserQuestion {
			f.State, f.Detail = NeedsAnswer, claudeQuestion(h.ToolInput)
		}
	case "Elicitation":
		f.State, f.Detail = NeedsAnswer, Bound(h.MCPServer)
	case "StopFailure":
		f.State, f.Detail = StoppedOnError, Bound(h.Error)
	case "Notification":
		f.Evidence = h.Event + ":" + h.NotificationType
		switch h.NotificationType {
		case "permission_prompt", "worker_permission_prompt":
			f.State, f.Detail = NeedsPermission, Bound(h.Message)
		case "elicitation_dialog", "elicitation_url_dialog":
			f.State, f.Detail = NeedsAnswer, Bound(h.Message)
		case "idle_prompt":
			f.State = WaitingForInput
		case "elicitation_complete", "elicitation_response":
			f.State = Working
		default:
			return Fact{}, false
		}
	default:
		return Fact{}, false
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
		return Bound(q.Header)
	} else {
		return Bound(q.Question)
	}
}

// claudeTranscriptLine is the part of a Claude Code transcript line the
// mapping reads (measured with 2.1.197:
// testdata/claude-stopfailure.transcript.jsonl).
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

// ClaudeTranscript maps one line of a Claude Code transcript to a fact
// observed at the line's timestamp; ok is false for lines that say
// nothing about attention. An API error is an assistant line with
// isApiErrorMessage, its error kind (StopFailure's) and HTTP status; an
// assistant line with stop_reason end_turn ends the turn.
func ClaudeTranscript(line []byte) (Fact, bool) {
	var l claudeTranscriptLine
	if json.Unmarshal(line, &l) != nil || l.Type != "assistant" {
		return Fact{}, false
	}
	f := Fact{At: l.Timestamp, Source: SourceTranscript}
	switch {
	case l.IsAPIError:
		f.Kind, f.State, f.Evidence, f.Detail = Claim, StoppedOnError, "transcript:api_error", Bound(l.Error)
		if l.ErrorStatus != 0 {
			f.Detail = Bound(fmt.Sprintf("%s (%d)", l.Error, l.ErrorStatus))
		}
	case l.Message.StopReason == "end_turn":
		f.Kind, f.Evidence = TurnEnded, "transcript:end_turn"
	default:
		return Fact{}, false
	}
	return f, true
}
