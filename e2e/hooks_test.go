package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/codex"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestHostApplyClaudeNativeHooks installs lifeloop's hooks persistently
// with `lifeloop host apply` into a project whose settings already have a
// hook of the user's, runs the real `claude -p` (no `lifeloop run`) on a
// tool turn, and checks lifeloop's ledger: one native_hook session keyed by
// Claude's session id, the moments in the hook order Claude fires them,
// and the user's own hook still fired. `host remove` then restores the
// settings file byte for byte.
func TestHostApplyClaudeNativeHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)

	marker := filepath.Join(t.TempDir(), "user-hook-fired")
	original := "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {\n" +
		"            \"type\": \"command\",\n            \"command\": \"touch " + marker + "\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	settings := filepath.Join(env.Dir, ".claude", "settings.json")
	if err := os.MkdirAll(filepath.Dir(settings), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(settings, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "claude", "--project", env.Dir); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	applied, _ := os.ReadFile(settings)
	if !strings.Contains(string(applied), ll+" host-hook --adapter claude --hook UserPromptSubmit") {
		t.Fatalf("settings do not run %s:\n%s", ll, applied)
	}
	if res := env.Run(runTimeout, ll, "host", "inspect", "--adapter", "claude", "--project", env.Dir); res.ExitCode != 0 {
		t.Fatalf("host inspect: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}

	res := env.Run(runTimeout, bin, "-p", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("claude -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the user's own Stop hook did not fire: %v", err)
	}

	transcripts := env.ClaudeTranscripts()
	if len(transcripts) != 1 {
		t.Fatalf("transcripts %v", transcripts)
	}
	sid := strings.TrimSuffix(filepath.Base(transcripts[0]), ".jsonl")

	_, receipts := onlySession(t, state)
	want := []string{"session.started", "frame.opening", "frame.ending", "frame.ended", "session.ending", "session.ended"}
	if got := eventsOf(receipts); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v (Claude's hook order SessionStart, UserPromptSubmit, Stop, SessionEnd; SessionEnd is the session's end)", got, want)
	}
	var frame string
	for i, r := range receipts {
		if r["integration_mode"] != "native_hook" || r["adapter_id"] != "claude" || r["status"] != "observed" {
			t.Errorf("receipt %d: %v %v %v", i, r["integration_mode"], r["adapter_id"], r["status"])
		}
		if r["harness_session_id"] != sid {
			t.Errorf("receipt %d harness_session_id %v, want the transcript's %s", i, r["harness_session_id"], sid)
		}
		if num(r["sequence"]) != i+1 {
			t.Errorf("receipt %d sequence %v", i, r["sequence"])
		}
		if ev := r["event"].(string); strings.HasPrefix(ev, "frame.") {
			// One frame, named by Claude's prompt_id.
			id, _ := r["event_id"].(string)
			f, _, _ := strings.Cut(id, "/")
			if frame == "" {
				frame = f
			}
			if f != frame || f == "" || strings.HasPrefix(f, "evt_") {
				t.Errorf("receipt %d event_id %q, want <prompt_id>/%s of one frame", i, id, ev)
			}
		}
	}
	if got := dig(receipts[0], "telemetry_summary", "source"); got != "startup" {
		t.Errorf("session.started source %v", got)
	}
	if got := dig(receipts[4], "telemetry_summary", "reason"); got != "other" {
		t.Errorf("session.ending reason %v", got)
	}
	checkHookOnlyEnd(t, env, ll, receipts, "other")

	if res := env.Run(runTimeout, ll, "host", "remove", "--adapter", "claude", "--project", env.Dir); res.ExitCode != 0 {
		t.Fatalf("host remove: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if back, _ := os.ReadFile(settings); string(back) != original {
		t.Errorf("after remove:\n%s\nwant the original:\n%s", back, original)
	}
}

// TestHostApplyCodexHooksAndNotify installs lifeloop's hooks into
// $CODEX_HOME/hooks.json, runs the real `codex exec` on a tool turn with
// hook trust bypassed and the notify override of codex.NotifyArgs
// chaining a notify program of the user's, and checks the native_hook
// ledger: the hook moments in Codex's order, each once (the second
// PreModelRequest and notify's frame.ended repeat moments already
// recorded), and the user's notify program still called with the
// notification.
func TestHostApplyCodexHooksAndNotify(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)

	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "codex"); res.ExitCode != 0 || !strings.Contains(res.Stdout, "trusted") {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	marker := filepath.Join(t.TempDir(), "user-notify")
	userNotify := []string{"/bin/sh", "-c", `printf '%s' "$1" > "$0.tmp" && mv "$0.tmp" "$0"`, marker}
	args := append(codex.NotifyArgs([]string{ll}, userNotify), "exec", "--skip-git-repo-check", "--dangerously-bypass-hook-trust", "RUN_TOOL please")
	res := env.Run(runTimeout, bin, args...)
	if res.ExitCode != 0 {
		t.Fatalf("codex exec: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}

	// notify runs detached and may finish after codex exits: wait (bounded)
	// for the user's program and the session's end. The notify call reports
	// the turn end the Stop hook already reported: one stream, so it adds
	// no receipt.
	var receipts []map[string]any
	deadline := time.Now().Add(runTimeout)
	for {
		_, err := os.Stat(marker)
		if ls := sessionLedgers(t, state); err == nil && len(ls) == 1 {
			for _, rs := range ls {
				receipts = rs
			}
			if lastOf(receipts, "session.ending") != nil {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no notify receipt / user notify call; receipts %v", eventsOf(receipts))
		}
		time.Sleep(100 * time.Millisecond)
	}
	note, _ := os.ReadFile(marker)
	if !strings.Contains(string(note), `"type":"agent-turn-complete"`) {
		t.Errorf("the user's notify got %q", note)
	}

	rollouts := env.CodexRollouts()
	if len(rollouts) != 1 {
		t.Fatalf("rollouts %v", rollouts)
	}
	var hookEvents []string
	var turn string
	for i, r := range receipts {
		if r["integration_mode"] != "native_hook" || r["adapter_id"] != "codex" || r["status"] != "observed" {
			t.Errorf("receipt %d: %v %v %v", i, r["integration_mode"], r["adapter_id"], r["status"])
		}
		sid, _ := r["harness_session_id"].(string)
		if sid == "" || !strings.Contains(filepath.Base(rollouts[0]), sid) {
			t.Errorf("receipt %d harness_session_id %q is not the rollout's thread (%s)", i, sid, rollouts[0])
		}
		if ev := r["event"].(string); strings.HasPrefix(ev, "frame.") {
			id, _ := r["event_id"].(string)
			f, _, _ := strings.Cut(id, "/")
			if turn == "" {
				turn = f
			}
			if f != turn {
				t.Errorf("receipt %d event_id %q, want turn %s", i, id, turn)
			}
		}
		if dig(r, "telemetry_summary", "hook") != "notify" {
			hookEvents = append(hookEvents, r["event"].(string))
		}
	}
	want := "session.started frame.opening frame.opened frame.ending frame.ended session.ending session.ended"
	if got := strings.Join(hookEvents, " "); got != want {
		t.Errorf("hook events %s\nwant %s (SessionStart, UserPromptSubmit, the first PreModelRequest, Stop, SessionEnd and the session's end; notify adds nothing)", got, want)
	}
	if n := len(receipts); n != 7 {
		t.Errorf("%d receipts, want 7: %v", n, eventsOf(receipts))
	}
}

// checkHookOnlyEnd checks the end of a hook-only session (native_hook, no
// `lifeloop run`): its last receipt is the one session.ended that follows
// the harness's own end hook, completed/success/session_ended with the
// hook's reason as harness_reason, and OrgLoop and HCP tell that same one
// ending.
func checkHookOnlyEnd(t *testing.T, env *testharness.HarnessEnv, ll string, receipts []map[string]any, harnessReason string) {
	t.Helper()
	last := receipts[len(receipts)-1]
	if last["event"] != "session.ended" || dig(last, "telemetry_summary", "phase") != "completed" ||
		dig(last, "telemetry_summary", "outcome") != "success" || dig(last, "telemetry_summary", "reason") != "session_ended" ||
		dig(last, "telemetry_summary", "harness_reason") != harnessReason {
		t.Errorf("last receipt %v %v, want session.ended completed/success/session_ended, harness_reason %s", last["event"], last["telemetry_summary"], harnessReason)
	}
	org := env.Run(runTimeout, ll, "receipts", "--latest", "--format", "orgloop")
	if n := strings.Count(org.Stdout, `"terminal":true`); n != 1 || !strings.Contains(org.Stdout, `"phase":"completed","terminal":true,"outcome":"success","reason":"session_ended"`) {
		t.Errorf("OrgLoop: %d terminal events, want one completed/success/session_ended:\n%s%s", n, org.Stdout, org.Stderr)
	}
	hcp := env.Run(runTimeout, ll, "receipts", "--latest", "--format", "hcp")
	if n := strings.Count(hcp.Stdout, `"session_closed"`); n != 1 || !strings.Contains(hcp.Stdout, `"final_state":"COMPLETED","reason":"session_ended"`) {
		t.Errorf("HCP: %d session_closed, want one, COMPLETED with reason session_ended:\n%s%s", n, hcp.Stdout, hcp.Stderr)
	}
}
