package e2e

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// geminiArgs is a headless Gemini CLI command line against the mock's
// model (no router request) with prompt.
func geminiArgs(prompt string, extra ...string) []string {
	return append([]string{"-m", testharness.GeminiModel}, append(extra, "-p", prompt)...)
}

// TestRunGeminiPrompt wraps `gemini -p`: the mock's answer on the
// terminal, the session lifecycle in the ledger, one model request, no
// process left.
func TestRunGeminiPrompt(t *testing.T) {
	skipShort(t)
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := filepath.Join(t.TempDir(), "state")
	res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--", bin}, geminiArgs("say hello")...)...)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- gemini -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if n := len(mock.RequestsOfKind(mockmodel.KindGemini)); n != 1 {
		t.Errorf("%d conversation requests, want 1", n)
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "gemini", "completed", "exit_code_0")
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}
