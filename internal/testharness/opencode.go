package testharness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// OpenCode in the isolated environment (measured with opencode-ai
// 1.18.33): its configuration is $XDG_CONFIG_HOME/opencode/opencode.json,
// with one provider, "mock", served by the bundled @ai-sdk/anthropic
// package (inside the binary: nothing is installed) at the mock's
// Anthropic Messages API. At every start OpenCode also installs its plugin
// package into that folder in the background unless node_modules is there
// and package-lock.json lists what package.json asks for: the folder gets
// both and a node_modules link to the pinned harnesses, so no registry is
// ever asked (npm_config_registry points at a closed loopback port in case).

// OpenCodeModel is the model the configuration selects, provider/model.
const OpenCodeModel = "mock/mock-model"

// OpenCodeLimits are the model limits written into the configuration:
// Context is the window OpenCode shows (and lifeloop reads), Output the
// most a reply may use (OpenCode compacts at Context-Output).
type OpenCodeLimits struct{ Context, Output int }

// DefaultOpenCodeLimits are written when the environment is created.
var DefaultOpenCodeLimits = OpenCodeLimits{Context: 200000, Output: 8192}

// OpenCodeConfigDir is $XDG_CONFIG_HOME/opencode.
func (e *HarnessEnv) OpenCodeConfigDir() string {
	return filepath.Join(e.Home, ".config", "opencode")
}

// OpenCodeDataDir is $XDG_DATA_HOME/opencode, where opencode.db lives.
func (e *HarnessEnv) OpenCodeDataDir() string {
	return filepath.Join(e.Home, ".local", "share", "opencode")
}

// OpenCodeDB is OpenCode's database in this environment.
func (e *HarnessEnv) OpenCodeDB() string { return filepath.Join(e.OpenCodeDataDir(), "opencode.db") }

// SetOpenCodeLimits rewrites the configuration with the model limits l.
func (e *HarnessEnv) SetOpenCodeLimits(l OpenCodeLimits) {
	e.t.Helper()
	if err := e.writeOpenCodeConfig(l); err != nil {
		e.t.Fatal(err)
	}
}

func (e *HarnessEnv) writeOpenCodeConfig(l OpenCodeLimits) error {
	dir := e.OpenCodeConfigDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfg := map[string]any{
		"$schema":    "https://opencode.ai/config.json",
		"autoupdate": false,
		"share":      "disabled",
		"model":      OpenCodeModel,
		"provider": map[string]any{
			"mock": map[string]any{
				"npm":     "@ai-sdk/anthropic",
				"name":    "Mock",
				"options": map[string]any{"baseURL": e.Mock.URL() + "/v1", "apiKey": APIKey},
				"models": map[string]any{
					"mock-model": map[string]any{"name": "Mock Model", "limit": map[string]any{"context": l.Context, "output": l.Output}},
				},
			},
		},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "opencode.json"), b, 0o600); err != nil {
		return err
	}
	dep := `{"@opencode-ai/plugin":"` + openCodePluginVersion() + `"}`
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"dependencies":`+dep+"}\n"), 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "package-lock.json"), []byte(`{"lockfileVersion":3,"requires":true,"packages":{"":{"dependencies":`+dep+"}}}\n"), 0o600); err != nil {
		return err
	}
	nm := filepath.Join(dir, "node_modules")
	if _, err := os.Lstat(nm); err == nil {
		return nil
	}
	bins, err := HarnessBinDir()
	if err != nil {
		return err
	}
	return os.Symlink(filepath.Dir(bins), nm)
}

// openCodePluginVersion is the version of @opencode-ai/plugin installed
// beside the harness binaries (pinned or newest), so OpenCode finds what
// package.json asks for and installs nothing; 1.18.33 when unreadable.
func openCodePluginVersion() string {
	const pinned = "1.18.33"
	bins, err := HarnessBinDir()
	if err != nil {
		return pinned
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(bins), "@opencode-ai", "plugin", "package.json"))
	if err != nil {
		return pinned
	}
	var pkg struct{ Version string }
	if json.Unmarshal(b, &pkg) != nil || pkg.Version == "" {
		return pinned
	}
	return pkg.Version
}

// The screen text the OpenCode TUI helpers wait for (1.18.33): a new
// session's prompt placeholder; after a renewal, the banner the stopped
// TUI prints as it exits, then the new TUI's footer (a resumed session
// shows no placeholder); /exit's and /new's completion entries. The
// session is bound only at the first prompt, so before it the screen is
// the only evidence that the TUI takes input; these helpers are the one
// place an OpenCode test reads OpenCode's screen text.
const (
	openCodeReady      = "Ask anything"
	openCodeExitBanner = "Continue"
	openCodeFooter     = "ctrl+p"
	openCodeExitEntry  = "Exit the app"
	openCodeNewEntry   = "New session"
)

// OpenCodeScreenReady waits for the TUI's prompt in the output past byte n.
func OpenCodeScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, openCodeReady, ReadyTimeout)
}

// OpenCodeRelaunched waits for the TUI relaunched by a renewal: the
// stopped one's exit banner past byte n, then the new one's footer.
func OpenCodeRelaunched(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitBannerThen(t, term, n, openCodeExitBanner, openCodeFooter, ReadyTimeout)
}

// OpenCodeExit types /exit and, once its completion entry shows, Enter.
func OpenCodeExit(t testing.TB, term *Terminal) {
	t.Helper()
	at := len(term.Output())
	term.Type("/exit")
	waitAfter(t, term, at, openCodeExitEntry, ReadyTimeout)
	term.Type("\r")
}

// OpenCodeNewSession types /new, presses Enter once its completion entry
// shows, and waits for the new session's prompt placeholder (the session
// itself is created at the next prompt).
func OpenCodeNewSession(t testing.TB, term *Terminal) {
	t.Helper()
	at := len(term.Output())
	term.Type("/new")
	waitAfter(t, term, at, openCodeNewEntry, ReadyTimeout)
	at = len(term.Output())
	term.Type("\r")
	waitAfter(t, term, at, openCodeReady, ReadyTimeout)
}
