package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunCopilotHooks: under `lifeloop run`, Copilot CLI runs lifeloop's
// hooks from a plugin folder in the lifeloop session folder
// (--plugin-dir; nothing is written to ~/.copilot): the turn's end
// (Stop) is recorded from the hook,
// the turn's end in the session file's own frame (read from the file by
// the Stop call), each frame moment once; session.started once; the
// session's end from SessionEnd (reason complete).
func TestRunCopilotHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseCopilot(t)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "please RUN_TOOL", "--allow-all-tools")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "copilot", "completed", "exit_code_0")
	if os.Getenv("LIFELOOP_E2E_DEBUG") != "" {
		for _, r := range rs {
			t.Logf("%v %v %v", r["event"], r["telemetry_summary"], r["payload_receipts"])
		}
		b, _ := os.ReadFile(filepath.Join(state, "sessions", session, "lifeloop.log"))
		t.Logf("log:\n%s", b)
	}

	// The plugin folder is the session's; the person's Copilot folder
	// holds no hooks of lifeloop's.
	hooksFile := filepath.Join(state, "sessions", session, "copilot-plugin", "hooks", "hooks.json")
	if b, err := os.ReadFile(hooksFile); err != nil || !strings.Contains(string(b), "host-hook --adapter copilot --hook Stop") {
		t.Errorf("plugin hooks file %s: %v\n%s", hooksFile, err, b)
	}
	if _, err := os.Stat(filepath.Join(env.CopilotHome(), "hooks")); err == nil {
		t.Errorf("%s/hooks exists: lifeloop wrote into the person's Copilot folder", env.CopilotHome())
	}

	// session.started once, from the SessionStart hook or the session
	// file's first line, whichever came first (Copilot writes that line
	// just before it runs the hook).
	var fromHooks []string
	started := 0
	for _, r := range rs {
		if r["event"] == "session.started" {
			started++
			continue
		}
		if dig(r, "telemetry_summary", "source") == "hook" {
			fromHooks = append(fromHooks, r["event"].(string))
		}
	}
	if started != 1 {
		t.Errorf("%d session.started, want 1 (all: %v)", started, eventsOf(rs))
	}
	want := []string{"frame.ending", "frame.ended", "session.ending"}
	if !slices.Equal(fromHooks, want) {
		t.Errorf("hook receipts %v, want %v (all: %v)", fromHooks, want, eventsOf(rs))
	}
	file := onlyOne(t, "session file", env.CopilotSessions())
	frames, sid := copilotSession(t, file)
	if len(frames) != 1 {
		t.Fatalf("session file %s has %d prompts, want 1", file, len(frames))
	}
	assertFrames(t, rs, frames)
	assertFramesOnce(t, rs)
	if ended := lastOf(rs, "frame.ended"); dig(ended, "telemetry_summary", "source") != "hook" || ended["harness_session_id"] != sid {
		t.Errorf("frame.ended %s, want from the Stop hook in session %s", toJSON(ended), sid)
	}
	if e := lastOf(rs, "session.ending"); dig(e, "telemetry_summary", "hook") != "SessionEnd" || dig(e, "telemetry_summary", "reason") != "complete" {
		t.Errorf("session.ending %s, want the SessionEnd hook's, reason complete", toJSON(e["telemetry_summary"]))
	}

	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}
