package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// codexApproval is what Codex's approval dialog for a command shows.
var codexApproval = regexp.MustCompile(`Would you like to run the following command\?`)

// TestAttentionCodexPermission: with lifeloop's hooks installed in
// $CODEX_HOME/hooks.json (`host apply`: Codex runs hooks only once
// trusted, so `lifeloop run` adds none of its own) and their trust
// bypassed on the command line, the real Codex TUI under `lifeloop run`
// with approval on-request and a read-only sandbox asks before the mock's
// `touch` that requests to run outside the sandbox: its PermissionRequest
// hook, forwarded by host-hook to the wrapper, makes status say
// needs_permission from the hook, naming the tool; the answer key typed at
// the terminal makes it working (or, the turn already done, waiting for
// input), and the turn's end leaves it waiting for input. The ledger has
// no receipt of the PermissionRequest.
func TestAttentionCodexPermission(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-allowed-e07a"
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	ll := lifeloopBin(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "codex"); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if b, _ := os.ReadFile(filepath.Join(env.CodexHome, "hooks.json")); !strings.Contains(string(b), "--hook PermissionRequest") {
		t.Fatalf("hooks.json has no PermissionRequest hook:\n%s", b)
	}
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", testharness.CodexBin(t),
		"--dangerously-bypass-hook-trust", "-a", "on-request", "-s", "read-only"), 120, 40)
	testharness.CodexScreenReady(t, term, 0)
	at := len(term.Output())
	prompt := "please " + mockmodel.DefaultToolTrigger + " " + mockmodel.EscalateTrigger + " now"
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
	waitOutputMatch(t, term, at, codexApproval)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttentionFrom(t, env, state, ses, 5*time.Second, "hook", "needs_permission")
	t.Logf("needs_permission (%q) seen %s after the dialog was drawn (since %s)", a.Detail, time.Since(drawn).Round(time.Millisecond), a.Since.Format(time.StampMilli))
	if a.Source != "hook" || a.Detail == "" {
		t.Errorf("attention at the dialog: %+v, want from hook naming the tool", a)
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("y") // "Yes, proceed"
	waitAttention(t, env, state, ses, 5*time.Second, "working", "waiting_for_input")
	a = waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if a.Source != "frame" || a.WaitedSeconds < 0.3 {
		t.Errorf("attention after the turn: %+v, want waiting_for_input from the frame, having waited ≥ 0.3 s", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	noAttentionReceipt(t, receipts, "PermissionRequest")
	attentionTicked(t, receipts, "needs_permission", "hook")
}
