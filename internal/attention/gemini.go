package attention

import (
	"encoding/json"
	"time"
)

// geminiHook is the part of a Gemini CLI 0.61 hook payload the mapping
// reads. Notification carries notification_type "ToolPermission" (the one
// type 0.61 defines), a message and serializable confirmation details
// (measured: a `touch` in the TUI's default approval mode; the other
// detail types read in the bundle).
type geminiHook struct {
	Event            string `json:"hook_event_name"`
	NotificationType string `json:"notification_type"`
	Details          struct {
		Type        string `json:"type"`
		Title       string `json:"title"`
		RootCommand string `json:"rootCommand"`
		ToolName    string `json:"toolName"`
	} `json:"details"`
}

// GeminiHook maps one Gemini CLI hook payload, received at, to a fact; ok
// is false for events that say nothing about attention. BeforeAgent and
// AfterAgent are turn boundaries (see ClaudeHook). Gemini CLI has no hook
// for an answered dialog or for an error that ends a turn: the key typed
// and the next tool hook clear a dialog.
func GeminiHook(payload []byte, at time.Time) (Fact, bool) {
	var h geminiHook
	if json.Unmarshal(payload, &h) != nil {
		return Fact{}, false
	}
	f := Fact{At: at, Kind: Claim, Source: SourceHook, Evidence: h.Event}
	switch h.Event {
	case "BeforeAgent":
		f.Kind = TurnStarted
	case "AfterAgent":
		f.Kind = TurnEnded
	case "BeforeTool", "AfterTool":
		f.State = Working
	case "Notification":
		if h.NotificationType != "ToolPermission" {
			return Fact{}, false
		}
		f.Evidence = h.Event + ":" + h.NotificationType
		d := h.Details
		f.State, f.Detail = NeedsPermission, Bound(d.Title)
		switch d.Type {
		case "ask_user":
			f.State = NeedsAnswer
		case "exec":
			if d.RootCommand != "" {
				f.Detail = Bound(d.Title + ": " + d.RootCommand)
			}
		case "mcp":
			if d.ToolName != "" {
				f.Detail = Bound(d.Title + ": " + d.ToolName)
			}
		}
	default:
		return Fact{}, false
	}
	return f, true
}
