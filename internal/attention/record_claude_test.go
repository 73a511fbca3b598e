//go:build record

package attention

// The Claude Code recordings: a permission dialog, the idle notification,
// StopFailure.

import (
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

// recordedHooks are the hook events the recordings subscribe to.
var recordedHooks = []string{"SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PermissionRequest", "PermissionDenied", "Notification", "Stop", "StopFailure", "SessionEnd"}

// hookSettings writes a settings file whose hooks append
// {"t_ms":<unix ms>,"stdin":<payload>} to log, one line per call.
func hookSettings(t *testing.T, dir, log string) string {
	t.Helper()
	return writeHooks(t, filepath.Join(dir, "record-settings.json"), log, recordedHooks)
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

func startClaude(t *testing.T, env *testharness.HarnessEnv, log string) *testharness.Terminal {
	t.Helper()
	settings := hookSettings(t, env.Home, log)
	term := testharness.StartTerminal(t, env.Command(testharness.ClaudeBin(t), "--permission-mode", "default", "--settings", settings), 120, 40)
	testharness.ClaudeScreenReady(t, term, 0)
	waitHook(t, term, log, "SessionStart", "", 1)
	return term
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
	if err := os.WriteFile(recording("claude-permission.screen.txt"), []byte(screen), 0o644); err != nil {
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
