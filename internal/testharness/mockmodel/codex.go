package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// responsesRequest is the part of an OpenAI Responses request the mock
// reads.
type responsesRequest struct {
	Model string            `json:"model"`
	Tools []json.RawMessage `json:"tools"`
	Input []struct {
		Type    string          `json:"type"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"input"`
}

// EscalateTrigger, in a Codex prompt that also holds the tool trigger,
// makes the tool call ask to run outside the sandbox: its arguments carry
// `sandbox_permissions: "require_escalated"` and a justification, which
// makes a Codex whose approval policy is on-request ask the person.
const EscalateTrigger = "ESCALATE"

// EscalateJustification is the justification an escalated call gives.
const EscalateJustification = "The mock needs to run this outside the sandbox."

// codexTurn decides what the latest input asks for, as claudeTurn does:
// "tool", "tool-escalated" (the prompt also holds EscalateTrigger),
// "after-tool" or "text". Items other than user messages and tool outputs
// (developer messages injected by hooks, reasoning) are skipped.
func codexTurn(req responsesRequest, trigger string) string {
	for i := len(req.Input) - 1; i >= 0; i-- {
		it := req.Input[i]
		switch {
		case it.Type == "function_call_output" || it.Type == "custom_tool_call_output":
			return "after-tool"
		case (it.Type == "message" || it.Type == "") && it.Role == "user":
			var text string
			if err := json.Unmarshal(it.Content, &text); err != nil {
				var parts []contentBlock
				_ = json.Unmarshal(it.Content, &parts)
				for _, p := range parts {
					text += p.Text + "\n"
				}
			}
			switch {
			case !strings.Contains(text, trigger):
				return "text"
			case strings.Contains(text, EscalateTrigger):
				return "tool-escalated"
			}
			return "tool"
		}
	}
	return "text"
}

func (s *Server) serveResponses(w http.ResponseWriter, r *http.Request, body []byte) (string, int) {
	var req responsesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(r, body, "unknown")
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"error": map[string]any{"type": "invalid_request_error", "message": "mockmodel: body is not a Responses request: " + err.Error()},
		})
		return "unknown", http.StatusBadRequest
	}
	kind := "codex"
	usage := s.cfg.Usage
	turn := "text"
	if len(req.Tools) == 0 {
		kind = "codex-side"
	} else {
		usage = s.usageFor(body)
		turn = codexTurn(req, s.cfg.ToolTrigger)
	}
	s.record(r, body, kind)

	model := req.Model
	if model == "" {
		model = "mock-model"
	}
	id := s.nextID()
	respID := "resp_mock_" + id
	response := map[string]any{
		"id": respID, "object": "response", "status": "in_progress", "model": model, "output": []any{},
	}

	e := newSSE(w)
	e.event("response.created", map[string]any{"type": "response.created", "response": response})
	var done map[string]any
	switch turn {
	case "tool", "tool-escalated":
		callID := "call_mock_" + id
		call := map[string]any{"cmd": s.cfg.ToolCommand}
		if turn == "tool-escalated" {
			call["sandbox_permissions"] = "require_escalated"
			call["justification"] = EscalateJustification
		}
		args := mustJSON(call)
		added := map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID,
			"name": "exec_command", "arguments": "", "status": "in_progress"}
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0, "item": added})
		e.event("response.function_call_arguments.delta", map[string]any{"type": "response.function_call_arguments.delta",
			"item_id": "fc_" + callID, "output_index": 0, "delta": args})
		done = map[string]any{"type": "function_call", "id": "fc_" + callID, "call_id": callID,
			"name": "exec_command", "arguments": args, "status": "completed"}
	default:
		text := s.cfg.Reply
		if turn == "after-tool" {
			text = s.cfg.ToolReply
		}
		itemID := "msg_mock_" + id
		e.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
			"item": map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "in_progress", "content": []any{}}})
		for _, chunk := range splitText(text) {
			e.event("response.output_text.delta", map[string]any{"type": "response.output_text.delta",
				"item_id": itemID, "output_index": 0, "content_index": 0, "delta": chunk})
		}
		done = map[string]any{"type": "message", "id": itemID, "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	}
	e.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0, "item": done})
	completed := map[string]any{}
	for k, v := range response {
		completed[k] = v
	}
	completed["status"] = "completed"
	completed["output"] = []any{done}
	completed["usage"] = map[string]any{
		"input_tokens":          usage.InputTokens,
		"input_tokens_details":  map[string]any{"cached_tokens": usage.CacheReadInputTokens},
		"output_tokens":         usage.OutputTokens,
		"output_tokens_details": map[string]any{"reasoning_tokens": usage.ReasoningTokens},
		"total_tokens":          usage.InputTokens + usage.OutputTokens,
	}
	e.event("response.completed", map[string]any{"type": "response.completed", "response": completed})
	return kind, http.StatusOK
}
