package adapters

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
)

// HandoffReader is a harness whose session file lifeloop can read into
// the items of a handoff note (`lifeloop handoff`): what the person
// asked, what the harness answered and did, and its open plan. It reads
// the file its telemetry follows, without asking any model.
type HandoffReader interface {
	// ReadHandoff reads the session file at path (as receipts'
	// provenance names it) and passes each item, in order, to add. It
	// returns the number of lines it skipped (not JSON, too long, or of
	// a shape it could not use) and an error only when the file cannot
	// be read at all.
	ReadHandoff(path string, add func(HandoffItem)) (skipped int, err error)
}

// HandoffKind is what a HandoffItem is.
type HandoffKind string

// The kinds of handoff items.
const (
	// HandoffPrompt is a prompt the person typed (Text).
	HandoffPrompt HandoffKind = "prompt"
	// HandoffReply is an assistant message (Text).
	HandoffReply HandoffKind = "reply"
	// HandoffTool is one tool call: Tool, and the files it read or
	// edited and the command it ran where the call names them.
	HandoffTool HandoffKind = "tool"
	// HandoffTodos is the harness's whole todo list or plan as it now
	// stands (Todos); a later one replaces an earlier one.
	HandoffTodos HandoffKind = "todos"
)

// HandoffItem is one harness-neutral fact of a session file.
type HandoffItem struct {
	Kind    HandoffKind
	Text    string
	Tool    string
	Reads   []string
	Edits   []string
	Command string
	Todos   []HandoffTodo
}

// HandoffTodo is one item of a todo list or plan.
type HandoffTodo struct {
	// ID is the harness's id of the item, "" when it gives none.
	ID   string
	Text string
	// Status is the harness's word (pending, in_progress, completed, …).
	Status string
}

// Done reports whether the item is finished (completed or cancelled).
func (t HandoffTodo) Done() bool {
	switch strings.ToLower(t.Status) {
	case "completed", "complete", "done", "cancelled", "canceled":
		return true
	}
	return false
}

// HandoffMaxLine is the longest line a handoff reader decodes; a longer
// one is skipped and counted.
const HandoffMaxLine = 8 << 20

// ErrHandoffUnreadable is wrapped by ReadHandoff errors about a file that
// cannot be opened or read.
var ErrHandoffUnreadable = errors.New("session file unreadable")

// ScanHandoffLines calls each with every line of the file at path (CR LF
// and a missing last newline allowed, blank lines left out) and counts
// as skipped the lines longer than HandoffMaxLine and those each refuses
// (returns false). Memory stays bounded by HandoffMaxLine whatever the
// file's size.
func ScanHandoffLines(path string, each func(line []byte) bool) (skipped int, err error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrHandoffUnreadable, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return 0, fmt.Errorf("%w: %s is a folder", ErrHandoffUnreadable, path)
	}
	r := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	overlong := false
	for {
		chunk, err := r.ReadSlice('\n')
		switch {
		case overlong:
		case len(line)+len(chunk) > HandoffMaxLine+2:
			overlong, line = true, line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if overlong {
			skipped++
		} else if l := trimEOL(line); len(strings.TrimSpace(string(l))) > 0 && !each(l) {
			skipped++
		}
		line, overlong = line[:0], false
		if err == io.EOF {
			return skipped, nil
		}
		if err != nil {
			return skipped, fmt.Errorf("%w: %w", ErrHandoffUnreadable, err)
		}
	}
}

func trimEOL(b []byte) []byte {
	for len(b) > 0 && (b[len(b)-1] == '\n' || b[len(b)-1] == '\r') {
		b = b[:len(b)-1]
	}
	return b
}

// HandoffText returns the text of a message content that is either a
// string or an array of parts, of which those of type "text" (or with no
// type) carry a "text": their texts joined by blank lines.
func HandoffText(content json.RawMessage) string {
	var s string
	if json.Unmarshal(content, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(content, &parts) != nil {
		return ""
	}
	var texts []string
	for _, p := range parts {
		if (p.Type == "" || p.Type == "text" || p.Type == "input_text" || p.Type == "output_text") && p.Text != "" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n\n")
}

// HandoffArg returns the first of keys that args (a JSON object) holds as
// a non-empty string, or as an array of strings (joined by spaces).
func HandoffArg(args json.RawMessage, keys ...string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, k := range keys {
		var s string
		if json.Unmarshal(m[k], &s) == nil && s != "" {
			return s
		}
		var ss []string
		if json.Unmarshal(m[k], &ss) == nil && len(ss) > 0 {
			return strings.Join(ss, " ")
		}
	}
	return ""
}

// HandoffPath returns the path HandoffArg finds under keys as a list of
// one, or nil where there is none.
func HandoffPath(args json.RawMessage, keys ...string) []string {
	if p := HandoffArg(args, keys...); p != "" {
		return []string{p}
	}
	return nil
}

// HandoffTodoList reads a todo-writing tool call's arguments, an object
// whose "todos" array holds {textKey, "status"} entries, into a todos
// item; ok is false when args is not such an object.
func HandoffTodoList(tool string, args json.RawMessage, textKey string) (it HandoffItem, ok bool) {
	var in struct {
		Todos []map[string]json.RawMessage `json:"todos"`
	}
	if json.Unmarshal(args, &in) != nil {
		return HandoffItem{}, false
	}
	todos := make([]HandoffTodo, 0, len(in.Todos))
	for _, t := range in.Todos {
		var text, status string
		_ = json.Unmarshal(t[textKey], &text)
		_ = json.Unmarshal(t["status"], &status)
		todos = append(todos, HandoffTodo{Text: text, Status: status})
	}
	return HandoffItem{Kind: HandoffTodos, Tool: tool, Todos: todos}, true
}

// HandoffReader returns the harness's handoff reader, or nil when
// lifeloop cannot read its session files into a note.
func (a *Adapter) HandoffReader() HandoffReader {
	r, _ := a.h.(HandoffReader)
	return r
}
