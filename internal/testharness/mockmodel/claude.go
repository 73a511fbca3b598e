package mockmodel

import (
	"encoding/json"
	"net/http"
	"strings"
)

// messagesRequest is the part of an Anthropic Messages request the mock
// reads.
type messagesRequest struct {
	Model    string            `json:"model"`
	Stream   bool              `json:"stream"`
	Tools    []json.RawMessage `json:"tools"`
	Messages []struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"messages"`
}

// contentBlock is one block of a message's content array.
type contentBlock struct {
	Type    string          `json:"type"`
	Text    string          `json:"text"`
	Content json.RawMessage `json:"content"`
}

// harnessContextPrefix begins a user message OpenClaw adds after the
// prompt with its own runtime context (active exec sessions, sub-agents):
// not what the user asked, so claudeTurn looks past it.
const harnessContextPrefix = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"

// claudeTurn decides what the latest user message asks for: "tool" (the
// trigger word is in the prompt), "after-tool" (it carries a tool_result)
// or "text".
func claudeTurn(req messagesRequest, trigger string) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" || isHarnessContext(m.Content) {
			continue
		}
		var plain string
		if err := json.Unmarshal(m.Content, &plain); err == nil {
			if strings.Contains(plain, trigger) {
				return "tool"
			}
			return "text"
		}
		var blocks []contentBlock
		if err := json.Unmarshal(m.Content, &blocks); err != nil {
			return "text"
		}
		hasTrigger := false
		for _, b := range blocks {
			if b.Type == "tool_result" {
				return "after-tool"
			}
			if b.Type == "text" && strings.Contains(b.Text, trigger) {
				hasTrigger = true
			}
		}
		if hasTrigger {
			return "tool"
		}
		return "text"
	}
	return "text"
}

func (s *Server) serveMessages(w http.ResponseWriter, r *http.Request, body []byte) (string, int) {
	var req messagesRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(r, body, "unknown")
		writeJSON(w, http.StatusBadRequest, map[string]any{
			"type":  "error",
			"error": map[string]any{"type": "invalid_request_error", "message": "mockmodel: body is not a Messages request: " + err.Error()},
		})
		return "unknown", http.StatusBadRequest
	}
	// Conversation requests offer tools; side requests (titles, topic
	// detection, summaries of sessions) do not, and must not consume the
	// scripted usage sequence.
	kind := "claude"
	usage := s.cfg.Usage
	turn := "text"
	if len(req.Tools) == 0 {
		kind = "claude-side"
	} else {
		usage = s.usageFor(body)
		turn = claudeTurn(req, s.cfg.ToolTrigger)
	}
	s.record(r, body, kind)

	model := req.Model
	if model == "" {
		model = "claude-mock"
	}
	id := s.nextID()
	msgID := "msg_mock_" + id
	usageJSON := map[string]any{
		"input_tokens":                usage.InputTokens,
		"cache_creation_input_tokens": usage.CacheCreationInputTokens,
		"cache_read_input_tokens":     usage.CacheReadInputTokens,
		"output_tokens":               usage.OutputTokens,
	}
	var block map[string]any
	var stop string
	var text, toolInput string
	switch turn {
	case "tool":
		toolInput = mustJSON(map[string]any{"command": s.cfg.ToolCommand, "description": "mock tool call"})
		block = map[string]any{"type": "tool_use", "id": "toolu_mock_" + id, "name": shellTool(req.Tools), "input": map[string]any{}}
		stop = "tool_use"
	case "after-tool":
		text = s.cfg.ToolReply
		block = map[string]any{"type": "text", "text": ""}
		stop = "end_turn"
	default:
		text = s.cfg.Reply
		block = map[string]any{"type": "text", "text": ""}
		stop = "end_turn"
	}

	if !req.Stream {
		full := map[string]any{}
		for k, v := range block {
			full[k] = v
		}
		if turn == "tool" {
			var in map[string]any
			_ = json.Unmarshal([]byte(toolInput), &in)
			full["input"] = in
		} else {
			full["text"] = text
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": msgID, "type": "message", "role": "assistant", "model": model,
			"content": []any{full}, "stop_reason": stop, "stop_sequence": nil, "usage": usageJSON,
		})
		return kind, http.StatusOK
	}

	e := newSSE(w)
	startUsage := map[string]any{}
	for k, v := range usageJSON {
		startUsage[k] = v
	}
	startUsage["output_tokens"] = 1
	e.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
		"id": msgID, "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": startUsage,
	}})
	e.event("content_block_start", map[string]any{"type": "content_block_start", "index": 0, "content_block": block})
	e.event("ping", map[string]any{"type": "ping"})
	if turn == "tool" {
		e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
			"delta": map[string]any{"type": "input_json_delta", "partial_json": toolInput}})
	} else {
		for _, chunk := range splitText(text) {
			e.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": 0,
				"delta": map[string]any{"type": "text_delta", "text": chunk}})
		}
	}
	e.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": 0})
	e.event("message_delta", map[string]any{"type": "message_delta",
		"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": usageJSON})
	e.event("message_stop", map[string]any{"type": "message_stop"})
	return kind, http.StatusOK
}

// isHarnessContext reports a user message that is only OpenClaw's
// runtime context block.
func isHarnessContext(content json.RawMessage) bool {
	var blocks []contentBlock
	if json.Unmarshal(content, &blocks) != nil || len(blocks) == 0 {
		return false
	}
	for _, b := range blocks {
		if b.Type != "text" || !strings.HasPrefix(b.Text, harnessContextPrefix) {
			return false
		}
	}
	return true
}

// shellTool is the name of the shell tool the request offers: "Bash"
// (Claude Code), or "bash" when only that is offered (OpenCode, and Pi,
// whose anthropic-messages provider names its tools in lower case),
// "exec" (OpenClaw's) or "run_shell_command" (Qwen Code's).
func shellTool(tools []json.RawMessage) string {
	for _, raw := range tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil && t.Name == "Bash" {
			return "Bash"
		}
	}
	for _, raw := range tools {
		var t struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &t) == nil && (t.Name == "bash" || t.Name == "exec" || t.Name == "run_shell_command") {
			return t.Name
		}
	}
	return "Bash"
}

// splitText cuts text in two deltas so clients exercise their stream
// assembly.
func splitText(text string) []string {
	if len(text) < 2 {
		return []string{text}
	}
	mid := len(text) / 2
	for mid > 0 && !utf8RuneStart(text[mid]) {
		mid--
	}
	return []string{text[:mid], text[mid:]}
}

func utf8RuneStart(b byte) bool { return b&0xC0 != 0x80 }
