package e2e

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// waitLedger waits until the only session under state has a receipt
// for which ok holds, and returns the receipts.
func waitLedger(t *testing.T, state, what string, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	deadline := time.Now().Add(screenTimeout)
	for {
		if m, _ := filepath.Glob(filepath.Join(state, "sessions", "*", "receipts.jsonl")); len(m) == 1 {
			if _, rs := onlySession(t, state); ok(rs) {
				return rs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %s in the ledger", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// countFrames returns how many frame.ended receipts rs holds.
func countFrames(rs []map[string]any) int { return len(receiptsFor(rs, "frame.ended")) }

// openCodeTUI starts `lifeloop run -- opencode` in a PTY and waits for
// the prompt.
func openCodeTUI(t *testing.T, mock *mockmodel.Server) (*testharness.Terminal, *testharness.HarnessEnv, string, string) {
	t.Helper()
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	return startOpenCodeTUI(t, env, state), env, state, lifeloopBin(t)
}

// startOpenCodeTUI starts `lifeloop run --state-dir state [runArgs] --
// opencode` of env in a PTY and waits for the prompt.
func startOpenCodeTUI(t *testing.T, env *testharness.HarnessEnv, state string, runArgs ...string) *testharness.Terminal {
	t.Helper()
	args := append(append([]string{"run", "--state-dir", state}, runArgs...), "--", testharness.OpenCodeBin(t))
	term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), args...), 120, 40)
	testharness.OpenCodeScreenReady(t, term, 0)
	return term
}

// askOpenCode types prompt and waits for the turn's frame.ended receipt.
func askOpenCode(t *testing.T, term *testharness.Terminal, state, prompt string) []map[string]any {
	t.Helper()
	before := 0
	if m, _ := filepath.Glob(filepath.Join(state, "sessions", "*", "receipts.jsonl")); len(m) == 1 {
		_, rs := onlySession(t, state)
		before = countFrames(rs)
	}
	typeThenEnter(t, term, prompt)
	return waitLedger(t, state, "frame.ended for "+prompt, func(rs []map[string]any) bool { return countFrames(rs) > before })
}

// typeThenEnter types text, waits until the TUI shows it, then presses
// Enter: OpenCode drops an Enter that arrives with the text, and on a busy
// machine the echo may take longer than any fixed pause.
func typeThenEnter(t *testing.T, term *testharness.Terminal, text string) {
	t.Helper()
	n := len(term.Output())
	term.Type(text)
	if err := term.WaitForAfter(n, text, screenTimeout); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	term.Type("\r")
}

// exitOpenCode types /exit, waits for its completion entry, presses
// Enter and waits for lifeloop to exit 0.
func exitOpenCode(t *testing.T, term *testharness.Terminal) {
	t.Helper()
	testharness.OpenCodeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v) after /exit; output:\n%s", code, sig, err, term.Output())
	}
}

// TestRunOpenCodeTUI: the interactive TUI under lifeloop run loads the
// bridge plugin named in OPENCODE_CONFIG_CONTENT — a typed prompt answered
// (its four frame receipts from the plugin, source hook, with the
// database's ids, each recorded once), a manual /compact
// (context.compacted from the plugin, trigger manual, pre_tokens the
// turn's 12 + 5, the database's report attached; no turn of its own),
// /exit, session completed, no OpenCode process left. The user's own
// OPENCODE_CONFIG_CONTENT (an instructions file) still applies next to
// the payload placed at launch: the mock finds both in the system prompt.
// Neither is on the command line lifeloop records; the plugin lives in
// lifeloop's state folder (0600) and nothing is written into OpenCode's
// configuration folder. (A one-shot `opencode run` loads no plugin:
// TestRunOpenCodeRun.)
func TestRunOpenCodeTUI(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	const userMarker, payloadMarker = "USER-INSTRUCTION-MARKER-opencode", "LIFELOOP-LAUNCH-MARKER-opencode-plugin"
	userFile := userInstructions(t, env, userMarker)
	env.Setenv("OPENCODE_CONFIG_CONTENT", `{
		// the user's own inline configuration
		"instructions": [`+userFile+`],
	}`)
	before := filesUnder(t, env.OpenCodeConfigDir())
	pf := payloadFile(t, env.Dir, "pay_launch", payloadMarker)
	term := startOpenCodeTUI(t, env, state, "--payload", pf)
	askOpenCode(t, term, state, "hello through lifeloop")
	// A manual compaction: /compact from the TUI.
	typeThenEnter(t, term, "/compact")
	waitLedger(t, state, "context.compacted", func(rs []map[string]any) bool { return len(receiptsFor(rs, "context.compacted")) > 0 })
	exitOpenCode(t, term)
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "opencode", "completed", "exit_code_0")
	if c := receiptsFor(rs, "context.compacted"); len(c) != 1 || dig(c[0], "telemetry_summary", "trigger") != "manual" || num(dig(c[0], "telemetry_summary", "pre_tokens")) != 17 ||
		dig(c[0], "telemetry_summary", "source") != "hook" || dig(c[0], "telemetry_summary", "transcript", "source") != "database" {
		t.Errorf("context.compacted %v, want one from the plugin (hook), trigger manual, pre_tokens 17, the database's report attached", toJSON(c))
	}
	sid, turns := openCodeTurns(t, env)
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertFrames(t, rs, turns)
	assertFramesOnce(t, rs)
	assertFramesFromHook(t, rs)
	assertCausalOrder(t, rs)
	if !strings.Contains(term.Output(), reply) {
		t.Errorf("the answer never reached the terminal")
	}
	assertNoProcessLeft(t, env, term.Pid())

	for _, m := range []string{userMarker, payloadMarker} {
		if path, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), m); !ok || !strings.HasPrefix(path, ".system") {
			t.Errorf("%s: in a request %v at %q, want in the system prompt", m, ok, path)
		}
	}
	prs, _ := lastOf(rs, "session.starting")["payload_receipts"].([]any)
	if len(prs) != 1 || dig(prs[0], "status") != "delivered" {
		t.Errorf("session.starting payload receipts: %v", prs)
	}
	argv := toJSON(sessionRecord(t, state, session)["argv"])
	for _, s := range []string{"OPENCODE_CONFIG_CONTENT", strings.Trim(userFile, `"`), payloadMarker} {
		if strings.Contains(argv, s) {
			t.Errorf("recorded argv %s holds %q", argv, s)
		}
	}
	plugins, _ := filepath.Glob(filepath.Join(state, "bridges", "opencode-lifeloop-bridge-*.js"))
	if len(plugins) != 1 {
		t.Fatalf("plugin files %v, want one", plugins)
	}
	if st, err := os.Stat(plugins[0]); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("plugin file %v %v, want mode 0600", st, err)
	}
	for _, f := range filesUnder(t, env.OpenCodeConfigDir()) {
		if !slices.Contains(before, f) && strings.Contains(f, "lifeloop") {
			t.Errorf("lifeloop wrote %s into OpenCode's configuration folder", f)
		}
	}
}

// TestRunOpenCodeTUISigint: OpenCode exits 0 on SIGINT; lifeloop records
// the session as stopped by the signal (cancelled), not as a success.
func TestRunOpenCodeTUISigint(t *testing.T) {
	skipShort(t)
	mock := startMock(t, mockmodel.Config{})
	term, env, state, _ := openCodeTUI(t, mock)
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil || sig != 0 {
		t.Fatalf("lifeloop: code %d signal %v %v", code, sig, err)
	}
	_, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "opencode", "stopped", "sigint")
	if got := dig(lastOf(rs, "session.ended"), "telemetry_summary", "outcome"); got != "cancelled" {
		t.Errorf("outcome %v, want cancelled", got)
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// openCodeProcesses counts the live OpenCode processes of env.
func openCodeProcesses(env *testharness.HarnessEnv) int {
	n := 0
	for _, p := range env.StrayProcesses() {
		if f := strings.Fields(p.Cmdline); len(f) > 0 && filepath.Base(f[0]) == "opencode" {
			n++
		}
	}
	return n
}

// TestRenewOpenCodeTUIUnderLifeloop renews a live OpenCode TUI under
// lifeloop run, resumed (-s <session id>) and fresh: /exit stops it,
// one OpenCode process runs again on the same terminal, the payload is in
// the system prompt of the next model request (from a private file named
// by OPENCODE_CONFIG_CONTENT; the process table shows only its path),
// resumed carries the first turn and fresh does not, the delivered
// receipt is recorded, and the terminal takes the next prompt.
func TestRenewOpenCodeTUIUnderLifeloop(t *testing.T) {
	skipShort(t)
	for _, resume := range []bool{true, false} {
		name := map[bool]string{true: "resume", false: "fresh"}[resume]
		t.Run(name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{Reply: "Interactive reply through lifeloop."})
			term, env, state, ll := openCodeTUI(t, mock)
			askOpenCode(t, term, state, "first prompt 41c2")
			sessions, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
			ses := filepath.Base(sessions[0])
			secret := "RENEWAL-PAYLOAD-opencode-" + name
			placement := contract.PlacementDeveloperEquivalentFrame
			payloadFile := writePayloadFile(t, "pay_renew", secret, placement)
			mode := map[bool]string{true: "--resume", false: "--fresh"}[resume]
			before := len(term.Output())
			n := len(mock.Requests())
			res := env.Run(runTimeout, ll, "renew", "--state-dir", state, mode, "--payload", payloadFile, ses)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
				t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
			}
			if strings.Contains(res.Stdout+res.Stderr, secret) {
				t.Error("renew printed the payload body")
			}
			testharness.OpenCodeRelaunched(t, term, before)
			if got := openCodeProcesses(env); got != 1 {
				t.Errorf("%d OpenCode processes after the renewal, want 1", got)
			}
			for _, p := range env.StrayProcesses() {
				if strings.Contains(p.Cmdline, secret) {
					t.Errorf("the payload body is in the process table: %s", p.Cmdline)
				}
			}
			askOpenCode(t, term, state, "second prompt 9d1e")
			var turn *mockmodel.Request
			for _, r := range mock.RequestsOfKind("claude")[0:] {
				if strings.Contains(string(r.Body), "second prompt 9d1e") {
					turn = &r
				}
			}
			if turn == nil {
				t.Fatalf("no model request for the second prompt (%d requests since the renewal)", len(mock.Requests())-n)
			}
			if path, ok := requestCarries(t, turn.Body, secret); !ok || !strings.HasPrefix(path, ".system") {
				t.Errorf("payload in the next request: %v at %q, want in the system prompt", ok, path)
			}
			if _, ok := requestCarries(t, turn.Body, "first prompt 41c2"); ok != resume {
				t.Errorf("the next request carries the first turn: %v, want %v", ok, resume)
			}
			exitOpenCode(t, term)
			checkRenewalRecords(t, env, ll, state, ses, "pay_renew", placement, secret)
			// Resumed, the relaunched TUI writes on to the session followed;
			// fresh, telemetry follows the new session and binds its id.
			ids, _ := sessionRecord(t, state, ses)["harness_session_ids"].([]any)
			if want := map[bool]int{true: 1, false: 2}[resume]; len(ids) != want {
				t.Errorf("harness session ids %v, want %d", ids, want)
			}
			_, rs := onlySession(t, state)
			if got := len(receiptsFor(rs, "frame.ended")); got != 2 {
				t.Errorf("frame.ended receipts %d, want one per prompt: %v", got, eventsOf(rs))
			}
			assertNoProcessLeft(t, env, term.Pid())
			_ = os.Remove(payloadFile)
		})
	}
}

// TestRunOpenCodeTUINewSession: /new in OpenCode's TUI starts a second
// session (a new row, created at the next prompt) in the same process.
// The bridge plugin reports the new session's creation, the database
// follower moves to it, and the stream closes the first harness session
// and opens the second (assertSwitched: two started/ended pairs, OrgLoop
// and HCP follow, status and top name the second). Each turn is recorded
// once, under its own session's id, and session.json lists both ids.
func TestRunOpenCodeTUINewSession(t *testing.T) {
	skipShort(t)
	mock := startMock(t, mockmodel.Config{Reply: "Interactive reply through lifeloop."})
	term, env, state, _ := openCodeTUI(t, mock)
	askOpenCode(t, term, state, "first session prompt")
	testharness.OpenCodeNewSession(t, term)
	askOpenCode(t, term, state, "second session prompt")
	exitOpenCode(t, term)

	ids, turns := openCodeSessions(t, env)
	if len(ids) != 2 || len(turns[ids[0]]) != 1 || len(turns[ids[1]]) != 1 {
		t.Fatalf("OpenCode sessions %v with turns %v, want two of one turn each", ids, turns)
	}
	session, rs := onlySession(t, state)
	assertFrames(t, rs, []string{turns[ids[0]][0], turns[ids[1]][0]})
	assertFramesOnce(t, rs)
	for _, r := range receiptsFor(rs, "frame.ended") {
		want := ids[0]
		if frameOfReceipt(r) == turns[ids[1]][0] {
			want = ids[1]
		}
		if r["harness_session_id"] != want {
			t.Errorf("frame %s ended under harness session %v, want %s", frameOfReceipt(r), r["harness_session_id"], want)
		}
	}
	ended, started := receiptsFor(rs, "session.ended"), receiptsFor(rs, "session.started")
	if len(ended) == 2 && len(started) == 2 && (ended[0]["harness_session_id"] != ids[0] || started[1]["harness_session_id"] != ids[1] || dig(started[1], "telemetry_summary", "source") != "hook") {
		t.Errorf("switched from %v to %v (started from %v), want from %s to %s from the plugin",
			ended[0]["harness_session_id"], started[1]["harness_session_id"], dig(started[1], "telemetry_summary", "source"), ids[0], ids[1])
	}
	bound, _ := sessionRecord(t, state, session)["harness_session_ids"].([]any)
	if len(bound) != 2 || bound[0] != ids[0] || bound[1] != ids[1] {
		t.Errorf("session.json harness_session_ids %v, want %v", bound, ids)
	}
	assertSwitched(t, env, state, "opencode")
	assertNoProcessLeft(t, env, term.Pid())
}
