package openclaw

import (
	"encoding/json"
	"errors"
	"flag"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/internal/handoff/handofftest"
)

var updateHandoff = flag.Bool("update", false, "rewrite the golden handoff notes in testdata/handoff")

// sessionOf stores the entries of a real transcript (testdata/name) as
// the transcript_events rows of one session in an agent database, every
// other row zstd-compressed (OpenClaw compresses rows of 1 KiB or more;
// the samples' long strings were cut shorter), and returns the session's
// path as telemetry names it.
func sessionOf(t *testing.T, name string) string {
	t.Helper()
	path, db := agentDB(t, t.TempDir())
	lines := readLines(t, name)
	var head struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(lines[0]), &head); err != nil || head.ID == "" {
		t.Fatalf("%s: no session header: %v", name, err)
	}
	at := time.Date(2026, 11, 24, 17, 0, 0, 0, time.UTC)
	addSession(t, db, head.ID, at)
	for i, l := range lines {
		addRow(t, db, head.ID, int64(i), l, i%2 == 1, at)
	}
	return path + sessionSep + head.ID
}

// TestHandoffGolden: the notes of real OpenClaw sessions (a plain turn,
// an exec tool turn, a compaction in the agent command and in the TUI),
// read from an agent database, match their golden files.
func TestHandoffGolden(t *testing.T) {
	for _, name := range []string{"openclaw-plain-turn.transcript.jsonl", "openclaw-tool-turn.transcript.jsonl", "openclaw-compact.transcript.jsonl", "openclaw-tui-compact.transcript.jsonl"} {
		t.Run(name, func(t *testing.T) {
			got := handofftest.Note(t, Harness{}, "openclaw", sessionOf(t, name), 0)
			handofftest.Golden(t, name, got, *updateHandoff)
		})
	}
}

// TestHandoffUnreadable: a path naming no session, a missing database and
// a session with no rows are errors wrapping ErrHandoffUnreadable.
func TestHandoffUnreadable(t *testing.T) {
	path, _ := agentDB(t, t.TempDir())
	for _, p := range []string{path, filepath.Join(t.TempDir(), "none.sqlite#s1"), path + "#no-such-session"} {
		_, err := Harness{}.ReadHandoff(p, func(adapters.HandoffItem) {})
		if !errors.Is(err, adapters.ErrHandoffUnreadable) {
			t.Errorf("ReadHandoff(%s) = %v, want ErrHandoffUnreadable", p, err)
		}
	}
}
