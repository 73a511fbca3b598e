package mockmodel

import (
	"encoding/json"
	"testing"
)

// TestShellToolOfCopilot: GitHub Copilot CLI (1.0.102) offers its shell
// as lower-case "bash" among tools whose names also contain "bash"
// (read_bash, stop_bash, list_bash); the mock's tool call names it.
func TestShellToolOfCopilot(t *testing.T) {
	var tools []json.RawMessage
	for _, n := range []string{"read_bash", "bash", "stop_bash", "list_bash", "view", "create", "edit", "grep", "glob", "task"} {
		tools = append(tools, json.RawMessage(`{"name":"`+n+`","description":"","input_schema":{"type":"object"}}`))
	}
	if got := shellTool(tools); got != "bash" {
		t.Errorf("shellTool(Copilot's tools) = %q, want bash", got)
	}
}
