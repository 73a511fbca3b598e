package opencode

import (
	"errors"
	"flag"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/opencode/opencodetest"
	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// sampleDB stores the session, message and part rows of an OpenCode
// sample (opencodetest) in a database of its schema, in WAL mode as
// OpenCode keeps it, and returns the session's path as telemetry names
// it. edit changes each row's data before it is stored (nil: none).
func sampleDB(t *testing.T, name string, edit func(table string, data map[string]any)) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := opencodetest.NewDB(t, path)
	session := opencodetest.AddRows(t, db, name, opencodetest.Handoff, func(table string, row map[string]any) {
		if d, ok := row["data"].(map[string]any); ok && edit != nil {
			edit(table, d)
		}
	})
	return SessionPath(path, session)
}

// TestHandoffGolden: the notes of real OpenCode sessions (a plain turn,
// a bash tool turn, two automatic compactions with their continue
// turns), read from its database, match their golden files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"opencode-turn", "opencode-tool-turn", "opencode-compact"} {
		t.Run(name, func(t *testing.T) {
			path := sampleDB(t, name, nil)
			got := handofftest.NoteAs(t, Harness{}, "opencode", path, "opencode.db#"+name, 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// TestHandoffTodosAndFiles: the real tool turn with its bash part's tool
// and input replaced by OpenCode's read, edit and todowrite (as its part
// rows record tool calls) gives the files and the open todos.
func TestHandoffTodosAndFiles(t *testing.T) {
	for _, tt := range []struct {
		tool  string
		input map[string]any
		want  string
	}{
		{"read", map[string]any{"filePath": "/home/dev/work/a.go"}, "## Files read\n\n- `/home/dev/work/a.go`\n"},
		{"edit", map[string]any{"filePath": "/home/dev/work/a.go", "oldString": "x", "newString": "y"}, "## Files edited\n\n- `/home/dev/work/a.go`\n"},
		{"todowrite", map[string]any{"todos": []any{
			map[string]any{"content": "ship it", "status": "pending", "priority": "high", "id": "1"},
			map[string]any{"content": "write it", "status": "completed", "priority": "high", "id": "2"},
		}}, "- [pending] ship it\n\n(1 done)\n"},
	} {
		n := 0
		path := sampleDB(t, "opencode-tool-turn", func(table string, d map[string]any) {
			if table == "part" && d["tool"] == "bash" {
				d["tool"], d["state"].(map[string]any)["input"] = tt.tool, tt.input
				n++
			}
		})
		if n != 1 {
			t.Fatalf("the sample has %d bash parts, want 1", n)
		}
		if got := handofftest.NoteAs(t, Harness{}, "opencode", path, "opencode.db", 0); !strings.Contains(got, tt.want) {
			t.Errorf("%s: note lacks %q:\n%s", tt.tool, tt.want, got)
		}
	}
}

// TestHandoffRealDatabase: the database the real OpenCode wrote in this
// package's fixture gives each session's prompt and the mock's answer.
func TestHandoffRealDatabase(t *testing.T) {
	r := realDatabase(t)
	for id, prompt := range map[string]string{r.Turn: "> say hi\n", r.Compact: "> fill the context\n"} {
		got := handofftest.NoteAs(t, Harness{}, "opencode", SessionPath(r.DB, id), "opencode.db", 0)
		if !strings.Contains(got, prompt) || !strings.Contains(got, "## Last assistant message\n\n> ") {
			t.Errorf("session %s: note lacks %q or an answer:\n%s", id, prompt, got)
		}
	}
}

// TestHandoffUnreadable: a path naming no session, a missing database and
// an unknown session are errors wrapping ErrHandoffUnreadable.
func TestHandoffUnreadable(t *testing.T) {
	path := sampleDB(t, "opencode-turn", nil)
	db, _, _ := strings.Cut(path, sessionSep)
	for _, p := range []string{db, filepath.Join(t.TempDir(), "none.db#ses_1"), SessionPath(db, "ses_unknown")} {
		_, err := Harness{}.ReadHandoff(p, func(adapters.HandoffItem) {})
		if !errors.Is(err, adapters.ErrHandoffUnreadable) {
			t.Errorf("ReadHandoff(%s) = %v, want ErrHandoffUnreadable", p, err)
		}
	}
}
