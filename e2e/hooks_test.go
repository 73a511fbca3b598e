package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := filepath.Join(t.TempDir(), "state")
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

	receipts := ledgerOf(t, state)
	want := []string{"session.started", "frame.opening", "frame.ending", "frame.ended", "session.ending"}
	if got := eventsOf(receipts); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v (Claude's hook order SessionStart, UserPromptSubmit, Stop, SessionEnd)", got, want)
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

	if res := env.Run(runTimeout, ll, "host", "remove", "--adapter", "claude", "--project", env.Dir); res.ExitCode != 0 {
		t.Fatalf("host remove: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if back, _ := os.ReadFile(settings); string(back) != original {
		t.Errorf("after remove:\n%s\nwant the original:\n%s", back, original)
	}
}
