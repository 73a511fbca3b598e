package gemini

import (
	"encoding/json"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.AttentionReader = Harness{}

// geminiHook is the part of a Gemini CLI 0.61 hook payload the attention
// mapping reads. Notification carries notification_type "ToolPermission"
// (the one type 0.61 defines), a message and serializable confirmation
// details (measured: a `touch` in the TUI's default approval mode; the
// other detail types read in the bundle).
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

// AttentionEvent implements adapters.AttentionReader: one Gemini CLI
// hook payload, received at. BeforeAgent and AfterAgent are turn
// boundaries. Gemini CLI has no hook for an answered dialog or for an
// error that ends a turn: the key typed and the next tool hook clear a
// dialog.
func (Harness) AttentionEvent(payload []byte, at time.Time) (adapters.AttentionFact, bool) {
	var h geminiHook
	if json.Unmarshal(payload, &h) != nil {
		return adapters.AttentionFact{}, false
	}
	f := adapters.AttentionFact{At: at, Kind: adapters.AttentionClaim, Source: adapters.AttentionFromHook, Evidence: h.Event}
	switch h.Event {
	case "BeforeAgent":
		f.Kind = adapters.AttentionTurnStarted
	case "AfterAgent":
		f.Kind = adapters.AttentionTurnEnded
	case "BeforeTool", "AfterTool":
		f.State = adapters.AttentionWorking
	case "Notification":
		if h.NotificationType != "ToolPermission" {
			return adapters.AttentionFact{}, false
		}
		f.Evidence = h.Event + ":" + h.NotificationType
		d := h.Details
		f.State, f.Detail = adapters.AttentionNeedsPermission, adapters.BoundDetail(d.Title)
		switch d.Type {
		case "ask_user":
			f.State = adapters.AttentionNeedsAnswer
		case "exec":
			if d.RootCommand != "" {
				f.Detail = adapters.BoundDetail(d.Title + ": " + d.RootCommand)
			}
		case "mcp":
			if d.ToolName != "" {
				f.Detail = adapters.BoundDetail(d.Title + ": " + d.ToolName)
			}
		}
	default:
		return adapters.AttentionFact{}, false
	}
	return f, true
}

// AttentionRecord implements adapters.AttentionReader: Gemini CLI's chat
// file says nothing measured about attention yet.
func (Harness) AttentionRecord([]byte) (adapters.AttentionFact, bool) {
	return adapters.AttentionFact{}, false
}

// AttentionScreen implements adapters.AttentionReader: what Gemini CLI
// 0.61 draws in its shell tool's confirmation (measured:
// testdata/attention/gemini-permission.screen.txt).
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Allow execution of [", State: adapters.AttentionNeedsPermission, Evidence: "gemini:tool-confirmation"},
	}
}
