package mockmodel

import (
	"encoding/json"
	"testing"
)

// TestResponsesEscalatedToolCall: a prompt holding the tool trigger and
// EscalateTrigger gets an exec_command call that asks to run outside the
// sandbox, with a justification; the tool trigger alone gets a plain call.
func TestResponsesEscalatedToolCall(t *testing.T) {
	for _, tc := range []struct {
		prompt    string
		escalated bool
	}{
		{"RUN_TOOL " + EscalateTrigger + " please", true},
		{"RUN_TOOL please", false},
	} {
		s := start(t, Config{ToolCommand: "touch x"})
		status, evs, _ := post(t, s, "/v1/responses", `{"model":"mock-model","stream":true,`+codexTools+
			`,"input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"`+tc.prompt+`"}]}]}`)
		if status != 200 || len(evs) < 2 {
			t.Fatalf("%s: status %d, events %s", tc.prompt, status, names(evs))
		}
		item := evs[len(evs)-2].Data["item"].(map[string]any)
		var args map[string]any
		if s, _ := item["arguments"].(string); json.Unmarshal([]byte(s), &args) != nil || item["type"] != "function_call" {
			t.Fatalf("%s: item %v", tc.prompt, item)
		}
		want := map[string]any{"cmd": "touch x"}
		if tc.escalated {
			want["sandbox_permissions"] = "require_escalated"
			want["justification"] = EscalateJustification
		}
		if len(args) != len(want) {
			t.Errorf("%s: arguments %v, want %v", tc.prompt, args, want)
		}
		for k, v := range want {
			if args[k] != v {
				t.Errorf("%s: arguments %v, want %v", tc.prompt, args, want)
			}
		}
	}
}
