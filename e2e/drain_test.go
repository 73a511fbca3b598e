package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// lastWordsClaude is a stand-in for claude that writes a whole session's
// transcript — two turns with their usage, an automatic compaction and
// the turn after it (the project's recorded Claude Code 2.1 transcript,
// its session id and times made this launch's) — in one write into the
// session file lifeloop pinned, and exits at once: the last lines a
// harness writes as it exits.
const lastWordsClaude = `#!/bin/sh
sid=""
while [ $# -gt 0 ]; do
  case "$1" in --session-id) sid="$2"; shift 2 ;; *) shift ;; esac
done
[ -n "$sid" ] || exit 0
mkdir -p "$PROJECT_DIR"
now=$(date -u +%Y-%m-%dT%H:%M:%S.%3NZ)
sed -e "s/855a5f91-573c-42a2-975a-66e7de40547d/$sid/g" \
    -e "s/\"timestamp\":\"[^\"]*\"/\"timestamp\":\"$now\"/g" "$SAMPLE" >"$PROJECT_DIR/$sid.jsonl.tmp"
mv "$PROJECT_DIR/$sid.jsonl.tmp" "$PROJECT_DIR/$sid.jsonl"
exit 0
`

// TestLastWordsPrecedeSessionEnded: what a harness writes just before it
// exits — a turn's last usage, a compaction — is recorded before
// session.ended, though the session ends as soon as the harness is gone
// (no quiet period waits for it). Run a few times: the write and the exit
// are microseconds apart.
func TestLastWordsPrecedeSessionEnded(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(lastWordsClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	sample, err := filepath.Abs(filepath.Join("..", "adapters", "claude", "testdata", "claude-compact-transcript.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	env.Setenv("SAMPLE", sample)
	env.Setenv("PROJECT_DIR", env.ClaudeProjectsDir())
	for range 5 {
		state := stateDir(t)
		if res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--", bin, "-p", "hi"); res.ExitCode != 0 {
			t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
		}
		_, rs := onlySession(t, state)
		events := eventsOf(rs)
		end := slices.Index(events, "session.ended")
		if end != len(events)-1 {
			t.Fatalf("session.ended is not the last receipt: %v", events)
		}
		for _, want := range []string{"frame.ended", "context.compacted", "context.pressure_observed"} {
			if !slices.Contains(events[:end], want) {
				t.Fatalf("no %s before session.ended: %v", want, events)
			}
		}
		// The last turn (after the compaction) ended, with its usage.
		if n := count(events, "frame.ended"); n != 2 {
			t.Errorf("%d frame.ended, want 2 (the turn before the compaction and the one after it): %v", n, events)
		}
	}
}

func count(events []string, ev string) int {
	n := 0
	for _, e := range events {
		if e == ev {
			n++
		}
	}
	return n
}
