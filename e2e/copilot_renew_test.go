package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// copilotNative lists the live native Copilot CLI processes started from
// env (each launch is the npm loader and this child).
func copilotNative(env *testharness.HarnessEnv) []testharness.Proc {
	var out []testharness.Proc
	for _, p := range env.StrayProcesses() {
		if words := strings.Fields(p.Cmdline); len(words) > 0 && strings.HasSuffix(words[0], "copilot-linux-x64/copilot") {
			out = append(out, p)
		}
	}
	return out
}

// TestRenewCopilotTUI renews a real interactive Copilot CLI session
// wrapped by `lifeloop run`, resumed and fresh: lifeloop stops it
// (SIGTERM to its process group), starts Copilot again on the same
// terminal (--resume=ID to resume) with the payload in an instructions
// file named by COPILOT_CUSTOM_INSTRUCTIONS_DIRS, and the next model
// request carries the payload in its system prompt, and the first turn
// only when resumed. One Copilot runs after the renewal, the payload is
// not on its command line, the hook bridge reports each turn's end
// before and after the renewal, /exit ends the session.
func TestRenewCopilotTUI(t *testing.T) {
	skipShort(t)
	for _, resume := range []bool{true, false} {
		name := map[bool]string{true: "resume", false: "fresh"}[resume]
		t.Run(name, func(t *testing.T) {
			ll := lifeloopBin(t)
			const reply = "Interactive reply through lifeloop."
			term, env, state, mock := startCopilotTUIUnderLifeloop(t, mockmodel.Config{Reply: reply}, "")
			copilotPrompt(t, term, "first prompt 41c2")
			testharness.WaitReceipts(t, term, state, "frame.ended", 1, screenTimeout)
			ses, _ := onlySession(t, state)
			secret := "RENEWAL-PAYLOAD-copilot-" + name
			pf := writePayloadFile(t, "pay_renew", secret, contract.PlacementDeveloperEquivalentFrame)
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			n := len(mock.RequestsOfKind("claude"))
			before := len(term.Output())
			var res testharness.Result
			for deadline := time.Now().Add(screenTimeout); ; time.Sleep(200 * time.Millisecond) {
				res = env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--reason", "e2e", "--payload", pf, ses)
				if res.ExitCode == 0 || !strings.Contains(res.Stderr, "identity_unavailable") || time.Now().After(deadline) {
					break
				}
			}
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			testharness.CopilotRelaunched(t, term, before)
			if procs := copilotNative(env); len(procs) != 1 {
				t.Errorf("Copilot processes after the renewal: %v (all: %v)", procs, env.StrayProcesses())
			}
			live, err := statedir.ReadSession(state, ses)
			if err != nil {
				t.Fatal(err)
			}
			argv := strings.Join(live.Argv, " ")
			if strings.Contains(argv, secret) || strings.Contains(argv, "--resume=") != resume {
				t.Errorf("the relaunch's recorded command line: %q", live.Argv)
			}
			sent := len(term.Output())
			copilotPrompt(t, term, "second prompt 9d1e")
			var turn []byte
			for deadline := time.Now().Add(screenTimeout); turn == nil; time.Sleep(100 * time.Millisecond) {
				for _, r := range mock.RequestsOfKind("claude")[n:] {
					if strings.Contains(string(r.Body), "second prompt 9d1e") {
						turn = r.Body
					}
				}
				if turn == nil && (time.Now().After(deadline) || term.Exited()) {
					t.Fatalf("no model request for the second prompt; terminal:\n%s", term.Output())
				}
			}
			testharness.WaitReceipts(t, term, state, "frame.ended", 2, screenTimeout)
			if path, ok := requestCarries(t, turn, secret); !ok || !strings.HasPrefix(path, ".system") {
				t.Errorf("payload in the renewed session's request: %v at %q, want in the system prompt", ok, path)
			}
			if _, carried := requestCarries(t, turn, "first prompt 41c2"); carried != resume {
				t.Errorf("request carries the first turn: %v, want %v", carried, resume)
			}
			copilotIdle(t, term, sent)
			quitAt := len(term.Output())
			copilotPrompt(t, term, "/exit")
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
			}
			checkRenewalRecords(t, env, ll, state, ses, "pay_renew", contract.PlacementDeveloperEquivalentFrame, secret)
			assertNoProcessLeft(t, env, term.Pid())

			// Telemetry followed Copilot across the renewal: resumed, it
			// appends to the same file (one session id, two frames); fresh,
			// a second session folder and id.
			files := env.CopilotSessions()
			_, receipts := onlySession(t, state)
			rec, _ := statedir.ReadSession(state, ses)
			wantFiles := map[bool]int{true: 1, false: 2}[resume]
			if len(files) != wantFiles || len(rec.HarnessSessionIDs) != wantFiles {
				t.Fatalf("session files %v, harness session ids %v; want %d", files, rec.HarnessSessionIDs, wantFiles)
			}
			var want []string
			for _, f := range files {
				frames, _ := copilotSession(t, f)
				want = append(want, frames...)
			}
			if len(want) != 2 {
				t.Fatalf("user messages in the session files: %v", want)
			}
			want = orderByReceipts(receipts, want)
			assertFrames(t, receipts, want)
			assertFramesOnce(t, receipts)
			// The hook bridge runs in the TUI and its relaunch: each
			// turn's end is the Stop hook's, in the session file's frame.
			for _, r := range receipts {
				if r["event"] == "frame.ended" && dig(r, "telemetry_summary", "hook") != "Stop" {
					t.Errorf("frame.ended %s, want the Stop hook's", toJSON(r["telemetry_summary"]))
				}
			}
			// SessionEnd is installed: the stopped TUI runs it before its
			// process group is gone, so the renewal's own session.ending
			// stands for it and the relaunch's session.starting comes
			// after; /exit's end is the hook's (user_exit).
			var lifecycle []string
			for _, r := range receipts {
				if ev := r["event"].(string); strings.HasPrefix(ev, "session.") {
					lifecycle = append(lifecycle, ev)
				}
			}
			if want := "session.starting session.started session.ending session.ended session.starting session.started session.ending session.ended"; strings.Join(lifecycle, " ") != want {
				t.Errorf("session moments %v, want %s", lifecycle, want)
			}
			if e := lastOf(receipts, "session.ending"); dig(e, "telemetry_summary", "hook") != "SessionEnd" || dig(e, "telemetry_summary", "reason") != "user_exit" {
				t.Errorf("last session.ending %s, want the SessionEnd hook's, reason user_exit", toJSON(e["telemetry_summary"]))
			}

			// The relaunch started once the stopped Copilot had ended:
			// its npm loader dies at SIGTERM at once while the native
			// binary writes the session's end afterwards, and a resumed
			// Copilot that finds its session still in use asks the
			// person whether to go on instead of taking the prompt.
			for _, l := range readJSONL(t, files[0]) {
				if l["type"] == "session.resume" && dig(l, "data", "alreadyInUse") != false {
					t.Errorf("the resumed Copilot found its session in use: %s", toJSON(l["data"]))
				}
			}
		})
	}
}
