package handoff

import (
	"context"
	"strings"
	"testing"
	"time"
)

var commandFacts = Facts{SessionID: "ses_1", Harness: "h", SessionFile: "/f.jsonl", Renewals: 2}

// TestCommandNote: the command's output is the note, as is; it runs with
// the session's facts in its environment.
func TestCommandNote(t *testing.T) {
	f := commandFacts
	f.Cwd = t.TempDir()
	c := Command{Script: `printf '# mine\n%s %s %s %s %s %s\n' "$LIFELOOP_SESSION_ID" "$LIFELOOP_HARNESS" "$LIFELOOP_SESSION_FILE" "$LIFELOOP_RENEWALS" "$LIFELOOP_HANDOFF_MAX_BYTES" "$(pwd)"`, MaxBytes: 2048}
	got, err := c.Run(t.Context(), f)
	if want := "# mine\nses_1 h /f.jsonl 2 2048 " + f.Cwd + "\n"; err != nil || got != want {
		t.Errorf("Run = %q, %v; want %q", got, err, want)
	}
}

// TestCommandFailures: each way a command's output cannot be the note is
// an error saying which.
func TestCommandFailures(t *testing.T) {
	for _, tt := range []struct {
		script  string
		timeout time.Duration // generous but where the timeout is the case: a loaded machine starts sh slowly
		want    string
	}{
		{"echo half a note; echo 'no such thing' >&2; exit 4", time.Minute, "the handoff command failed (exit status 4): no such thing"},
		{"true", time.Minute, "the handoff command printed nothing"},
		{"head -c 3000 /dev/zero | tr '\\0' x", time.Minute, "the handoff command printed more than 1024 bytes"},
		// The background child keeps the output open; the group is killed.
		{"(sleep 60 &); sleep 60", 200 * time.Millisecond, "the handoff command ran past its timeout of 200ms"},
	} {
		f := commandFacts
		f.Cwd = t.TempDir()
		_, err := Command{Script: tt.script, MaxBytes: 1024, Timeout: tt.timeout}.Run(context.Background(), f)
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.script, err, tt.want)
		}
	}
}
