package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/gemini"
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
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--", bin}, geminiArgs("say hello")...)...)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- gemini -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if n := len(mock.RequestsOfKind(mockmodel.KindGemini)); n != 1 {
		t.Errorf("%d conversation requests, want 1", n)
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "gemini", "completed", "exit_code_0")
	assertHarnessVersion(t, env, receipts, bin)
	// Gemini CLI is not among OrgLoop's harness ids: it projects as
	// "other", the adapter name kept.
	out := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--latest", "--format", "orgloop")
	var ended map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
		var ev map[string]any
		if json.Unmarshal([]byte(line), &ev) == nil && dig(ev, "payload", "lifecycle", "terminal") == true {
			ended = ev
		}
	}
	if out.ExitCode != 0 || dig(ended, "payload", "session", "harness") != "other" || dig(ended, "payload", "session", "adapter") != "gemini" {
		t.Errorf("orgloop projection (exit %d): %s", out.ExitCode, out.Stdout)
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// geminiPrompts returns the frame ids of the turns of a Gemini chat file,
// in order, and its sessionId: a prompt record (a user record with text
// that is not only hook context) names its turn
// gemini.PromptFrameID(session, the text the user sent — its
// displayContent when a hook added context), ".n" appended to the n-th
// turn of the same id.
func geminiPrompts(t *testing.T, path string) ([]string, string) {
	t.Helper()
	var ids []string
	var sid string
	seen := map[string]bool{}
	count := map[string]int{}
	for _, l := range readJSONL(t, path) {
		if s, ok := l["sessionId"].(string); ok && sid == "" {
			sid = s
		}
		id, _ := l["id"].(string)
		if l["type"] != "user" || seen[id] {
			continue
		}
		parts, _ := l["content"].([]any)
		prompt := false
		for _, p := range parts {
			text, _ := dig(p, "text").(string)
			if text != "" && !strings.HasPrefix(text, "<hook_context>") {
				prompt = true
			}
		}
		if !prompt {
			continue
		}
		seen[id] = true
		if d, ok := l["displayContent"].([]any); ok {
			parts = d
		}
		var text strings.Builder
		for _, p := range parts {
			s, _ := dig(p, "text").(string)
			text.WriteString(s)
		}
		frame := gemini.PromptFrameID(sid, text.String())
		count[frame]++
		if n := count[frame]; n > 1 {
			frame += "." + strconv.Itoa(n)
		}
		ids = append(ids, frame)
	}
	return ids, sid
}

// geminiTelemetryEnv is a mock whose tool turn reports 110 100 and then
// 160 200 tokens, and an environment whose project settings lower
// Gemini's compression threshold to 0.2: the window lifeloop measures
// against is 0.2 × 1 048 576 = 209 715 tokens, so the turn goes low →
// moderate (52.50 %) → high (76.39 %).
func geminiTelemetryEnv(t *testing.T) *testharness.HarnessEnv {
	t.Helper()
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 110000, OutputTokens: 100},
		{InputTokens: 100000, CacheReadInputTokens: 60000, OutputTokens: 200},
	}})
	return geminiSettingsEnv(t, mock, 0.2)
}

// geminiSettingsEnv is an environment whose project settings
// (.gemini/settings.json) set Gemini's compression threshold.
func geminiSettingsEnv(t *testing.T, mock *mockmodel.Server, threshold float64) *testharness.HarnessEnv {
	t.Helper()
	env := testharness.NewHarnessEnv(t, mock)
	if err := os.MkdirAll(filepath.Join(env.Dir, ".gemini"), 0o700); err != nil {
		t.Fatal(err)
	}
	body := fmt.Sprintf(`{"model":{"compressionThreshold":%v}}`, threshold)
	if err := os.WriteFile(filepath.Join(env.Dir, ".gemini", "settings.json"), []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

var geminiTelemetryPressure = []wantPressure{
	{110100, 209715, "moderate", "low"},
	{160200, 209715, "high", "moderate"},
}

// TestRunGeminiTelemetry wraps a headless Gemini tool turn: lifeloop does
// not pin the session id of a one-shot (--session-id costs Gemini CLI a
// lock wait, adapters/gemini PinSession), finds the chat file by the
// folder's hash and its birth, records one frame for the prompt and two
// pressure receipts with the mock's numbers, every receipt from the
// binding on carrying the chat's session id.
func TestRunGeminiTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	ll := lifeloopBin(t)
	env := geminiTelemetryEnv(t)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, append([]string{"run", "--state-dir", state, "--", bin}, geminiArgs("RUN_TOOL please", "--approval-mode", "yolo")...)...)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "gemini", "completed", "exit_code_0")
	chat := onlyOne(t, "chat file", env.GeminiChats())
	prompts, sid := geminiPrompts(t, chat)
	argv, _ := sessionRecord(t, state, session)["argv"].([]any)
	if slices.Contains(argv, any("--session-id")) {
		t.Errorf("argv %v pins the session of a one-shot", argv)
	}
	if !strings.HasSuffix(chat, "-"+sid[:8]+".jsonl") {
		t.Errorf("chat file %s for session %s", chat, sid)
	}
	if b := bindingOf(t, rs); dig(b, "telemetry_summary", "path") != chat || dig(b, "telemetry_summary", "source") != "transcript" {
		t.Errorf("binding %s, want path %s", toJSON(b["telemetry_summary"]), chat)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, geminiTelemetryPressure)
	if len(prompts) != 1 {
		t.Fatalf("prompts %v", prompts)
	}
	assertFrames(t, rs, prompts)
	if ended := lastOf(rs, "frame.ended"); dig(ended, "telemetry_summary", "stop_reason") != "answer" {
		t.Errorf("frame.ended %s", toJSON(ended))
	}
	if len(receiptsFor(rs, "capability.degraded")) != 0 {
		t.Errorf("unexpected degradation: %v", eventsOf(rs))
	}
	if n := len(mock(env).RequestsOfKind(mockmodel.KindGemini)); n != 2 {
		t.Errorf("%d conversation requests, want 2 (tool call, answer)", n)
	}
}

func mock(env *testharness.HarnessEnv) *mockmodel.Server { return env.Mock }

// TestWatchGemini observes a headless Gemini tool turn that lifeloop did
// not launch: binding, frames, pressure with the mock's numbers.
func TestWatchGemini(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.GeminiBin(t)
	env := geminiTelemetryEnv(t)
	state, session, rs := watchHarness(t, env, "gemini", bin, geminiArgs("RUN_TOOL please", "--approval-mode", "yolo")...)
	chat := onlyOne(t, "chat file", env.GeminiChats())
	prompts, sid := geminiPrompts(t, chat)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != chat {
		t.Errorf("binding not to %s", chat)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, geminiTelemetryPressure)
	assertFrames(t, rs, prompts)
}
