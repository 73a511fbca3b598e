package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunPiHookBridge: under `lifeloop run`, the bridge extension loaded
// with --extension reports Pi's session and turn natively (frame ids equal
// to the session file's, so each frame moment is one receipt), a --payload
// placed at the first prompt and a payload a client returns at
// frame.opening both reach the model request as a message after the
// prompt, their payload receipts say delivered, and the user's own
// extension still runs.
func TestRunPiHookBridge(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)

	// The user's own extension, auto-discovered from ~/.pi/agent/extensions.
	marker := filepath.Join(t.TempDir(), "user-extension-fired")
	ext := fmt.Sprintf(`import { writeFileSync } from "node:fs";
export default function (pi: any) { pi.on("before_agent_start", () => { writeFileSync(%q, "x"); }); }
`, marker)
	dir := filepath.Join(env.PiAgentDir(), "extensions")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "user.ts"), []byte(ext), 0o600); err != nil {
		t.Fatal(err)
	}

	const payloadMarker, clientMarker = "LIFELOOP-PAYLOAD-MARKER-pi-1", "LIFELOOP-CLIENT-MARKER-pi-2"
	pf := payloadFile(t, env.Dir, "pay_cli", payloadMarker)
	client := clientScript(t, env.Dir, clientMarker)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0",
		"--payload", pf, "--payload-at", "frame", "--client", client,
		"--", bin, "-p", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "Plain answer.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	convo := mock.RequestsOfKind("claude")
	if len(convo) != 1 {
		t.Fatalf("%d model requests, want 1", len(convo))
	}
	for _, m := range []string{payloadMarker, clientMarker} {
		if path, ok := requestCarries(t, convo[0].Body, m); !ok || !strings.HasPrefix(path, ".messages[1]") {
			t.Errorf("the request carries %s: %v at %q, want in the message after the prompt", m, ok, path)
		}
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the user's own extension did not run: %v", err)
	}

	session, receipts := onlySession(t, state)
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
	want := "session.started frame.opening frame.opened frame.ending frame.ended session.ending"
	if strings.Join(hookEvents, " ") != want {
		t.Fatalf("hook receipts %v, want %s (all: %v)", hookEvents, want, eventsOf(receipts))
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
	assertFramesOnce(t, receipts)
	file := onlyOne(t, "session file", env.PiSessions())
	frames, sid := piSession(t, file)
	assertFrames(t, receipts, frames)
	assertHarnessSession(t, state, session, receipts, sid)
	// Pi keeps the context in the session as an extension message, not a
	// user message.
	custom := 0
	for _, l := range readJSONL(t, file) {
		if l["type"] == "custom_message" && l["customType"] == "lifeloop" {
			custom++
		}
	}
	if custom != 1 {
		t.Errorf("%d lifeloop custom messages in the session file, want 1", custom)
	}
	if w := lastOf(receipts, "session.ended")["warnings"]; w != nil {
		t.Errorf("session.ended warnings: %v", w)
	}
}

// TestRunPiHookSessionStartContext: a payload a client returns for the
// bridge's session_start (the session.started that names Pi's session)
// is delivered there (pre_session) and reaches the model with the first
// prompt: the extension keeps it until then.
func TestRunPiHookSessionStartContext(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	const marker = "LIFELOOP-SESSION-START-MARKER-pi"
	payload := fmt.Sprintf(`{"schema_version":1,"payload_id":"pay_start","client_id":"e2e","payload_kind":"instruction_frame","format":"text/plain","content_encoding":"utf8","body":%q,"byte_size":%d,"acceptable_placements":[{"placement":"developer_equivalent_frame","requirement":"required"}]}`, marker, len(marker))
	// The hook's session.started carries the harness session id; the
	// wrapper's own (process started) does not.
	client := filepath.Join(env.Dir, "client.sh")
	script := `#!/bin/sh
env=$(cat)
case "$env" in
*'"event":"session.started"'*'"harness_session_id"'*'"sequence"'*) echo '{"schema_version":"lifeloop.v0.2","status":"observed","failure_class":null,"retry_class":null}' ;;
*'"event":"session.started"'*'"harness_session_id"'*) echo '{"schema_version":"lifeloop.v0.2","status":"delivered","client_payloads":[` + payload + `],"failure_class":null,"retry_class":null}' ;;
*) echo '{"schema_version":"lifeloop.v0.2","status":"observed","failure_class":null,"retry_class":null}' ;;
esac
`
	if err := os.WriteFile(client, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--client", client, "--", bin, "-p", "say hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	convo := mock.RequestsOfKind("claude")
	if len(convo) != 1 {
		t.Fatalf("%d model requests", len(convo))
	}
	if path, ok := requestCarries(t, convo[0].Body, marker); !ok || !strings.HasPrefix(path, ".messages[1]") {
		t.Errorf("the first request carries the payload: %v at %q, want in the message after the prompt", ok, path)
	}
	_, receipts := onlySession(t, state)
	var delivered []string
	for _, r := range receipts {
		prs, _ := r["payload_receipts"].([]any)
		for _, pr := range prs {
			m := pr.(map[string]any)
			if m["payload_id"] == "pay_start" {
				delivered = append(delivered, fmt.Sprint(r["event"], "/", dig(r, "telemetry_summary", "hook"), "/", m["status"]))
			}
		}
	}
	if len(delivered) != 1 || delivered[0] != "session.started/session_start/delivered" {
		t.Errorf("payload receipts for pay_start: %v", delivered)
	}
}
