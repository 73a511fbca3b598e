//go:build record

package autorenew

// The recorder of testdata/<harness>.receipts.jsonl: real harness
// binaries under a real `lifeloop run`, offline against the mock model,
// each driven over 70 % of its window. It runs only on demand:
//
//	make build && go test -tags record -run TestRecord -count=1 ./autorenew
//
// (LIFELOOP_BIN names another lifeloop binary; the harnesses are those
// `make harnesses` installs, as for the end-to-end tests.)

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

const recordTimeout = 3 * time.Minute

// recordBin is the lifeloop binary the recordings run.
func recordBin(t *testing.T) string {
	if b := os.Getenv("LIFELOOP_BIN"); b != "" {
		return b
	}
	b := filepath.Join(testharness.ModuleRoot(t), "bin", "lifeloop")
	if _, err := os.Stat(b); err != nil {
		t.Fatalf("no %s: run make build first (or set LIFELOOP_BIN)", b)
	}
	return b
}

// keepLedger copies the only session's ledger under state to
// testdata/<name>.receipts.jsonl.
func keepLedger(t *testing.T, state, name string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(statedir.SessionsDir(state), "*", statedir.ReceiptsFile))
	if len(paths) != 1 {
		t.Fatalf("ledgers %v, want one", paths)
	}
	data, err := os.ReadFile(paths[0])
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join("testdata", name+".receipts.jsonl")
	if err := os.WriteFile(out, data, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d bytes)", out, len(data))
}

// TestRecordOneShots records one tool turn of each harness's one-shot
// mode: a first model request at about 55 % of the window (the tool
// call, mid-turn) and a second over 75 % (the answer).
func TestRecordOneShots(t *testing.T) {
	cases := []struct {
		name  string
		usage []mockmodel.Usage
		setup func(t *testing.T, env *testharness.HarnessEnv) []string
	}{
		{"claude", []mockmodel.Usage{
			{InputTokens: 50000, CacheReadInputTokens: 5000, OutputTokens: 100},
			{InputTokens: 3000, CacheCreationInputTokens: 2000, CacheReadInputTokens: 75000, OutputTokens: 200},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
			return []string{testharness.ClaudeBin(t), "-p", "RUN_TOOL please"}
		}},
		{"codex", []mockmodel.Usage{
			{InputTokens: 50000, OutputTokens: 100},
			{InputTokens: 75000, OutputTokens: 200},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{testharness.CodexBin(t), "exec", "--skip-git-repo-check", "-c", "model_context_window=100000", "RUN_TOOL please"}
		}},
		{"gemini", []mockmodel.Usage{
			{InputTokens: 110000, OutputTokens: 100},
			{InputTokens: 160000, OutputTokens: 200},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			// Project settings as the end-to-end telemetry tests write them.
			dir := filepath.Join(env.Dir, ".gemini")
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, "settings.json"), []byte(`{"model":{"compressionThreshold":0.2}}`), 0o600); err != nil {
				t.Fatal(err)
			}
			return []string{testharness.GeminiBin(t), "-m", testharness.GeminiModel, "--approval-mode", "yolo", "-p", "RUN_TOOL please"}
		}},
		{"opencode", []mockmodel.Usage{
			{InputTokens: 5000, OutputTokens: 50},
			{InputTokens: 7500, OutputTokens: 100},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
			return []string{testharness.OpenCodeBin(t), "run", "RUN_TOOL please"}
		}},
		{"pi", []mockmodel.Usage{
			{InputTokens: 110000, OutputTokens: 100},
			{InputTokens: 160000, OutputTokens: 200},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UsePi(t), "-p", "RUN_TOOL please"}
		}},
		{"openclaw", []mockmodel.Usage{
			{InputTokens: 110000, OutputTokens: 100},
			{InputTokens: 160000, OutputTokens: 200},
		}, func(t *testing.T, env *testharness.HarnessEnv) []string {
			return []string{env.UseOpenClaw(t), "agent", "--local", "-m", "RUN_TOOL please"}
		}},
	}
	ll := recordBin(t)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			mock, err := mockmodel.Start(mockmodel.Config{Reply: "Answered.", ToolReply: "The tool ran.", UsageSequence: c.usage, Usage: c.usage[len(c.usage)-1]})
			if err != nil {
				t.Fatal(err)
			}
			defer mock.Close()
			env := testharness.NewHarnessEnv(t, mock)
			argv := c.setup(t, env)
			state := filepath.Join(t.TempDir(), "state")
			res := env.Run(recordTimeout, ll, append([]string{"run", "--state-dir", state, "--tick", "1s", "--"}, argv...)...)
			if res.ExitCode != 0 {
				t.Fatalf("lifeloop run -- %s: exit %d\nstdout: %s\nstderr: %s", c.name, res.ExitCode, res.Stdout, res.Stderr)
			}
			keepLedger(t, state, c.name)
		})
	}
}
