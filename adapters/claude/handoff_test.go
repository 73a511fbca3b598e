package claude

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"flag"
	"github.com/lifeloop/lifeloop/adapters"
	"testing"

	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// TestHandoffGolden: the notes of real Claude Code transcripts (a tool
// turn, a compaction) match their golden files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"claude-tool-turn.transcript.jsonl", "claude-compact-transcript.jsonl"} {
		t.Run(name, func(t *testing.T) {
			got := handofftest.Note(t, Harness{}, "claude", "testdata/"+name, 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// sampleLines returns the lines of a real transcript in testdata.
func sampleLines(t *testing.T, name string) []string {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimRight(string(b), "\n"), "\n")
}

// writeLines writes lines as a transcript in a temporary folder.
func writeLines(t *testing.T, lines []string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestHandoffTools: the real tool turn with its Bash call replaced by
// the calls of Claude Code's other tools (as its transcript records
// them): Read and Edit name their files, TodoWrite's latest list gives
// the open items.
func TestHandoffTools(t *testing.T) {
	const bash = `{"type":"tool_use","id":"toolu_mock_0e39edd034","name":"Bash","input":{"command":"echo tool-ran","description":"mock tool call"}}`
	calls := []string{
		`{"type": "tool_use", "id": "t1", "name": "Read", "input": {"file_path": "/home/dev/project/main.go"}}`,
		`{"type": "tool_use", "id": "t2", "name": "TodoWrite", "input": {"todos": [{"content": "write the parser", "status": "completed", "activeForm": "Writing"}, {"content": "test the parser", "status": "in_progress", "activeForm": "Testing"}]}}`,
		`{"type": "tool_use", "id": "t3", "name": "Edit", "input": {"file_path": "/home/dev/project/main.go", "old_string": "a", "new_string": "b"}}`,
		`{"type": "tool_use", "id": "t4", "name": "Write", "input": {"file_path": "/home/dev/project/new.go", "content": "package main"}}`,
		`{"type": "tool_use", "id": "t5", "name": "Grep", "input": {"pattern": "x"}}`,
	}
	var lines []string
	for _, l := range sampleLines(t, "claude-tool-turn.transcript.jsonl") {
		if !strings.Contains(l, bash) {
			if strings.Contains(l, "echo tool-ran") && !strings.Contains(l, `"tool_result"`) {
				t.Fatalf("the sample's tool call is no longer written as %s", bash)
			}
			lines = append(lines, l)
			continue
		}
		for _, c := range calls {
			lines = append(lines, strings.Replace(l, bash, c, 1))
		}
	}
	got := handofftest.Note(t, Harness{}, "claude", writeLines(t, lines), 0)
	for _, want := range []string{
		"## Files edited\n\n- `/home/dev/project/main.go`\n- `/home/dev/project/new.go`\n",
		"## Files read\n\n- `/home/dev/project/main.go`\n",
		"## Open todo and plan items\n\n- [in_progress] test the parser\n\n(1 done)\n",
		"4 in all: Edit 1, Grep 1, Read 1, Write 1",
		"## Commands run\n\nNone recorded.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}

// TestHandoffHugeTranscript: a transcript of 400 copies of the real tool
// turn (each prompt and command numbered), one 200 KB prompt and one
// line over adapters.HandoffMaxLine gives a note within the bound, the
// overlong line counted as skipped, the first and latest prompts kept,
// the long prompt cut.
func TestHandoffHugeTranscript(t *testing.T) {
	sample := sampleLines(t, "claude-tool-turn.transcript.jsonl")
	var lines []string
	for i := range 400 {
		for _, l := range sample {
			l = strings.ReplaceAll(l, "RUN_TOOL please", fmt.Sprintf("RUN_TOOL please %d", i))
			l = strings.ReplaceAll(l, "echo tool-ran", fmt.Sprintf("echo tool-ran %d", i))
			lines = append(lines, l)
		}
		if i == 200 {
			lines = append(lines, `{"type":"user","message":{"role":"user","content":"`+strings.Repeat("x", adapters.HandoffMaxLine)+`"}}`)
		}
	}
	lines = append(lines, `{"type":"user","message":{"role":"user","content":"`+strings.Repeat("long ", 40000)+`"}}`)
	const bound = 2048
	got := handofftest.Note(t, Harness{}, "claude", writeLines(t, lines), bound)
	if len(got) > bound {
		t.Errorf("note is %d bytes, over its bound of %d", len(got), bound)
	}
	for _, want := range []string{"> RUN_TOOL please 0\n", "> RUN_TOOL please 399\n", "> long long", "unreadable lines skipped: 1\n", "bytes of this section left out"} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
	handofftest.Golden(t, "huge", got, *updateHandoff)
}

// TestHandoffGarbage: lines that are not JSON, torn JSON, binary bytes
// and JSON of another shape among the real lines are skipped and
// counted; the rest of the note is read.
func TestHandoffGarbage(t *testing.T) {
	sample := sampleLines(t, "claude-tool-turn.transcript.jsonl")
	lines := []string{"not json at all", "\x00\x01\xff\xfe", sample[0][:40]}
	lines = append(lines, sample...)
	lines = append(lines, `[1,2,3]`, `{"type":"user","message":"a string"}`, `{"type":"assistant","message":{"content":7}}`, "", "   ", sample[4][:len(sample[4])/2])
	got := handofftest.Note(t, Harness{}, "claude", writeLines(t, lines), 0)
	if !strings.Contains(got, "> RUN_TOOL please\n") || !strings.Contains(got, "- `echo tool-ran`") {
		t.Errorf("the real lines among the garbage were not read:\n%s", got)
	}
	handofftest.Golden(t, "garbage", got, *updateHandoff)
}

// TestHandoffUnreadable: a missing file and a folder are errors
// wrapping adapters.ErrHandoffUnreadable, not notes.
func TestHandoffUnreadable(t *testing.T) {
	for _, path := range []string{filepath.Join(t.TempDir(), "missing.jsonl"), t.TempDir()} {
		_, err := Harness{}.ReadHandoff(path, func(adapters.HandoffItem) {})
		if !errors.Is(err, adapters.ErrHandoffUnreadable) {
			t.Errorf("ReadHandoff(%s) = %v, want ErrHandoffUnreadable", path, err)
		}
	}
}

// TestHandoffTaskList: the task list of TaskCreate and TaskUpdate (their
// inputs and TaskCreate's output as the SDK's sdk-tools.d.ts declares
// them, in the real tool turn's lines in place of its Bash call and
// result): tasks created, one completed, one deleted, one in progress.
func TestHandoffTaskList(t *testing.T) {
	const (
		bash   = `{"type":"tool_use","id":"toolu_mock_0e39edd034","name":"Bash","input":{"command":"echo tool-ran","description":"mock tool call"}}`
		result = `"toolUseResult":{"stdout":"tool-ran","stderr":"","interrupted":false,"isImage":false,"noOutputExpected":false}`
	)
	create := func(id, subject string) [2]string {
		return [2]string{
			`{"type":"tool_use","id":"toolu_mock_0e39edd034","name":"TaskCreate","input":{"subject":"` + subject + `","description":"d"}}`,
			`"toolUseResult":{"task":{"id":"` + id + `","subject":"` + subject + `"}}`,
		}
	}
	update := func(in string) [2]string {
		return [2]string{`{"type":"tool_use","id":"toolu_mock_0e39edd034","name":"TaskUpdate","input":` + in + `}`, `"toolUseResult":{"success":true}`}
	}
	steps := [][2]string{
		create("1", "write the parser"), create("2", "test the parser"), create("3", "drop me"),
		update(`{"taskId":"1","status":"completed"}`), update(`{"taskId":"3","status":"deleted"}`),
		update(`{"taskId":"2","status":"in_progress","subject":"test the parser well"}`),
	}
	sample := sampleLines(t, "claude-tool-turn.transcript.jsonl")
	var call, answer int = -1, -1
	for i, l := range sample {
		if strings.Contains(l, bash) {
			call = i
		}
		if strings.Contains(l, result) {
			answer = i
		}
	}
	if call < 0 || answer != call+1 {
		t.Fatalf("the sample's tool call and result are no longer written as %s and %s", bash, result)
	}
	lines := append([]string(nil), sample[:call]...)
	for _, s := range steps {
		lines = append(lines, strings.Replace(sample[call], bash, s[0], 1), strings.Replace(sample[answer], result, s[1], 1))
	}
	lines = append(lines, sample[answer+1:]...)
	got := handofftest.Note(t, Harness{}, "claude", writeLines(t, lines), 0)
	if want := "## Open todo and plan items\n\n- [in_progress] test the parser well\n\n(1 done)\n"; !strings.Contains(got, want) {
		t.Errorf("note lacks %q:\n%s", want, got)
	}
	if want := "3 in all: TaskCreate 3"; !strings.Contains(got, want) {
		t.Errorf("note lacks %q:\n%s", want, got)
	}
}
