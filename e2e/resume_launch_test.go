package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// Sessions resumed at launch: `lifeloop run -- <harness> <resume>` follows
// the harness session the command line continues (by id, or the
// harness's latest for "continue") from its current end: the binding
// names that session's file, its earlier turns are not reported again,
// and the turn the launch adds gets frames and pressure (from the level
// the earlier turns left).

// runResumed runs `lifeloop run -- bin args...` in a state folder of its
// own and returns the session's receipts; it must complete.
func runResumed(t *testing.T, env *testharness.HarnessEnv, adapter, bin string, args ...string) []map[string]any {
	t.Helper()
	state := stateDir(t)
	argv := append([]string{"run", "--state-dir", state, "--tick", "0", "--", bin}, args...)
	res := env.Run(runTimeout, lifeloopBin(t), argv...)
	if res.ExitCode != 0 {
		t.Fatalf("lifeloop run %v: exit %d\nstdout: %s\nstderr: %s", args, res.ExitCode, res.Stdout, res.Stderr)
	}
	id, rs := onlySession(t, state)
	if os.Getenv("LIFELOOP_E2E_DEBUG") != "" {
		b, _ := os.ReadFile(filepath.Join(state, "sessions", id, "lifeloop.log"))
		t.Logf("%v\n%s", args, b)
	}
	assertSessionLifecycle(t, rs, adapter, "completed", "exit_code_0")
	return rs
}

// assertResumed checks a resumed launch's receipts: every receipt from
// the binding on carries sid, the telemetry binding (when the telemetry
// bound first) names path, no capability was lost, exactly one top-level
// turn was recorded, and the pressure receipts of the telemetry are
// want, each read from path.
func assertResumed(t *testing.T, rs []map[string]any, sid, path string, want []wantPressure) {
	t.Helper()
	bound := false
	for _, r := range rs {
		if r["harness_session_id"] == sid {
			bound = true
		} else if bound {
			t.Errorf("%s #%v has harness_session_id %v, want %s", r["event"], r["sequence"], r["harness_session_id"], sid)
		}
		if r["event"] == "session.started" && dig(r, "telemetry_summary", "binding") != nil && dig(r, "telemetry_summary", "source") != "hook" {
			if p := dig(r, "telemetry_summary", "path"); p != path {
				t.Errorf("binding to %v, want %s", p, path)
			}
		}
		if r["event"] == "capability.degraded" {
			t.Errorf("capability.degraded: %s", toJSON(r["telemetry_summary"]))
		}
	}
	if !bound {
		t.Fatalf("no receipt carries harness session %s: %s", sid, describeStream(rs))
	}
	for _, ev := range []string{"frame.opening", "frame.opened", "frame.ending", "frame.ended"} {
		n := 0
		for _, r := range receiptsFor(rs, ev) {
			if dig(r, "telemetry_summary", "parent_frame_id") == nil {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d top-level %s, want 1 (the resumed launch's turn): %v", n, ev, eventsOf(rs))
		}
	}
	var got []map[string]any
	for _, r := range receiptsFor(rs, "context.pressure_observed") {
		if src := dig(r, "telemetry_summary", "source"); src != "hook" {
			got = append(got, r)
		}
	}
	var desc []string
	for _, r := range got {
		desc = append(desc, toJSON(r["telemetry_summary"]))
	}
	if len(got) != len(want) {
		t.Fatalf("got %d pressure receipts, want %d:\n%s", len(got), len(want), strings.Join(desc, "\n"))
	}
	for i, w := range want {
		s := got[i]["telemetry_summary"]
		if num(dig(s, "tokens")) != w.tokens || num(dig(s, "window")) != w.window || dig(s, "level") != w.level || dig(s, "previous_level") != w.prev {
			t.Errorf("pressure %d: %s, want tokens %d window %d %s → %s", i, toJSON(s), w.tokens, w.window, w.prev, w.level)
		}
		if p, _ := dig(s, "path").(string); p != path {
			t.Errorf("pressure %d read from %v, want %s", i, dig(s, "path"), path)
		}
	}
}

// TestRunOpenCodeResumedAtLaunch: `opencode run -c` (the latest session
// of the folder) and `opencode run -s ID` under lifeloop run are followed
// in OpenCode's database from the session's current end: 5107 (moderate,
// history) → 7620 (high) → 2120 (low).
func TestRunOpenCodeResumedAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 100, CacheCreationInputTokens: 2000, CacheReadInputTokens: 3000, OutputTokens: 7},
		{InputTokens: 7000, CacheReadInputTokens: 600, OutputTokens: 20},
		{InputTokens: 2100, OutputTokens: 20},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	if res := env.Run(runTimeout, bin, "run", "first", "turn"); res.ExitCode != 0 {
		t.Fatalf("opencode exited %d: %s", res.ExitCode, res.Stderr)
	}
	sid, _ := openCodeTurns(t, env)
	path := env.OpenCodeDB() + "#" + sid
	rs := runResumed(t, env, "opencode", bin, "run", "-c", "second", "turn")
	assertResumed(t, rs, sid, path, []wantPressure{{7620, 10000, "high", "moderate"}})
	rs = runResumed(t, env, "opencode", bin, "run", "-s", sid, "third", "turn")
	assertResumed(t, rs, sid, path, []wantPressure{{2120, 10000, "low", "high"}})
	if _, turns := openCodeTurns(t, env); len(turns) != 3 {
		t.Errorf("OpenCode turns %v, want 3 in one session", turns)
	}
}

// TestRunClaudeResumedAtLaunch: `claude -p -c` (the folder's latest
// conversation) and `claude -p --resume ID` under lifeloop run are
// followed in the conversation's transcript from its current end:
// 55100 (moderate, history) → 80200 (high) → 20100 (low) of 100 000.
func TestRunClaudeResumedAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, CacheReadInputTokens: 5000, OutputTokens: 100},
		{InputTokens: 80000, OutputTokens: 200},
		{InputTokens: 20000, OutputTokens: 100},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
	if res := env.Run(runTimeout, bin, "-p", "first turn"); res.ExitCode != 0 {
		t.Fatalf("claude exited %d: %s", res.ExitCode, res.Stderr)
	}
	transcript := onlyOne(t, "transcript", env.ClaudeTranscripts())
	_, sid := claudePromptIDs(t, transcript)
	rs := runResumed(t, env, "claude", bin, "-p", "-c", "second turn")
	assertResumed(t, rs, sid, transcript, []wantPressure{{80200, 100000, "high", "moderate"}})
	rs = runResumed(t, env, "claude", bin, "-p", "--resume", sid, "third turn")
	assertResumed(t, rs, sid, transcript, []wantPressure{{20100, 100000, "low", "high"}})
	if got := env.ClaudeTranscripts(); len(got) != 1 {
		t.Errorf("transcripts %v, want the one resumed", got)
	}
}

// TestRunCodexResumedAtLaunch: `codex exec resume --last` (the folder's
// latest thread) and `codex exec resume ID` under lifeloop run are
// followed in the thread's rollout from its current end: 50100
// (moderate, history) → 75200 (high) → 20100 (low) of 95 000.
func TestRunCodexResumedAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, OutputTokens: 100},
		{InputTokens: 75000, OutputTokens: 200},
		{InputTokens: 20000, OutputTokens: 100},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	exec := []string{"exec", "--skip-git-repo-check", "-c", "model_context_window=100000"}
	if res := env.Run(runTimeout, bin, append(exec, "first turn")...); res.ExitCode != 0 {
		t.Fatalf("codex exited %d: %s", res.ExitCode, res.Stderr)
	}
	rollout := onlyOne(t, "rollout", env.CodexRollouts())
	_, thread, _ := codexTurns(t, rollout)
	rs := runResumed(t, env, "codex", bin, append(exec, "resume", "--last", "second turn")...)
	assertResumed(t, rs, thread, rollout, []wantPressure{{75200, 95000, "high", "moderate"}})
	rs = runResumed(t, env, "codex", bin, append(exec, "resume", thread, "third turn")...)
	assertResumed(t, rs, thread, rollout, []wantPressure{{20100, 95000, "low", "high"}})
	if got := env.CodexRollouts(); len(got) != 1 {
		t.Errorf("rollouts %v, want the one resumed", got)
	}
}

// TestRunGeminiResumedAtLaunch: `gemini -r latest` (the project's latest
// session) and `gemini -r ID` (a minute later) under lifeloop run are
// followed in the session's chat file from its current end: 110100
// (moderate, history) → 160200 (high) → 40100 (low) of 209 715.
func TestRunGeminiResumedAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 110000, OutputTokens: 100},
		{InputTokens: 160000, OutputTokens: 200},
		{InputTokens: 40000, OutputTokens: 100},
	}})
	env := geminiSettingsEnv(t, mock, 0.2)
	if res := env.Run(runTimeout, bin, geminiArgs("first turn")...); res.ExitCode != 0 {
		t.Fatalf("gemini exited %d: %s", res.ExitCode, res.Stderr)
	}
	chat := onlyOne(t, "chat file", env.GeminiChats())
	_, sid := geminiPrompts(t, chat)
	rs := runResumed(t, env, "gemini", bin, geminiArgs("second turn", "-r", "latest")...)
	assertResumed(t, rs, sid, chat, []wantPressure{{160200, 209715, "high", "moderate"}})
	// Resumed in a later minute than its file's, the session gets a second
	// file named for that minute, holding only a header and the context;
	// the turn still goes to the first file, which is the one followed.
	now := time.Now()
	time.Sleep(time.Until(now.Truncate(time.Minute).Add(time.Minute + time.Second)))
	rs = runResumed(t, env, "gemini", bin, geminiArgs("third turn", "-r", sid)...)
	assertResumed(t, rs, sid, chat, []wantPressure{{40100, 209715, "low", "high"}})
	got := env.GeminiChats()
	if len(got) < 2 || got[0] != chat {
		t.Errorf("chat files %v, want %s and the later minute's stray file", got, chat)
	}
}

// TestRunPiResumedAtLaunch: `pi -c` (the folder's latest session) and
// `pi --session ID` under lifeloop run are followed in the session's file
// from its current end: 110200 (moderate, history) → 160200 (high) →
// 40100 (low) of 200 000.
func TestRunPiResumedAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 100000, CacheReadInputTokens: 10000, OutputTokens: 200},
		{InputTokens: 160000, OutputTokens: 200},
		{InputTokens: 40000, OutputTokens: 100},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	if res := env.Run(runTimeout, bin, "-p", "first turn"); res.ExitCode != 0 {
		t.Fatalf("pi exited %d: %s", res.ExitCode, res.Stderr)
	}
	file := onlyOne(t, "session file", env.PiSessions())
	_, sid := piSession(t, file)
	rs := runResumed(t, env, "pi", bin, "-c", "-p", "second turn")
	assertResumed(t, rs, sid, file, []wantPressure{{160200, testharness.PiContextWindow, "high", "moderate"}})
	rs = runResumed(t, env, "pi", bin, "--session", sid, "-p", "third turn")
	assertResumed(t, rs, sid, file, []wantPressure{{40100, testharness.PiContextWindow, "low", "high"}})
	if got := env.PiSessions(); len(got) != 1 {
		t.Errorf("session files %v, want the one resumed", got)
	}
}
