package codex

import (
	"encoding/json"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
)

var _ adapters.HandoffReader = Harness{}

// handoffLine is what a handoff note needs of a rollout line.
type handoffLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type      string          `json:"type"`
		Role      string          `json:"role"`
		Content   json.RawMessage `json:"content"`
		Message   string          `json:"message"`
		TurnID    string          `json:"turn_id"`
		Name      string          `json:"name"`
		Arguments string          `json:"arguments"`
		Input     string          `json:"input"`
		Action    struct {
			Command []string `json:"command"`
		} `json:"action"`
		Item struct {
			Type    string          `json:"type"`
			Content json.RawMessage `json:"content"`
		} `json:"item"`
	} `json:"payload"`
}

// ReadHandoff implements adapters.HandoffReader on a rollout: the
// person's prompts (event_msg user_message, or item_completed
// UserMessage in newer versions; the same prompt told twice in a turn
// counts once), the assistant's messages (response_item message, role
// assistant), its tool calls (exec_command and shell run commands,
// apply_patch edits the files its patch names, update_plan is the plan)
// and local_shell_call's commands.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	var lastTurn, lastPrompt string
	prompt := func(turn, text string) {
		if text == "" || (turn == lastTurn && text == lastPrompt) {
			return
		}
		lastTurn, lastPrompt = turn, text
		add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: text})
	}
	return adapters.ScanHandoffLines(path, func(b []byte) bool {
		var l handoffLine
		if json.Unmarshal(b, &l) != nil {
			return false
		}
		p := l.Payload
		switch {
		case l.Type == "event_msg" && p.Type == "user_message":
			prompt(p.TurnID, p.Message)
		case l.Type == "event_msg" && p.Type == "item_completed" && p.Item.Type == "UserMessage":
			prompt(p.TurnID, adapters.HandoffText(p.Item.Content))
		case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
			if t := adapters.HandoffText(p.Content); t != "" {
				add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: t})
			}
		case l.Type == "response_item" && (p.Type == "function_call" || p.Type == "custom_tool_call"):
			args := p.Arguments
			if p.Type == "custom_tool_call" {
				args = p.Input
			}
			add(toolHandoff(p.Name, args))
		case l.Type == "response_item" && p.Type == "local_shell_call":
			add(adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: "local_shell", Command: shellCommand(p.Action.Command)})
		}
		return true
	})
}

// toolHandoff is one function call as a handoff item; args is its
// arguments (JSON) or, for a custom tool, its free-form input.
func toolHandoff(name, args string) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	raw := json.RawMessage(args)
	switch name {
	case "exec_command":
		it.Command = adapters.HandoffArg(raw, "cmd", "command")
	case "shell", "container.exec", "shell_command":
		var in struct {
			Command json.RawMessage `json:"command"`
		}
		if json.Unmarshal(raw, &in) == nil {
			var argv []string
			if json.Unmarshal(in.Command, &argv) == nil {
				it.Command = shellCommand(argv)
			} else {
				_ = json.Unmarshal(in.Command, &it.Command)
			}
		}
	case "apply_patch":
		patch := args
		if s := adapters.HandoffArg(raw, "input", "patch"); s != "" {
			patch = s
		}
		it.Edits = patchFiles(patch)
	case "update_plan":
		var in struct {
			Plan []struct {
				Step   string `json:"step"`
				Status string `json:"status"`
			} `json:"plan"`
		}
		if json.Unmarshal(raw, &in) == nil {
			todos := make([]adapters.HandoffTodo, 0, len(in.Plan))
			for _, s := range in.Plan {
				todos = append(todos, adapters.HandoffTodo{Text: s.Step, Status: s.Status})
			}
			return adapters.HandoffItem{Kind: adapters.HandoffTodos, Tool: name, Todos: todos}
		}
	}
	return it
}

// shellCommand returns the script of a ["bash", "-lc", SCRIPT] command
// line, else the command line joined by spaces.
func shellCommand(argv []string) string {
	if n := len(argv); n >= 3 && (argv[n-2] == "-lc" || argv[n-2] == "-c") {
		return argv[n-1]
	}
	return strings.Join(argv, " ")
}

// patchFiles returns the files an apply_patch patch adds, updates,
// deletes or moves to, in order.
func patchFiles(patch string) []string {
	var files []string
	for _, l := range strings.Split(patch, "\n") {
		for _, h := range []string{"*** Add File: ", "*** Update File: ", "*** Delete File: ", "*** Move to: "} {
			if f, ok := strings.CutPrefix(strings.TrimRight(l, "\r"), h); ok && f != "" {
				files = append(files, f)
			}
		}
	}
	return files
}
