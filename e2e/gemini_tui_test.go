package e2e

import (
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// startGeminiTUIUnderLifeloop starts `lifeloop run -- gemini` (extra
// arguments after the program) in a PTY and waits until the TUI takes
// input.
func startGeminiTUIUnderLifeloop(t testing.TB, env *testharness.HarnessEnv, state string, extra ...string) *testharness.Terminal {
	t.Helper()
	return startGeminiTUIWith(t, env, state, nil, extra...)
}

// startGeminiTUIWith is startGeminiTUIUnderLifeloop with runFlags given to
// `lifeloop run` too.
func startGeminiTUIWith(t testing.TB, env *testharness.HarnessEnv, state string, runFlags []string, extra ...string) *testharness.Terminal {
	t.Helper()
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	args := slices.Concat([]string{"run", "--state-dir", state, "--tick", "1s"}, runFlags, []string{"--", bin, "-m", testharness.GeminiModel}, extra)
	term := testharness.StartTerminal(t, env.Command(ll, args...), 120, 40)
	testharness.GeminiScreenReady(t, term, 0)
	return term
}

// waitReceipt waits until the session's ledger holds n receipts of event.
func waitReceipt(t testing.TB, term *testharness.Terminal, state, event string, n int) []map[string]any {
	t.Helper()
	var rs []map[string]any
	for deadline := time.Now().Add(screenTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if ls := sessionLedgers(t, state); len(ls) == 1 {
			for _, l := range ls {
				rs = l
			}
			if len(receiptsFor(rs, event)) >= n {
				return rs
			}
		}
	}
	t.Fatalf("no %d× %s in the ledger: %v\nscreen:\n%s", n, event, eventsOf(rs), testharness.StripANSI(term.Output()))
	return nil
}

// geminiEnter submits what was typed. The TUI reads an Enter that comes
// within 30 ms of the previous key (or 40 ms of a paste) as a newline
// (FAST_RETURN_TIMEOUT in 0.61.0), so it waits that out first.
func geminiEnter(term *testharness.Terminal) {
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
}

// geminiPrompt types a prompt into the TUI and waits for its turn to end
// in the ledger (the n-th frame.ended, read from the chat file).
func geminiPrompt(t *testing.T, term *testharness.Terminal, state, prompt string, n int) []map[string]any {
	t.Helper()
	term.Type(prompt)
	if err := term.WaitFor(prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	geminiEnter(term)
	return waitReceipt(t, term, state, "frame.ended", n)
}

// TestRunGeminiTUI runs the interactive TUI under lifeloop: two typed
// prompts, the first answered with 250 100 tokens of a 209 715 window
// (compression threshold 0.2 in the project's settings): critical; before
// the second prompt the CLI compresses its history, and lifeloop records
// context.compacted (pre 250 100, post the next response's 3 050) and the
// reset to low. /quit ends the session: completed, no process left.
func TestRunGeminiTUI(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	mock := startMock(t, mockmodel.Config{Reply: reply, UsageSequence: []mockmodel.Usage{
		{InputTokens: 250000, OutputTokens: 100},
		{InputTokens: 3000, OutputTokens: 50},
	}})
	env := geminiSettingsEnv(t, mock, 0.2)
	state := stateDir(t)
	term := startGeminiTUIUnderLifeloop(t, env, state)
	geminiPrompt(t, term, state, "hello through lifeloop", 1)
	geminiPrompt(t, term, state, "second prompt", 2)
	testharness.GeminiScreenReady(t, term, 0)
	quitAt := len(term.Output())
	term.Type("/quit")
	// Enter once Gemini CLI offers the command: before it has loaded its
	// commands, a typed /quit goes to the model as a prompt.
	waitOutputAfter(t, term, quitAt, "Exit the cli", screenTimeout)
	geminiEnter(term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /quit; output:\n%s", code, sig, term.Output())
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "gemini", "completed", "exit_code_0")
	chat := onlyOne(t, "chat file", env.GeminiChats())
	prompts, sid := geminiPrompts(t, chat)
	assertHarnessSession(t, state, session, rs, sid)
	assertFrames(t, rs, prompts)
	if len(prompts) != 2 {
		t.Errorf("prompts %v", prompts)
	}
	if n := len(mock.RequestsOfKind(mockmodel.KindGemini)); n != 2 {
		t.Errorf("%d conversation requests, want 2", n)
	}
	compacted := telemetryCompactions(rs)
	if len(compacted) != 1 {
		t.Fatalf("context.compacted receipts %d: %v\n%s", len(compacted), eventsOf(rs), receiptLines(rs))
	}
	if s := compacted[0]["telemetry_summary"]; num(dig(s, "pre_tokens")) != 250100 || num(dig(s, "post_tokens")) != 3050 ||
		dig(s, "trigger") != "auto" || dig(s, "path") != chat {
		t.Errorf("context.compacted %s, want pre 250100 post 3050 from %s", toJSON(s), chat)
	}
	ps := telemetryPressure(rs)
	if len(ps) < 1 || num(dig(ps[0], "telemetry_summary", "tokens")) != 250100 || dig(ps[0], "telemetry_summary", "level") != "critical" ||
		num(dig(ps[0], "telemetry_summary", "window")) != 209715 {
		t.Errorf("pressure %v", receiptLines(ps))
	}
	if r := resetOf(rs); r == nil || num(dig(r, "telemetry_summary", "tokens")) != 3050 || dig(r, "telemetry_summary", "level") != "low" {
		t.Errorf("pressure reset after compaction %s", toJSON(r))
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// TestRunGeminiTUISigint interrupts lifeloop running the Gemini TUI: the
// signal reaches the harness (whose outer process ignores it; lifeloop
// signals the group), the session ends stopped/cancelled, no process left.
func TestRunGeminiTUISigint(t *testing.T) {
	skipShort(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	state := stateDir(t)
	term := startGeminiTUIUnderLifeloop(t, env, state)
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if sig != 0 {
		t.Fatalf("lifeloop died of %v", sig)
	}
	t.Logf("lifeloop exited %d after SIGINT", code)
	_, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "gemini", "stopped", "sigint")
	if got := dig(lastOf(rs, "session.ended"), "telemetry_summary", "outcome"); got != "cancelled" {
		t.Errorf("outcome %v, want cancelled", got)
	}
	sigint := false
	for _, r := range receiptsFor(rs, "session.ending") {
		if dig(r, "telemetry_summary", "reason") == "sigint" {
			sigint = true
		}
	}
	if !sigint {
		t.Errorf("no session.ending with reason sigint: %v", eventsOf(rs))
	}
	assertNoProcessLeft(t, env, term.Pid())
}
