package testharness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
)

// GitHub Copilot CLI (@github/copilot 1.0.102) runs offline against the
// mock's Messages API as a custom provider ("BYOK"): no GitHub login,
// COPILOT_OFFLINE=true (no lookup of anything but the provider), no update
// check. CopilotModel is a model its catalog knows (prompt limit 936 000
// unless COPILOT_PROVIDER_MAX_PROMPT_TOKENS says otherwise).
const CopilotModel = "claude-sonnet-4.6"

// CopilotBin returns the path of the pinned Copilot CLI binary (its npm
// loader), or skips the test when it is not installed (fails instead when
// CI=true).
func CopilotBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "copilot", "LIFELOOP_COPILOT_BIN")
}

// UseCopilot returns the Copilot CLI executable (or skips the test, as
// CopilotBin) and points this environment's Copilot at the mock.
func (e *HarnessEnv) UseCopilot(t testing.TB) string {
	t.Helper()
	bin := CopilotBin(t)
	for k, v := range map[string]string{
		"COPILOT_OFFLINE":                "true",
		"COPILOT_AUTO_UPDATE":            "false",
		"COPILOT_PROVIDER_BASE_URL":      e.Mock.URL(),
		"COPILOT_PROVIDER_TYPE":          "anthropic",
		"COPILOT_PROVIDER_API_KEY":       APIKey,
		"COPILOT_MODEL":                  CopilotModel,
		"COPILOT_DISABLE_TERMINAL_TITLE": "1",
	} {
		e.Setenv(k, v)
	}
	// The project folder trusted, so the TUI opens on its prompt rather
	// than the folder-trust dialog.
	cfg, err := json.Marshal(map[string]any{"trustedFolders": []string{e.Dir}})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(e.CopilotHome(), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.CopilotHome(), "config.json"), cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	// The first run of a HOME extracts Copilot's bundle (about 235 MB)
	// into its cache: one cache folder of the tests' own, outside every
	// temporary HOME, saves that per test.
	e.Setenv("COPILOT_PKG_CACHE_HOME", filepath.Join(os.TempDir(), "lifeloop-test-copilot-cache"))
	return bin
}

// CopilotHome is Copilot CLI's folder in this environment.
func (e *HarnessEnv) CopilotHome() string { return filepath.Join(e.Home, ".copilot") }

// CopilotSessions lists this environment's Copilot session files
// (session-state/<id>/events.jsonl), sorted.
func (e *HarnessEnv) CopilotSessions() []string {
	m, _ := filepath.Glob(filepath.Join(e.CopilotHome(), "session-state", "*", "events.jsonl"))
	sort.Strings(m)
	return m
}

// Copilot CLI's TUI (1.0.102) draws its banner, then its prompt's footer
// once it takes keys. It records nothing before the first prompt (the
// session file appears with it), so readiness is read from the screen:
// the one place a Copilot test names Copilot's screen text.
const (
	copilotBanner = "uses AI."   // the banner: "Copilot v1.0.102 uses AI."
	copilotReady  = "/ commands" // the footer: "… · / commands · ? help …"
)

// CopilotScreenReady waits until Copilot's TUI on term takes keys: its
// footer in the output past byte n.
func CopilotScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitBannerThen(t, term, n, copilotBanner, copilotReady, ReadyTimeout)
}

// CopilotRelaunched waits for the Copilot CLI a renewal started again on
// term: its banner past byte n, then its footer.
func CopilotRelaunched(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitBannerThen(t, term, n, copilotBanner, copilotReady, ReadyTimeout)
}
