package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// Generous bounds: the machines running these tests are slow and shared.
const (
	runTimeout    = 3 * time.Minute
	screenTimeout = 2 * time.Minute
)

func skipShort(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end test with a real harness; not run with -short")
	}
}

func startMock(t *testing.T, cfg mockmodel.Config) *mockmodel.Server {
	t.Helper()
	mock, err := mockmodel.Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mock.Close() })
	return mock
}

// dig walks nested maps by keys.
func dig(v any, keys ...string) any {
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

func num(v any) int {
	f, _ := v.(float64)
	return int(f)
}

func assertPrivateFile(t *testing.T, path string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %v, want 0600", path, fi.Mode().Perm())
	}
}

// assertGroupGone fails the test when process group pgid still has live
// members after a short grace period.
func assertGroupGone(t testing.TB, pgid int) {
	t.Helper()
	if left := testharness.WaitProcessGroupGone(pgid, 15*time.Second); len(left) > 0 {
		t.Errorf("process group %d still has live members after the harness exited: %v", pgid, left)
	}
}

// assertNoProcessLeft fails the test when the harness's group, or any
// process of the test's environment, is still alive after a short grace
// period: a harness's own detached helper (Codex's shell snapshot runs in
// a process group of its own) may still be finishing as the harness ends.
func assertNoProcessLeft(t testing.TB, env *testharness.HarnessEnv, pgid int) {
	t.Helper()
	assertGroupGone(t, pgid)
	deadline := time.Now().Add(15 * time.Second)
	procs := env.StrayProcesses()
	for len(procs) > 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
		procs = env.StrayProcesses()
	}
	if len(procs) > 0 {
		t.Errorf("processes left behind: %v", procs)
	}
}

var (
	plainUsage = mockmodel.Usage{InputTokens: 1234, CacheCreationInputTokens: 56, CacheReadInputTokens: 789, OutputTokens: 42, ReasoningTokens: 7}
	toolUsage  = mockmodel.Usage{InputTokens: 2001, CacheCreationInputTokens: 11, CacheReadInputTokens: 302, OutputTokens: 13, ReasoningTokens: 3}
)

func TestClaudePrintTurns(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	tests := []struct {
		name      string
		prompt    string
		usages    []mockmodel.Usage
		wantReply string
		wantTool  bool
	}{
		{"plain turn", "say hello", []mockmodel.Usage{plainUsage}, "Plain answer from the mock.", false},
		{"tool turn", "RUN_TOOL please", []mockmodel.Usage{toolUsage, plainUsage}, "Tool answer from the mock.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{Reply: "Plain answer from the mock.", ToolReply: "Tool answer from the mock.", UsageSequence: tc.usages})
			env := testharness.NewHarnessEnv(t, mock)
			res := env.Run(runTimeout, bin, "-p", tc.prompt)
			t.Logf("claude -p took %v", res.Duration)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, tc.wantReply) {
				t.Fatalf("claude -p: exit %d signal %v\nstdout: %s\nstderr: %s", res.ExitCode, res.Signal, res.Stdout, res.Stderr)
			}
			convo := mock.RequestsOfKind("claude")
			if want := len(tc.usages); len(convo) != want {
				t.Fatalf("mock saw %d conversation requests, want %d", len(convo), want)
			}
			if tc.wantTool && !strings.Contains(string(convo[1].Body), `"tool_result"`) {
				t.Errorf("second request carries no tool_result: %.500s", convo[1].Body)
			}

			transcripts := env.ClaudeTranscripts()
			if len(transcripts) != 1 {
				t.Fatalf("want one transcript in %s, found %v", env.ClaudeProjectsDir(), transcripts)
			}
			path := transcripts[0]
			assertPrivateFile(t, path)
			sessionID := strings.TrimSuffix(filepath.Base(path), ".jsonl")
			if got := convo[0].Header.Get("X-Claude-Code-Session-Id"); got != sessionID {
				t.Errorf("X-Claude-Code-Session-Id %q, transcript session %q", got, sessionID)
			}
			var usages []map[string]any
			seen := map[string]bool{}
			var sawToolUse, sawToolResult bool
			for _, line := range readJSONL(t, path) {
				if sid, ok := line["sessionId"]; ok && sid != sessionID {
					t.Errorf("line with sessionId %v in transcript %s", sid, sessionID)
				}
				raw, _ := json.Marshal(line["message"])
				switch line["type"] {
				case "assistant":
					if id, _ := dig(line, "message", "id").(string); !seen[id] {
						seen[id] = true
						usages = append(usages, dig(line, "message", "usage").(map[string]any))
					}
					sawToolUse = sawToolUse || strings.Contains(string(raw), `"name":"Bash"`)
				case "user":
					sawToolResult = sawToolResult || (strings.Contains(string(raw), `"tool_result"`) && strings.Contains(string(raw), "hi"))
				}
			}
			if len(usages) != len(tc.usages) {
				t.Fatalf("%d distinct assistant messages, want %d", len(usages), len(tc.usages))
			}
			for i, want := range tc.usages {
				got := usages[i]
				if num(got["input_tokens"]) != want.InputTokens || num(got["cache_creation_input_tokens"]) != want.CacheCreationInputTokens ||
					num(got["cache_read_input_tokens"]) != want.CacheReadInputTokens || num(got["output_tokens"]) != want.OutputTokens {
					t.Errorf("assistant message %d usage %v, mock sent %+v", i, got, want)
				}
			}
			if sawToolUse != tc.wantTool || sawToolResult != tc.wantTool {
				t.Errorf("tool_use %v, tool_result %v; want both %v", sawToolUse, sawToolResult, tc.wantTool)
			}
			if procs := env.StrayProcesses(); len(procs) > 0 {
				t.Errorf("claude -p left processes behind: %+v", procs)
			}
		})
	}
}

// TestClaudeProjectFolderNaming checks testharness.ClaudeProjectDirName
// against the real binary for working directories with '.', '_', other
// punctuation, and a path over 200 characters.
func TestClaudeProjectFolderNaming(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	tests := []struct{ name, sub string }{
		{"dots and underscores", "my_proj.v2"},
		{"spaces and punctuation", "a b+c~d@e=f,g"},
		{"long path", strings.Repeat("long_dir.", 25)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(env.Dir, tc.sub)
			if err := os.MkdirAll(dir, 0o700); err != nil {
				t.Fatal(err)
			}
			cmd := env.Command(bin, "-p", "hello")
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			if err != nil {
				t.Fatalf("claude -p in %s: %v\n%s", dir, err, out)
			}
			want := filepath.Join(env.Home, ".claude", "projects", testharness.ClaudeProjectDirName(dir))
			m, _ := filepath.Glob(filepath.Join(want, "*.jsonl"))
			if len(m) != 1 {
				all, _ := os.ReadDir(filepath.Join(env.Home, ".claude", "projects"))
				var names []string
				for _, e := range all {
					names = append(names, e.Name())
				}
				t.Fatalf("no transcript in %s; project folders: %q", want, names)
			}
		})
	}
}

func TestCodexExecTurns(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	tests := []struct {
		name      string
		prompt    string
		usages    []mockmodel.Usage
		wantReply string
		wantTool  bool
	}{
		{"plain turn", "say hello", []mockmodel.Usage{plainUsage}, "Plain answer from the mock.", false},
		{"tool turn", "RUN_TOOL please", []mockmodel.Usage{toolUsage, plainUsage}, "Tool answer from the mock.", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mock := startMock(t, mockmodel.Config{Reply: "Plain answer from the mock.", ToolReply: "Tool answer from the mock.", UsageSequence: tc.usages})
			env := testharness.NewHarnessEnv(t, mock)
			res := env.Run(runTimeout, bin, "exec", "--skip-git-repo-check", tc.prompt)
			t.Logf("codex exec took %v", res.Duration)
			if res.ExitCode != 0 || !strings.Contains(res.Stdout, tc.wantReply) {
				t.Fatalf("codex exec: exit %d signal %v\nstdout: %s\nstderr: %s", res.ExitCode, res.Signal, res.Stdout, res.Stderr)
			}
			convo := mock.RequestsOfKind("codex")
			if want := len(tc.usages); len(convo) != want {
				t.Fatalf("mock saw %d conversation requests, want %d", len(convo), want)
			}
			if tc.wantTool && !strings.Contains(string(convo[1].Body), `"function_call_output"`) {
				t.Errorf("second request carries no function_call_output: %.500s", convo[1].Body)
			}

			rollouts := env.CodexRollouts()
			if len(rollouts) != 1 {
				t.Fatalf("want one rollout under %s, found %v", env.CodexSessionsDir(), rollouts)
			}
			path := rollouts[0]
			rel, _ := filepath.Rel(env.CodexSessionsDir(), path)
			if !regexp.MustCompile(`^\d{4}/\d{2}/\d{2}/rollout-\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-[0-9a-f-]{36}\.jsonl$`).MatchString(rel) {
				t.Errorf("rollout path %s does not match YYYY/MM/DD/rollout-<ts>-<uuid>.jsonl", rel)
			}
			lines := readJSONL(t, path)
			if lines[0]["type"] != "session_meta" {
				t.Fatalf("first rollout line is %v, want session_meta", lines[0]["type"])
			}
			threadID, _ := dig(lines[0], "payload", "id").(string)
			if !strings.HasSuffix(path, threadID+".jsonl") || dig(lines[0], "payload", "cwd") != env.Dir {
				t.Errorf("session_meta id %q cwd %v; path %s, dir %s", threadID, dig(lines[0], "payload", "cwd"), path, env.Dir)
			}
			if got := convo[0].Header.Get("session-id"); got != threadID {
				t.Errorf("session-id header %q, rollout thread %q", got, threadID)
			}
			var last []map[string]any
			var sawCall, sawOutput, sawComplete bool
			for _, line := range lines {
				switch {
				case line["type"] == "event_msg" && dig(line, "payload", "type") == "token_count":
					if u, ok := dig(line, "payload", "info", "last_token_usage").(map[string]any); ok {
						if len(last) == 0 || num(last[len(last)-1]["total_tokens"]) != num(u["total_tokens"]) || len(last) < len(tc.usages) {
							last = append(last, u)
						}
					}
				case line["type"] == "event_msg" && dig(line, "payload", "type") == "task_complete":
					sawComplete = true
				case line["type"] == "response_item" && dig(line, "payload", "type") == "function_call":
					sawCall = dig(line, "payload", "name") == "exec_command"
				case line["type"] == "response_item" && dig(line, "payload", "type") == "function_call_output":
					out, _ := dig(line, "payload", "output").(string)
					sawOutput = strings.Contains(out, "hi")
				}
			}
			if !sawComplete {
				t.Error("no task_complete in the rollout")
			}
			if sawCall != tc.wantTool || sawOutput != tc.wantTool {
				t.Errorf("function_call %v, output %v; want both %v", sawCall, sawOutput, tc.wantTool)
			}
			if len(last) != len(tc.usages) {
				t.Fatalf("%d token_count records, want %d: %v", len(last), len(tc.usages), last)
			}
			for i, want := range tc.usages {
				got := last[i]
				if num(got["input_tokens"]) != want.InputTokens || num(got["cached_input_tokens"]) != want.CacheReadInputTokens ||
					num(got["output_tokens"]) != want.OutputTokens || num(got["reasoning_output_tokens"]) != want.ReasoningTokens ||
					num(got["total_tokens"]) != want.InputTokens+want.OutputTokens {
					t.Errorf("token_count %d last_token_usage %v, mock sent %+v", i, got, want)
				}
			}
			// Codex may exit before the shell snapshot it starts in the
			// background (a `bash -lc` of its own) is done; that shell ends
			// by itself (seen under load in a full -race run).
			procs := env.StrayProcesses()
			for deadline := time.Now().Add(10 * time.Second); len(procs) > 0 && time.Now().Before(deadline); procs = env.StrayProcesses() {
				time.Sleep(100 * time.Millisecond)
			}
			if len(procs) > 0 {
				t.Errorf("codex exec left processes behind: %+v", procs)
			}
		})
	}
}

func TestClaudeTUI(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	const reply = "Interactive reply from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	start := time.Now()
	term := testharness.StartTerminal(t, env.Command(bin), 120, 40)

	// The seeded ~/.claude.json must take the TUI straight to its prompt:
	// no onboarding, API-key or trust dialog.
	testharness.ClaudeScreenReady(t, term, 0)
	term.Type("hello from the test")
	if err := term.WaitFor("hello from the test", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	// Wait for the turn to end (in the transcript) before /exit.
	env.ClaudeTranscriptTurnsEnded(t, term, 1)
	testharness.ClaudeExit(t, term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("claude TUI session took %v", time.Since(start))
	if code != 0 || sig != 0 {
		t.Fatalf("claude exited with code %d signal %v after /exit; output:\n%s", code, sig, term.Output())
	}
	if len(env.ClaudeTranscripts()) != 1 {
		t.Errorf("transcripts: %v", env.ClaudeTranscripts())
	}
	assertNoProcessLeft(t, env, term.Pid())
}

func TestCodexTUI(t *testing.T) {
	skipShort(t)
	bin := testharness.CodexBin(t)
	tests := []struct {
		name     string
		args     []string
		noDaemon bool
	}{
		{"default", nil, false},
		{"no daemon", []string{"--no-daemon"}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			const reply = "Interactive reply from the mock."
			mock := startMock(t, mockmodel.Config{Reply: reply})
			env := testharness.NewHarnessEnv(t, mock)
			start := time.Now()
			term := testharness.StartTerminal(t, env.Command(bin, tc.args...), 120, 40)
			testharness.CodexScreenReady(t, term, 0)
			term.Type("hello from the test")
			if err := term.WaitFor("hello from the test", screenTimeout); err != nil {
				t.Fatal(err)
			}
			term.Type("\r")
			if err := term.WaitFor(reply, screenTimeout); err != nil {
				t.Fatal(err)
			}
			env.CodexRolloutTurnsEnded(t, term, 1)
			testharness.CodexQuit(t, term)
			code, sig, err := term.WaitTimeout(screenTimeout)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("codex TUI session took %v", time.Since(start))
			if code != 0 || sig != 0 {
				t.Fatalf("codex exited with code %d signal %v after /quit; output:\n%s", code, sig, term.Output())
			}
			if len(env.CodexRollouts()) == 0 {
				t.Errorf("no rollout under %s", env.CodexSessionsDir())
			}
			assertGroupGone(t, term.Pid())
			strays := env.StrayProcesses()
			if tc.noDaemon && len(strays) > 0 {
				t.Errorf("codex --no-daemon left processes behind: %+v", strays)
			}
			// The detached app-server daemon outlives the TUI; it is killed
			// and reported here (and by NewHarnessEnv's cleanup).
			for _, p := range env.KillStrays() {
				t.Logf("killed the detached codex daemon left by the TUI: pid %d: %s", p.PID, p.Cmdline)
			}
			if procs := env.StrayProcesses(); len(procs) > 0 {
				t.Errorf("processes still alive after kill: %+v", procs)
			}
		})
	}
}
