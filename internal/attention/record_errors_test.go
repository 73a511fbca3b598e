//go:build record

package attention

// The error recordings: a model endpoint that answers 429.

import (
	"bytes"
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

// failingModel answers every model request with status (HEAD with 200):
// the model endpoint of the error recordings. Its body is each API's
// error document.
func failingModel(t *testing.T, status int) *httptest.Server {
	s, _ := countingFailingModel(t, status)
	return s
}

// countingFailingModel is failingModel with the count of model requests
// it answered.
func countingFailingModel(t *testing.T, status int) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead || r.Method == http.MethodGet {
			return
		}
		n.Add(1)
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
	return s, &n
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
// adapters/<harness>/testdata/attention/<harness>-error.{hooks,events,rollout}.jsonl and -error.screen.txt.
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

// TestRecordGeminiRetriesEnd: Gemini CLI with its model endpoint answering
// 429 until its retries end (up to 10 attempts, 5 s to 30 s apart: minutes),
// or 7 minutes; what its hooks and the end of its screen then say is kept
// as adapters/gemini/testdata/attention/gemini-error-end.hooks.jsonl and .screen.txt.
func TestRecordGeminiRetriesEnd(t *testing.T) {
	mock, _ := mockmodel.Start(mockmodel.Config{})
	t.Cleanup(func() { _ = mock.Close() })
	fail, requests := countingFailingModel(t, http.StatusTooManyRequests)
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("GOOGLE_GEMINI_BASE_URL", fail.URL)
	log := filepath.Join(env.Home, "hooks.jsonl")
	addGeminiHooks(t, env, log)
	term := testharness.StartTerminal(t, env.Command(testharness.GeminiBin(t), "-m", testharness.GeminiModel), 120, 40)
	testharness.GeminiScreenReady(t, term, 0)
	at := len(term.Output())
	typePrompt(t, term, "hello 429")
	begin := time.Now()
	for time.Since(begin) < 7*time.Minute && countHook(log, "AfterAgent", "") == 0 && !strings.Contains(screenSince(term, at), "✕") {
		time.Sleep(time.Second)
	}
	time.Sleep(3 * time.Second)
	t.Logf("%d model requests in %v", requests.Load(), time.Since(begin).Round(time.Second))
	keepErrorRun(t, term, at, log, "gemini-error-end.hooks.jsonl", "gemini-error-end.screen.txt")
	term.Type("/quit")
	time.Sleep(time.Second)
	term.Type("\r")
	_, _, _ = term.WaitTimeout(recordWait)
}

// screenSince is the screen drawn since byte at, escapes stripped.
func screenSince(term *testharness.Terminal, at int) string {
	return testharness.StripANSI(term.Output()[at:])
}
