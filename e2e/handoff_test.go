package e2e

import (
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestHandoffRealHarnesses runs a tool turn of each real harness under
// `lifeloop run` against the mock, then `lifeloop handoff --latest`: the
// note names the session file the ledger's receipts name, and holds the
// prompt typed, the tool call the mock asked for and the mock's answer.
// The harnesses run one after the other (the machine's cores are shared).
func TestHandoffRealHarnesses(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	cases := []struct {
		adapter, prompt string
		launch          func(t *testing.T, env *testharness.HarnessEnv) []string
	}{
		{"claude", "RUN_TOOL please", func(t *testing.T, _ *testharness.HarnessEnv) []string {
			return []string{testharness.ClaudeBin(t), "-p", "RUN_TOOL please"}
		}},
		{"codex", "RUN_TOOL please", func(t *testing.T, _ *testharness.HarnessEnv) []string {
			return []string{testharness.CodexBin(t), "exec", "--skip-git-repo-check", "RUN_TOOL please"}
		}},
		{"gemini", "RUN_TOOL please", func(t *testing.T, _ *testharness.HarnessEnv) []string {
			return append([]string{testharness.GeminiBin(t)}, geminiArgs("RUN_TOOL please", "--approval-mode", "yolo")...)
		}},
		{"pi", "RUN_TOOL please", func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UsePi(t), "-p", "RUN_TOOL please"}
		}},
		{"opencode", "RUN_TOOL please", func(t *testing.T, env *testharness.HarnessEnv) []string {
			env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 100000, Output: 1000})
			// Words as separate arguments: `opencode run` quotes an
			// argument with a space when it joins them into the prompt.
			return []string{testharness.OpenCodeBin(t), "run", "RUN_TOOL", "please"}
		}},
		{"openclaw", "RUN_TOOL please", func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UseOpenClaw(t), "agent", "--local", "-m", "RUN_TOOL please"}
		}},
	}
	for _, c := range cases {
		t.Run(c.adapter, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{})
			env := testharness.NewHarnessEnv(t, mock)
			argv := c.launch(t, env)
			state := stateDir(t)
			res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--no-hooks", "--"}, argv...)...)
			if res.ExitCode != 0 {
				t.Fatalf("lifeloop run -- %s: exit %d\nstdout: %s\nstderr: %s", c.adapter, res.ExitCode, res.Stdout, res.Stderr)
			}
			_, rs := onlySession(t, state)
			file := followedFile(t, rs)
			note := env.Run(runTimeout, ll, "handoff", "--state-dir", state, "--latest")
			if note.ExitCode != 0 || note.Stderr != "" {
				t.Fatalf("lifeloop handoff: exit %d\nstdout: %s\nstderr: %s", note.ExitCode, note.Stdout, note.Stderr)
			}
			for _, want := range []string{
				"- harness: " + c.adapter + "\n",
				"- session file: " + file + "\n",
				"## Task (first prompts)\n\n> " + c.prompt + "\n",
				"## Last assistant message\n\n> ",
				"## Tool calls\n\n1 in all: ",
			} {
				if !strings.Contains(note.Stdout, want) {
					t.Errorf("note lacks %q:\n%s", want, note.Stdout)
				}
			}
			if strings.Contains(note.Stdout, "unreadable lines skipped") {
				t.Errorf("lines of the real session file were skipped:\n%s", note.Stdout)
			}
			t.Logf("%s note, %d bytes:\n%s", c.adapter, len(note.Stdout), note.Stdout)
		})
	}
}
