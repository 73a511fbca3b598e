package testharness

import (
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
