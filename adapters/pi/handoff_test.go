package pi

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// TestHandoffGolden: the notes of real Pi session files (a plain turn, a
// tool turn, a compaction, a message an extension injected) match their
// golden files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"pi-plain-turn.jsonl", "pi-tool-turn.jsonl", "pi-compact-session.jsonl", "pi-injected-custom-message.jsonl"} {
		t.Run(name, func(t *testing.T) {
			got := handofftest.Note(t, Harness{}, "pi", "testdata/"+name, 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// TestHandoffFileTools: the real tool turn with its bash call replaced by
// Pi's read, edit and write calls (as its session file records
// toolCall blocks) gives the files read and edited.
func TestHandoffFileTools(t *testing.T) {
	b, err := os.ReadFile("testdata/pi-tool-turn.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const call = `"name":"bash","arguments":{"command":"echo tool-ran","description":"mock tool call"}}`
	if !strings.Contains(string(b), call) {
		t.Fatalf("the sample's tool call is no longer written as %s", call)
	}
	calls := `"name":"read","arguments":{"path":"src/a.ts"}},{"type":"toolCall","id":"t2","name":"edit","arguments":{"path":"src/a.ts","oldText":"x","newText":"y"}},` +
		`{"type":"toolCall","id":"t3","name":"write","arguments":{"path":"src/b.ts","content":"z"}}`
	path := filepath.Join(t.TempDir(), "session.jsonl")
	if err := os.WriteFile(path, []byte(strings.ReplaceAll(string(b), call, calls)), 0o600); err != nil {
		t.Fatal(err)
	}
	got := handofftest.Note(t, Harness{}, "pi", path, 0)
	for _, want := range []string{
		"## Files read\n\n- `src/a.ts`\n",
		"## Files edited\n\n- `src/a.ts`\n- `src/b.ts`\n",
		"3 in all: edit 1, read 1, write 1",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}
