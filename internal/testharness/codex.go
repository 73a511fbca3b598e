package testharness

import "testing"

// Codex's interactive TUI (measured with 0.169.0). Its SessionStart hook
// and its rollout file come only with the first prompt, and it drops keys
// typed while it starts, so before the first prompt the screen is the only
// evidence that it takes input: CodexScreenReady waits for the hint under
// its prompt — the one place a Codex test reads Codex's screen text. A
// turn's end is evidence again: the notify program's frame.ended in the
// ledger under `lifeloop run`, or the rollout's task_complete without it.

const (
	codexBanner = "OpenAI Codex"
	codexReady  = "for shortcuts"
)

// CodexScreenReady waits until the Codex TUI on term takes input: the
// hint under its prompt in the output past byte n.
func CodexScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, codexReady, ReadyTimeout)
}

// CodexRelaunched waits until a Codex started again on term (by a
// renewal) takes input: its banner past byte n, then the prompt hint.
func CodexRelaunched(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitBannerThen(t, term, n, codexBanner, codexReady, ReadyTimeout)
}

// CodexTurnsEnded waits until the ledgers under stateDir hold n
// frame.ended receipts (the notify program Codex runs after each turn).
func CodexTurnsEnded(t testing.TB, term *Terminal, stateDir string, n int) {
	t.Helper()
	WaitReceipts(t, term, stateDir, "frame.ended", n, ReadyTimeout)
}

// CodexRolloutTurnsEnded waits until the rollouts in e record n finished
// turns (event_msg task_complete), for a Codex run without lifeloop.
func (e *HarnessEnv) CodexRolloutTurnsEnded(t testing.TB, term *Terminal, n int) {
	t.Helper()
	count := func() int {
		k := 0
		for _, p := range e.CodexRollouts() {
			for _, l := range readJSONLines(p) {
				if p, _ := l["payload"].(map[string]any); l["type"] == "event_msg" && p != nil && p["type"] == "task_complete" {
					k++
				}
			}
		}
		return k
	}
	waitEvidence(t, term, ReadyTimeout, "task_complete in Codex's rollout", func() bool { return count() >= n },
		func() string { return "rollouts " + join(e.CodexRollouts()) })
}

// CodexQuit types /quit and, once it is on the screen, Enter: Codex
// exits 0.
func CodexQuit(t testing.TB, term *Terminal) {
	t.Helper()
	at := len(term.Output())
	term.Type("/quit")
	waitAfter(t, term, at, "/quit", ReadyTimeout)
	term.Type("\r")
}
