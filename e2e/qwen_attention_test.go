package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// qwenDialog is what Qwen Code's permission dialog for the mock's shell
// command asks (testdata of adapters/qwen).
var qwenDialog = regexp.MustCompile(`Allow execution of: 'touch'\?`)

// startQwenDialog starts Qwen Code's TUI in its default approval mode
// under `lifeloop run` with extra run options, the mock asking for a
// `touch` of file, and sends the prompt that opens the shell command's
// permission dialog; it returns once the dialog is drawn.
func startQwenDialog(t *testing.T, file string, runOpts ...string) (*testharness.HarnessEnv, string, *testharness.Terminal) {
	t.Helper()
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state := stateDir(t)
	args := append(append([]string{"run", "--state-dir", state, "--tick", "1s"}, runOpts...), "--", bin, "--approval-mode", "default")
	term := testharness.StartTerminal(t, env.Command(ll, args...), 120, 40)
	testharness.QwenScreenReady(t, term, 0)
	const prompt = "please " + mockmodel.DefaultToolTrigger + " now"
	at := len(term.Output())
	term.Type(prompt)
	waitOutputAfter(t, term, at, prompt, screenTimeout)
	qwenEnter(term)
	waitOutputMatch(t, term, at, qwenDialog)
	return env, state, term
}

// TestAttentionQwenPermission: Qwen Code's TUI in its default approval
// mode under lifeloop without the hook bridge (--no-hooks), the mock
// asking for a `touch`: the dialog drawn is needs_permission from the
// screen while the command has not run; Enter (its first choice, "Yes,
// allow once") → working or waiting_for_input, the command runs, and
// the turn's end → waiting_for_input from the frame; the ledger's ticks
// carry the episode.
func TestAttentionQwenPermission(t *testing.T) {
	skipShort(t)
	const file = "attention-allowed-9c3e"
	env, state, term := startQwenDialog(t, file, "--no-hooks")
	screenPermissionAnswered(t, env, state, term, file)
}

// TestAttentionQwenPermissionHook: the same dialog under the hook bridge:
// the Notification hook (permission_prompt) tells needs_permission,
// naming the tool, within a few seconds of the dialog (taking the
// episode over from the screen if the screen told it first); Enter
// answers it, the command runs, the turn's end leaves the session
// waiting for input; the Notification hook has no receipt of its own.
func TestAttentionQwenPermissionHook(t *testing.T) {
	skipShort(t)
	const file = "attention-allowed-4e7b"
	env, state, term := startQwenDialog(t, file)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttentionFrom(t, env, state, ses, 10*time.Second, "hook", "needs_permission")
	t.Logf("needs_permission from the %s %s after the dialog was drawn", a.Source, time.Since(drawn).Round(time.Millisecond))
	if a.Source != "hook" || a.Detail != "Qwen Code needs your permission to use run_shell_command" {
		t.Errorf("attention at the dialog: %+v, want from the hook about run_shell_command", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
		t.Fatal("the command ran before it was allowed")
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("\r") // the first choice: allow once
	waitAttention(t, env, state, ses, 10*time.Second, "working", "waiting_for_input")
	waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	noAttentionReceipt(t, receipts, "Notification")
	attentionTicked(t, receipts, "needs_permission", "hook")
}
