package e2e

import (
	"regexp"
	"testing"

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
	screenPermissionAnswered(t, env, state, term, file)
}
