package e2e

import (
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

func eventsOf(receipts []map[string]any) []string {
	var out []string
	for _, r := range receipts {
		out = append(out, r["event"].(string))
	}
	return out
}

func lastOf(receipts []map[string]any, event string) map[string]any {
	for i := len(receipts) - 1; i >= 0; i-- {
		if receipts[i]["event"] == event {
			return receipts[i]
		}
	}
	return nil
}

// assertSessionLifecycle checks the session.* receipts of a wrapped run:
// starting, started and ended in that order, sequences 1..n without gaps,
// the adapter resolved, and the ended classification.
func assertSessionLifecycle(t *testing.T, receipts []map[string]any, adapter, phase, reason string) {
	t.Helper()
	var session []string
	for i, r := range receipts {
		if num(r["sequence"]) != i+1 {
			t.Errorf("receipt %d has sequence %v", i, r["sequence"])
		}
		if r["adapter_id"] != adapter {
			t.Errorf("receipt %d adapter_id %v, want %s", i, r["adapter_id"], adapter)
		}
		if ev := r["event"].(string); strings.HasPrefix(ev, "session.") {
			session = append(session, ev)
		}
	}
	if len(session) < 3 || session[0] != "session.starting" || session[1] != "session.started" || session[len(session)-1] != "session.ended" {
		t.Fatalf("session receipts %v", session)
	}
	ended := lastOf(receipts, "session.ended")
	if got := dig(ended, "telemetry_summary", "phase"); got != phase {
		t.Errorf("session.ended phase %v, want %s", got, phase)
	}
	if got := dig(ended, "telemetry_summary", "reason"); got != reason {
		t.Errorf("session.ended reason %v, want %s", got, reason)
	}
}

// assertHarnessVersion checks that session.started names the version of
// the harness bin, as `bin --version` prints it.
func assertHarnessVersion(t *testing.T, env *testharness.HarnessEnv, receipts []map[string]any, bin string) {
	t.Helper()
	v, _ := dig(lastOf(receipts, "session.started"), "telemetry_summary", "harness_version").(string)
	res := env.Run(runTimeout, bin, "--version")
	if v == "" || !regexp.MustCompile(`(^|[^0-9.])`+regexp.QuoteMeta(v)+`($|[^0-9.])`).MatchString(res.Stdout+res.Stderr) {
		t.Errorf("session.started harness_version %q; %s --version prints %q", v, filepath.Base(bin), res.Stdout+res.Stderr)
	}
}

// assertNoDrift checks that the ledger reports no harness drift: the real
// harness's lines are all understood and its version is proven.
func assertNoDrift(t *testing.T, receipts []map[string]any) {
	t.Helper()
	for _, r := range receipts {
		if reason := dig(r, "telemetry_summary", "reason"); r["event"] == "capability.degraded" && (reason == "harness_drift" || reason == "harness_version_unproven") {
			t.Errorf("drift reported against the real harness: %v", r)
		}
	}
}

func TestRunClaudePrint(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- claude -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res.Stderr != "" {
		t.Errorf("lifeloop wrote to stderr while the harness ran: %q", res.Stderr)
	}
	// A script capturing the output gets what the bare harness prints,
	// byte for byte, and a prompt piped on stdin reaches the harness as
	// it does bare (Claude reads it only when stdin is not a terminal).
	bare := env.Run(runTimeout, bin, "-p", "say hello")
	if res.Stdout != bare.Stdout {
		t.Errorf("wrapped stdout %q, bare %q", res.Stdout, bare.Stdout)
	}
	piped := env.RunInput(runTimeout, "say hello\n", ll, "run", "--state-dir", t.TempDir(), "--", bin, "-p")
	if piped.ExitCode != 0 || piped.Stdout != bare.Stdout {
		t.Errorf("echo 'say hello' | lifeloop run -- claude -p: exit %d, stdout %q (bare %q), stderr %q", piped.ExitCode, piped.Stdout, bare.Stdout, piped.Stderr)
	}
	session, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "claude", "completed", "exit_code_0")
	assertHarnessVersion(t, env, receipts, bin)
	assertNoDrift(t, receipts)
	// A pinned one-shot with nothing to place gets only the hooks whose
	// moments its transcript does not report: the session and the turn
	// come from the transcript, once, and session.ending from the
	// SessionEnd hook.
	bridge, err := os.ReadFile(filepath.Join(state, "sessions", session, "claude-hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var installed struct{ Hooks map[string]json.RawMessage }
	if err := json.Unmarshal(bridge, &installed); err != nil {
		t.Fatal(err)
	}
	if names := slices.Sorted(maps.Keys(installed.Hooks)); !slices.Equal(names, []string{"PreCompact", "SessionEnd", "SubagentStop"}) {
		t.Errorf("hooks installed for a one-shot: %v, want PreCompact, SessionEnd and SubagentStop", names)
	}
	for _, ev := range []string{"session.started", "frame.opening", "frame.ending", "frame.ended", "session.ending"} {
		want := "transcript"
		if ev == "session.ending" {
			want = "hook"
		}
		if src := dig(lastOf(receipts, ev), "telemetry_summary", "source"); src != want {
			t.Errorf("%s source %v, want %s (all: %v)", ev, src, want, eventsOf(receipts))
		}
	}
	assertFramesOnce(t, receipts)
	// lifeloop status shows the version the session ran.
	v, _ := dig(lastOf(receipts, "session.started"), "telemetry_summary", "harness_version").(string)
	if st := env.Run(runTimeout, ll, "status", "--state-dir", state, "--latest"); st.ExitCode != 0 || v == "" || !strings.Contains(st.Stdout, "harness   version "+v+"\n") {
		t.Errorf("lifeloop status (exit %d) does not show harness version %q:\n%s%s", st.ExitCode, v, st.Stdout, st.Stderr)
	}
}

func TestRunCodexExec(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "exec", "--skip-git-repo-check", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- codex exec: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	// A second one-shot right after, as an orchestrator runs them: it is
	// bound to its own rollout from session.started on, not to the one
	// the first left a moment before.
	state2 := stateDir(t)
	if res := env.Run(runTimeout, ll, "run", "--state-dir", state2, "--", bin, "exec", "--skip-git-repo-check", "say hello"); res.ExitCode != 0 {
		t.Fatalf("second lifeloop run -- codex exec: exit %d\nstderr: %s", res.ExitCode, res.Stderr)
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "codex", "completed", "exit_code_0")
	assertHarnessVersion(t, env, receipts, bin)
	assertNoDrift(t, receipts)
	// A one-shot gets no notify program (Codex would fork itself to start
	// it): its turn's end comes from the rollout, once.
	assertFramesOnce(t, receipts)
	if src := dig(lastOf(receipts, "frame.ended"), "telemetry_summary", "source"); src != "rollout" {
		t.Errorf("frame.ended source %v, want rollout", src)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
	_, rs := onlySession(t, state2)
	started, _ := lastOf(rs, "session.started")["harness_session_id"].(string)
	ended, _ := lastOf(rs, "frame.ended")["harness_session_id"].(string)
	if firstHS := lastOf(receipts, "session.started")["harness_session_id"]; started == "" || started != ended || started == firstHS {
		t.Errorf("second one-shot: session.started bound to %q, its frame.ended to %q; the first one-shot's session %v", started, ended, firstHS)
	}
}

// startClaudeTUIUnderLifeloop starts `lifeloop run -- claude` in a PTY and
// waits until Claude has named its session (it takes keys from then on).
func startClaudeTUIUnderLifeloop(t *testing.T, reply string) (*testharness.Terminal, *testharness.HarnessEnv, string) {
	t.Helper()
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	return term, env, state
}

func TestRunClaudeTUI(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state := startClaudeTUIUnderLifeloop(t, reply)
	term.Type("hello through lifeloop")
	if err := term.WaitFor("hello through lifeloop", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	testharness.ClaudeTurnsEnded(t, term, state, 1)
	// A turn against the mock can end within the first --tick; wait for
	// the first tick in the ledger before ending the session.
	for deadline := time.Now().Add(screenTimeout); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if _, rs := onlySession(t, state); lastOf(rs, "supervisor.tick") != nil {
			break
		}
	}
	testharness.ClaudeExit(t, term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /exit; output:\n%s", code, sig, term.Output())
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "claude", "completed", "exit_code_0")
	assertHarnessVersion(t, env, receipts, testharness.ClaudeBin(t))
	assertNoDrift(t, receipts)
	if lastOf(receipts, "supervisor.tick") == nil {
		t.Errorf("no supervisor.tick with --tick 1s: %v", eventsOf(receipts))
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// Claude exits 0 on SIGINT: the session must still be recorded as stopped
// by lifeloop, not as a success.
func TestRunClaudeTUISigint(t *testing.T) {
	skipShort(t)
	term, env, state := startClaudeTUIUnderLifeloop(t, "unused")
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if sig != 0 {
		t.Fatalf("lifeloop died of %v", sig)
	}
	t.Logf("lifeloop exited %d after SIGINT (the harness's own code)", code)
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "claude", "stopped", "sigint")
	if got := dig(lastOf(receipts, "session.ended"), "telemetry_summary", "outcome"); got != "cancelled" {
		t.Errorf("outcome %v, want cancelled", got)
	}
	// Claude's own SessionEnd (and a late SessionStart) hook may add
	// receipts after lifeloop's; the wrapper's ending must be among them.
	sigint := false
	for _, r := range receipts {
		if r["event"] == "session.ending" && dig(r, "telemetry_summary", "reason") == "sigint" {
			sigint = true
		}
	}
	if !sigint {
		t.Errorf("no session.ending with reason sigint: %v", eventsOf(receipts))
	}
	assertNoProcessLeft(t, env, term.Pid())
}

func TestRunCodexTUI(t *testing.T) {
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	const reply = "Interactive reply through lifeloop."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	term.Type("hello through lifeloop")
	if err := term.WaitFor("hello through lifeloop", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	testharness.CodexTurnsEnded(t, term, state, 1)
	testharness.CodexQuit(t, term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /quit; output:\n%s", code, sig, term.Output())
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "codex", "completed", "exit_code_0")
	// The codex adapter adds --no-daemon, so no detached app-server
	// outlives the session.
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("codex processes left after lifeloop exited: %+v", procs)
	}
	assertGroupGone(t, term.Pid())
}
