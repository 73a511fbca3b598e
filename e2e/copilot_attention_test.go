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

// TestAttentionCopilotPermission: the real Copilot TUI under `lifeloop
// run`, without --allow-all-tools, asks before it runs the mock's shell
// command: status says needs_permission from the screen (the dialog's
// text; Copilot's hooks give no sign of it); the Enter that allows the
// command makes it working (or, the turn already done, waiting for
// input), the command runs, and the turn's end leaves it waiting for
// input. The ledger's ticks carry the episode.
func TestAttentionCopilotPermission(t *testing.T) {
	skipShort(t)
	const file = "attention-allowed-5b1e"
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseCopilot(t)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin), 120, 40)
	testharness.CopilotScreenReady(t, term, 0)
	at := len(term.Output())
	copilotPrompt(t, term, "please "+mockmodel.DefaultToolTrigger+" now")
	waitOutputMatch(t, term, at, copilotDialog)
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
	term.Type("\r") // "1. Yes"
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

// copilotDialog is what Copilot's permission dialog for a shell command
// asks (testdata of adapters/copilot).
var copilotDialog = regexp.MustCompile(`Do you want to run this command\?`)
