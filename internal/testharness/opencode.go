package testharness

import (
	"encoding/json"
	"os"
	"path/filepath"
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
	const dep = `{"@opencode-ai/plugin":"1.18.33"}`
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
	root, err := findModuleRoot()
	if err != nil {
		return err
	}
	return os.Symlink(filepath.Join(root, "harnesses", "node_modules"), nm)
}
