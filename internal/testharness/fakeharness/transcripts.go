package main

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

func now() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// claudeLine returns the fields every Claude Code transcript line has,
// chained to the previous line.
func (h *harness) claudeLine(typ string) map[string]any {
	cwd, _ := os.Getwd()
	id := newUUID()
	var parent any
	if h.parentID != "" {
		parent = h.parentID
	}
	h.parentID = id
	return map[string]any{
		"parentUuid": parent, "isSidechain": false, "type": typ, "uuid": id, "timestamp": now(),
		"userType": "external", "entrypoint": "cli", "cwd": cwd, "sessionId": h.sessionID,
		"version": "2.1.197",
	}
}

func (h *harness) writeClaude(path string) error {
	h.turn++
	user := h.claudeLine("user")
	user["message"] = map[string]any{"role": "user", "content": "fake prompt " + strconv.Itoa(h.turn)}
	user["promptId"] = newUUID()
	asst := h.claudeLine("assistant")
	asst["requestId"] = "req_fake_" + newUUID()
	asst["message"] = map[string]any{
		"id": "msg_fake_" + newUUID(), "type": "message", "role": "assistant", "model": "claude-opus-4-8",
		"content":     []any{map[string]any{"type": "text", "text": "fake reply " + strconv.Itoa(h.turn)}},
		"stop_reason": "end_turn", "stop_sequence": nil,
		"usage": map[string]any{
			"input_tokens": h.usage[0], "output_tokens": h.usage[1],
			"cache_creation_input_tokens": h.usage[2], "cache_read_input_tokens": h.usage[3],
		},
	}
	return appendLines(path, user, asst)
}

func (h *harness) claudeCompact(path string) error {
	pre := h.usage[0] + h.usage[2] + h.usage[3]
	boundary := h.claudeLine("system")
	boundary["subtype"] = "compact_boundary"
	boundary["content"] = "Conversation compacted"
	boundary["isMeta"] = false
	boundary["level"] = "info"
	boundary["compactMetadata"] = map[string]any{"trigger": "auto", "preTokens": pre, "postTokens": 639}
	summary := h.claudeLine("user")
	summary["isCompactSummary"] = true
	summary["isVisibleInTranscriptOnly"] = true
	summary["message"] = map[string]any{"role": "user", "content": "This session is being continued from a previous conversation."}
	return appendLines(path, boundary, summary)
}

// codexLine wraps a payload the way every Codex rollout line is wrapped.
func (h *harness) codexLine(path, typ string, payload map[string]any) map[string]any {
	ordinal, ok := h.codexOrdinal[path]
	if !ok {
		// Continue the numbering of a file an earlier run wrote.
		if b, err := os.ReadFile(path); err == nil {
			ordinal = bytes.Count(b, []byte("\n"))
		}
	}
	h.codexOrdinal[path] = ordinal + 1
	return map[string]any{"timestamp": now(), "ordinal": ordinal, "type": typ, "payload": payload}
}

func (h *harness) tokenUsage() map[string]any {
	return map[string]any{
		"input_tokens": h.usage[0], "cached_input_tokens": h.usage[3], "cache_write_input_tokens": h.usage[2],
		"output_tokens": h.usage[1], "reasoning_output_tokens": 0, "total_tokens": h.usage[0] + h.usage[1],
	}
}

func (h *harness) tokenCount(path string) map[string]any {
	h.codexTotal[0] += h.usage[0]
	h.codexTotal[1] += h.usage[1]
	total := map[string]any{
		"input_tokens": h.codexTotal[0], "cached_input_tokens": 0, "cache_write_input_tokens": 0,
		"output_tokens": h.codexTotal[1], "reasoning_output_tokens": 0, "total_tokens": h.codexTotal[0] + h.codexTotal[1],
	}
	return h.codexLine(path, "event_msg", map[string]any{"type": "token_count", "info": map[string]any{
		"total_token_usage": total, "last_token_usage": h.tokenUsage(), "model_context_window": h.window,
	}, "rate_limits": nil})
}

func (h *harness) writeCodex(path string) error {
	var lines []any
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		cwd, _ := os.Getwd()
		lines = append(lines, h.codexLine(path, "session_meta", map[string]any{
			"id": h.sessionID, "session_id": h.sessionID, "timestamp": now(), "cwd": cwd,
			"originator": "codex_cli_rs", "cli_version": "0.169.0", "source": "cli", "model_provider": "mock",
		}))
	}
	h.turn++
	turnID := newUUID()
	lines = append(lines,
		h.codexLine(path, "event_msg", map[string]any{"type": "task_started", "turn_id": turnID, "model_context_window": h.window}),
		h.codexLine(path, "event_msg", map[string]any{"type": "user_message", "message": "fake prompt " + strconv.Itoa(h.turn), "images": []any{}}),
		h.codexLine(path, "event_msg", map[string]any{"type": "agent_message", "message": "fake reply " + strconv.Itoa(h.turn)}),
		h.tokenCount(path),
		h.codexLine(path, "event_msg", map[string]any{"type": "task_complete", "turn_id": turnID,
			"last_agent_message": "fake reply " + strconv.Itoa(h.turn), "duration_ms": 1}),
	)
	return appendLines(path, lines...)
}

func (h *harness) codexCompact(path string) error {
	return appendLines(path,
		h.codexLine(path, "compacted", map[string]any{"message": "", "replacement_history": []any{}}),
		h.tokenCount(path),
	)
}
