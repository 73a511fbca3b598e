package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunPiPayloadAtLaunch: `lifeloop run --payload` places the envelope
// with --append-system-prompt, through a private file; the model request's
// system prompt carries it, session.starting says delivered at
// pre_session, and neither the recorded command line nor the ledger holds
// the body.
func TestRunPiPayloadAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	const marker = "LIFELOOP-LAUNCH-MARKER-pi"
	pf := payloadFile(t, env.Dir, "pay_launch", marker)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--payload", pf, "--", bin, "-p", "say hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	reqs := mock.RequestsOfKind("claude")
	if len(reqs) != 1 {
		t.Fatalf("%d model requests", len(reqs))
	}
	if path, ok := requestCarries(t, reqs[0].Body, marker); !ok || !strings.HasPrefix(path, ".system") {
		t.Errorf("payload in the request: %v at %q, want in the system prompt", ok, path)
	}
	session, receipts := onlySession(t, state)
	starting := lastOf(receipts, "session.starting")
	prs, _ := starting["payload_receipts"].([]any)
	if len(prs) != 1 || dig(prs[0], "status") != "delivered" || dig(prs[0], "payload_id") != "pay_launch" {
		t.Errorf("session.starting payload receipts: %v", starting["payload_receipts"])
	}
	argv := fmt.Sprint(sessionRecord(t, state, session)["argv"])
	if strings.Contains(argv, marker) || !strings.Contains(argv, "--append-system-prompt") {
		t.Errorf("recorded argv %s", argv)
	}
	ledger, _ := os.ReadFile(filepath.Join(state, "sessions", session, "receipts.jsonl"))
	if strings.Contains(string(ledger), marker) {
		t.Error("the ledger carries the payload body")
	}
}

// piProcesses lists the live Pi processes started from env. Pi sets its
// process title to "pi", which replaces its command line in /proc.
func piProcesses(env *testharness.HarnessEnv) []testharness.Proc {
	var out []testharness.Proc
	for _, p := range env.StrayProcesses() {
		words := strings.Fields(p.Cmdline)
		if p.Cmdline == "pi" || len(words) > 1 && filepath.Base(words[0]) == "node" && strings.Contains(words[1], "pi") {
			out = append(out, p)
		}
	}
	return out
}

// TestRenewPiTUIUnderLifeloop renews a real interactive Pi session
// wrapped by `lifeloop run`, resumed and fresh: lifeloop stops it (SIGTERM),
// starts Pi again on the same terminal (`--session ID` to resume) with
// the payload in --append-system-prompt FILE, and the next model request
// carries the payload in its system prompt, and the first turn only when
// resumed. One Pi process runs after the renewal, the payload is not on
// its command line, the typed prompt works, /quit ends the session.
func TestRenewPiTUIUnderLifeloop(t *testing.T) {
	skipShort(t)
	for _, resume := range []bool{true, false} {
		name := map[bool]string{true: "resume", false: "fresh"}[resume]
		t.Run(name, func(t *testing.T) {
			ll := lifeloopBin(t)
			const reply = "Interactive reply through lifeloop."
			term, env, state, mock := startPiTUIUnderLifeloop(t, reply)
			term.Type("first prompt 41c2")
			if err := term.WaitFor("first prompt 41c2", screenTimeout); err != nil {
				t.Fatal(err)
			}
			term.Type("\r")
			if err := term.WaitFor(reply, screenTimeout); err != nil {
				t.Fatal(err)
			}
			ses, _ := onlySession(t, state)
			secret := "RENEWAL-PAYLOAD-pi-" + name
			pf := writePayloadFile(t, "pay_renew", secret, contract.PlacementDeveloperEquivalentFrame)
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			n := len(mock.RequestsOfKind("claude"))
			before := len(term.Output())
			// The harness session id comes from the session file, which Pi
			// writes once the first reply has ended; renew is refused with
			// identity_unavailable until the watcher has read it.
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
			if strings.Contains(res.Stdout+res.Stderr, secret) {
				t.Error("renew printed the payload body")
			}
			testharness.PiRelaunched(t, term, before)
			if procs := piProcesses(env); len(procs) != 1 {
				t.Errorf("Pi processes after the renewal: %v (all: %v)", procs, env.StrayProcesses())
			}
			live, err := statedir.ReadSession(state, ses)
			if err != nil {
				t.Fatal(err)
			}
			// The relaunch's command line: the payload through a private
			// file in the session folder, the bridge extension again (the
			// one every launch shares), --session ID when resumed.
			argv := strings.Join(live.Argv, " ")
			if strings.Contains(argv, secret) || !strings.Contains(argv, "--append-system-prompt "+filepath.Join(state, "sessions", ses)) ||
				!strings.Contains(argv, "--extension "+filepath.Join(state, "bridges", "pi-lifeloop-bridge-")) ||
				strings.Contains(argv, "--session ") != resume {
				t.Errorf("the relaunch's recorded command line: %q", live.Argv)
			}
			term.Type("second prompt 9d1e")
			waitOutputAfter(t, term, before, "second prompt 9d1e", screenTimeout)
			submitted := len(term.Output())
			term.Type("\r")
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
			waitOutputAfter(t, term, submitted, reply, screenTimeout)
			if path, ok := requestCarries(t, turn, secret); !ok || !strings.HasPrefix(path, ".system") {
				t.Errorf("payload in the renewed session's request: %v at %q, want in the system prompt", ok, path)
			}
			if _, carried := requestCarries(t, turn, "first prompt 41c2"); carried != resume {
				t.Errorf("request carries the first turn: %v, want %v", carried, resume)
			}
			quitAt := len(term.Output())
			piQuit(t, term)
			if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
				t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
			}
			checkRenewalRecords(t, env, ll, state, ses, "pay_renew", contract.PlacementDeveloperEquivalentFrame, secret)
			assertNoProcessLeft(t, env, term.Pid())

			// Telemetry followed Pi across the renewal: resumed, Pi
			// appends to the same file (one session id, frames #1 and #2);
			// fresh, a second file and session id.
			files := env.PiSessions()
			_, receipts := onlySession(t, state)
			rec, _ := statedir.ReadSession(state, ses)
			wantFiles := map[bool]int{true: 1, false: 2}[resume]
			if len(files) != wantFiles || len(rec.HarnessSessionIDs) != wantFiles {
				t.Fatalf("session files %v, harness session ids %v; want %d", files, rec.HarnessSessionIDs, wantFiles)
			}
			var want []string
			for _, f := range files {
				frames, _ := piSession(t, f)
				want = append(want, frames...)
			}
			if len(want) != 2 {
				t.Fatalf("user messages in the session files: %v", want)
			}
			if !resume {
				// Discovery follows the newer file; the older one is read first.
				want = orderByReceipts(receipts, want)
			}
			assertFrames(t, receipts, want)
			assertFramesOnce(t, receipts)
			// The relaunched Pi's turn is reported by its bridge extension.
			if r := lastOf(receipts, "frame.ending"); frameOfReceipt(r) != want[1] || dig(r, "telemetry_summary", "source") != "hook" {
				t.Errorf("the renewed turn's frame.ending %s", toJSON(r))
			}
		})
	}
}

// orderByReceipts orders frame ids as their frame.opening receipts came.
func orderByReceipts(receipts []map[string]any, frames []string) []string {
	var out []string
	for _, r := range receiptsFor(receipts, "frame.opening") {
		for _, f := range frames {
			if frameOfReceipt(r) == f {
				out = append(out, f)
			}
		}
	}
	if len(out) != len(frames) {
		return frames
	}
	return out
}
