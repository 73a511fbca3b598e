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

// qwenOwnDefaults gives env a system-defaults settings file of the
// person's own (QWEN_CODE_SYSTEM_DEFAULTS_PATH) whose Stop hook writes
// the file it returns, and returns that settings file's path and
// content too, to check the hook ran and the file was left alone.
func qwenOwnDefaults(t *testing.T, env *testharness.HarnessEnv) (mark, path string, content []byte) {
	t.Helper()
	dir := t.TempDir()
	mark = filepath.Join(dir, "own-stop-hook-ran")
	path = filepath.Join(dir, "system-defaults.json")
	content = []byte(`{"$version": 4, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "cat > ` + mark + `"}]}]}}` + "\n")
	if err := os.WriteFile(path, content, 0o600); err != nil {
		t.Fatal(err)
	}
	env.Setenv("QWEN_CODE_SYSTEM_DEFAULTS_PATH", path)
	return mark, path, content
}

// assertQwenBridged checks a wrapped Qwen Code session's hook bridge:
// the per-launch settings file is in the session folder, the person's
// own settings file and system defaults are unchanged and their Stop
// hook ran; the receipts from hooks are want, in order
// (session.started aside: it is recorded once, from the hook or the
// session file); the frames are the session file's, each moment once,
// the last frame.ended the Stop hook's in the session's id.
func assertQwenBridged(t *testing.T, env *testharness.HarnessEnv, state string, want []string, mark, ownPath string, own []byte) {
	t.Helper()
	session, rs := onlySession(t, state)
	bridge := filepath.Join(state, "sessions", session, "qwen-system-defaults.json")
	if b, err := os.ReadFile(bridge); err != nil || !strings.Contains(string(b), "host-hook --adapter qwen --hook Stop") || !strings.Contains(string(b), mark) {
		t.Errorf("bridge settings %s (want lifeloop's hooks and the person's): %v\n%s", bridge, err, b)
	}
	if b, _ := os.ReadFile(filepath.Join(env.QwenHome(), "settings.json")); strings.Contains(string(b), "host-hook") {
		t.Errorf("the person's Qwen settings hold lifeloop's hooks:\n%s", b)
	}
	if b, _ := os.ReadFile(ownPath); string(b) != string(own) {
		t.Errorf("the person's system defaults changed:\n%s", b)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Errorf("the person's own Stop hook did not run: %v", err)
	}
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
	if !slices.Equal(fromHooks, want) {
		t.Errorf("hook receipts %v, want %v (all: %v)", fromHooks, want, eventsOf(rs))
	}
	file := onlyOne(t, "session file", env.QwenSessions())
	frames, sid := qwenSession(t, file)
	if len(frames) != 1 {
		t.Fatalf("session file %s has %d prompts, want 1", file, len(frames))
	}
	assertFrames(t, rs, frames)
	assertFramesOnce(t, rs)
	if ended := lastOf(rs, "frame.ended"); dig(ended, "telemetry_summary", "source") != "hook" || ended["harness_session_id"] != sid {
		t.Errorf("frame.ended %s, want from the Stop hook in session %s", toJSON(ended), sid)
	}
	assertHarnessSession(t, state, session, rs, sid)
}

// TestRunQwenHooks: under `lifeloop run`, Qwen Code runs lifeloop's
// hooks from a system-defaults settings file in the lifeloop session
// folder (QWEN_CODE_SYSTEM_DEFAULTS_PATH), with the person's own system
// defaults merged in (their Stop hook still runs, their files are not
// written): a turn's end (Stop) is recorded from the hook in the session
// file's frame, each frame moment once; in the TUI, /quit's SessionEnd
// is the session's session.ending. A one-shot runs no SessionEnd.
func TestRunQwenHooks(t *testing.T) {
	skipShort(t)
	t.Parallel()
	t.Run("oneshot", func(t *testing.T) {
		t.Parallel()
		ll := lifeloopBin(t)
		mock := startMock(t, mockmodel.Config{})
		env := testharness.NewHarnessEnv(t, mock)
		bin := env.UseQwen(t)
		mark, ownPath, own := qwenOwnDefaults(t, env)
		state := stateDir(t)
		res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "--yolo", "please RUN_TOOL")
		if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
			t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
		}
		_, rs := onlySession(t, state)
		assertSessionLifecycle(t, rs, "qwen", "completed", "exit_code_0")
		assertQwenBridged(t, env, state, []string{"frame.ending", "frame.ended"}, mark, ownPath, own)
		if procs := env.StrayProcesses(); len(procs) > 0 {
			t.Errorf("processes left behind: %+v", procs)
		}
	})
	t.Run("tui", func(t *testing.T) {
		t.Parallel()
		ll := lifeloopBin(t)
		mock := startMock(t, mockmodel.Config{})
		env := testharness.NewHarnessEnv(t, mock)
		bin := env.UseQwen(t)
		mark, ownPath, own := qwenOwnDefaults(t, env)
		state := stateDir(t)
		term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin, "--yolo"), 120, 40)
		testharness.QwenScreenReady(t, term, 0)
		const prompt = "please RUN_TOOL under the bridge"
		term.Type(prompt)
		if err := term.WaitFor(prompt, screenTimeout); err != nil {
			t.Fatal(err)
		}
		qwenEnter(term)
		waitReceipt(t, term, state, "frame.ended", 1)
		quitAt := len(term.Output())
		term.Type("/quit")
		waitOutputAfter(t, term, quitAt, "exit the cli", screenTimeout)
		qwenEnter(term)
		if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
			t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
		}
		_, rs := onlySession(t, state)
		assertSessionLifecycle(t, rs, "qwen", "completed", "exit_code_0")
		assertQwenBridged(t, env, state, []string{"frame.ending", "frame.ended", "session.ending"}, mark, ownPath, own)
		if ending := lastOf(rs, "session.ending"); dig(ending, "telemetry_summary", "reason") != "prompt_input_exit" {
			t.Errorf("session.ending %s, want SessionEnd's reason prompt_input_exit", toJSON(ending))
		}
		assertNoProcessLeft(t, env, term.Pid())
	})
}
