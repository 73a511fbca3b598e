package attention

import (
	"strings"
	"time"
)

// ScreenRule names text a harness's dialog draws and the state it shows.
type ScreenRule struct {
	Text  string
	State State
	// Evidence names the dialog, e.g. "claude:permission-dialog".
	Evidence string
}

// ClaudeScreen is what Claude Code 2.1.197 draws in its permission dialog
// (measured: testdata/claude-permission.screen.txt).
var ClaudeScreen = []ScreenRule{
	{Text: "Do you want to proceed?", State: NeedsPermission, Evidence: "claude:permission-dialog"},
}

// GeminiScreen is what Gemini CLI 0.61 draws in its shell tool's
// confirmation (measured: testdata/gemini-permission.screen.txt).
var GeminiScreen = []ScreenRule{
	{Text: "Allow execution of [", State: NeedsPermission, Evidence: "gemini:tool-confirmation"},
}

// OpenCodeScreen is what OpenCode 1.18.33's TUI draws when a tool asks
// (measured: testdata/opencode-permission.screen.txt).
var OpenCodeScreen = []ScreenRule{
	{Text: "Permission required", State: NeedsPermission, Evidence: "opencode:permission-dialog"},
}

// MatchScreen looks for the rules' text in output already stripped of
// escape sequences (the bytes drawn since the last match) and returns a
// screen claim for the first rule found.
func MatchScreen(rules []ScreenRule, stripped string, at time.Time) (Fact, bool) {
	for _, r := range rules {
		if r.Text != "" && strings.Contains(stripped, r.Text) {
			return Fact{At: at, Kind: Claim, Source: SourceScreen, State: r.State, Evidence: r.Evidence}, true
		}
	}
	return Fact{}, false
}
