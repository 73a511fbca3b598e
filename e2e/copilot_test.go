package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/copilot"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// GitHub Copilot CLI (1.0.102) end to end: the real binary offline
// against the mock's Messages API as its custom provider
// (HarnessEnv.UseCopilot).

// copilotSession returns the frame ids (one per user.message) and the
// session id of a Copilot session file.
func copilotSession(t *testing.T, path string) ([]string, string) {
	t.Helper()
	sid := filepath.Base(filepath.Dir(path))
	var frames []string
	for _, l := range readJSONL(t, path) {
		if l["type"] == "user.message" {
			id, _ := dig(l, "data", "interactionId").(string)
			frames = append(frames, copilot.FrameID(sid, id))
		}
	}
	return frames, sid
}

// assertCopilotVersion checks that session.started names the version
// `copilot --version` prints ("GitHub Copilot CLI 1.0.102.").
func assertCopilotVersion(t *testing.T, env *testharness.HarnessEnv, receipts []map[string]any, bin string) {
	t.Helper()
	v, _ := dig(lastOf(receipts, "session.started"), "telemetry_summary", "harness_version").(string)
	res := env.Run(runTimeout, bin, "--version")
	if v == "" || !strings.Contains(res.Stdout, " "+v+".") {
		t.Errorf("session.started harness_version %q; copilot --version prints %q", v, res.Stdout+res.Stderr)
	}
}

// copilotWindow is the prompt limit the tests give Copilot
// (COPILOT_PROVIDER_MAX_PROMPT_TOKENS): small enough for the mock's usage
// to reach the pressure levels, large enough that Copilot does not
// compact (it does at 0.80 of it).
const copilotWindow = 100000

// TestRunCopilotPrompt: `lifeloop run -- copilot -p` with a tool call:
// the session's receipts in order, bound to the session id lifeloop
// pinned (--session-id), one frame from the session file with the
// pressure of each model call against the prompt limit, completed with
// no process left.
func TestRunCopilotPrompt(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{{InputTokens: 55000, OutputTokens: 5}, {InputTokens: 76000, OutputTokens: 5}}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseCopilot(t)
	env.Setenv("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "100000")
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "please RUN_TOOL", "--allow-all-tools")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "copilot", "completed", "exit_code_0")
	assertCopilotVersion(t, env, rs, bin)
	assertNoDrift(t, rs)
	file := onlyOne(t, "session file", env.CopilotSessions())
	frames, sid := copilotSession(t, file)
	if len(frames) != 1 {
		t.Fatalf("session file %s has %d prompts, want 1", file, len(frames))
	}
	// The session id is lifeloop's own (--session-id): session.started
	// carries it from the start.
	if started := lastOf(rs, "session.started"); started["harness_session_id"] != sid {
		t.Errorf("session.started %s, want harness session %s", toJSON(started), sid)
	}
	if p := lastOf(rs, "frame.opening"); dig(p, "telemetry_summary", "path") != file {
		t.Errorf("frame.opening %s, want path %s", toJSON(p["telemetry_summary"]), file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{55000, copilotWindow, "moderate", "low"},
		{76000, copilotWindow, "high", "moderate"},
	})
	assertFrames(t, rs, frames)
	if got := dig(lastOf(rs, "frame.ended"), "telemetry_summary", "stop_reason"); got != "stop" {
		t.Errorf("frame.ended stop_reason %v, want stop", got)
	}
	if n := len(mock.RequestsOfKind("claude")); n != 2 {
		t.Errorf("%d model requests, want 2 (the tool call and the answer)", n)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}
