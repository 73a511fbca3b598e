package qwen

import "github.com/lifeloop/lifeloop/adapters"

// Attention (measured with 0.24.4 and the mock model): the TUI in its
// default approval mode (--approval-mode default; the out-of-the-box
// mode is "auto", where a classifier may approve a command unasked)
// asks before it runs a shell command the model asked for, in a dialog
// that reads "Allow execution of: '<command>'?"
// (testdata/attention/qwen-permission.screen.txt,
// TestAttentionQwenPermission). That text on the screen is the one sign
// read: the hooks are not bridged (qwen.go), and the session file
// records no dialog. Other dialogs (a file edit, an MCP tool's "Allow
// execution of MCP tool …") were not measured and are not matched; the
// texts are the English ones (Qwen Code translates them).

// AttentionScreen implements adapters.AttentionReader: the shell
// command's permission dialog.
func (Harness) AttentionScreen() []adapters.AttentionScreenRule {
	return []adapters.AttentionScreenRule{
		{Text: "Allow execution of: '", State: adapters.AttentionNeedsPermission, Evidence: "qwen:shell-confirmation"},
	}
}
