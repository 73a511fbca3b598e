package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// geminiProcs lists the live Gemini CLI processes of env (the CLI runs
// as two: the launcher node process and its relaunched child).
func geminiProcs(env *testharness.HarnessEnv) []testharness.Proc {
	var out []testharness.Proc
	for _, p := range env.StrayProcesses() {
		if f := strings.Fields(p.Cmdline); len(f) > 1 && filepath.Base(f[0]) == "node" && strings.Contains(p.Cmdline, ".bin/gemini") {
			out = append(out, p)
		}
	}
	return out
}

// TestRenewGeminiTUI renews a real interactive Gemini CLI session wrapped
// by `lifeloop run`, resumed and fresh: after a first turn, `lifeloop
// renew --payload FILE` stops the TUI (SIGTERM), starts it again on the same
// terminal (`--resume ID` or a new pinned session) with the payload as
// the start of its first prompt (-i; the session runs with
// --payload-argv-ok, since that is in argv), and the next model request carries
// the payload — with the first turn when resumed, without it when fresh.
// Exactly one Gemini CLI (its two node processes) runs afterwards, the
// terminal takes a typed /quit, and the renewal's records are complete.
func TestRenewGeminiTUI(t *testing.T) {
	skipShort(t)
	for _, tc := range []struct {
		name   string
		resume bool
	}{{"resume", true}, {"fresh", false}} {
		t.Run(tc.name, func(t *testing.T) {
			ll := lifeloopBin(t)
			const reply = "Interactive reply through lifeloop."
			mock := startMock(t, mockmodel.Config{Reply: reply})
			env := testharness.NewHarnessEnv(t, mock)
			state := stateDir(t)
			// Gemini CLI's only launch placement is the first prompt, in
			// argv: the session opts in (TestRenewArgvPlacementNeedsOptIn
			// in renewal proves the refusal without it).
			term := startGeminiTUIWith(t, env, state, []string{"--payload-argv-ok"})
			geminiPrompt(t, term, state, "first prompt 41c2", 1)
			ses, rs := onlySession(t, state)
			first := dig(lastOf(rs, "frame.ended"), "harness_session_id")

			secret := "RENEWAL-PAYLOAD-gemini-" + tc.name
			payloadFile := writePayloadFile(t, "pay_renew", secret, contract.PlacementPrePromptFrame)
			n := len(mock.RequestsOfKind(mockmodel.KindGemini))
			mode := "--fresh"
			if tc.resume {
				mode = "--resume"
			}
			res := env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--payload", payloadFile, ses)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			var turn *mockmodel.Request
			for deadline := time.Now().Add(screenTimeout); turn == nil; time.Sleep(100 * time.Millisecond) {
				for _, r := range mock.RequestsOfKind(mockmodel.KindGemini)[n:] {
					if _, ok := requestCarries(t, r.Body, secret); ok {
						turn = &r
						break
					}
				}
				if turn == nil && (time.Now().After(deadline) || term.Exited()) {
					t.Fatalf("no model request carries the payload after the renewal; terminal:\n%s", term.Output())
				}
			}
			// The payload is the start of the last user content: the
			// renewed session's first prompt.
			var body struct {
				Contents []struct {
					Role  string `json:"role"`
					Parts []struct {
						Text string `json:"text"`
					} `json:"parts"`
				} `json:"contents"`
			}
			if err := json.Unmarshal(turn.Body, &body); err != nil {
				t.Fatal(err)
			}
			last := body.Contents[len(body.Contents)-1]
			var lastText strings.Builder
			for _, p := range last.Parts {
				lastText.WriteString(p.Text)
			}
			if last.Role != "user" || !strings.Contains(lastText.String(), secret) {
				t.Errorf("payload not in the last user content: %+v", last)
			}
			if _, resumed := requestCarries(t, turn.Body, "first prompt 41c2"); resumed != tc.resume {
				t.Errorf("request carries the first turn: %v, want %v", resumed, tc.resume)
			}
			if procs := geminiProcs(env); len(procs) != 2 {
				t.Errorf("gemini processes after the renewal: %v", procs)
			}
			// The renewed turn ends in the ledger; then the terminal takes
			// a typed /quit.
			waitReceipt(t, term, state, "frame.ended", 2)
			testharness.GeminiScreenReady(t, term, 0)
			quitAt := len(term.Output())
			term.Type("/quit")
			waitOutputAfter(t, term, quitAt, "/quit", screenTimeout)
			// Enter once Gemini CLI offers the command ("Exit the cli"):
			// before it has loaded its commands (slow on a busy
			// machine), a typed /quit goes to the model as a prompt.
			waitOutputAfter(t, term, quitAt, "Exit the cli", screenTimeout)
			geminiEnter(term)
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output())
			}
			checkRenewalRecords(t, env, ll, state, ses, "pay_renew", contract.PlacementPrePromptFrame, secret)
			// The stop signal (SIGTERM to the group) alone ends the old
			// TUI: no escalation.
			log, _ := os.ReadFile(filepath.Join(state, "sessions", ses, "lifeloop.log"))
			if !strings.Contains(string(log), "renewal: harness started again") || strings.Count(string(log), "renewal: stopping the harness") != 1 {
				t.Errorf("the renewal's stop needed more than its stop signal:\n%s", log)
			}
			_, rs = onlySession(t, state)
			second := dig(lastOf(rs, "frame.ended"), "harness_session_id")
			if (first == second) != tc.resume || first == nil || second == nil {
				t.Errorf("harness session before %v, after %v (resume %v)", first, second, tc.resume)
			}
			assertNoProcessLeft(t, env, term.Pid())
		})
	}
}
