package testharness

import (
	"testing"
	"time"
)

// ReadyTimeout bounds the readiness helpers: a safety net against a hung
// harness on a slow, shared machine, not a timing assertion.
const ReadyTimeout = 2 * time.Minute

// Claude Code's interactive TUI (measured with 2.1.197 and 2.1.330).
//
// Under `lifeloop run`, Claude's SessionStart hook names the session soon
// after launch (0.4 s with 2.1.330 on an idle machine, before anything was
// drawn) and the ledger records session.started; both versions keep the
// keys typed from then on (they appear in the prompt once it is drawn). A turn ends
// with the Stop hook: frame.ended in the ledger. Without lifeloop, the
// transcript says when a turn ended (an assistant line with stop_reason
// end_turn); before the first prompt nothing but the screen says the TUI
// is up, so ClaudeScreenReady waits for the prompt glyph — the one place a
// Claude test reads Claude's own screen text. ("? for shortcuts", which
// 2.1.197 draws under the prompt, is gone in 2.1.330.)

// claudeBanner starts the screen of every Claude Code TUI; claudePrompt is
// the prompt glyph drawn after it once the TUI takes input.
const (
	claudeBanner = "Claude Code v"
	claudePrompt = "❯"
)

// ClaudeStarted waits until the ledgers under stateDir hold n
// session.started receipts: the n-th Claude started on term by `lifeloop
// run` (or relaunched by a renewal) has named its session, and keys typed
// from now on reach its prompt.
func ClaudeStarted(t testing.TB, term *Terminal, stateDir string, n int) {
	t.Helper()
	WaitReceipts(t, term, stateDir, "session.started", n, ReadyTimeout)
}

// ClaudeTurnsEnded waits until the ledgers under stateDir hold n
// frame.ended receipts (Claude's Stop hook, or its transcript).
func ClaudeTurnsEnded(t testing.TB, term *Terminal, stateDir string, n int) {
	t.Helper()
	WaitReceipts(t, term, stateDir, "frame.ended", n, ReadyTimeout)
}

// ClaudeScreenReady waits for a Claude TUI that runs without lifeloop (so
// without a ledger) to draw its prompt past byte n of the output.
func ClaudeScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitBannerThen(t, term, n, claudeBanner, claudePrompt, ReadyTimeout)
}

// ClaudeTranscriptTurnsEnded waits until Claude's transcripts in e hold n
// assistant lines that end a turn (message.stop_reason end_turn).
func (e *HarnessEnv) ClaudeTranscriptTurnsEnded(t testing.TB, term *Terminal, n int) {
	t.Helper()
	count := func() int {
		k := 0
		for _, p := range e.ClaudeTranscripts() {
			for _, l := range readJSONLines(p) {
				if m, _ := l["message"].(map[string]any); l["type"] == "assistant" && m != nil && m["stop_reason"] == "end_turn" {
					k++
				}
			}
		}
		return k
	}
	waitEvidence(t, term, ReadyTimeout, "turn end in Claude's transcript", func() bool { return count() >= n },
		func() string { return "transcripts " + join(e.ClaudeTranscripts()) })
}

// ClaudeExit types /exit and, once it is on the screen, Enter: Claude
// exits 0.
func ClaudeExit(t testing.TB, term *Terminal) {
	t.Helper()
	at := len(term.Output())
	term.Type("/exit")
	waitAfter(t, term, at, "/exit", ReadyTimeout)
	term.Type("\r")
}
