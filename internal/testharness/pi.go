package testharness

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// Pi (@mariozechner/pi-coding-agent 0.73.1, and 1.6.0 of its successor
// @earendil-works/pi-coding-agent) reads $HOME/.pi/agent: a
// custom provider "mock" in models.json (api anthropic-messages, baseUrl
// without /v1, apiKey naming the MOCK_API_KEY variable) and settings.json
// choosing it. PiContextWindow is the window the mock model declares.

// PiContextWindow is the contextWindow of the mock model in models.json.
const PiContextWindow = 200000

// PiBin returns the path of the pinned Pi binary, or skips the test when
// it is not installed (fails instead when CI=true).
func PiBin(t testing.TB) string {
	t.Helper()
	return harnessBin(t, "pi", "LIFELOOP_PI_BIN")
}

// UsePi returns the Pi executable (or skips the test, as PiBin) with
// the Node it needs on this environment's PATH (UseNodeFor): Pi 1.x,
// published as @earendil-works/pi-coding-agent, needs Node >= 22.19.
func (e *HarnessEnv) UsePi(t testing.TB) string {
	t.Helper()
	bin := PiBin(t)
	e.UseNodeFor(t, bin)
	return bin
}

// PiAgentDir is Pi's configuration folder in this environment.
func (e *HarnessEnv) PiAgentDir() string { return filepath.Join(e.Home, ".pi", "agent") }

// writePiConfig points Pi at the mock and turns off its start-up network
// use (version check, install telemetry) through settings.json; PiEnv
// adds the offline variables.
func (e *HarnessEnv) writePiConfig() error {
	dir := e.PiAgentDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	models := map[string]any{"providers": map[string]any{"mock": map[string]any{
		"baseUrl": e.Mock.URL(), "api": "anthropic-messages", "apiKey": "MOCK_API_KEY",
		"models": []any{map[string]any{
			"id": "mock-model", "name": "Mock Model", "reasoning": false, "input": []string{"text"},
			"contextWindow": PiContextWindow, "maxTokens": 8192,
			"cost": map[string]any{"input": 3, "output": 15, "cacheRead": 0.3, "cacheWrite": 3.75},
		}},
	}}}
	settings := map[string]any{"defaultProvider": "mock", "defaultModel": "mock-model", "enableInstallTelemetry": false, "quietStartup": false}
	for name, v := range map[string]any{"models.json": models, "settings.json": settings} {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// PiSettings merges kv into Pi's settings.json in this environment.
func (e *HarnessEnv) PiSettings(t testing.TB, kv map[string]any) {
	t.Helper()
	path := filepath.Join(e.PiAgentDir(), "settings.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]any{}
	if err := json.Unmarshal(b, &settings); err != nil {
		t.Fatal(err)
	}
	for k, v := range kv {
		settings[k] = v
	}
	if b, err = json.MarshalIndent(settings, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// piEnv are Pi's variables: no update check, no telemetry, no download
// of fd/ripgrep.
var piEnv = map[string]string{"PI_OFFLINE": "1", "PI_TELEMETRY": "0", "PI_SKIP_VERSION_CHECK": "1"}

// PiSessionsDir is the folder where Pi writes this environment's session
// files: $HOME/.pi/agent/sessions/--<Dir without its leading / and with
// / \ : turned into ->--.
func (e *HarnessEnv) PiSessionsDir() string {
	name := strings.NewReplacer("/", "-", "\\", "-", ":", "-").Replace(strings.TrimPrefix(e.Dir, "/"))
	return filepath.Join(e.PiAgentDir(), "sessions", "--"+name+"--")
}

// PiSessions lists the *.jsonl session files in PiSessionsDir, sorted.
func (e *HarnessEnv) PiSessions() []string {
	m, _ := filepath.Glob(filepath.Join(e.PiSessionsDir(), "*.jsonl"))
	sort.Strings(m)
	return m
}

// Pi's TUI (0.73.1) shows its editor and takes keys while extensions
// still load, and a prompt submitted then can be lost; the end of its
// footer, the provider's name, appears when init() has counted the
// available providers, its last step (HarnessEnv's environment has two:
// the mock and, through ANTHROPIC_API_KEY, Pi's built-in anthropic).
// The ledger's session.started can come from lifeloop's bridge extension,
// which runs while extensions load — before that moment — so these
// helpers read the screen: the one place a Pi test names Pi's screen text.
const piReady = "(mock) mock-model"

// piMenu is the entry Pi's command menu shows for a typed command.
var piMenu = map[string]string{"/quit": "Quit pi", "/new": "Start a new session"}

// PiScreenReady waits until Pi's TUI on term has finished starting: the
// end of its footer in the output past byte n.
func PiScreenReady(t testing.TB, term *Terminal, n int) {
	t.Helper()
	waitAfter(t, term, n, piReady, ReadyTimeout)
}

// PiRelaunched waits for the Pi a renewal started again on term: its
// start past byte n of Output, then the end of its footer after that
// start. The banner and footer alone cannot tell the new Pi from the
// old: Pi 1.x redraws its whole screen, both included, when a renewal
// stops it, and that redraw lands past n too. What only a starting Pi
// writes is piStarts; the old Pi has exited before the new one starts
// on the same terminal, so nothing of the old Pi follows it.
func PiRelaunched(t testing.TB, term *Terminal, n int) {
	t.Helper()
	deadline := time.Now().Add(ReadyTimeout)
	for {
		if at, ok := startAfter(term.RawOutput(), piStarts, n); ok {
			waitAfter(t, term, at, piReady, time.Until(deadline))
			return
		}
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("the relaunched Pi never started (no %q past byte %d of the output); terminal:\n%s", piStarts, n, tail(term.Output(), 2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// piStarts is what Pi's TUI writes as it starts and at no other time
// (0.73.1 and 1.x, pi-tui's Terminal.start: bracketed paste on; a stop
// turns it off).
const piStarts = "\x1b[?2004h"

// startAfter returns the Output offset of the first marker in raw whose
// text before it (escape sequences removed, as Output) is at least n
// long, and whether there is one.
func startAfter(raw []byte, marker string, n int) (int, bool) {
	for from := 0; ; {
		i := bytes.Index(raw[from:], []byte(marker))
		if i < 0 {
			return 0, false
		}
		if at := len(StripANSI(string(raw[:from+i]))); at >= n {
			return at, true
		}
		from += i + len(marker)
	}
}

// PiCommand types cmd (/quit or /new) and, once Pi's command menu shows
// its entry, Enter.
func PiCommand(t testing.TB, term *Terminal, cmd string) {
	t.Helper()
	entry, ok := piMenu[cmd]
	if !ok {
		t.Fatalf("PiCommand: no menu entry known for %q", cmd)
	}
	at := len(term.Output())
	term.Type(cmd)
	waitAfter(t, term, at, entry, ReadyTimeout)
	term.Type("\r")
}
