package claude

import (
	"encoding/json"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.HandoffReader = Harness{}

// handoffLine is what a handoff note needs of a transcript line.
type handoffLine struct {
	Type             string `json:"type"`
	IsSidechain      bool   `json:"isSidechain"`
	IsMeta           bool   `json:"isMeta"`
	IsCompactSummary bool   `json:"isCompactSummary"`
	IsVisible        bool   `json:"isVisibleInTranscriptOnly"`
	Message          *struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// ReadHandoff implements adapters.HandoffReader on a transcript: the
// prompts the parser opens turns on (not meta, compact summaries, local
// slash commands or tool results), the assistant's text, its tool_use
// blocks (Read, Edit, Write, MultiEdit, NotebookEdit, Bash and the
// others by name) and TodoWrite's list. Sidechain (sub-agent) lines and
// the TUI's own "<synthetic>" messages are left out.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	return adapters.ScanHandoffLines(path, func(b []byte) bool {
		var l handoffLine
		if json.Unmarshal(b, &l) != nil {
			return false
		}
		if l.IsSidechain || l.Message == nil {
			return true
		}
		switch l.Type {
		case "user":
			if !l.IsMeta && !l.IsCompactSummary && !l.IsVisible && isPrompt(l.Message.Content) && !isLocalCommand(l.Message.Content) {
				add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: adapters.HandoffText(l.Message.Content)})
			}
		case "assistant":
			if l.Message.Model != syntheticModel {
				assistantHandoff(l.Message.Content, add)
			}
		}
		return true
	})
}

// assistantHandoff passes on an assistant message's text and tool calls.
func assistantHandoff(content json.RawMessage, add func(adapters.HandoffItem)) {
	var blocks []struct {
		Type  string          `json:"type"`
		Text  string          `json:"text"`
		Name  string          `json:"name"`
		Input json.RawMessage `json:"input"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		if t := adapters.HandoffText(content); t != "" {
			add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: t})
		}
		return
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if b.Text != "" {
				add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: b.Text})
			}
		case "tool_use":
			add(toolHandoff(b.Name, b.Input))
		}
	}
}

// toolHandoff is one tool_use block as a handoff item.
func toolHandoff(name string, input json.RawMessage) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	switch name {
	case "Read":
		it.Reads = nonEmpty(adapters.HandoffArg(input, "file_path"))
	case "Edit", "Write", "MultiEdit":
		it.Edits = nonEmpty(adapters.HandoffArg(input, "file_path"))
	case "NotebookEdit":
		it.Edits = nonEmpty(adapters.HandoffArg(input, "notebook_path"))
	case "Bash":
		it.Command = adapters.HandoffArg(input, "command")
	case "TodoWrite":
		var in struct {
			Todos []struct {
				Content string `json:"content"`
				Status  string `json:"status"`
			} `json:"todos"`
		}
		if json.Unmarshal(input, &in) == nil {
			todos := make([]adapters.HandoffTodo, 0, len(in.Todos))
			for _, t := range in.Todos {
				todos = append(todos, adapters.HandoffTodo{Text: t.Content, Status: t.Status})
			}
			return adapters.HandoffItem{Kind: adapters.HandoffTodos, Tool: name, Todos: todos}
		}
	}
	return it
}

func nonEmpty(s string) []string {
	if s == "" {
		return nil
	}
	return []string{s}
}
