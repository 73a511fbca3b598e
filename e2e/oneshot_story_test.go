package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// freshClaudeHome removes what NewHarnessEnv prepared for Claude Code
// (its state file and folder), so the home is the one a newcomer's first
// `claude -p` meets, as in `make demo`.
func freshClaudeHome(t *testing.T, env *testharness.HarnessEnv) {
	t.Helper()
	for _, p := range []string{filepath.Join(env.Home, ".claude"), filepath.Join(env.Home, ".claude.json")} {
		if err := os.RemoveAll(p); err != nil {
			t.Fatal(err)
		}
	}
}

// checkOneShotStory fails unless a one-shot's ledger tells its story in
// order: the turn's frames, then the session's end (checkCoherent, which
// stateDir's cleanup also runs, and the session-end hook's
// session.ending after the turn's frame.ended).
func checkOneShotStory(t *testing.T, state string) {
	t.Helper()
	_, rs := onlySession(t, state)
	if err := checkCoherent(rs); err != nil {
		t.Fatalf("the one-shot's story is not coherent: %v\n%s", err, describeStream(rs))
	}
	events := eventsOf(rs)
	turn, end := slices.Index(events, "frame.ended"), slices.Index(events, "session.ending")
	if turn < 0 || end < turn {
		t.Fatalf("want the turn's frame.ended before session.ending:\n%s", describeStream(rs))
	}
}

// TestOneShotFreshHomeStory: `make demo`'s story — a real `claude -p` turn
// in a home Claude Code has never run in — is told in order: the turn,
// then the session's end. Seen out of order on a fast machine (4 runs of
// 6: the SessionEnd hook reached the wrapper before the watcher, which
// found the new transcript folder late, read the turn); run a few times.
func TestOneShotFreshHomeStory(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Hello from lifeloop's mock model."})
	for range 3 {
		env := testharness.NewHarnessEnv(t, mock)
		freshClaudeHome(t, env)
		state := stateDir(t)
		if res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "Say hello"); res.ExitCode != 0 {
			t.Fatalf("lifeloop run -- claude -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		checkOneShotStory(t, state)
	}
}

// lateTranscriptClaude runs the real Claude Code with its files in a
// folder lifeloop does not follow ($HIDDEN), then moves its transcript
// to where lifeloop follows it as it exits: the transcript is read only
// after the SessionEnd hook reached the wrapper, every time — what a
// fresh home does now and then, when the watcher finds Claude's new
// project folder late.
const lateTranscriptClaude = `#!/bin/sh
CLAUDE_CONFIG_DIR="$HIDDEN" "$REAL_CLAUDE" "$@"
code=$?
for f in "$HIDDEN"/projects/*/*.jsonl; do
  [ -f "$f" ] || continue
  d="$HOME/.claude/projects/$(basename "$(dirname "$f")")"
  mkdir -p "$d"
  cp "$f" "$d/$(basename "$f").part" && mv "$d/$(basename "$f").part" "$d/$(basename "$f")"
done
exit $code
`

// TestOneShotTranscriptReadLateStory: a real `claude -p` whose transcript
// is read only after its SessionEnd hook arrived still tells the turn
// before the session's end: the hook's session.ending waits for the
// drain's read of the transcript to its end.
func TestOneShotTranscriptReadLateStory(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	real := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Hello from lifeloop's mock model."})
	env := testharness.NewHarnessEnv(t, mock)
	freshClaudeHome(t, env)
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(lateTranscriptClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	env.Setenv("REAL_CLAUDE", real)
	env.Setenv("HIDDEN", filepath.Join(env.Home, "hidden-claude"))
	state := stateDir(t)
	if res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "Say hello"); res.ExitCode != 0 {
		t.Fatalf("lifeloop run -- claude -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	_, rs := onlySession(t, state)
	if src := dig(lastOf(rs, "session.ending"), "telemetry_summary", "source"); src != "hook" {
		t.Fatalf("session.ending source %v, want hook:\n%s", src, describeStream(rs))
	}
	checkOneShotStory(t, state)
}
