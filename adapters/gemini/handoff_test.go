package gemini

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// TestHandoffGolden: the notes of real Gemini CLI chat files (a tool
// turn, a compressed TUI session, a resumed one) match their golden
// files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"gemini-tool-turn.chat.jsonl", "gemini-compress-tui.chat.jsonl", "gemini-resume.chat.jsonl"} {
		t.Run(name, func(t *testing.T) {
			got := handofftest.Note(t, Harness{}, "gemini", "testdata/"+name, 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// TestHandoffToolsAndTodos: the real tool turn with its
// run_shell_command call replaced by the CLI's file and todo tools (as
// its chat file records tool calls) gives the files read and edited and
// the open todos; the record written twice counts once.
func TestHandoffToolsAndTodos(t *testing.T) {
	b, err := os.ReadFile("testdata/gemini-tool-turn.chat.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const call = `"name":"run_shell_command","args":{"command":"echo hello-from-tool > made-by-tool.txt; echo done","description":"mock tool call"}`
	if !strings.Contains(string(b), call) {
		t.Fatalf("the sample's tool call is no longer written as %s", call)
	}
	calls := `"name":"read_file","args":{"absolute_path":"/home/dev/proj/a.ts"}},` +
		`{"id":"c2","name":"replace","args":{"file_path":"/home/dev/proj/a.ts","old_string":"x","new_string":"y"}},` +
		`{"id":"c3","name":"write_todos","args":{"todos":[{"description":"rename x","status":"completed"},{"description":"update the docs","status":"pending"}]}`
	path := filepath.Join(t.TempDir(), "chat.jsonl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), call, calls)), 0o600); err != nil {
		t.Fatal(err)
	}
	got := handofftest.Note(t, Harness{}, "gemini", path, 0)
	for _, want := range []string{
		"## Files read\n\n- `/home/dev/proj/a.ts`\n",
		"## Files edited\n\n- `/home/dev/proj/a.ts`\n",
		"- [pending] update the docs\n\n(1 done)\n",
		"2 in all: read_file 1, replace 1",
		"> please RUN_TOOL: echo hello-from-tool > made-by-tool.txt; echo done\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}
