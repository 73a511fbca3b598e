package testharness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// GeminiModel is the model the end-to-end tests pass to Gemini CLI (-m):
// a concrete model skips the CLI's router request, and its window is the
// CLI's 1 048 576 tokens.
const GeminiModel = "gemini-2.5-flash"

// writeGeminiSettings writes $HOME/.gemini/settings.json: API-key auth
// (GOOGLE_GEMINI_BASE_URL alone would select the "gateway" auth type,
// which the CLI rejects with exit 41), no usage statistics, no update
// checks, no telemetry.
func (e *HarnessEnv) writeGeminiSettings() error {
	dir := filepath.Join(e.Home, ".gemini")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	settings := map[string]any{
		"security":  map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}},
		"privacy":   map[string]any{"usageStatisticsEnabled": false},
		"general":   map[string]any{"enableAutoUpdate": false, "enableAutoUpdateNotification": false},
		"telemetry": map[string]any{"enabled": false},
	}
	b, err := json.MarshalIndent(settings, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "settings.json"), b, 0o600)
}

// geminiEnv are Gemini CLI's variables: the mock as its API endpoint
// (plain HTTP is allowed for loopback), the dummy key, and the project
// folder trusted without a dialog.
func (e *HarnessEnv) geminiEnv(vars map[string]string) {
	vars["GOOGLE_GEMINI_BASE_URL"] = e.Mock.URL()
	vars["GEMINI_API_KEY"] = APIKey
	vars["GEMINI_CLI_TRUST_WORKSPACE"] = "true"
}

// GeminiChats lists Gemini CLI's chat files of this environment,
// $HOME/.gemini/tmp/<project>/chats/session-*.jsonl, sorted.
func (e *HarnessEnv) GeminiChats() []string {
	m, _ := filepath.Glob(filepath.Join(e.Home, ".gemini", "tmp", "*", "chats", "session-*.jsonl"))
	sort.Strings(m)
	return m
}

// Gemini CLI's TUI (0.61.0) takes keys once its prompt box shows the
// placeholder. Whether an earlier ledger receipt (session.started) already
// means the TUI keeps typed keys has not been measured, so before the
// first prompt the helper reads the screen: GeminiScreenReady is the one
// place a Gemini test reads Gemini's screen text. Turns end in the ledger
// (frame.ended from the chat file).
const geminiReady = "Type your message"

// GeminiScreenReady waits until the Gemini TUI on term takes input: its
// prompt placeholder in the output past byte n.
func GeminiScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, geminiReady, ReadyTimeout)
}
