package e2e

import (
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRenewOpenClawTUIUnderLifeloop renews `openclaw chat` under `lifeloop
// run`, resumed and fresh: `lifeloop renew` stops the TUI (SIGTERM) and
// starts it again on the same terminal, on the same session key (resume)
// or a new one (fresh); a renewal with a payload is refused (no
// placement at a relaunch). The prompt typed into the relaunched TUI is
// answered; its model request carries the first turn only when resumed;
// telemetry follows the same OpenClaw session (resume: one session id,
// both turns in the ledger) or the new one (fresh: two session ids);
// Ctrl-D ends the session as completed with no process left.
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
			term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin, "chat"), 160, 50)
			testharness.OpenClawScreenReady(t, term, 0)
			ask := func(prompt string, n int) {
				t.Helper()
				at := len(term.Output())
				term.Type(prompt)
				if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
					t.Fatal(err)
				}
				term.Type("\r")
				testharness.WaitReceipts(t, term, state, "frame.ended", n, runTimeout)
			}
			ask("first prompt 41c2", 1)
			session, _ := onlySession(t, state)
			before := len(term.Output())
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			// No continuation payload can be placed: the renewal is
			// refused before the harness is touched.
			pf := writePayloadFile(t, "pay_renew", "RENEWAL-PAYLOAD-openclaw", contract.PlacementDeveloperEquivalentFrame)
			if res := env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--payload", pf, session); res.ExitCode == 0 || !strings.Contains(res.Stderr, "cannot be delivered at the relaunch") {
				t.Errorf("lifeloop renew --payload: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
			}
			res := env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--reason", "e2e", session)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			testharness.OpenClawRelaunched(t, term, before)
			ask("second prompt 9d1e", 2)
			var second []byte
			for _, r := range mock.RequestsOfKind("claude") {
				if strings.Contains(string(r.Body), "second prompt 9d1e") {
					second = r.Body
				}
			}
			if second == nil {
				t.Fatal("no model request for the second prompt")
			}
			if carries := strings.Contains(string(second), "first prompt 41c2"); carries != resume {
				t.Errorf("the second prompt's request carries the first turn: %v, want %v", carries, resume)
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
				t.Errorf("frame.ended receipts %d, want one per prompt: %v", got, eventsOf(rs))
			}
			assertNoProcessLeft(t, env, term.Pid())
		})
	}
}
