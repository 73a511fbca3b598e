//go:build record

package autorenew

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// tuiRecording is one harness's interactive TUI as TestRecordTUIs drives
// it under `lifeloop run`.
type tuiRecording struct {
	name string
	// usage: the first turn's, the second's (over 70 %), then every later one.
	usage [3]mockmodel.Usage
	// argv is the harness command line (after `lifeloop run ... --`).
	argv func(t *testing.T, env *testharness.HarnessEnv) []string
	// flags are more `lifeloop run` flags.
	flags []string
	// ready waits for the first TUI; relaunched for the renewal's, past
	// byte n of the output.
	ready      func(t testing.TB, term *testharness.Terminal, state string)
	relaunched func(t testing.TB, term *testharness.Terminal, n int)
}

func tokens(n int) mockmodel.Usage { return mockmodel.Usage{InputTokens: n, OutputTokens: 100} }

var tuiRecordings = []tuiRecording{
	{
		name:  "claude",
		usage: [3]mockmodel.Usage{tokens(55000), tokens(80000), tokens(15000)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
			return []string{testharness.ClaudeBin(t)}
		},
		ready: func(t testing.TB, term *testharness.Terminal, state string) {
			testharness.ClaudeStarted(t, term, state, 1)
			testharness.ClaudeScreenReady(t, term, 0)
		},
		relaunched: testharness.ClaudeScreenReady,
	},
	{
		name:  "codex",
		usage: [3]mockmodel.Usage{tokens(55000), tokens(80000), tokens(15000)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{testharness.CodexBin(t), "-c", "model_context_window=100000"}
		},
		ready:      func(t testing.TB, term *testharness.Terminal, _ string) { testharness.CodexScreenReady(t, term, 0) },
		relaunched: testharness.CodexRelaunched,
	},
	{
		name:  "gemini",
		usage: [3]mockmodel.Usage{tokens(110000), tokens(160000), tokens(30000)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			// Project settings as the end-to-end telemetry tests write
			// them: lifeloop's window for Gemini CLI is where it
			// compresses (0.2 of the model's 1 048 576 tokens), and the
			// turns stay below it.
			dir := filepath.Join(env.Dir, ".gemini")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"model":{"compressionThreshold":0.2}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{testharness.GeminiBin(t), "-m", testharness.GeminiModel}
		},
		ready:      func(t testing.TB, term *testharness.Terminal, _ string) { testharness.GeminiScreenReady(t, term, 0) },
		relaunched: testharness.GeminiScreenReady,
	},
	{
		name:  "opencode",
		usage: [3]mockmodel.Usage{tokens(5500), tokens(8000), tokens(1500)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
			return []string{testharness.OpenCodeBin(t)}
		},
		ready:      func(t testing.TB, term *testharness.Terminal, _ string) { testharness.OpenCodeScreenReady(t, term, 0) },
		relaunched: testharness.OpenCodeRelaunched,
	},
	{
		name:  "pi",
		usage: [3]mockmodel.Usage{tokens(110000), tokens(160000), tokens(30000)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UsePi(t)}
		},
		ready:      func(t testing.TB, term *testharness.Terminal, _ string) { testharness.PiScreenReady(t, term, 0) },
		relaunched: testharness.PiRelaunched,
	},
	{
		name:  "openclaw",
		usage: [3]mockmodel.Usage{tokens(110000), tokens(160000), tokens(30000)},
		argv: func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UseOpenClaw(t), "chat"}
		},
		flags:      []string{"--payload-argv-ok"},
		ready:      func(t testing.TB, term *testharness.Terminal, _ string) { testharness.OpenClawScreenReady(t, term, 0) },
		relaunched: testharness.OpenClawScreenReady,
	},
}

// TestRecordTUIs records a person's session of each harness's TUI: a
// first turn at about 55 % of the window, a second over 75 %, a fresh
// `lifeloop renew` by the person between turns, and a third turn in the
// new conversation at about 15 %; then SIGTERM ends lifeloop.
func TestRecordTUIs(t *testing.T) {
	ll := recordBin(t)
	for _, c := range tuiRecordings {
		t.Run(c.name, func(t *testing.T) {
			mock, err := mockmodel.Start(mockmodel.Config{Reply: "Answered.", UsageSequence: c.usage[:2], Usage: c.usage[2]})
			if err != nil {
				t.Fatal(err)
			}
			defer mock.Close()
			env := testharness.NewHarnessEnv(t, mock)
			argv := c.argv(t, env)
			state := filepath.Join(t.TempDir(), "state")
			args := append(append([]string{"run", "--state-dir", state, "--tick", "1s"}, c.flags...), "--")
			term := testharness.StartTerminal(t, env.Command(ll, append(args, argv...)...), 160, 50)
			c.ready(t, term, state)
			turn := func(prompt string, n int) {
				at := len(term.Output())
				term.Type(prompt)
				if err := term.WaitForAfter(at, prompt, recordTimeout); err != nil {
					t.Fatalf("%s never showed: %v", prompt, err)
				}
				time.Sleep(300 * time.Millisecond)
				term.Type("\r")
				testharness.WaitReceipts(t, term, state, "frame.ended", n, recordTimeout)
				time.Sleep(3 * time.Second) // the turn's pressure, and the time between turns
			}
			turn("first prompt 1a", 1)
			turn("second prompt 2b", 2)
			paths, _ := filepath.Glob(filepath.Join(statedir.SessionsDir(state), "*"))
			if len(paths) != 1 {
				t.Fatalf("sessions %v", paths)
			}
			before := len(term.Output())
			if res := env.Run(recordTimeout, ll, "renew", "--state-dir", state, "--fresh", filepath.Base(paths[0])); res.ExitCode != 0 {
				t.Fatalf("lifeloop renew: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
			}
			c.relaunched(t, term, before)
			time.Sleep(time.Second)
			turn("third prompt 3c", 3)
			_ = term.Signal(syscall.SIGTERM)
			if _, _, err := term.WaitTimeout(recordTimeout); err != nil {
				t.Fatalf("lifeloop did not end after SIGTERM: %v", err)
			}
			keepLedger(t, state, c.name+"-tui")
		})
	}
}

// TestRecordLevels records two Claude Code TUI turns at about 55 % and
// 72 % of the window, once with the default pressure levels (50/75/90:
// 72 % is no level change, so no receipt says it) and once with `run
// --levels 50,70,90` (autorenew.LevelsFor of 70 %).
func TestRecordLevels(t *testing.T) {
	ll := recordBin(t)
	for _, c := range []struct{ name, levels string }{{"claude-levels-default", "50,75,90"}, {"claude-levels-70", "50,70,90"}} {
		t.Run(c.name, func(t *testing.T) {
			mock, err := mockmodel.Start(mockmodel.Config{Reply: "Answered.", UsageSequence: []mockmodel.Usage{tokens(55000)}, Usage: tokens(72000)})
			if err != nil {
				t.Fatal(err)
			}
			defer mock.Close()
			env := testharness.NewHarnessEnv(t, mock)
			env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
			state := filepath.Join(t.TempDir(), "state")
			term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--levels", c.levels, "--", testharness.ClaudeBin(t)), 160, 50)
			testharness.ClaudeStarted(t, term, state, 1)
			testharness.ClaudeScreenReady(t, term, 0)
			for i, prompt := range []string{"first prompt 1a", "second prompt 2b"} {
				at := len(term.Output())
				term.Type(prompt)
				if err := term.WaitForAfter(at, prompt, recordTimeout); err != nil {
					t.Fatalf("%s never showed: %v", prompt, err)
				}
				time.Sleep(300 * time.Millisecond)
				term.Type("\r")
				testharness.WaitReceipts(t, term, state, "frame.ended", i+1, recordTimeout)
				time.Sleep(3 * time.Second)
			}
			_ = term.Signal(syscall.SIGTERM)
			if _, _, err := term.WaitTimeout(recordTimeout); err != nil {
				t.Fatalf("lifeloop did not end after SIGTERM: %v", err)
			}
			keepLedger(t, state, c.name)
		})
	}
}
