package gemini

import (
	"encoding/json"
	"regexp"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.HandoffReader = Harness{}

// hookContext is a hook's context the CLI adds to a prompt.
var hookContext = regexp.MustCompile(`(?s)<hook_context>.*?</hook_context>`)

// ReadHandoff implements adapters.HandoffReader on a chat file: its
// message records, the last record of an id winning (the CLI appends a
// record again when it changes it, one after the other), in order.
// Prompts are the "user" records the parser opens turns on, their
// displayContent (else content) without hooks' <hook_context>; "gemini"
// records give the answer text and their toolCalls (run_shell_command,
// read_file, read_many_files, write_file, replace, write_todos's list).
// $set patches (the whole history written again at start, on resume and
// on compression) and info records are left out: the records they
// repeat or summarise are in the file already.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	var pending *chatLine
	flush := func() {
		if pending != nil {
			recordHandoff(pending, add)
			pending = nil
		}
	}
	skipped, err := adapters.ScanHandoffLines(path, func(b []byte) bool {
		var l chatLine
		if json.Unmarshal(b, &l) != nil {
			return false
		}
		if l.ID == "" || l.Type == "" {
			return true // the header, a $set or $rewindTo patch
		}
		if pending != nil && pending.ID != l.ID {
			flush()
		}
		pending = &l
		return true
	})
	flush()
	return skipped, err
}

// recordHandoff passes on one message record's items.
func recordHandoff(l *chatLine, add func(adapters.HandoffItem)) {
	switch l.Type {
	case "user":
		if !isPrompt(l.Content) {
			return
		}
		text := strings.TrimSpace(hookContext.ReplaceAllString(promptText(l), ""))
		if text != "" && !strings.HasPrefix(text, "<session_context>") {
			add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: text})
		}
	case "gemini":
		var calls []struct {
			Name string          `json:"name"`
			Args json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal(l.ToolCalls, &calls)
		for _, c := range calls {
			add(toolHandoff(c.Name, c.Args))
		}
		if t := strings.TrimSpace(adapters.HandoffText(l.Content)); t != "" {
			add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: t})
		}
	}
}

// toolHandoff is one tool call of a gemini record as a handoff item.
func toolHandoff(name string, args json.RawMessage) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	switch name {
	case "run_shell_command":
		it.Command = adapters.HandoffArg(args, "command")
	case "read_file":
		it.Reads = adapters.HandoffPath(args, "absolute_path", "file_path", "path")
	case "read_many_files":
		var in struct {
			Paths []string `json:"paths"`
		}
		_ = json.Unmarshal(args, &in)
		it.Reads = in.Paths
	case "write_file", "replace":
		it.Edits = adapters.HandoffPath(args, "file_path", "absolute_path", "path")
	case "write_todos":
		if todo, ok := adapters.HandoffTodoList(name, args, "description"); ok {
			return todo
		}
	}
	return it
}
