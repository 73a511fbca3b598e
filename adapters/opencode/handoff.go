package opencode

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.HandoffReader = Harness{}

// ReadHandoff implements adapters.HandoffReader on a session of
// OpenCode's database ("<database>#<session id>", the path telemetry
// follows): the session's parts in the order OpenCode created them (a
// part is updated in place), each with its message's role. A user
// message's text parts are a prompt (not the synthetic ones OpenCode
// adds, such as the "continue" after a compaction, nor a compaction
// request); an assistant message's text parts are its reply (not a
// compaction's summary); tool parts are its tool calls (bash runs a
// command, read names a file read, edit and write a file edited,
// todowrite is the todo list) and patch parts name the files a step
// changed.
func (Harness) ReadHandoff(path string, add func(adapters.HandoffItem)) (int, error) {
	return kit.ScanSessionRows(context.Background(), path, readPartRows, func(line []byte) bool {
		return partHandoff(line, add)
	})
}

// readPartRows reads a session's parts with their message's role and
// summary flag, as {"role","summary","part"} records, by rowid.
func readPartRows(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []kit.Row) ([]kit.Row, error) {
	rows, err := db.QueryContext(ctx, `SELECT p.rowid, json_object('role', json_extract(m.data, '$.role'), 'summary', json_extract(m.data, '$.summary'), 'part', json(p.data))
		FROM part p JOIN message m ON m.id = p.message_id
		WHERE p.session_id = ? AND p.rowid > ? ORDER BY p.rowid LIMIT ?`, id, after, limit)
	if err != nil {
		return dst, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var seq int64
		var line []byte
		if err := rows.Scan(&seq, &line); err != nil {
			return dst, err
		}
		dst = append(dst, kit.Row{Seq: seq, Line: line})
	}
	return dst, rows.Err()
}

// partRecord is one part with its message's role.
type partRecord struct {
	Role    string          `json:"role"`
	Summary json.RawMessage `json:"summary"`
	Part    struct {
		Type      string   `json:"type"`
		Text      string   `json:"text"`
		Synthetic bool     `json:"synthetic"`
		Tool      string   `json:"tool"`
		Files     []string `json:"files"`
		State     struct {
			Input json.RawMessage `json:"input"`
		} `json:"state"`
	} `json:"part"`
}

func partHandoff(line []byte, add func(adapters.HandoffItem)) bool {
	var r partRecord
	if json.Unmarshal(line, &r) != nil {
		return false
	}
	p := r.Part
	switch {
	case p.Type == "text" && r.Role == "user" && !p.Synthetic && p.Text != "":
		add(adapters.HandoffItem{Kind: adapters.HandoffPrompt, Text: p.Text})
	case p.Type == "text" && r.Role == "assistant" && string(r.Summary) != "true" && p.Text != "":
		add(adapters.HandoffItem{Kind: adapters.HandoffReply, Text: p.Text})
	case p.Type == "tool":
		add(toolHandoff(p.Tool, p.State.Input))
	case p.Type == "patch" && len(p.Files) > 0:
		add(adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: "patch", Edits: p.Files})
	}
	return true
}

// toolHandoff is one tool part as a handoff item.
func toolHandoff(name string, input json.RawMessage) adapters.HandoffItem {
	it := adapters.HandoffItem{Kind: adapters.HandoffTool, Tool: name}
	switch name {
	case "bash":
		it.Command = adapters.HandoffArg(input, "command")
	case "read":
		it.Reads = adapters.HandoffPath(input, "filePath")
	case "edit", "write":
		it.Edits = adapters.HandoffPath(input, "filePath")
	case "todowrite":
		if todo, ok := adapters.HandoffTodoList(name, input, "content"); ok {
			return todo
		}
	}
	return it
}
