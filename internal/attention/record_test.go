//go:build record

package attention

// The recorder of testdata/claude-*.hooks.jsonl: the real Claude Code TUI,
// offline, with hooks that append each payload (and the time it arrived)
// to a file. It runs only on demand:
//
//	go test -tags record -run TestRecordClaude -count=1 -v ./internal/attention
//
// (the harness is the one `make harnesses` installs, as for the
// end-to-end tests.)

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

const recordWait = 90 * time.Second

// recordedHooks are the hook events the recordings subscribe to.
var recordedHooks = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "PermissionDenied", "Notification", "Stop", "StopFailure", "SessionEnd"}

// hookSettings writes a settings file whose hooks append
// {"t_ms":<unix ms>,"stdin":<payload>} to log, one line per call.
func hookSettings(t *testing.T, dir, log string) string {
	t.Helper()
	return writeHooks(t, filepath.Join(dir, "record-settings.json"), log, recordedHooks)
}

// writeHooks writes p: hooks for events that append each call to log.
func writeHooks(t *testing.T, p, log string, events []string) string {
	t.Helper()
	cmd := fmt.Sprintf(`t=$(mktemp); { printf '{"t_ms":%%s,"stdin":' "$(date +%%s%%3N)"; tr -d '\n'; printf '}\n'; } > "$t"; cat "$t" >> %q; rm -f "$t"`, log)
	hooks := map[string]any{}
	for _, ev := range events {
		hooks[ev] = []any{map[string]any{"matcher": "*", "hooks": []any{map[string]any{"type": "command", "command": cmd}}}}
	}
	b, _ := json.Marshal(map[string]any{"hooks": hooks})
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// setIdleThreshold shortens Claude's idle notification (global config
// messageIdleNotifThresholdMs, 60 s by default) so a recording sees it.
func setIdleThreshold(t *testing.T, env *testharness.HarnessEnv, ms int) {
	t.Helper()
	p := filepath.Join(env.Home, ".claude.json")
	var cfg map[string]any
	b, err := os.ReadFile(p)
	if err != nil || json.Unmarshal(b, &cfg) != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	cfg["messageIdleNotifThresholdMs"] = ms
	b, _ = json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(p, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// hookLines reads the recorded calls.
func hookLines(log string) []map[string]any {
	data, _ := os.ReadFile(log)
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var l map[string]any
		if json.Unmarshal(sc.Bytes(), &l) == nil {
			out = append(out, l)
		}
	}
	return out
}

// countHook counts recorded calls of event (and notification_type, when
// given).
func countHook(log, event, ntype string) int {
	n := 0
	for _, l := range hookLines(log) {
		in, _ := l["stdin"].(map[string]any)
		if in["hook_event_name"] == event && (ntype == "" || in["notification_type"] == ntype) {
			n++
		}
	}
	return n
}

func waitHook(t *testing.T, term *testharness.Terminal, log, event, ntype string, n int) {
	t.Helper()
	deadline := time.Now().Add(recordWait)
	for countHook(log, event, ntype) < n {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %d× %s %s hook; hooks:\n%s\nscreen:\n%s", n, event, ntype, readFile(log), testharness.StripANSI(term.Output()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// answer types keys that answer a dialog and appends
// {"t_ms":<unix ms>,"key":name} to log, so a replay knows when the person
// answered.
func answer(t *testing.T, term *testharness.Terminal, log, name, keys string) {
	t.Helper()
	f, err := os.OpenFile(log, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(f, "{\"t_ms\":%d,\"key\":%q}\n", time.Now().UnixMilli(), name)
	f.Close()
	term.Type(keys)
}

func readFile(p string) string { b, _ := os.ReadFile(p); return string(b) }

func keep(t *testing.T, src, name string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("testdata", name)
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(data))
}

func startClaude(t *testing.T, env *testharness.HarnessEnv, log string) *testharness.Terminal {
	t.Helper()
	settings := hookSettings(t, env.Home, log)
	term := testharness.StartTerminal(t, env.Command(testharness.ClaudeBin(t), "--permission-mode", "default", "--settings", settings), 120, 40)
	testharness.ClaudeScreenReady(t, term, 0)
	waitHook(t, term, log, "SessionStart", "", 1)
	return term
}

func typePrompt(t *testing.T, term *testharness.Terminal, prompt string) {
	t.Helper()
	term.Type(prompt)
	if err := term.WaitFor(prompt, recordWait); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
}

// TestRecordClaudePermission: a tool call that needs permission, allowed
// after Claude's permission notification; the idle notification after
// the turn; a second tool call, denied with Escape; /exit.
func TestRecordClaudePermission(t *testing.T) {
	mock, err := mockmodel.Start(mockmodel.Config{Reply: "Plain answer.", ToolReply: "The tool ran.", ToolCommand: "touch attention-file.txt"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	env := testharness.NewHarnessEnv(t, mock)
	setIdleThreshold(t, env, 4000)
	log := filepath.Join(env.Home, "hooks.jsonl")
	term := startClaude(t, env, log)

	typePrompt(t, term, "RUN_TOOL allow 1")
	waitHook(t, term, log, "PermissionRequest", "", 1)
	waitHook(t, term, log, "Notification", "permission_prompt", 1)
	at := len(term.Output())
	answer(t, term, log, "enter", "\r") // "1. Yes"
	waitHook(t, term, log, "Stop", "", 1)
	waitHook(t, term, log, "Notification", "idle_prompt", 1)

	typePrompt(t, term, "RUN_TOOL deny 2")
	waitHook(t, term, log, "PermissionRequest", "", 2)
	time.Sleep(2 * time.Second)
	answer(t, term, log, "escape", "\x1b") // deny
	time.Sleep(8 * time.Second)

	testharness.ClaudeExit(t, term)
	if _, _, err := term.WaitTimeout(recordWait); err != nil {
		t.Fatal(err)
	}
	keep(t, log, "claude-permission.hooks.jsonl")
	screen := testharness.StripANSI(term.Output()[:at])
	if err := os.WriteFile(filepath.Join("testdata", "claude-permission.screen.txt"), []byte(screen), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRecordClaudeStopFailure: the model endpoint answers 429 and then
// 500 (a loopback server of this test: mockmodel has no error knob); with
// CLAUDE_CODE_MAX_RETRIES=0 each prompt ends in StopFailure.
func TestRecordClaudeStopFailure(t *testing.T) {
	mock, err := mockmodel.Start(mockmodel.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	var status atomic.Int32
	status.Store(http.StatusTooManyRequests)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead {
			return
		}
		if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.HasSuffix(r.URL.Path, "count_tokens") {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		code := int(status.Load())
		kind := map[int]string{429: "rate_limit_error", 500: "api_error", 529: "overloaded_error"}[code]
		w.Header().Set("Content-Type", "application/json")
		if code == 429 {
			w.Header().Set("retry-after", "1")
		}
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"type":"error","error":{"type":%q,"message":"mock %d"}}`, kind, code)
	}))
	t.Cleanup(failing.Close)
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("ANTHROPIC_BASE_URL", failing.URL)
	env.Setenv("CLAUDE_CODE_MAX_RETRIES", "0")
	log := filepath.Join(env.Home, "hooks.jsonl")
	term := startClaude(t, env, log)

	typePrompt(t, term, "hello 429")
	waitHook(t, term, log, "StopFailure", "", 1)
	status.Store(http.StatusInternalServerError)
	typePrompt(t, term, "hello 500")
	waitHook(t, term, log, "StopFailure", "", 2)
	time.Sleep(time.Second)
	testharness.ClaudeExit(t, term)
	if _, _, err := term.WaitTimeout(recordWait); err != nil {
		t.Fatal(err)
	}
	keep(t, log, "claude-stopfailure.hooks.jsonl")
	if ts := env.ClaudeTranscripts(); len(ts) == 1 {
		keep(t, ts[0], "claude-stopfailure.transcript.jsonl")
	} else {
		t.Errorf("transcripts %v, want one", ts)
	}
}

// codexHooks are the hook events of Codex 0.169 the recording subscribes
// to (docs: shared HARNESSES.md).
var codexHooks = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "Stop", "SessionEnd"}

// TestRecordCodexApproval: the Codex TUI with approval on-request and a
// read-only sandbox, hooks trusted for the run; two tool calls, with the
// keys that would answer a dialog typed after each ("y", Escape); /quit.
// Codex 0.169 refuses approval_policy "untrusted", and on-request asks only
// when the model requests escalation, which the mock's exec_command call
// does not: the sandbox refuses the call and nothing is asked (recorded as
// testdata/codex-sandbox-denied.hooks.jsonl).
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
	if err := os.WriteFile(filepath.Join("testdata", "gemini-permission.screen.txt"), []byte(screen), 0o644); err != nil {
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
	if err := os.WriteFile(filepath.Join("testdata", "opencode-permission.screen.txt"), []byte(screen), 0o644); err != nil {
		t.Fatal(err)
	}
}

// waitEvent waits for n bus events of type typ in log.
func waitEvent(t *testing.T, term *testharness.Terminal, log, typ string, n int) {
	t.Helper()
	count := func() int {
		k := 0
		for _, l := range hookLines(log) {
			if ev, _ := l["event"].(map[string]any); ev["type"] == typ {
				k++
			}
		}
		return k
	}
	deadline := time.Now().Add(recordWait)
	for count() < n {
		if time.Now().After(deadline) || term.Exited() {
			t.Fatalf("no %d× %s event; screen:\n%s", n, typ, testharness.StripANSI(term.Output()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// failingModel answers every model request with status (HEAD with 200):
// the model endpoint of the error recordings. Its body is each API's
// error document.
func failingModel(t *testing.T, status int) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || r.Method == http.MethodGet {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if status == http.StatusTooManyRequests {
			w.Header().Set("retry-after", "1")
		}
		w.WriteHeader(status)
		if strings.HasPrefix(r.URL.Path, "/v1beta/") {
			fmt.Fprintf(w, `{"error":{"code":%d,"message":"mock %d","status":"RESOURCE_EXHAUSTED"}}`, status, status)
			return
		}
		fmt.Fprintf(w, `{"type":"error","error":{"type":"rate_limit_error","message":"mock %d"}}`, status)
	}))
	t.Cleanup(s.Close)
	return s
}

// replaceInFile replaces old with new in the file p.
func replaceInFile(t *testing.T, p, old, new string) {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil || !bytes.Contains(b, []byte(old)) {
		t.Fatalf("%s does not hold %q (%v)", p, old, err)
	}
	if err := os.WriteFile(p, bytes.ReplaceAll(b, []byte(old), []byte(new)), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestRecordErrors: each TUI's model endpoint answers 429; a prompt; what
// its hooks or events, its files (Codex: the rollout's task_complete) and
// the end of its screen say 20 s later is kept as
// testdata/<harness>-error.{hooks,events,rollout}.jsonl and -error.screen.txt.
func TestRecordErrors(t *testing.T) {
	const settle = 20 * time.Second
	t.Run("codex", func(t *testing.T) {
		mock, _ := mockmodel.Start(mockmodel.Config{})
		t.Cleanup(func() { _ = mock.Close() })
		fail := failingModel(t, http.StatusTooManyRequests)
		env := testharness.NewHarnessEnv(t, mock)
		replaceInFile(t, filepath.Join(env.CodexHome, "config.toml"), mock.URL(), fail.URL)
		log := filepath.Join(env.Home, "hooks.jsonl")
		writeHooks(t, filepath.Join(env.CodexHome, "hooks.json"), log, append(codexHooks, "Interrupt"))
		term := testharness.StartTerminal(t, env.Command(testharness.CodexBin(t), "--dangerously-bypass-hook-trust"), 120, 40)
		testharness.CodexScreenReady(t, term, 0)
		at := len(term.Output())
		typePrompt(t, term, "hello 429")
		time.Sleep(settle)
		keepErrorRun(t, term, at, log, "codex-error.hooks.jsonl", "codex-error.screen.txt")
		var lines []string
		for _, p := range env.CodexRollouts() {
			b, _ := os.ReadFile(p)
			for _, l := range strings.Split(string(b), "\n") {
				if strings.Contains(l, `"type":"task_complete"`) {
					lines = append(lines, l)
				}
			}
		}
		writeTestdata(t, "codex-error.rollout.jsonl", strings.Join(lines, "\n")+"\n")
		testharness.CodexQuit(t, term)
		_, _, _ = term.WaitTimeout(recordWait)
	})
	t.Run("opencode", func(t *testing.T) {
		mock, _ := mockmodel.Start(mockmodel.Config{})
		t.Cleanup(func() { _ = mock.Close() })
		fail := failingModel(t, http.StatusTooManyRequests)
		env := testharness.NewHarnessEnv(t, mock)
		dir := env.OpenCodeConfigDir()
		replaceInFile(t, filepath.Join(dir, "opencode.json"), mock.URL(), fail.URL)
		log := filepath.Join(env.Home, "events.jsonl")
		_ = os.WriteFile(log, nil, 0o600)
		env.Setenv("ATTENTION_EVLOG", log)
		_ = os.MkdirAll(filepath.Join(dir, "plugin"), 0o700)
		if err := os.WriteFile(filepath.Join(dir, "plugin", "attention-evlog.js"), []byte(openCodeEvLog), 0o600); err != nil {
			t.Fatal(err)
		}
		term := testharness.StartTerminal(t, env.Command(testharness.OpenCodeBin(t)), 120, 40)
		testharness.OpenCodeScreenReady(t, term, 0)
		at := len(term.Output())
		typePrompt(t, term, "hello 429")
		time.Sleep(settle)
		keepErrorRun(t, term, at, log, "opencode-error.events.jsonl", "opencode-error.screen.txt")
		testharness.OpenCodeExit(t, term)
		_, _, _ = term.WaitTimeout(recordWait)
	})
	t.Run("gemini", func(t *testing.T) {
		mock, _ := mockmodel.Start(mockmodel.Config{})
		t.Cleanup(func() { _ = mock.Close() })
		fail := failingModel(t, http.StatusTooManyRequests)
		env := testharness.NewHarnessEnv(t, mock)
		env.Setenv("GOOGLE_GEMINI_BASE_URL", fail.URL)
		log := filepath.Join(env.Home, "hooks.jsonl")
		addGeminiHooks(t, env, log)
		term := testharness.StartTerminal(t, env.Command(testharness.GeminiBin(t), "-m", testharness.GeminiModel), 120, 40)
		testharness.GeminiScreenReady(t, term, 0)
		at := len(term.Output())
		typePrompt(t, term, "hello 429")
		time.Sleep(settle)
		keepErrorRun(t, term, at, log, "gemini-error.hooks.jsonl", "gemini-error.screen.txt")
		term.Type("/quit")
		time.Sleep(time.Second)
		term.Type("\r")
		_, _, _ = term.WaitTimeout(recordWait)
	})
}

// keepErrorRun keeps the log and the screen drawn since at.
func keepErrorRun(t *testing.T, term *testharness.Terminal, at int, log, logName, screenName string) {
	t.Helper()
	keep(t, log, logName)
	screen := testharness.StripANSI(term.Output()[at:])
	if len(screen) > 4000 { // a spinner redraws for as long as it waits
		screen = strings.ToValidUTF8(screen[len(screen)-4000:], "")
	}
	writeTestdata(t, screenName, screen)
}

func writeTestdata(t *testing.T, name, data string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote testdata/%s (%d bytes)", name, len(data))
}
