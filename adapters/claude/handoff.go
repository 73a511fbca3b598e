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
	// ToolUseResult is the output object of the tool a user line's
	// tool_result answers (TaskCreate's: {"task":{"id","subject"}}).
	ToolUseResult json.RawMessage `json:"toolUseResult"`
	Message       *struct {
		Model   string          `json:"model"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// ReadHandoff implements adapters.HandoffReader on a transcript: the
// prompts the parser opens turns on (not meta, compact summaries, local
// slash commands or tool results), the assistant's text, its tool_use
// blocks (Read, Edit, Write, MultiEdit, NotebookEdit, Bash and the
// others by name), and its todo list: TodoWrite's, or the task list
// TaskCreate (the task's id is in the result's toolUseResult) and
// TaskUpdate keep. Sidechain (sub-agent) lines and the TUI's own
// "<synthetic>" messages are left out.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	var tasks taskList
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
			if tasks.created(l.ToolUseResult) {
				add(tasks.item())
			}
		case "assistant":
			if l.Message.Model != syntheticModel {
				assistantHandoff(l.Message.Content, add, &tasks)
			}
		}
		return true
	})
}

// maxTasks bounds the task list a transcript's TaskCreate calls make.
const maxTasks = 500

// taskList is the task list TaskCreate and TaskUpdate keep, in order of
// creation.
type taskList []adapters.HandoffTodo

// taskRef is a task as a tool's output names it.
type taskRef struct{ ID, Subject, Status string }

// created records the task a TaskCreate result names; false when the
// result names none (another tool's) or the task is known.
func (t *taskList) created(result json.RawMessage) bool {
	var r struct {
		Task *taskRef `json:"task"`
	}
	if len(result) == 0 || json.Unmarshal(result, &r) != nil || r.Task == nil || r.Task.ID == "" || t.find(r.Task.ID) >= 0 || len(*t) == maxTasks {
		return false
	}
	status := r.Task.Status
	if status == "" {
		status = "pending"
	}
	*t = append(*t, adapters.HandoffTodo{ID: r.Task.ID, Text: r.Task.Subject, Status: status})
	return true
}

// updated applies a TaskUpdate's input; false when it names no known task.
func (t *taskList) updated(input json.RawMessage) bool {
	var in struct {
		TaskID  string `json:"taskId"`
		Subject string `json:"subject"`
		Status  string `json:"status"`
	}
	if json.Unmarshal(input, &in) != nil {
		return false
	}
	i := t.find(in.TaskID)
	if i < 0 {
		return false
	}
	if in.Status == "deleted" {
		*t = append((*t)[:i], (*t)[i+1:]...)
		return true
	}
	if in.Subject != "" {
		(*t)[i].Text = in.Subject
	}
	if in.Status != "" {
		(*t)[i].Status = in.Status
	}
	return true
}

func (t taskList) find(id string) int {
	for i, x := range t {
		if x.ID == id {
			return i
		}
	}
	return -1
}

// item is the whole list as a handoff item.
func (t taskList) item() adapters.HandoffItem {
	return adapters.HandoffItem{Kind: adapters.HandoffTodos, Tool: "TaskUpdate", Todos: append([]adapters.HandoffTodo(nil), t...)}
}

// assistantHandoff passes on an assistant message's text and tool calls.
func assistantHandoff(content json.RawMessage, add func(adapters.HandoffItem), tasks *taskList) {
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
			if b.Name == "TaskUpdate" && tasks.updated(b.Input) {
				add(tasks.item())
				continue
			}
			add(toolHandoff(b.Name, b.Input))
		}
	}
}

// toolHandoff is one tool_use block as a handoff item.
func toolHandoff(name string, input json.RawMessage) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	switch name {
	case "Read":
		it.Reads = adapters.HandoffPath(input, "file_path")
	case "Edit", "Write", "MultiEdit":
		it.Edits = adapters.HandoffPath(input, "file_path")
	case "NotebookEdit":
		it.Edits = adapters.HandoffPath(input, "notebook_path")
	case "Bash":
		it.Command = adapters.HandoffArg(input, "command")
	case "TodoWrite":
		if todo, ok := adapters.HandoffTodoList(name, input, "content"); ok {
			return todo
		}
	}
	return it
}
