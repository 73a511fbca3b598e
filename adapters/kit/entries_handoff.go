package kit

import (
	"encoding/json"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

// ToolHandoff turns one tool call of a session-entry file (its name and
// arguments) into a handoff item: each harness of the format names its
// own tools.
type ToolHandoff func(name string, args json.RawMessage) adapters.HandoffItem

// handoffEntry is what a handoff note needs of a session entry.
type handoffEntry struct {
	Type    string `json:"type"`
	Message *struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
		Command string          `json:"command"`
	} `json:"message"`
}

// ReadEntryHandoff reads a session-entry JSONL file (the format of
// NewEntryParser) into handoff items (EntryHandoff).
func ReadEntryHandoff(path string, add func(adapters.HandoffItem), tool ToolHandoff) (int, error) {
	return adapters.ScanHandoffLines(path, func(b []byte) bool { return EntryHandoff(b, add, tool) })
}

// EntryHandoff reads one session entry into handoff items: user
// messages are prompts, assistant messages give their text and, through
// tool, their toolCall blocks; a bashExecution (a command the person ran
// with !) is a command. Compaction and branch summaries, custom entries
// and tool results are left out. It returns false when the entry is not
// JSON of the format.
func EntryHandoff(b []byte, add func(adapters.HandoffItem), tool ToolHandoff) bool {
	var e handoffEntry
	if json.Unmarshal(b, &e) != nil {
		return false
	}
	if e.Type != "message" || e.Message == nil {
		return true
	}
	switch e.Message.Role {
	case "user":
		if t := strings.TrimSpace(adapters.HandoffText(e.Message.Content)); t != "" {
			add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: t})
		}
	case "assistant":
		assistantEntry(e.Message.Content, add, tool)
	case "bashExecution":
		if e.Message.Command != "" {
			add(adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: "!", Command: e.Message.Command})
		}
	}
	return true
}

func assistantEntry(content json.RawMessage, add func(adapters.HandoffItem), tool ToolHandoff) {
	var blocks []struct {
		Type      string          `json:"type"`
		Text      string          `json:"text"`
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(content, &blocks) != nil {
		if t := strings.TrimSpace(adapters.HandoffText(content)); t != "" {
			add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: t})
		}
		return
	}
	var texts []string
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if strings.TrimSpace(b.Text) != "" {
				texts = append(texts, b.Text)
			}
		case "toolCall":
			add(tool(b.Name, b.Arguments))
		}
	}
	if len(texts) > 0 {
		add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: strings.Join(texts, "\n\n")})
	}
}

// PathTool returns the handoff item of a tool call whose arguments name
// a file in "path" (or "file_path") and a command in "command": the file
// is read when the tool is one of reads, edited when one of edits; the
// command is kept when the tool is one of shells.
func PathTool(name string, args json.RawMessage, reads, edits, shells []string) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	file := adapters.HandoffArg(args, "path", "file_path")
	switch {
	case contains(reads, name) && file != "":
		it.Reads = []string{file}
	case contains(edits, name) && file != "":
		it.Edits = []string{file}
	case contains(shells, name):
		it.Command = adapters.HandoffArg(args, "command", "cmd")
	}
	return it
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
