package copilot

import "github.com/lifeloop/lifeloop/adapters"

// Attention (measured with 1.0.102 and the mock model): the TUI without
// --allow-all-tools asks before it runs a shell command the model asked
// for, in a dialog that reads "Do you want to run this command?"
// (testdata/attention/copilot-permission.screen.txt, TestAttentionCopilotPermission).
// That text on the screen is the one sign read. Copilot's
// permissionRequest hook is no sign of a dialog: it runs for every tool
// call before the rules decide, also for one approved without asking.
// Its session file records no dialog.

// AttentionScreen implements adapters.AttentionReader: the shell
// command's permission dialog. Other dialogs (a file edit, an MCP tool)
// were not measured and are not matched.
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Do you want to run this command?", State: adapters.AttentionNeedsPermission, Evidence: "copilot:permission-dialog"},
	}
}
