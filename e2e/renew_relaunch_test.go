package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// dieOnSecondStart writes an executable named name into a new folder: it
// runs real, except on its second start (a `--version` does not count),
// where it exits 42 at once, as Gemini CLI did when a second gemini had
// deleted the conversation the relaunch resumed.
func dieOnSecondStart(t *testing.T, name, real string) string {
	t.Helper()
	dir := t.TempDir()
	count := filepath.Join(dir, "starts")
	script := "#!/bin/sh\n" +
		"[ \"$1\" = --version ] && exec '" + real + "' \"$@\"\n" +
		"n=$(( $(cat '" + count + "' 2>/dev/null || echo 0) + 1 ))\n" +
		"echo $n > '" + count + "'\n" +
		"[ $n = 2 ] && { echo 'relaunch refused' >&2; exit 42; }\n" +
		"exec '" + real + "' \"$@\"\n"
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRenewRelaunchThatDiesIsAFailedRenewal: the real Codex, relaunched
// by `renew --fresh --note`, exits 42 at once. renew exits 1 saying so
// (adapter_unavailable, the exit code); the ledger has the relaunch's
// failed session.ended (renewal_step relaunch_failed); renewal status is
// failed with the note still stored; and the session goes on: Codex runs
// again as it was launched and answers a prompt, and `run` is not ended
// by the relaunch's exit 42.
func TestRenewRelaunchThatDiesIsAFailedRenewal(t *testing.T) {
	skipShort(t)
	bin := dieOnSecondStart(t, "codex", testharness.CodexBin(t))
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Answered through lifeloop."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	ses, _ := onlySession(t, state)

	note := filepath.Join(t.TempDir(), "handoff.md")
	if err := os.WriteFile(note, []byte("# handoff\ncarry on\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	before := len(term.Output())
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", "--note", note, ses)
	if res.ExitCode != 1 || !strings.Contains(res.Stderr, "adapter_unavailable") || !strings.Contains(res.Stderr, "exit code 42") {
		t.Fatalf("renew: exit %d, want 1 saying the relaunch exited 42\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	t.Logf("renew said: %s", strings.TrimSpace(res.Stderr))

	// The session goes on: Codex as it was launched takes a prompt.
	testharness.CodexRelaunched(t, term, before)
	at := len(term.Output())
	term.Type("after the failed renewal 5e2b")
	waitOutputAfter(t, term, at, "after the failed renewal 5e2b", screenTimeout)
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
	testharness.CodexTurnsEnded(t, term, state, 1)
	if term.Exited() {
		t.Fatalf("lifeloop run ended after the relaunch died:\n%s", tailText(term.Output(), 2000))
	}

	status := env.Run(runTimeout, ll, "renewal", "status", "--json", "--state-dir", state, ses)
	var st renewal.Status
	if err := json.Unmarshal([]byte(status.Stdout), &st); err != nil {
		t.Fatalf("renewal status: %v\n%s", err, status.Stdout)
	}
	if st.State != renewal.StateFailed || st.LastError == nil || !strings.Contains(st.LastError.Message, "exit code 42") || !st.PayloadPending {
		t.Errorf("renewal status %+v, want failed, saying why, the note still pending", st)
	}
	_, rs := onlySession(t, state)
	var steps []string
	for _, r := range rs {
		if step, ok := dig(r, "telemetry_summary", "renewal_step").(string); ok {
			steps = append(steps, r["event"].(string)+"/"+step+"/"+r["status"].(string))
		}
	}
	joined := strings.Join(steps, " ")
	if !strings.Contains(joined, "session.ended/relaunch_failed/failed") || !strings.Contains(joined, "session.started/fallback_started/") {
		t.Errorf("renewal steps in the ledger: %s", joined)
	}
	endSafeTUI(t, env, term)
	if code, _ := term.Wait(); code == 42 {
		t.Errorf("lifeloop run exited %d: the dead relaunch's code", code)
	}
	if rec, err := statedir.ReadSession(state, ses); err != nil || rec.Exit == nil || rec.Exit.Code == 42 {
		t.Errorf("session.json after the end: %+v %v", rec.Exit, err)
	}
}

// TestCodexRenewReturnsWhenItTakesKeys: `renew` answers once the
// relaunched Codex takes keys, not when it names its session. A resume
// binds at once (the thread it resumes is on its command line): its
// session.started is never held. A fresh Codex names its session only
// with its first prompt: renew has answered before its session.started is
// recorded. The figures (renew's duration beside the time to the typed
// keys being drawn) are logged, not asserted.
func TestCodexRenewReturnsWhenItTakesKeys(t *testing.T) {
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Answered through lifeloop."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	term.Type("first prompt 3c9d")
	waitOutputAfter(t, term, 0, "first prompt 3c9d", screenTimeout)
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
	turns := 1
	testharness.CodexTurnsEnded(t, term, state, turns)
	ses, _ := onlySession(t, state)
	logPath := statedir.LogPath(state, ses)

	for _, kind := range []string{"--resume", "--fresh"} {
		_, rs := onlySession(t, state)
		startedBefore := len(receiptsFor(rs, "session.started"))
		logBefore, _ := os.ReadFile(logPath)
		before := len(term.Output())
		start := time.Now()
		done := startRenew(t, env, ll, state, ses, kind)
		typed := "typed during " + strings.TrimPrefix(kind, "--")
		term.Type(typed)
		if !outputAfter(term, before, typed, screenTimeout) {
			t.Fatalf("%s: the keys typed during the renewal never showed:\n%s", kind, tailText(term.Output(), 1500))
		}
		drawn := time.Since(start)
		if err := <-done; err != nil {
			t.Fatalf("renew %s: %v", kind, err)
		}
		returned := time.Since(start)
		_, rs = onlySession(t, state)
		startedAtReturn := len(receiptsFor(rs, "session.started"))
		logData, _ := os.ReadFile(logPath)
		heldAfter := strings.Count(string(logData[len(logBefore):]), "session.started held")
		t.Logf("%s: renew returned after %v; the typed keys were drawn after %v", kind, returned.Round(time.Millisecond), drawn.Round(time.Millisecond))
		switch kind {
		case "--resume":
			if heldAfter != 0 {
				t.Errorf("the resumed Codex's session.started was held (it resumes the thread its command line names):\n%s", logData[len(logBefore):])
			}
			if startedAtReturn != startedBefore+1 {
				t.Errorf("%d session.started when the resume returned, want %d", startedAtReturn, startedBefore+1)
			}
		case "--fresh":
			if startedAtReturn != startedBefore {
				t.Errorf("the fresh Codex's session.started was recorded before renew returned: renew waited for the session to be named")
			}
		}
		time.Sleep(250 * time.Millisecond)
		term.Type("\r")
		turns++
		testharness.CodexTurnsEnded(t, term, state, turns)
	}
	endSafeTUI(t, env, term)
}
