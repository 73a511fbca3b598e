package e2e

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// errorTurn types prompt into a harness under `lifeloop run` whose mock
// answers every model request 429, and returns the attention status
// reports once the turn stopped on the error.
func errorTurn(t *testing.T, env *testharness.HarnessEnv, mock *mockmodel.Server, term *testharness.Terminal, state, prompt string, send func(*testharness.Terminal), within time.Duration) (string, attentionJSON) {
	t.Helper()
	mock.Fail(mockmodel.Rate429, 0)
	at := len(term.Output())
	term.Type(prompt)
	if err := term.WaitForAfter(at, prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	send(term)
	ses, _ := onlySession(t, state)
	a := waitAttention(t, env, state, ses, within, "stopped_on_error")
	t.Logf("stopped_on_error after %d failed model requests: %+v", mock.Failed(), a)
	return ses, a
}

// recovers stops the mock failing and types a new prompt: the session
// works, then waits for input.
func recovers(t *testing.T, env *testharness.HarnessEnv, mock *mockmodel.Server, term *testharness.Terminal, state, ses string, send func(*testharness.Terminal)) {
	t.Helper()
	mock.Fail(mockmodel.Failure{}, 0)
	at := len(term.Output())
	term.Type("hello again")
	if err := term.WaitForAfter(at, "hello again", screenTimeout); err != nil {
		t.Fatal(err)
	}
	send(term)
	waitAttention(t, env, state, ses, screenTimeout, "working", "waiting_for_input")
	if a := waitAttention(t, env, state, ses, screenTimeout, "waiting_for_input"); a.WaitedSeconds <= 0 {
		t.Errorf("attention after the answered turn %+v: the error's wait is not counted", a)
	}
}

// TestAttentionErrorClaude: Claude Code with no retries against a model
// answering 429 stops the turn on it. With the hook bridge, its
// StopFailure hook says so (and takes over the transcript's line, which
// comes about 40 ms earlier); without hooks (--no-hooks) the transcript's
// API error line alone does, naming the kind and status. A prompt
// answered afterwards makes the session work, then wait for input.
func TestAttentionErrorClaude(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	for _, tc := range []struct {
		name   string
		args   []string
		source string
		detail []string
	}{
		{"hooks", nil, "hook", []string{"rate_limit", "rate_limit (429)"}},
		{"transcript", []string{"--no-hooks"}, "transcript", []string{"rate_limit (429)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{})
			env := testharness.NewHarnessEnv(t, mock)
			env.Setenv("CLAUDE_CODE_MAX_RETRIES", "0")
			state := stateDir(t)
			args := append([]string{"run", "--state-dir", state}, tc.args...)
			term := testharness.StartTerminal(t, env.Command(lifeloopBin(t), append(args, "--", testharness.ClaudeBin(t))...), 120, 40)
			testharness.ClaudeScreenReady(t, term, 0)
			send := safeTUIs[0].send
			ses, a := errorTurn(t, env, mock, term, state, "hello 429", send, screenTimeout)
			if a.Source != tc.source || !contains(tc.detail, a.Detail) {
				t.Errorf("attention %+v, want stopped_on_error from the %s, detail one of %q", a, tc.source, tc.detail)
			}
			recovers(t, env, mock, term, state, ses, send)
			endSafeTUI(t, env, term)
		})
	}
}

// TestAttentionErrorCodex: Codex with no request retries
// (request_max_retries = 0, the test environment's) against a model
// answering 429 ends the turn with the error in its rollout's
// task_complete, and no hook: stopped_on_error from the rollout, naming
// the kind and status. A prompt answered afterwards makes it work again.
func TestAttentionErrorCodex(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	tc := safeTUIs[1]
	term := tc.start(t, env, state)
	ses, a := errorTurn(t, env, mock, term, state, "hello 429", tc.send, screenTimeout)
	if a.Source != "transcript" || a.Detail != "response_too_many_failed_attempts (429)" {
		t.Errorf("attention %+v, want stopped_on_error from the rollout, response_too_many_failed_attempts (429)", a)
	}
	recovers(t, env, mock, term, state, ses, tc.send)
	endSafeTUI(t, env, term)
}

// TestAttentionErrorPi: Pi against a model answering 429 retries (its SDK
// twice per attempt, itself three times, 2, 4 and 8 s apart) and writes
// each attempt's error to its session file: stopped_on_error from the
// session file after the first attempt, naming the kind and status. Once
// the model answers again, a new prompt makes it work, then wait.
func TestAttentionErrorPi(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	tc := safeTUIs[4]
	if tc.name != "pi" {
		t.Fatalf("safeTUIs[4] is %s, want pi", tc.name)
	}
	term := tc.start(t, env, state)
	ses, a := errorTurn(t, env, mock, term, state, "hello 429", tc.send, screenTimeout)
	if a.Source != "transcript" || a.Detail != "rate_limit_error (429)" {
		t.Errorf("attention %+v, want stopped_on_error from the session file, rate_limit_error (429)", a)
	}
	// Pi's own retries end (about 14 s after the first error) before a
	// prompt is taken again.
	mock.Fail(mockmodel.Failure{}, 0)
	time.Sleep(20 * time.Second)
	recovers(t, env, mock, term, state, ses, tc.send)
	endSafeTUI(t, env, term)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
