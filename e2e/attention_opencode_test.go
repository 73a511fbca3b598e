package e2e

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// sendOpenCodePrompt types prompt into the TUI and sends it once it is on
// the screen; it returns the output's length before the prompt.
func sendOpenCodePrompt(t *testing.T, term *testharness.Terminal, prompt string) int {
	t.Helper()
	at := len(term.Output())
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
	return at
}

// TestAttentionOpenCodePermission: the real OpenCode TUI under `lifeloop
// run`, set to ask before a shell command, opens its permission dialog
// for the mock's `touch`: the bridge plugin's permission.asked makes
// status say needs_permission from the hook, naming the permission; Enter
// (allow once) clears it (permission.replied), and the turn's end leaves
// it waiting for input. A second call rejected with Escape clears it the
// same way and the turn it ends waits for input. No receipt comes from
// the attention reports.
func TestAttentionOpenCodePermission(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	const file = "attention-allowed-41f7"
	mock := startMock(t, mockmodel.Config{ToolCommand: "touch " + file})
	env := testharness.NewHarnessEnv(t, mock)
	askBeforeBash(t, env)
	state := stateDir(t)
	term := startOpenCodeTUI(t, env, state)

	for i, answer := range []struct{ name, key string }{{"Enter", "\r"}, {"Escape", "\x1b"}} {
		at := sendOpenCodePrompt(t, term, fmt.Sprintf("please %s now %d", mockmodel.DefaultToolTrigger, i+1))
		waitOutputMatch(t, term, at, regexp.MustCompile(`(?i)permission required`))
		drawn := time.Now()
		ses, _ := onlySession(t, state)
		a := waitAttentionFrom(t, env, state, ses, 5*time.Second, "hook", "needs_permission")
		t.Logf("%s: needs_permission seen %s after the dialog was drawn", answer.name, time.Since(drawn).Round(time.Millisecond))
		if a.Source != "hook" || a.Detail != "bash" {
			t.Errorf("%s: attention at the dialog: %+v, want from hook about bash", answer.name, a)
		}
		time.Sleep(300 * time.Millisecond)
		term.Type(answer.key)
		waitAttention(t, env, state, ses, 5*time.Second, "working", "waiting_for_input")
		a = waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input")
		if a.WaitedSeconds < 0.3*float64(i+1) {
			t.Errorf("%s: attention after the turn: %+v, want ≥ %.1f s waited in all", answer.name, a, 0.3*float64(i+1))
		}
		if _, err := os.Stat(filepath.Join(env.Dir, file)); err != nil && i == 0 {
			t.Errorf("the allowed command did not run: %v", err)
		}
		if i == 0 {
			_ = os.Remove(filepath.Join(env.Dir, file))
		}
	}
	if _, err := os.Stat(filepath.Join(env.Dir, file)); err == nil {
		t.Errorf("the rejected command ran: %s exists", file)
	}
	endSafeTUI(t, env, term)
	_, receipts := onlySession(t, state)
	noAttentionReceipt(t, receipts, "attention")
	attentionTicked(t, receipts, "needs_permission", "hook")
}

// rateLimitedModel answers every model request with 429 (the Messages
// API's rate_limit_error, retry-after 1 s).
func rateLimitedModel(t *testing.T) *httptest.Server {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || r.Method == http.MethodGet {
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("retry-after", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		fmt.Fprint(w, `{"type":"error","error":{"type":"rate_limit_error","message":"mock 429"}}`)
	}))
	t.Cleanup(s.Close)
	return s
}

// TestAttentionOpenCodeError: the real OpenCode TUI under `lifeloop run`
// whose model endpoint answers 429: once OpenCode's own retries end, the
// bridge plugin's session.error makes status say stopped_on_error from
// the hook, naming the error and its status.
func TestAttentionOpenCodeError(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	cfg := filepath.Join(env.OpenCodeConfigDir(), "opencode.json")
	b, err := os.ReadFile(cfg)
	if err != nil || !strings.Contains(string(b), mock.URL()) {
		t.Fatalf("%s does not name the mock (%v)", cfg, err)
	}
	if err := os.WriteFile(cfg, []byte(strings.ReplaceAll(string(b), mock.URL(), rateLimitedModel(t).URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	state := stateDir(t)
	term := startOpenCodeTUI(t, env, state)
	sendOpenCodePrompt(t, term, "hello 429")
	sent := time.Now()
	ses, _ := onlySession(t, state)
	a := waitAttentionFrom(t, env, state, ses, 2*screenTimeout, "hook", "stopped_on_error")
	t.Logf("stopped_on_error seen %s after the prompt", time.Since(sent).Round(time.Millisecond))
	if a.Source != "hook" || a.Detail != "APIError (429)" {
		t.Errorf("attention after the retries: %+v, want from hook about APIError (429)", a)
	}
	endSafeTUI(t, env, term)
}
