package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRenewQwenTUI renews Qwen Code's TUI under `lifeloop run`, resumed
// and fresh: `lifeloop renew --payload FILE` stops it (SIGTERM to its
// process group) and starts it again on the same terminal (--resume ID
// to resume) with the payload in --append-system-prompt (in argv: the
// session runs with --payload-argv-ok; TestPlaceAtLaunch in adapters/qwen
// proves the refusal without it). The next prompt's model request
// carries the payload in its system prompt, and the first turn only when
// resumed; telemetry follows the same chat file (resume) or the new one
// (fresh); /quit ends the session as completed with no process left.
func TestRenewQwenTUI(t *testing.T) {
	skipShort(t)
	t.Parallel()
	for _, resume := range []bool{true, false} {
		name := map[bool]string{true: "resume", false: "fresh"}[resume]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ll := lifeloopBin(t)
			mock := startMock(t, mockmodel.Config{})
			env := testharness.NewHarnessEnv(t, mock)
			bin := env.UseQwen(t)
			state := stateDir(t)
			term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--payload-argv-ok", "--", bin, "--yolo"), 120, 40)
			testharness.QwenScreenReady(t, term, 0)
			const first = "first prompt 41c2"
			term.Type(first)
			if err := term.WaitFor(first, screenTimeout); err != nil {
				t.Fatal(err)
			}
			qwenEnter(term)
			waitReceipt(t, term, state, "frame.ended", 1)
			session, _ := onlySession(t, state)
			t.Cleanup(func() {
				if t.Failed() {
					b, _ := os.ReadFile(filepath.Join(state, "sessions", session, "lifeloop.log"))
					t.Logf("session log:\n%s", b)
				}
			})
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			secret := "RENEWAL-PAYLOAD-qwen-" + name
			pf := writePayloadFile(t, "pay_renew", secret, contract.PlacementDeveloperEquivalentFrame)
			before := len(term.Output())
			var res testharness.Result
			for deadline := time.Now().Add(screenTimeout); ; time.Sleep(200 * time.Millisecond) {
				res = env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--reason", "e2e", "--payload", pf, session)
				if res.ExitCode == 0 || !strings.Contains(res.Stderr, "identity_unavailable") || time.Now().After(deadline) {
					break
				}
			}
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			testharness.QwenScreenReady(t, term, before)
			n := len(mock.RequestsOfKind("claude"))
			const second = "second prompt 9d1e"
			at := len(term.Output())
			term.Type(second)
			if err := term.WaitForAfter(at, second, screenTimeout); err != nil {
				t.Fatal(err)
			}
			qwenEnter(term)
			var turn []byte
			for deadline := time.Now().Add(screenTimeout); turn == nil; time.Sleep(100 * time.Millisecond) {
				for _, r := range mock.RequestsOfKind("claude")[n:] {
					if strings.Contains(string(r.Body), second) {
						turn = r.Body
					}
				}
				if turn == nil && (time.Now().After(deadline) || term.Exited()) {
					t.Fatalf("no model request for the second prompt; terminal:\n%s", term.Output())
				}
			}
			waitReceipt(t, term, state, "frame.ended", 2)
			if path, ok := requestCarries(t, turn, secret); !ok || !strings.HasPrefix(path, ".system") {
				t.Errorf("payload in the renewed session's request: %v at %q, want in the system prompt", ok, path)
			}
			if _, carried := requestCarries(t, turn, first); carried != resume {
				t.Errorf("request carries the first turn: %v, want %v", carried, resume)
			}
			quitAt := len(term.Output())
			term.Type("/quit")
			waitOutputAfter(t, term, quitAt, "exit the cli", screenTimeout)
			qwenEnter(term)
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
			}
			_, rs := onlySession(t, state)
			assertSessionLifecycle(t, rs, "qwen", "completed", "exit_code_0")
			checkRenewalRecords(t, env, ll, state, session, "pay_renew", contract.PlacementDeveloperEquivalentFrame, secret)
			assertNoProcessLeft(t, env, term.Pid())
			files := env.QwenSessions()
			ids, _ := sessionRecord(t, state, session)["harness_session_ids"].([]any)
			want := map[bool]int{true: 1, false: 2}[resume]
			if len(files) != want || len(ids) != want {
				t.Fatalf("session files %v, harness session ids %v; want %d", files, ids, want)
			}
			var frames []string
			for _, f := range files {
				fr, _ := qwenSession(t, f)
				frames = append(frames, fr...)
			}
			frames = orderByReceipts(rs, frames)
			assertFrames(t, rs, frames)
		})
	}
}
