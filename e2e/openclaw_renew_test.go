package e2e

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRenewOpenClawTUIUnderLifeloop renews `openclaw chat` under `lifeloop
// run`, resumed and fresh: `lifeloop renew --payload FILE` stops the TUI
// (SIGTERM) and starts it again on the same terminal, on the same session
// key (resume) or a new one (fresh), with the payload leading the message
// it sends once it is up (--message; the session runs with
// --payload-argv-ok, since that is in argv, and TestPlaceAtLaunch in
// adapters/openclaw proves the refusal without it). The model request of
// that message has the payload in a user message of its own, after the
// first turn when resumed and without it when fresh; telemetry follows the same
// OpenClaw session (resume: one session id, both turns in the ledger) or
// the new one (fresh: two session ids); the renewal's records are
// complete and hold no payload body; Ctrl-D typed into the relaunched TUI
// ends the session as completed with no process left.
func TestRenewOpenClawTUIUnderLifeloop(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, resume := range []bool{true, false} {
		name := map[bool]string{true: "resume", false: "fresh"}[resume]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ll := lifeloopBin(t)
			const reply = "Interactive reply through lifeloop."
			mock := startMock(t, mockmodel.Config{Reply: reply})
			env := testharness.NewHarnessEnv(t, mock)
			bin := env.UseOpenClaw(t)
			state := stateDir(t)
			term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--payload-argv-ok", "--", bin, "chat"), 160, 50)
			testharness.OpenClawScreenReady(t, term, 0)
			const first = "first prompt 41c2"
			term.Type(first)
			if err := term.WaitFor(first, screenTimeout); err != nil {
				t.Fatal(err)
			}
			term.Type("\r")
			testharness.WaitReceipts(t, term, state, "frame.ended", 1, runTimeout)
			session, _ := onlySession(t, state)
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			secret := "RENEWAL-PAYLOAD-openclaw-" + name
			pf := writePayloadFile(t, "pay_renew", secret, contract.PlacementPrePromptFrame)
			res := env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--payload", pf, session)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			// The relaunched TUI sends its launch message once it is up (it
			// need not show itself idle before): the payload's turn.
			testharness.WaitReceipts(t, term, state, "frame.ended", 2, runTimeout)
			var turn []byte
			for _, r := range mock.RequestsOfKind("claude") {
				if strings.Contains(string(r.Body), secret) {
					turn = r.Body
				}
			}
			if turn == nil {
				t.Fatalf("no model request carries the payload after the renewal; terminal:\n%s", term.Output())
			}
			var body struct {
				Messages []struct {
					Role    string          `json:"role"`
					Content json.RawMessage `json:"content"`
				} `json:"messages"`
			}
			if err := json.Unmarshal(turn, &body); err != nil || len(body.Messages) == 0 {
				t.Fatalf("model request: %v", err)
			}
			// The payload is a user message of its own (OpenClaw adds its
			// internal context as a user message after it), after the first
			// turn when resumed.
			payloadAt, firstAt := -1, -1
			for i, m := range body.Messages {
				if _, ok := requestCarries(t, m.Content, secret); ok && m.Role == "user" && payloadAt < 0 {
					payloadAt = i
				}
				if _, ok := requestCarries(t, m.Content, first); ok && firstAt < 0 {
					firstAt = i
				}
			}
			if payloadAt < 0 {
				t.Errorf("the payload is in no user message: %s", turn)
			}
			if (firstAt >= 0) != resume || firstAt > payloadAt {
				t.Errorf("the first turn at message %d, the payload at %d (resume %v)", firstAt, payloadAt, resume)
			}
			term.Type("\x04")
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v) after Ctrl-D; output:\n%s", code, sig, err, term.Output())
			}
			_, rs := onlySession(t, state)
			assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
			ids, _ := sessionRecord(t, state, session)["harness_session_ids"].([]any)
			if want := map[bool]int{true: 1, false: 2}[resume]; len(ids) != want {
				t.Errorf("harness session ids %v, want %d", ids, want)
			}
			if resume {
				sid, turns := openClawTurns(t, env)
				if len(turns) != 2 || len(ids) != 1 || ids[0] != sid {
					t.Errorf("turns %v of %s, harness session ids %v", turns, sid, ids)
				}
			}
			if got := len(receiptsFor(rs, "frame.ended")); got != 2 {
				t.Errorf("frame.ended receipts %d, want one per turn (the typed one, the payload's): %v", got, eventsOf(rs))
			}
			checkRenewalRecords(t, env, ll, state, session, "pay_renew", contract.PlacementPrePromptFrame, secret)
			assertNoProcessLeft(t, env, term.Pid())
		})
	}
}
