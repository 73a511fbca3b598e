//go:build record

package attention

// The Codex, Gemini CLI and OpenCode dialog recordings.

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// codexHooks are the hook events of Codex 0.169 the recording subscribes
// to (docs: shared HARNESSES.md).
var codexHooks = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SessionEnd"}

// TestRecordCodexApproval: the Codex TUI with approval on-request and a
// read-only sandbox, hooks trusted for the run; two tool calls, with the
// keys that would answer a dialog typed after each ("y", Escape); /quit.
// Codex 0.169 refuses approval_policy "untrusted", and on-request asks only
// when the model requests escalation, which the mock's exec_command call
// does not: the sandbox refuses the call and nothing is asked (recorded as
// adapters/codex/testdata/attention/codex-sandbox-denied.hooks.jsonl).
func TestRecordCodexApproval(t *testing.T) {
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Plain answer.", ToolReply: "The tool ran.", ToolCommand: "touch attention-file.txt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	log := filepath.Join(env.Home, "hooks.jsonl")
	writeHooks(t, filepath.Join(env.CodexHome, "hooks.json"), log, codexHooks)
	term := testharness.StartTerminal(t, env.Command(testharness.CodexBin(t), "--dangerously-bypass-hook-trust", "-a", "on-request", "-s", "read-only"), 120, 40)
	testharness.CodexScreenReady(t, term, 0)

	typePrompt(t, term, "RUN_TOOL allow 1")
	waitHook(t, term, log, "PreToolUse", "", 1)
	time.Sleep(3 * time.Second)
	answer(t, term, log, "y", "y")
	waitHook(t, term, log, "Stop", "", 1)
	time.Sleep(2 * time.Second)

	typePrompt(t, term, "RUN_TOOL deny 2")
	waitHook(t, term, log, "PreToolUse", "", 2)
	time.Sleep(3 * time.Second)
	answer(t, term, log, "escape", "\x1b")
	time.Sleep(5 * time.Second)
	testharness.CodexQuit(t, term)
	if _, _, err := term.WaitTimeout(recordWait); err != nil {
		t.Fatal(err)
	}
	keep(t, log, "codex-sandbox-denied.hooks.jsonl")
}

// geminiHooks are Gemini CLI 0.61's hook events (enum HookEventName).
var geminiHooks = []string{"SessionStart", "SessionEnd", "BeforeAgent", "AfterAgent", "BeforeTool", "AfterTool", "Notification"}

// addGeminiHooks adds the recording's hooks to the user settings the
// environment wrote (~/.gemini/settings.json).
func addGeminiHooks(t *testing.T, env *testharness.HarnessEnv, log string) {
	t.Helper()
	p := filepath.Join(env.Home, ".gemini", "settings.json")
	var settings, hooks map[string]any
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &settings) != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	tmp := writeHooks(t, filepath.Join(env.Home, "gemini-hooks.json"), log, geminiHooks)
	b, _ = os.ReadFile(tmp)
	var h struct{ Hooks map[string]any }
	_ = json.Unmarshal(b, &h)
	hooks = h.Hooks
	settings["hooks"] = hooks
	b, _ = json.MarshalIndent(settings, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRecordGeminiPermission: the Gemini CLI TUI in its default approval
// mode, hooks in the user settings; a `touch` tool call allowed
// with Enter, a second denied with Escape; /quit.
func TestRecordGeminiPermission(t *testing.T) {
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Plain answer.", ToolReply: "The tool ran.", ToolCommand: "touch attention-file.txt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	log := filepath.Join(env.Home, "hooks.jsonl")
	addGeminiHooks(t, env, log)
	term := testharness.StartTerminal(t, env.Command(testharness.GeminiBin(t), "-m", testharness.GeminiModel), 120, 40)
	testharness.GeminiScreenReady(t, term, 0)

	typePrompt(t, term, "RUN_TOOL allow 1")
	waitHook(t, term, log, "Notification", "ToolPermission", 1)
	time.Sleep(2 * time.Second)
	at := len(term.Output())
	answer(t, term, log, "enter", "\r")
	waitHook(t, term, log, "AfterAgent", "", 1)
	time.Sleep(2 * time.Second)

	// The TUI drops an Enter typed while it still draws the finished turn:
	// Enter again until the turn starts.
	term.Type("RUN_TOOL deny 2")
	if err := term.WaitFor("RUN_TOOL deny 2", recordWait); err != nil {
		t.Fatal(err)
	}
	for i := 0; countHook(log, "BeforeAgent", "") < 2 && i < 10; i++ {
		term.Type("\r")
		time.Sleep(2 * time.Second)
	}
	waitHook(t, term, log, "Notification", "ToolPermission", 2)
	time.Sleep(2 * time.Second)
	answer(t, term, log, "escape", "\x1b")
	time.Sleep(5 * time.Second)
	term.Type("/quit")
	time.Sleep(time.Second)
	term.Type("\r")
	if _, _, err := term.WaitTimeout(recordWait); err != nil {
		t.Fatal(err)
	}
	keep(t, log, "gemini-permission.hooks.jsonl")
	screen := testharness.StripANSI(term.Output()[:at])
	if err := os.WriteFile(recording("gemini-permission.screen.txt"), []byte(screen), 0o644); err != nil {
		t.Fatal(err)
	}
}

// openCodeEvLog is a plugin that appends every bus event its event hook
// receives to $ATTENTION_EVLOG as {"t_ms","event"}.
const openCodeEvLog = `import { appendFileSync } from "node:fs";
export const AttentionEvLog = async () => ({
  event: async ({ event }) => {
    try { appendFileSync(process.env.ATTENTION_EVLOG, JSON.stringify({ t_ms: Date.now(), event }) + "\n"); } catch (e) {}
  },
});
`

// TestRecordOpenCodePermission: the OpenCode TUI with bash set to ask and
// a plugin that logs its bus events; a `touch` allowed with Enter, a
// second rejected with Escape; /exit.
func TestRecordOpenCodePermission(t *testing.T) {
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Plain answer.", ToolReply: "The tool ran.", ToolCommand: "touch attention-file.txt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	log := filepath.Join(env.Home, "events.jsonl")
	if err := os.WriteFile(log, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	env.Setenv("ATTENTION_EVLOG", log)
	dir := env.OpenCodeConfigDir()
	cfgPath := filepath.Join(dir, "opencode.json")
	var cfg map[string]any
	b, err := os.ReadFile(cfgPath)
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("read %s: %v", cfgPath, err)
	}
	cfg["permission"] = map[string]any{"bash": "ask"}
	b, _ = json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(cfgPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "plugin"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plugin", "attention-evlog.js"), []byte(openCodeEvLog), 0o600); err != nil {
		t.Fatal(err)
	}
	term := testharness.StartTerminal(t, env.Command(testharness.OpenCodeBin(t)), 120, 40)
	testharness.OpenCodeScreenReady(t, term, 0)

	typePrompt(t, term, "RUN_TOOL allow 1")
	waitEvent(t, term, log, "permission.asked", 1)
	time.Sleep(2 * time.Second)
	at := len(term.Output())
	answer(t, term, log, "enter", "\r")
	waitEvent(t, term, log, "session.idle", 1)
	time.Sleep(2 * time.Second)

	typePrompt(t, term, "RUN_TOOL deny 2")
	waitEvent(t, term, log, "permission.asked", 2)
	time.Sleep(2 * time.Second)
	answer(t, term, log, "escape", "\x1b")
	time.Sleep(5 * time.Second)
	testharness.OpenCodeExit(t, term)
	if _, _, err := term.WaitTimeout(recordWait); err != nil {
		t.Fatal(err)
	}
	keep(t, log, "opencode-permission.events.jsonl")
	screen := testharness.StripANSI(term.Output()[:at])
	if err := os.WriteFile(recording("opencode-permission.screen.txt"), []byte(screen), 0o644); err != nil {
		t.Fatal(err)
	}
}
