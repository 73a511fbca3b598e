package testharness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// Qwen Code (@qwen-code/qwen-code 0.24.4, Node >= 22) runs offline
// against the mock's Messages API through its Anthropic provider, which
// ANTHROPIC_API_KEY, ANTHROPIC_MODEL and ANTHROPIC_BASE_URL select
// together (no login). QwenModel is a model whose window Qwen Code
// knows: 200 000 tokens.
const QwenModel = "claude-sonnet-4-5"

// QwenContextWindow is the contextWindowSize Qwen Code records for
// QwenModel.
const QwenContextWindow = 200000

// QwenBin returns the path of the pinned Qwen Code binary, or skips the
// test when it is not installed (fails instead when CI=true).
func QwenBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "qwen", "LIFELOOP_QWEN_BIN")
}

// UseQwen returns the Qwen Code executable (or skips the test, as
// QwenBin) with the Node it needs on this environment's PATH
// (UseNodeFor), points it at the mock and turns off its update checks,
// usage statistics and telemetry (~/.qwen/settings.json).
func (e *HarnessEnv) UseQwen(t testing.TB) string {
	t.Helper()
	bin := QwenBin(t)
	e.UseNodeFor(t, bin)
	e.Setenv("ANTHROPIC_MODEL", QwenModel)
	settings := map[string]any{
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "disableAutoUpdate": true, "disableUpdateNag": true},
		"telemetry": map[string]any{"enabled": false},
	}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.QwenHome(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.QwenHome(), "settings.json"), b, 0o600); err != nil {
		t.Fatal(err)
	}
	return bin
}

// QwenHome is Qwen Code's folder in this environment.
func (e *HarnessEnv) QwenHome() string { return filepath.Join(e.Home, ".qwen") }

// QwenSessions lists this environment's Qwen Code session files
// (projects/<project>/chats/<id>.jsonl), sorted.
func (e *HarnessEnv) QwenSessions() []string {
	m, _ := filepath.Glob(filepath.Join(e.QwenHome(), "projects", "*", "chats", "*.jsonl"))
	sort.Strings(m)
	return m
}

// Qwen Code's TUI (0.24.4) takes keys once its prompt box shows the
// placeholder (the text Gemini CLI's shows too); before the first prompt
// nothing is in the ledger to wait for, so the helper reads the screen:
// the one place a Qwen test names Qwen Code's screen text.
const qwenReady = "Type your message"

// QwenScreenReady waits until the Qwen Code TUI on term takes input: its
// prompt placeholder in the output past byte n.
func QwenScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, qwenReady, ReadyTimeout)
}
