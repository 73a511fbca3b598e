package e2e

import (
	"regexp"
	"testing"

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
	screenPermissionAnswered(t, env, state, term, file)
}

// copilotDialog is what Copilot's permission dialog for a shell command
// asks (testdata of adapters/copilot).
var copilotDialog = regexp.MustCompile(`Do you want to run this command\?`)
