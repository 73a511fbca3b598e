package claude_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/claude"
)

// The continuation counts as delivered when the session's transcript has
// it as a person's prompt (a string, or text blocks) stamped at or after
// the resume; a tool result, an older prompt or another session's
// transcript do not count.
func TestPromptDelivered(t *testing.T) {
	home := t.TempDir()
	env := []string{"HOME=" + home}
	const cwd, session = "/home/dev/project", "6d81dc9f-d0c9-4ba9-9372-265f133a3e9f"
	dir := filepath.Join(home, ".claude", "projects", claude.ProjectDirName(cwd))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	lines := []string{
		`{"type":"user","message":{"role":"user","content":"go on NOTE"},"timestamp":"2026-12-03T11:14:10.000Z"}`,
		`{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"go on BLOCKS"}]},"timestamp":"2026-12-03T11:14:22.000Z"}`,
		`{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t","type":"tool_result","content":"go on RESULT"}]},"timestamp":"2026-12-03T11:14:22.000Z"}`,
		`not json`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"go on "},{"type":"text","text":"BLOCKS"}]},"timestamp":"2026-12-03T11:14:21.500Z"}`,
	}
	if err := os.WriteFile(filepath.Join(dir, session+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	since := time.Date(2026, 12, 3, 11, 14, 21, 0, time.UTC)
	h := claude.Harness{}
	for _, tc := range []struct {
		prompt, session string
		since           time.Time
		want            bool
	}{
		{"go on BLOCKS", session, since, true},
		{"go on NOTE", session, since, false}, // before the resume
		{"go on NOTE", session, since.Add(-time.Hour), true},
		{"go on RESULT", session, since, false}, // a tool result
		{"go on", session, since, false},        // the whole prompt, not a part
		{"go on BLOCKS", "11111111-1111-4111-8111-111111111111", since, false},
		{"go on BLOCKS", "not-a-session", since, false},
	} {
		if got := h.PromptDelivered(env, cwd, tc.session, tc.prompt, tc.since); got != tc.want {
			t.Errorf("%q in %s since %s: %v, want %v", tc.prompt, tc.session, tc.since.Format(time.TimeOnly), got, tc.want)
		}
	}
}
