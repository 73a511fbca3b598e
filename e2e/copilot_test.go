package e2e

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

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
	// The turn's end is the Stop hook's (the hook bridge), in the
	// session file's frame (assertFrames).
	if e := lastOf(rs, "frame.ended"); dig(e, "telemetry_summary", "hook") != "Stop" {
		t.Errorf("frame.ended %s, want the Stop hook's", toJSON(e["telemetry_summary"]))
	}
	// The turn's usage (adapters/copilot/usage.go): the two calls'
	// tokens, as the session file records them.
	u := usageBlock(lastOf(rs, "frame.ended"))
	tok, _ := u["tokens"].(map[string]any)
	if u["calls"] != 2.0 || tok["input"] != 131000.0 || tok["output"] != 10.0 {
		t.Errorf("frame.ended usage %v, want 2 calls, 131000 input and 10 output tokens", u)
	}
	if n := len(mock.RequestsOfKind("claude")); n != 2 {
		t.Errorf("%d model requests, want 2 (the tool call and the answer)", n)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// startCopilotTUIUnderLifeloop starts `lifeloop run -- copilot` in a PTY
// and waits for Copilot's prompt.
func startCopilotTUIUnderLifeloop(t *testing.T, cfg mockmodel.Config, window string, extra ...string) (*testharness.Terminal, *testharness.HarnessEnv, string, *mockmodel.Server) {
	t.Helper()
	ll := lifeloopBin(t)
	mock := startMock(t, cfg)
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseCopilot(t)
	if window != "" {
		env.Setenv("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", window)
	}
	state := stateDir(t)
	args := append([]string{"run", "--state-dir", state, "--tick", "1s"}, extra...)
	term := testharness.StartTerminal(t, env.Command(ll, append(args, "--", bin, "--allow-all-tools")...), 120, 40)
	testharness.CopilotScreenReady(t, term, 0)
	return term, env, state, mock
}

// copilotPrompt types prompt into Copilot's TUI and, once it shows, Enter.
// (Copilot redraws its answer as it streams, so tests wait for a turn's
// end in the ledger, not for the answer's text on the screen.)
func copilotPrompt(t *testing.T, term *testharness.Terminal, prompt string) {
	t.Helper()
	at := len(term.Output())
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
}

// copilotIdle waits until Copilot's TUI on term has drawn its idle
// prompt again after a turn whose prompt was typed past byte n: past n,
// its idle footer ("/ commands") comes after the last busy one ("Working",
// "esc esc interrupt"). A prompt typed while it is busy is queued, and a
// queued /exit is never run (seen under load: the turn's end was in the
// session file, and in the ledger, while the TUI still drew the answer;
// /exit then waited in "Queued (1)" until the test gave up).
func copilotIdle(t *testing.T, term *testharness.Terminal, n int) {
	t.Helper()
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
		if out := term.Output(); len(out) > n {
			out = out[n:]
			busy := max(strings.LastIndex(out, "Working"), strings.LastIndex(out, "interrupt"))
			if idle := strings.LastIndex(out, copilotIdleFooter); busy >= 0 && idle > busy {
				return
			}
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("Copilot's TUI did not draw its idle prompt again; terminal:\n%s", tailText(term.Output(), 2000))
		}
	}
}

// copilotIdleFooter is in the footer Copilot draws while it takes a
// prompt (testharness.CopilotScreenReady waits for it at start).
const copilotIdleFooter = "/ commands"

// TestRunCopilotTUI: a prompt typed into Copilot's TUI under lifeloop runs
// a tool and is answered; its frame is in the ledger from the session
// file; with a prompt limit of 20 000 and 19 000 tokens reported Copilot
// compacts its history in the background, which lifeloop records as
// context.compacted; /exit ends the session as completed with no process
// left.
func TestRunCopilotTUI(t *testing.T) {
	skipShort(t)
	term, env, state, _ := startCopilotTUIUnderLifeloop(t, mockmodel.Config{Usage: mockmodel.Usage{InputTokens: 19000, OutputTokens: 50}}, "20000")
	sent := len(term.Output())
	copilotPrompt(t, term, "please RUN_TOOL through lifeloop")
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, screenTimeout)
	testharness.WaitReceipts(t, term, state, "context.compacted", 1, screenTimeout)
	copilotIdle(t, term, sent)
	copilotPrompt(t, term, "/exit")
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /exit; output:\n%s", code, sig, term.Output())
	}
	_, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "copilot", "completed", "exit_code_0")
	assertNoDrift(t, rs)
	file := onlyOne(t, "session file", env.CopilotSessions())
	frames, sid := copilotSession(t, file)
	assertFrames(t, rs, frames)
	if r := lastOf(rs, "frame.ended"); r["harness_session_id"] != sid {
		t.Errorf("frame.ended harness_session_id %v, want %s", r["harness_session_id"], sid)
	}
	// The hook bridge runs in the TUI: the turn's end is the Stop hook's,
	// in the session file's frame (assertFrames).
	if e := lastOf(rs, "frame.ended"); dig(e, "telemetry_summary", "hook") != "Stop" {
		t.Errorf("frame.ended %s, want the Stop hook's", toJSON(e["telemetry_summary"]))
	}
	// /exit: the session's end is the SessionEnd hook's (user_exit).
	if e := lastOf(rs, "session.ending"); dig(e, "telemetry_summary", "hook") != "SessionEnd" || dig(e, "telemetry_summary", "reason") != "user_exit" {
		t.Errorf("session.ending %s, want the SessionEnd hook's, reason user_exit", toJSON(e["telemetry_summary"]))
	}
	var done map[string]any
	for _, l := range readJSONL(t, file) {
		if l["type"] == "session.compaction_complete" && dig(l, "data", "success") == true {
			done = l
		}
	}
	c := lastOf(rs, "context.compacted")
	if s := c["telemetry_summary"]; done == nil || dig(s, "trigger") != "auto" || num(dig(s, "pre_tokens")) != num(dig(done, "data", "preCompactionTokens")) {
		t.Errorf("context.compacted %s; the file's compaction %v", toJSON(s), done)
	}
	if lastOf(rs, "supervisor.tick") == nil {
		t.Errorf("no supervisor.tick: %v", eventsOf(rs))
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// TestWatchCopilot: `lifeloop watch --adapter copilot` follows the
// session file of a `copilot -p` it did not start: the binding, the frame
// and the pressure of each model call, telemetry_only.
func TestWatchCopilot(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{{InputTokens: 55000, OutputTokens: 5}, {InputTokens: 76000, OutputTokens: 5}}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseCopilot(t)
	env.Setenv("COPILOT_PROVIDER_MAX_PROMPT_TOKENS", "100000")
	state, session, rs := watchHarness(t, env, "copilot", bin, "-p", "please RUN_TOOL", "--allow-all-tools")
	file := onlyOne(t, "session file", env.CopilotSessions())
	frames, sid := copilotSession(t, file)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != file {
		t.Errorf("binding not to %s", file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{55000, copilotWindow, "moderate", "low"},
		{76000, copilotWindow, "high", "moderate"},
	})
	assertFrames(t, rs, frames)
}
