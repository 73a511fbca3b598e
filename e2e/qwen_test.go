package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/qwen"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// Qwen Code (0.24.4) end to end: the real binary offline against the
// mock's Messages API through its Anthropic provider (HarnessEnv.UseQwen).

// qwenSession returns the frame ids (one per prompt record) and the
// session id of a Qwen Code chat file.
func qwenSession(t *testing.T, path string) ([]string, string) {
	t.Helper()
	var frames []string
	var sid string
	for _, l := range readJSONL(t, path) {
		if s, _ := l["sessionId"].(string); sid == "" {
			sid = s
		}
		if l["type"] == "user" {
			id, _ := l["uuid"].(string)
			frames = append(frames, qwen.FrameID(sid, id))
		}
	}
	return frames, sid
}

// qwenUsage is what the mock reports for the tool call and the answer:
// 55 % and 76 % of the model's window.
var qwenUsage = []mockmodel.Usage{{InputTokens: 110000, OutputTokens: 5}, {InputTokens: 152000, OutputTokens: 5}}

// qwenPressure is the pressure lifeloop records for qwenUsage.
var qwenPressure = []wantPressure{
	{110000, testharness.QwenContextWindow, "moderate", "low"},
	{152000, testharness.QwenContextWindow, "high", "moderate"},
}

// TestRunQwenPrompt: `lifeloop run -- qwen "prompt"` (a one-shot) with a
// tool call: the session's receipts in order, bound to the session id
// lifeloop pinned (--session-id), the version from Qwen Code's package,
// one frame from the chat file (its end told by the Stop hook when the
// hook bridge's call comes first) with the pressure of each model call
// against the window the file names, completed with no process left.
func TestRunQwenPrompt(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: qwenUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "--yolo", "please RUN_TOOL")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "qwen", "completed", "exit_code_0")
	if v, _ := dig(lastOf(rs, "session.started"), "telemetry_summary", "harness_version").(string); v != "0.24.4" {
		t.Errorf("session.started harness_version %q, want the pinned 0.24.4", v)
	}
	assertNoDrift(t, rs)
	file := onlyOne(t, "session file", env.QwenSessions())
	frames, sid := qwenSession(t, file)
	if len(frames) != 1 {
		t.Fatalf("session file %s has %d prompts, want 1", file, len(frames))
	}
	if started := lastOf(rs, "session.started"); started["harness_session_id"] != sid {
		t.Errorf("session.started %s, want harness session %s", toJSON(started), sid)
	}
	if p := lastOf(rs, "frame.opening"); dig(p, "telemetry_summary", "path") != file {
		t.Errorf("frame.opening %s, want path %s", toJSON(p["telemetry_summary"]), file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, qwenPressure)
	assertFrames(t, rs, frames)
	// The turn ended on an answer: the session file's stop_reason, or
	// the Stop hook's receipt (the hook bridge; the file's then comes
	// second and is not recorded again).
	ended := dig(lastOf(rs, "frame.ended"), "telemetry_summary")
	if dig(ended, "stop_reason") != "stop" && dig(ended, "hook") != "Stop" {
		t.Errorf("frame.ended %s, want stop_reason stop from the session file or the Stop hook", toJSON(ended))
	}
	if n := len(mock.RequestsOfKind("claude")); n < 2 {
		t.Errorf("%d model requests, want at least 2 (the tool call and the answer)", n)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// TestWatchQwen: `lifeloop watch --adapter qwen` beside a one-shot Qwen
// Code started without lifeloop: bound to its chat file (found by the
// folder it ran in), its frame and pressure in the watch's ledger.
func TestWatchQwen(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: qwenUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state, session, rs := watchHarness(t, env, "qwen", bin, "--yolo", "please RUN_TOOL")
	file := onlyOne(t, "session file", env.QwenSessions())
	frames, sid := qwenSession(t, file)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != file {
		t.Errorf("binding not to %s", file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, qwenPressure)
	assertFrames(t, rs, frames)
}

// qwenEnter submits what was typed, after a pause: like Gemini CLI's, the
// TUI may read an Enter that comes right after the previous key as a
// newline.
func qwenEnter(term *testharness.Terminal) {
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
}

// TestRunQwenTUI runs Qwen Code's TUI under lifeloop: a typed prompt runs
// a tool and is answered, its frame and pressure are in the ledger from
// the chat file, and /quit ends the session: completed, no process left.
func TestRunQwenTUI(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: qwenUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin, "--yolo"), 120, 40)
	testharness.QwenScreenReady(t, term, 0)
	const prompt = "please RUN_TOOL through lifeloop"
	term.Type(prompt)
	if err := term.WaitFor(prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	qwenEnter(term)
	waitReceipt(t, term, state, "frame.ended", 1)
	quitAt := len(term.Output())
	term.Type("/quit")
	// Enter once the TUI offers the command: before it has loaded its
	// commands, a typed /quit would go to the model as a prompt.
	waitOutputAfter(t, term, quitAt, "exit the cli", screenTimeout)
	qwenEnter(term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /quit; output:\n%s", code, sig, term.Output())
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "qwen", "completed", "exit_code_0")
	assertNoDrift(t, rs)
	file := onlyOne(t, "session file", env.QwenSessions())
	frames, sid := qwenSession(t, file)
	if len(frames) != 1 {
		t.Fatalf("session file %s has %d prompts, want 1", file, len(frames))
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, qwenPressure)
	assertFrames(t, rs, frames)
	assertNoProcessLeft(t, env, term.Pid())
}
