package e2e

import (
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunQwenCompress: two turns typed into Qwen Code's TUI under
// lifeloop, then /compress: Qwen Code replaces its history with a
// summary and records a chat_compression in its chat file, which lifeloop
// records as context.compacted (trigger manual, the tokens before and
// after the file names); the PreCompact hook, bridged, is a
// context.pressure_observed (trigger manual) before it.
func TestRunQwenCompress(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Usage: mockmodel.Usage{InputTokens: 90000, OutputTokens: 5}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin, "--yolo"), 120, 40)
	testharness.QwenScreenReady(t, term, 0)
	for i, prompt := range []string{"please RUN_TOOL once", "and a second prompt"} {
		term.Type(prompt)
		if err := term.WaitFor(prompt, screenTimeout); err != nil {
			t.Fatal(err)
		}
		qwenEnter(term)
		waitReceipt(t, term, state, "frame.ended", i+1)
	}
	at := len(term.Output())
	term.Type("/compress")
	waitOutputAfter(t, term, at, "replacing it with a summary", screenTimeout)
	qwenEnter(term)
	rs := waitReceipt(t, term, state, "context.compacted", 1)
	file := onlyOne(t, "session file", env.QwenSessions())
	var done map[string]any
	for _, l := range readJSONL(t, file) {
		if l["subtype"] == "chat_compression" {
			done = l
		}
	}
	c := lastOf(rs, "context.compacted")
	s := c["telemetry_summary"]
	if done == nil || dig(s, "trigger") != "manual" ||
		num(dig(s, "pre_tokens")) != num(dig(done, "systemPayload", "info", "originalTokenCount")) ||
		num(dig(s, "post_tokens")) != num(dig(done, "systemPayload", "info", "newTokenCount")) {
		t.Errorf("context.compacted %s; the file's compression %v", toJSON(s), dig(done, "systemPayload", "info"))
	}
	// The hook bridge: PreCompact's context.pressure_observed before
	// it; SessionStart's run after the compaction (source compact) is no
	// second compaction.
	var pre, compacted int
	for i, r := range rs {
		switch s := r["telemetry_summary"]; {
		case r["event"] == "context.pressure_observed" && dig(s, "hook") == "PreCompact":
			if dig(s, "trigger") != "manual" || compacted > 0 {
				t.Errorf("receipt %d %s: want PreCompact's, trigger manual, before the compaction", i, toJSON(s))
			}
			pre++
		case r["event"] == "context.compacted":
			compacted++
		}
	}
	if pre != 1 || compacted != 1 {
		t.Errorf("%d PreCompact receipts, %d context.compacted, want 1 each (all: %v)", pre, compacted, eventsOf(rs))
	}
	quitAt := len(term.Output())
	term.Type("/quit")
	waitOutputAfter(t, term, quitAt, "exit the cli", screenTimeout)
	qwenEnter(term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
	}
	assertNoProcessLeft(t, env, term.Pid())
}
