package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestHostApplyGeminiHooks installs lifeloop's hooks with `lifeloop host
// apply --user` into the user's Gemini settings (which hold the API-key
// auth the CLI needs, and a hook of the user's), runs the real `gemini -p`
// on a tool turn without `lifeloop run`, and checks lifeloop's ledger: one
// native_hook session keyed by the chat's session id, the moments in the
// order Gemini fires SessionStart, BeforeAgent, AfterAgent, SessionEnd,
// one frame named the same by BeforeAgent and AfterAgent, and the user's
// own hook still fired. `host remove` restores the file byte for byte.
func TestHostApplyGeminiHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)

	settings := filepath.Join(env.Home, ".gemini", "settings.json")
	seeded, err := os.ReadFile(settings)
	if err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "user-hook-fired")
	original := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(string(seeded)), "}")) +
		",\n  \"hooks\": {\n    \"AfterAgent\": [\n      {\n        \"matcher\": \"*\",\n        \"hooks\": [\n          {\n" +
		"            \"type\": \"command\",\n            \"command\": \"touch " + marker + "\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if err := os.WriteFile(settings, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}

	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "gemini", "--user"); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	applied, _ := os.ReadFile(settings)
	if !strings.Contains(string(applied), ll+" host-hook --adapter gemini --hook BeforeAgent") || !strings.Contains(string(applied), `"gemini-api-key"`) {
		t.Fatalf("settings after apply:\n%s", applied)
	}
	if res := env.Run(runTimeout, ll, "host", "inspect", "--adapter", "gemini", "--user"); res.ExitCode != 0 {
		t.Fatalf("host inspect: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}

	res := env.Run(runTimeout, bin, geminiArgs("RUN_TOOL please", "--approval-mode", "yolo")...)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
		t.Fatalf("gemini -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the user's own AfterAgent hook did not fire: %v", err)
	}
	prompts, sid := geminiPrompts(t, onlyOne(t, "chat file", env.GeminiChats()))

	_, receipts := onlySession(t, state)
	want := []string{"session.started", "frame.opening", "frame.ending", "frame.ended", "session.ending", "session.ended"}
	if got := eventsOf(receipts); strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("events %v, want %v (Gemini's hook order SessionStart, BeforeAgent, AfterAgent, SessionEnd; SessionEnd is the session's end)", got, want)
	}
	var frame string
	for i, r := range receipts {
		if r["integration_mode"] != "native_hook" || r["adapter_id"] != "gemini" || r["status"] != "observed" {
			t.Errorf("receipt %d: %v %v %v", i, r["integration_mode"], r["adapter_id"], r["status"])
		}
		if r["harness_session_id"] != sid {
			t.Errorf("receipt %d harness_session_id %v, want the chat's %s", i, r["harness_session_id"], sid)
		}
		if ev := r["event"].(string); strings.HasPrefix(ev, "frame.") {
			id, _ := r["event_id"].(string)
			f, _, _ := strings.Cut(id, "/")
			if frame == "" {
				frame = f
			}
			if f != frame || len(prompts) != 1 || f != prompts[0] {
				t.Errorf("receipt %d event_id %q, want %v/%s: the chat file's name for the turn", i, id, prompts, ev)
			}
		}
	}
	if got := dig(receipts[0], "telemetry_summary", "source"); got != "startup" {
		t.Errorf("session.started source %v", got)
	}
	if got := dig(receipts[4], "telemetry_summary", "reason"); got != "exit" {
		t.Errorf("session.ending reason %v", got)
	}
	checkHookOnlyEnd(t, env, ll, receipts, "exit")

	if res := env.Run(runTimeout, ll, "host", "remove", "--adapter", "gemini", "--user"); res.ExitCode != 0 {
		t.Fatalf("host remove: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if back, _ := os.ReadFile(settings); string(back) != original {
		t.Errorf("after remove:\n%s\nwant the original:\n%s", back, original)
	}
}

// TestRunGeminiWithHostHooks runs `gemini -p` under `lifeloop run` with
// lifeloop's hooks also installed in the user's settings (host apply):
// the hooks (forwarded to the wrapper) and the chat file name the turn
// alike, so each frame event is recorded once, the SessionStart hook's
// session.started and the binding agree on the session id.
func TestRunGeminiWithHostHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "gemini", "--user"); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--", bin}, geminiArgs("RUN_TOOL please", "--approval-mode", "yolo")...)...)
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "gemini", "completed", "exit_code_0")
	prompts, sid := geminiPrompts(t, onlyOne(t, "chat file", env.GeminiChats()))
	assertFrames(t, rs, prompts)
	assertHarnessSession(t, state, session, rs, sid)
	hooked := 0
	for _, r := range rs {
		if dig(r, "telemetry_summary", "source") == "hook" {
			hooked++
		}
	}
	if hooked == 0 {
		t.Errorf("no receipt from the hooks: %v", eventsOf(rs))
	}
}
