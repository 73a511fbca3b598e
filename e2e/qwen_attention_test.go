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

// TestAttentionQwenPermission: Qwen Code's TUI in its default approval
// mode under lifeloop, the mock asking for a `touch`: the dialog drawn
// is needs_permission from the screen while the command has not run;
// Enter (its first choice, "Yes, allow once") → working or
// waiting_for_input, the command runs, and the turn's end →
// waiting_for_input from the frame; the ledger's ticks carry the
// episode.
func TestAttentionQwenPermission(t *testing.T) {
	skipShort(t)
	const file = "attention-allowed-9c3e"
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseQwen(t)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin, "--approval-mode", "default"), 120, 40)
	testharness.QwenScreenReady(t, term, 0)
	const prompt = "please " + mockmodel.DefaultToolTrigger + " now"
	at := len(term.Output())
	term.Type(prompt)
	waitOutputAfter(t, term, at, prompt, screenTimeout)
	qwenEnter(term)
	waitOutputMatch(t, term, at, qwenDialog)
	drawn := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttention(t, env, state, ses, 10*time.Second, "needs_permission")
	t.Logf("needs_permission in status %s after the test's terminal showed the dialog", time.Since(drawn).Round(time.Millisecond))
	if a.Source != "screen" {
		t.Errorf("attention at the dialog: %+v, want needs_permission from the screen", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
		t.Fatal("the command ran before it was allowed")
	}
	time.Sleep(300 * time.Millisecond)
	term.Type("\r") // "1. Yes, allow once"
	after := waitAttention(t, env, state, ses, 10*time.Second, "working", "waiting_for_input")
	if after.State == "needs_permission" {
		t.Errorf("the answered dialog reopened: %+v", after)
	}
	a = waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
	if a.Source != "frame" {
		t.Errorf("attention after the turn: %+v, want waiting_for_input from the frame", a)
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	attentionTicked(t, receipts, "needs_permission", "screen")
}
