package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// topShows waits until the screen of `lifeloop top` shows text. It is the
// one place the top test waits on screen text; actions are checked in
// the ledgers.
func topShows(t *testing.T, term *testharness.Terminal, text string) {
	t.Helper()
	if err := term.WaitFor(text, screenTimeout); err != nil {
		t.Fatalf("lifeloop top never showed %q: %v", text, err)
	}
}

// waitSessionLedger waits until the ledger of session id satisfies ok.
func waitSessionLedger(t *testing.T, state, id, what string, ok func([]map[string]any) bool) []map[string]any {
	t.Helper()
	path := filepath.Join(state, "sessions", id, "receipts.jsonl")
	deadline := time.Now().Add(screenTimeout)
	for {
		if _, err := os.Stat(path); err == nil {
			if rs := readJSONL(t, path); ok(rs) {
				return rs
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("session %s: no %s in the ledger", id, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// liveSessions waits until n sessions are running and returns their ids.
func liveSessions(t testing.TB, state string, n int) []string {
	t.Helper()
	deadline := time.Now().Add(screenTimeout)
	for {
		var ids []string
		dirs, _ := filepath.Glob(filepath.Join(state, "sessions", "ses_*"))
		for _, d := range dirs {
			if data, err := os.ReadFile(filepath.Join(d, "session.json")); err == nil && strings.Contains(string(data), `"state": "running"`) {
				ids = append(ids, filepath.Base(d))
			}
		}
		if len(ids) == n {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("want %d running sessions, have %v", n, ids)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func shortID(id string) string { return id[len(id)-8:] }

// TestTopDashboard runs `lifeloop top` in a real terminal over three
// wrapped shell sessions and one interactive Claude Code session that the
// mock model drives to high context pressure (80 200 tokens of a 100 000
// window). The screen shows the four rows and the gauge at the mock's
// level; `r` with a payload file renews the Claude session (the ledger
// records the delivered payload, and the relaunched Claude's next model
// request carries it); `a` then `y` aborts a shell session (the ledger
// records its end, the record says aborted); `q` quits and leaves the
// terminal as it found it (`stty -a` before and after).
func TestTopDashboard(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Reply for top.",
		Usage: mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 2000, CacheReadInputTokens: 75000, OutputTokens: 200}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
	state := stateDir(t)

	// One Claude session, one turn: high pressure.
	claude := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, claude, state, 1)
	claudeID := liveSessions(t, state, 1)[0]
	claude.Type("first prompt 7f3a")
	if err := claude.WaitFor("first prompt 7f3a", screenTimeout); err != nil {
		t.Fatal(err)
	}
	claude.Type("\r")
	waitSessionLedger(t, state, claudeID, "high pressure", func(rs []map[string]any) bool {
		for _, r := range receiptsFor(rs, "context.pressure_observed") {
			if dig(r, "telemetry_summary", "level") == "high" && num(dig(r, "telemetry_summary", "tokens")) == 80200 {
				return true
			}
		}
		return false
	})

	// Three wrapped shell sessions, one after the other so that fakes[i]
	// is the session of shells[i].
	shells := make([]*testharness.Terminal, 3)
	fakes := make([]string, 3)
	known := map[string]bool{claudeID: true}
	for i := range shells {
		shells[i] = testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", "sh", "-c", "echo shell up; exec sleep 300"), 80, 24)
		for _, id := range liveSessions(t, state, i+2) {
			if !known[id] {
				fakes[i], known[id] = id, true
			}
		}
	}

	// top, between two `stty -a`.
	dir := t.TempDir()
	before, after := filepath.Join(dir, "stty.before"), filepath.Join(dir, "stty.after")
	top := testharness.StartTerminal(t, env.Command("sh", "-c", `stty -a > "$1"; "$2" top --state-dir "$3"; echo $? > "$4.code"; stty -a > "$4"`,
		"sh", before, ll, state, after), 160, 48)
	for _, id := range append([]string{claudeID}, fakes...) {
		topShows(t, top, shortID(id))
	}
	topShows(t, top, "80% high")
	topShows(t, top, "80.2k/100k")

	// --once prints the same rows, without colour when piped.
	once := env.Run(runTimeout, ll, "top", "--once", "--state-dir", state, "--width", "100")
	if once.ExitCode != 0 || strings.Contains(once.Stdout, "\x1b[") {
		t.Fatalf("top --once: exit %d, escape sequences %v\n%s%s", once.ExitCode, strings.Contains(once.Stdout, "\x1b["), once.Stdout, once.Stderr)
	}
	for _, id := range append([]string{claudeID}, fakes...) {
		if !strings.Contains(once.Stdout, shortID(id)) {
			t.Errorf("top --once has no row for %s:\n%s", id, once.Stdout)
		}
	}
	if !strings.Contains(once.Stdout, "80% H") || !strings.Contains(once.Stdout, "4 live") {
		t.Errorf("top --once:\n%s", once.Stdout)
	}
	t.Logf("lifeloop top --once --width 100:\n%s", once.Stdout)

	// r: renew the Claude session with a payload file, resumed.
	const secret = "TOP-RENEWAL-PAYLOAD-2b7e carry on"
	payload := writePayloadFile(t, "pay_top", secret, contract.PlacementDeveloperEquivalentFrame)
	relaunchFrom := len(claude.Output())
	n := len(mock.RequestsOfKind("claude"))
	top.Type("/" + shortID(claudeID) + "\r")
	top.Type("r")
	topShows(t, top, "payload envelope file")
	top.Type(payload + "\r")
	topShows(t, top, "[r]esumed")
	top.Type("r")
	waitSessionLedger(t, state, claudeID, "the delivered payload", func(rs []map[string]any) bool {
		for _, r := range receiptsFor(rs, "session.started") {
			if prs, _ := r["payload_receipts"].([]any); len(prs) == 1 && dig(prs[0], "payload_id") == "pay_top" && dig(prs[0], "status") == "delivered" {
				return true
			}
		}
		return false
	})
	topShows(t, top, "renewal delivered")
	// The relaunched Claude named its session: keys typed now reach it.
	waitSessionLedger(t, state, claudeID, "the relaunched Claude's session.started", func(rs []map[string]any) bool {
		return len(receiptsFor(rs, "session.started")) == 2
	})
	claude.Type("second prompt 3c9d")
	waitOutputAfter(t, claude, relaunchFrom, "second prompt 3c9d", screenTimeout)
	claude.Type("\r")
	deadline := time.Now().Add(screenTimeout)
	for carried := false; !carried; {
		for _, r := range mock.RequestsOfKind("claude")[n:] {
			if strings.Contains(string(r.Body), "second prompt 3c9d") {
				if _, ok := requestCarries(t, r.Body, secret); !ok {
					t.Fatal("the renewed Claude's model request does not carry the payload")
				}
				carried = true
			}
		}
		if !carried && time.Now().After(deadline) {
			t.Fatal("no model request from the renewed Claude session")
		}
		time.Sleep(100 * time.Millisecond)
	}
	if strings.Contains(top.Output(), secret) {
		t.Error("top showed the payload body")
	}

	// The screen follows a resize: at 80 columns the gauge carries the
	// level's initial instead of its name.
	top.Resize(80, 24)
	topShows(t, top, "80% H")
	top.Resize(160, 48) // back, for stty -a at the end

	// a: abort the first shell session, after a confirmation.
	top.Type("/" + shortID(fakes[0]) + "\r") // a new filter
	top.Type("a")
	topShows(t, top, "y/N")
	top.Type("y")
	waitSessionLedger(t, state, fakes[0], "session.ended", func(rs []map[string]any) bool {
		return len(receiptsFor(rs, "session.ended")) == 1
	})
	if rec := sessionRecord(t, state, fakes[0]); rec["state"] != "aborted" {
		t.Errorf("the aborted session's record says %v", rec["state"])
	}
	if code, sig, err := shells[0].WaitTimeout(screenTimeout); err != nil || sig != 0 || code == 0 {
		t.Errorf("the aborted session's lifeloop run: code %d signal %v (%v)", code, sig, err)
	}

	// q: top quits and the terminal is as it was.
	top.Type("q")
	topExitedRestoring(t, top, before, after, "after q")

	// End everything that is left, through lifeloop, and check nothing
	// survives.
	for _, id := range append([]string{claudeID}, fakes[1:]...) {
		if res := env.Run(runTimeout, ll, "abort", "--state-dir", state, id); res.ExitCode != 0 {
			t.Errorf("abort %s: exit %d: %s", id, res.ExitCode, res.Stderr)
		}
	}
	for _, term := range append([]*testharness.Terminal{claude, top}, shells...) {
		if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
			t.Error(err)
			_ = term.Signal(syscall.SIGKILL)
		}
		assertNoProcessLeft(t, env, term.Pid())
	}
}

// TestTopRestoresTerminalOnSIGTERM ends a running `lifeloop top` with
// SIGTERM: it exits 0, leaves the alternate screen, and `stty -a` is the
// same before and after.
func TestTopRestoresTerminalOnSIGTERM(t *testing.T) {
	ll := lifeloopBin(t)
	state := stateDir(t)
	dir := t.TempDir()
	before, after, pidFile := filepath.Join(dir, "before"), filepath.Join(dir, "after"), filepath.Join(dir, "pid")
	// The shell runs top in the background (explicitly on the terminal)
	// so that the test can signal top alone.
	cmd := exec.CommandContext(context.Background(), "sh", "-c", `stty -a > "$1"; "$2" top --state-dir "$3" </dev/tty & echo $! > "$4"; wait $!; echo $? > "$5.code"; stty -a > "$5"`,
		"sh", before, ll, state, pidFile, after)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	top := testharness.StartTerminal(t, cmd, 80, 24)
	topShows(t, top, "no sessions")
	data, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	topExitedRestoring(t, top, before, after, "after SIGTERM")
	// The output may still be on its way from the terminal after the exit.
	for deadline := time.Now().Add(10 * time.Second); !strings.Contains(string(top.RawOutput()), "\x1b[?1049l"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			raw := string(top.RawOutput())
			t.Fatalf("top did not leave the alternate screen: %q", raw[max(0, len(raw)-300):])
		}
	}
	assertGroupGone(t, top.Pid())
}

// topExitedRestoring waits for the shell around top on term to end, then
// checks that top exited 0 (the shell wrote its code to after+".code") and
// that `stty -a` after it (in after) matches the one before it (in before).
func topExitedRestoring(t *testing.T, top *testharness.Terminal, before, after, why string) {
	t.Helper()
	if code, sig, err := top.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("the shell around top %s: code %d signal %v (%v)", why, code, sig, err)
	}
	if code, _ := os.ReadFile(after + ".code"); strings.TrimSpace(string(code)) != "0" {
		t.Errorf("lifeloop top exited with %q %s", code, why)
	}
	b, errB := os.ReadFile(before)
	a, errA := os.ReadFile(after)
	if errB != nil || errA != nil || len(b) == 0 {
		t.Fatalf("stty -a: %v %v", errB, errA)
	}
	if string(a) != string(b) {
		t.Errorf("the terminal changed %s:\nbefore: %s\nafter:  %s", why, b, a)
	}
}
