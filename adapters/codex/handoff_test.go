package codex

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// TestHandoffGolden: the notes of real Codex rollouts (a tool turn, a
// mid-turn compaction) match their golden files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"codex-tool-turn.rollout.jsonl", "codex-compact-rollout.jsonl"} {
		t.Run(name, func(t *testing.T) {
			got := handofftest.Note(t, Harness{}, "codex", "testdata/"+name, 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// TestHandoffPlanAndPatch: the real tool turn with its exec_command call
// replaced by Codex's update_plan and apply_patch calls (as its rollout
// records function calls) gives the open plan steps and the patched
// files.
func TestHandoffPlanAndPatch(t *testing.T) {
	b, err := os.ReadFile("testdata/codex-tool-turn.rollout.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const call = `"name":"exec_command","arguments":"{\"cmd\": \"echo tool-ran\"}"`
	if !strings.Contains(string(b), call) {
		t.Fatalf("the sample's function call is no longer written as %s", call)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		if !strings.Contains(l, call) {
			lines = append(lines, l)
			continue
		}
		lines = append(lines,
			strings.Replace(l, call, `"name":"update_plan","arguments":"{\"plan\": [{\"step\": \"read the code\", \"status\": \"completed\"}, {\"step\": \"fix the bug\", \"status\": \"in_progress\"}, {\"step\": \"run the tests\", \"status\": \"pending\"}]}"`, 1),
			strings.Replace(l, call, `"name":"apply_patch","arguments":"{\"input\": \"*** Begin Patch\\n*** Update File: src/a.rs\\n@@\\n-x\\n+y\\n*** Add File: src/b.rs\\n+z\\n*** End Patch\"}"`, 1),
			strings.Replace(l, call, `"name":"shell","arguments":"{\"command\": [\"bash\", \"-lc\", \"cargo test\"]}"`, 1),
		)
	}
	path := filepath.Join(t.TempDir(), "rollout.jsonl")
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got := handofftest.Note(t, Harness{}, "codex", path, 0)
	for _, want := range []string{
		"- [in_progress] fix the bug\n- [pending] run the tests\n\n(1 done)\n",
		"## Files edited\n\n- `src/a.rs`\n- `src/b.rs`\n",
		"## Commands run\n\n- `cargo test`\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("note lacks %q:\n%s", want, got)
		}
	}
}
