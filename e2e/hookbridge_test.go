package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// payloadFile writes a payload envelope (pre_prompt_frame, required) whose
// body is marker and returns its path.
func payloadFile(t *testing.T, dir, id, marker string) string {
	t.Helper()
	doc := fmt.Sprintf(`{"schema_version":1,"payload_id":%q,"client_id":"e2e","payload_kind":"instruction_frame","format":"text/plain","content_encoding":"utf8","body":%q,"byte_size":%d,"acceptable_placements":[{"placement":"pre_prompt_frame","requirement":"required"}]}`,
		id, marker, len(marker))
	p := filepath.Join(dir, id+".json")
	if err := os.WriteFile(p, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// clientScript writes a client that answers frame.opening with one
// payload of its own (body marker) and everything else with observed.
func clientScript(t *testing.T, dir, marker string) string {
	t.Helper()
	payload := fmt.Sprintf(`{"schema_version":1,"payload_id":"pay_client","client_id":"e2e","payload_kind":"instruction_frame","format":"text/plain","content_encoding":"utf8","body":%q,"byte_size":%d,"acceptable_placements":[{"placement":"pre_prompt_frame","requirement":"required"}]}`, marker, len(marker))
	script := `#!/bin/sh
env=$(cat)
case "$env" in
*'"event":"frame.opening"'*) echo '{"schema_version":"lifeloop.v0.2","status":"delivered","client_payloads":[` + payload + `],"failure_class":null,"retry_class":null}' ;;
*) echo '{"schema_version":"lifeloop.v0.2","status":"observed","failure_class":null,"retry_class":null}' ;;
esac
`
	p := filepath.Join(dir, "client.sh")
	if err := os.WriteFile(p, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunClaudeHookBridge: under `lifeloop run`, Claude's own hooks report
// the turn natively (in HARNESSES.md's hook order), a --payload placed at
// the first prompt and a payload a client returns at frame.opening both
// reach the model request, their payload receipts say delivered, and the
// user's own hooks still fire.
func TestRunClaudeHookBridge(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer.", ToolReply: "Tool answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)

	// The user's own hook, in their own settings file.
	marker := filepath.Join(t.TempDir(), "user-hook-fired")
	settings := fmt.Sprintf(`{"hooks":{"UserPromptSubmit":[{"hooks":[{"type":"command","command":"touch %s"}]}]}}`, marker)
	if err := os.MkdirAll(filepath.Join(env.Home, ".claude"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(env.Home, ".claude", "settings.json"), []byte(settings), 0o600); err != nil {
		t.Fatal(err)
	}

	const payloadMarker, clientMarker = "LIFELOOP-PAYLOAD-MARKER-1", "LIFELOOP-CLIENT-MARKER-2"
	pf := payloadFile(t, env.Dir, "pay_cli", payloadMarker)
	client := clientScript(t, env.Dir, clientMarker)

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0",
		"--payload", pf, "--payload-at", "frame", "--client", client,
		"--", bin, "-p", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}

	convo := mock.RequestsOfKind("claude")
	for _, m := range []string{payloadMarker, clientMarker} {
		if _, ok := anyRequestCarries(t, convo, m); !ok {
			t.Errorf("no model request carries %s", m)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the user's own UserPromptSubmit hook did not fire: %v", err)
	}

	session, receipts := onlySession(t, state)
	// The pinned Claude posts its hooks to the session's door (no process
	// per call), except SessionStart, which it runs only as a program.
	bridge, err := os.ReadFile(filepath.Join(state, "sessions", session, "claude-hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var installed struct {
		Hooks map[string][]struct {
			Hooks []struct{ Type, Command string }
		}
	}
	if err := json.Unmarshal(bridge, &installed); err != nil {
		t.Fatal(err)
	}
	for hook, want := range map[string]string{"SessionStart": "command", "UserPromptSubmit": "http", "Stop": "http", "SessionEnd": "http"} {
		if g := installed.Hooks[hook]; len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Type != want {
			t.Errorf("%s installed as %+v, want one %s hook", hook, g, want)
		}
	}
	// The program it runs is the lean hook program beside lifeloop.
	if g := installed.Hooks["SessionStart"]; len(g) == 1 && len(g[0].Hooks) == 1 {
		if want := filepath.Join(filepath.Dir(ll), "lifeloop-hook") + " host-hook "; !strings.HasPrefix(g[0].Hooks[0].Command, want) {
			t.Errorf("SessionStart runs %q, want %q…", g[0].Hooks[0].Command, want)
		}
	}
	if os.Getenv("LIFELOOP_E2E_DEBUG") != "" {
		for _, r := range receipts {
			t.Logf("%v %v %v", r["event"], r["telemetry_summary"], r["warnings"])
		}
	}
	var hookEvents []string
	var opening map[string]any
	for _, r := range receipts {
		if dig(r, "telemetry_summary", "source") != "hook" {
			continue
		}
		hookEvents = append(hookEvents, r["event"].(string))
		if r["event"] == "frame.opening" && opening == nil {
			opening = r
		}
	}
	want := []string{"session.started", "frame.opening", "frame.ending", "frame.ended", "session.ending"}
	if strings.Join(hookEvents, " ") != strings.Join(want, " ") {
		t.Fatalf("hook receipts %v, want %v (all: %v)", hookEvents, want, eventsOf(receipts))
	}
	// The harness's own ids: the Claude session and the prompt id (the
	// frame id) in the event id.
	if opening == nil || opening["harness_session_id"] == nil || !strings.HasSuffix(fmt.Sprint(opening["event_id"]), "/frame.opening") {
		t.Fatalf("frame.opening without the harness's session or prompt id: %v", opening)
	}
	delivered := map[string]string{}
	prs, _ := opening["payload_receipts"].([]any)
	for _, pr := range prs {
		m := pr.(map[string]any)
		delivered[m["payload_id"].(string)] = m["status"].(string)
	}
	if delivered["pay_cli"] != "delivered" || delivered["pay_client"] != "delivered" {
		t.Errorf("payload receipts on frame.opening: %v", opening["payload_receipts"])
	}
	if w := lastOf(receipts, "session.ended")["warnings"]; w != nil {
		t.Errorf("session.ended warnings: %v", w)
	}
	assertFramesOnce(t, receipts)
}

// assertFramesOnce checks that no frame moment was recorded twice (once
// from a hook and once from the transcript).
func assertFramesOnce(t *testing.T, receipts []map[string]any) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range receipts {
		ev, _ := r["event"].(string)
		if !strings.HasPrefix(ev, "frame.") {
			continue
		}
		key := frameOfReceipt(r) + " " + ev
		if seen[key] {
			t.Errorf("%s recorded twice: %v", key, eventsOf(receipts))
		}
		seen[key] = true
	}
}

// TestRunPayloadAtLaunch: --payload (default: the new session) goes into
// the harness's launch placement — Claude's appended system prompt, Codex's
// developer instructions, each read from a private file — and reaches the
// model; session.starting's payload receipt says delivered at pre_session.
func TestRunPayloadAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	cases := []struct {
		name string
		bin  func(testing.TB) string
		args []string
		kind string
	}{
		{"claude", testharness.ClaudeBin, []string{"-p", "say hello"}, "claude"},
		{"codex", testharness.CodexBin, []string{"exec", "--skip-git-repo-check", "say hello"}, "codex"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := c.bin(t)
			mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
			env := testharness.NewHarnessEnv(t, mock)
			state := stateDir(t)
			const marker = "LIFELOOP-LAUNCH-MARKER-3"
			pf := payloadFile(t, env.Dir, "pay_launch", marker)
			args := append([]string{"run", "--state-dir", state, "--tick", "0", "--no-hooks", "--payload", pf, "--", bin}, c.args...)
			res := env.Run(runTimeout, ll, args...)
			if res.ExitCode != 0 {
				t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			if _, ok := anyRequestCarries(t, mock.RequestsOfKind(c.kind), marker); !ok {
				t.Errorf("no model request carries the payload")
			}
			_, receipts := onlySession(t, state)
			starting := lastOf(receipts, "session.starting")
			prs, _ := starting["payload_receipts"].([]any)
			if len(prs) != 1 || dig(prs[0], "status") != "delivered" || dig(prs[0], "payload_id") != "pay_launch" {
				t.Errorf("session.starting payload receipts: %v", starting["payload_receipts"])
			}
		})
	}
}

// TestRunCodexNotify: under `lifeloop run`, Codex's notify program (set
// for this launch with -c notify=[...], here for a one-shot whose user has
// a notify program in config.toml) reports the turn's end natively, with
// the rollout's thread id as the harness session id, and still calls the
// user's program; the rollout's report of the same turn end does not make
// a second receipt (native wins, whichever arrives first).
func TestRunCodexNotify(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	marker := filepath.Join(t.TempDir(), "user-notify")
	config := filepath.Join(env.CodexHome, "config.toml")
	old, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	user := fmt.Sprintf("notify = [\"/bin/sh\", \"-c\", \"printf x > \\\"$0\\\"\", %q]\n", marker)
	if err := os.WriteFile(config, append([]byte(user), old...), 0o600); err != nil {
		t.Fatal(err)
	}
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--", bin, "exec", "--skip-git-repo-check", "say hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	// The user's program runs detached from Codex: wait for it (bounded).
	for deadline := time.Now().Add(runTimeout); ; time.Sleep(50 * time.Millisecond) {
		if _, err := os.Stat(marker); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the user's notify program was not called")
		}
	}
	rollouts := env.CodexRollouts()
	if len(rollouts) != 1 {
		t.Fatalf("rollouts: %v", rollouts)
	}
	thread := dig(readJSONL(t, rollouts[0])[0], "payload", "id")
	_, receipts := onlySession(t, state)
	var ended map[string]any
	for _, r := range receipts {
		if r["event"] == "frame.ended" && dig(r, "telemetry_summary", "source") == "hook" {
			ended = r
		}
	}
	if ended == nil {
		t.Fatalf("no frame.ended from the notify hook: %v", eventsOf(receipts))
	}
	assertFramesOnce(t, receipts)
	if ended["harness_session_id"] != thread {
		t.Errorf("frame.ended harness_session_id %v, want the rollout's thread %v", ended["harness_session_id"], thread)
	}
}
