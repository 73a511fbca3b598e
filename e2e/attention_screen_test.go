package e2e

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestAttentionScreenClaude: under `lifeloop run --no-hooks` (no
// PermissionRequest hook to tell it), the real Claude TUI's permission
// dialog is seen on the screen: status says needs_permission from the
// screen, since the moment the wrapper read the dialog's text; the Enter
// that allows the call makes it working (or, the turn already done,
// waiting for input), and the dialog text repainted meanwhile does not
// open the episode again.
func TestAttentionScreenClaude(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-screen-7d2c"
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), "run", "--state-dir", state, "--no-hooks", "--",
		testharness.ClaudeBin(t), "--permission-mode", "default"), 120, 40)
	testharness.ClaudeScreenReady(t, term, 0)
	tc := safeTUIs[0]
	at := len(term.Output())
	prompt := "please " + mockmodel.DefaultToolTrigger + " now"
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	tc.send(term)
	waitOutputMatch(t, term, at, tc.dialog)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttention(t, env, state, ses, 10*time.Second, "needs_permission")
	t.Logf("needs_permission in status %s after the test's terminal showed the dialog; since = %s relative to it",
		time.Since(drawn).Round(time.Millisecond), a.Since.Sub(drawn).Round(time.Millisecond))
	if a.Source != "screen" {
		t.Errorf("attention at the dialog: %+v, want needs_permission from the screen", a)
	}
	time.Sleep(time.Second) // the TUI repaints while it waits
	if b := waitAttention(t, env, state, ses, 5*time.Second, "needs_permission"); !b.Since.Equal(a.Since) {
		t.Errorf("attention a second later %+v, want the same episode as %+v", b, a)
	}
	term.Type("\r") // "1. Yes"
	after := waitAttention(t, env, state, ses, 10*time.Second, "working", "waiting_for_input")
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
		if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
			t.Errorf("the allowed command did not run: %v", err)
		}
	}
	if after.State == "needs_permission" {
		t.Errorf("the answered dialog reopened: %+v", after)
	}
	endSafeTUI(t, env, term)
}
