package e2e

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

func sessionRecord(t *testing.T, stateDir, id string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(stateDir, "sessions", id, "session.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rec map[string]any
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatalf("session.json of %s: %v", id, err)
	}
	return rec
}

func receiptsFor(rs []map[string]any, event string) []map[string]any {
	var out []map[string]any
	for _, r := range rs {
		if r["event"] == event {
			out = append(out, r)
		}
	}
	return out
}

// bindingOf returns the receipt that binds the harness session: the one
// session.started, with telemetry_summary.binding (its provenance is the
// first source that named the session: the SessionStart hook or the
// transcript).
func bindingOf(t *testing.T, rs []map[string]any) map[string]any {
	t.Helper()
	var found []map[string]any
	for _, r := range receiptsFor(rs, "session.started") {
		if dig(r, "telemetry_summary", "binding") == "harness_session_id" {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one binding receipt, got %d: %v", len(found), eventsOf(rs))
	}
	return found[0]
}

// followedFile is the telemetry file the receipts' provenance names (the
// same on every receipt that names one, directly or as the transcript
// corroborating a hook's receipt).
func followedFile(t *testing.T, rs []map[string]any) string {
	t.Helper()
	path := ""
	for _, r := range rs {
		p, _ := dig(r, "telemetry_summary", "path").(string)
		if p == "" { // a hook's receipt the transcript corroborated
			p, _ = dig(r, "telemetry_summary", "transcript", "path").(string)
		}
		switch {
		case p == "":
		case path == "":
			path = p
		case p != path:
			t.Errorf("receipts name two telemetry files: %s and %s", path, p)
		}
	}
	if path == "" {
		t.Fatalf("no receipt names the telemetry file: %v", eventsOf(rs))
	}
	return path
}

// wantPressure is one expected context.pressure_observed receipt.
type wantPressure struct {
	tokens, window int
	level, prev    string
}

// telemetryPressure returns the pressure receipts the telemetry watcher
// recorded (the hook bridge also reports PreCompact as one).
func telemetryPressure(rs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range receiptsFor(rs, "context.pressure_observed") {
		if src := dig(r, "telemetry_summary", "source"); src == "transcript" || src == "rollout" {
			out = append(out, r)
		}
	}
	return out
}

// assertPressure checks that the session's telemetry pressure receipts
// are exactly want, in order, with the percent computed from the raw
// numbers.
func assertPressure(t *testing.T, rs []map[string]any, want []wantPressure) {
	t.Helper()
	got := telemetryPressure(rs)
	if len(got) != len(want) {
		var desc []string
		for _, r := range got {
			s, _ := r["telemetry_summary"].(map[string]any)
			desc = append(desc, toJSON(s))
		}
		t.Fatalf("got %d pressure receipts, want %d:\n%s\nevents %v", len(got), len(want), strings.Join(desc, "\n"), eventsOf(rs))
	}
	for i, w := range want {
		s := got[i]["telemetry_summary"]
		pct := math.Round(float64(w.tokens)*10000/float64(w.window)) / 100
		if num(dig(s, "tokens")) != w.tokens || num(dig(s, "window")) != w.window || dig(s, "level") != w.level ||
			dig(s, "previous_level") != w.prev || dig(s, "percent") != pct {
			t.Errorf("pressure %d: %s, want tokens %d window %d (%.2f %%) %s → %s", i, toJSON(s), w.tokens, w.window, pct, w.prev, w.level)
		}
		if dig(s, "path") == nil || dig(s, "line") == nil || dig(s, "source") == nil {
			t.Errorf("pressure %d without provenance: %s", i, toJSON(s))
		}
	}
}

// frameOfReceipt is the frame id of a frame receipt: its event id is
// "<frame id>/<event>" whether the hook bridge or the transcript reported
// it first.
func frameOfReceipt(r map[string]any) string {
	id, _ := r["event_id"].(string)
	return strings.TrimSuffix(id, "/"+r["event"].(string))
}

// assertFrames checks one frame.opening/opened/ending/ended receipt per
// turn, with the turn ids given, chained to the frame's opening.
func assertFrames(t *testing.T, rs []map[string]any, turnIDs []string) {
	t.Helper()
	for _, ev := range []string{"frame.opening", "frame.opened", "frame.ending", "frame.ended"} {
		var ids []string
		for _, r := range receiptsFor(rs, ev) {
			if dig(r, "telemetry_summary", "parent_frame_id") != nil {
				continue // subcall frames
			}
			ids = append(ids, frameOfReceipt(r))
		}
		if !slices.Equal(ids, turnIDs) {
			t.Errorf("%s frames %v, want %v", ev, ids, turnIDs)
		}
	}
	openings := map[string]string{}
	for _, r := range receiptsFor(rs, "frame.opening") {
		openings[frameOfReceipt(r)] = r["receipt_id"].(string)
	}
	for _, ev := range []string{"frame.opened", "frame.ending", "frame.ended"} {
		for _, r := range receiptsFor(rs, ev) {
			id := frameOfReceipt(r)
			if r["parent_receipt_id"] != openings[id] {
				t.Errorf("%s %s chains to %v, want its opening %s", ev, id, r["parent_receipt_id"], openings[id])
			}
		}
	}
}

// assertHarnessSession checks that every receipt from the binding (or the
// first receipt that carries id) on carries id, that some receipt does,
// and that session.json lists it.
func assertHarnessSession(t *testing.T, stateDir, session string, rs []map[string]any, id string) {
	t.Helper()
	bound := false
	for _, r := range rs {
		if r["event"] == "session.started" && dig(r, "telemetry_summary", "binding") != nil || r["harness_session_id"] == id {
			bound = true
		}
		if bound && r["harness_session_id"] != id {
			t.Errorf("%s #%v has harness_session_id %v, want %s", r["event"], r["sequence"], r["harness_session_id"], id)
		}
	}
	if !bound {
		t.Errorf("no receipt carries harness session %s", id)
	}
	ids, _ := sessionRecord(t, stateDir, session)["harness_session_ids"].([]any)
	if !slices.Contains(ids, any(id)) {
		t.Errorf("session.json harness_session_ids %v, want %s", ids, id)
	}
}

// claudePromptIDs returns the promptId of every real user prompt in a
// Claude transcript, in order, and its sessionId.
func claudePromptIDs(t *testing.T, path string) ([]string, string) {
	t.Helper()
	var ids []string
	var sid string
	for _, l := range readJSONL(t, path) {
		if s, ok := l["sessionId"].(string); ok && sid == "" {
			sid = s
		}
		if l["type"] != "user" || l["isMeta"] == true || l["isCompactSummary"] == true {
			continue
		}
		if _, text := dig(l, "message", "content").(string); !text {
			continue // tool results
		}
		if p, ok := l["promptId"].(string); ok && !slices.Contains(ids, p) {
			ids = append(ids, p)
		}
	}
	return ids, sid
}

// codexTurns returns the turn ids of a Codex rollout, its thread id and
// the effective window it recorded.
func codexTurns(t *testing.T, path string) ([]string, string, int) {
	t.Helper()
	var ids []string
	var thread string
	window := 0
	for _, l := range readJSONL(t, path) {
		switch {
		case l["type"] == "session_meta":
			thread, _ = dig(l, "payload", "id").(string)
		case dig(l, "payload", "type") == "task_started":
			ids = append(ids, dig(l, "payload", "turn_id").(string))
			window = num(dig(l, "payload", "model_context_window"))
		}
	}
	return ids, thread, window
}

func onlyOne(t *testing.T, what string, paths []string) string {
	t.Helper()
	if len(paths) != 1 {
		t.Fatalf("want one %s, found %v", what, paths)
	}
	return paths[0]
}

// TestRunClaudeTelemetry wraps `claude -p` around a tool turn whose two
// model responses report 55 100 and 80 200 tokens of a 100 000 window
// (CLAUDE_CODE_MAX_CONTEXT_TOKENS): exactly two pressure receipts (low →
// moderate → high) with the mock's numbers, one frame per turn with the
// transcript's promptId, and the transcript's sessionId on every receipt.
func TestRunClaudeTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, CacheReadInputTokens: 5000, OutputTokens: 100},
		{InputTokens: 3000, CacheCreationInputTokens: 2000, CacheReadInputTokens: 75000, OutputTokens: 200},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "claude", "completed", "exit_code_0")
	transcript := onlyOne(t, "transcript", env.ClaudeTranscripts())
	prompts, sid := claudePromptIDs(t, transcript)
	if filepath.Base(transcript) != sid+".jsonl" {
		t.Errorf("transcript %s for session %s", transcript, sid)
	}
	if b := bindingOf(t, rs); b["harness_session_id"] != sid {
		t.Errorf("binding %s names %v, want %s", toJSON(b["telemetry_summary"]), b["harness_session_id"], sid)
	}
	if p := followedFile(t, rs); p != transcript {
		t.Errorf("followed %s, want %s", p, transcript)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{55100, 100000, "moderate", "low"},
		{80200, 100000, "high", "moderate"},
	})
	assertFrames(t, rs, prompts)
	if len(receiptsFor(rs, "capability.degraded")) != 0 {
		t.Errorf("unexpected degradation: %v", eventsOf(rs))
	}
	// The turn's receipts precede session.ended.
	if i, j := slices.IndexFunc(rs, func(r map[string]any) bool { return r["event"] == "frame.ended" }), len(rs)-1; i < 0 || rs[j]["event"] != "session.ended" {
		t.Errorf("order %v", eventsOf(rs))
	}
}

// TestRunCodexTelemetry wraps `codex exec` (model_context_window=100000,
// which Codex records as a 95 000 effective window) around a tool turn
// whose responses total 50 100 and 80 200 tokens: low → moderate → high.
func TestRunCodexTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, OutputTokens: 100},
		{InputTokens: 80000, CacheReadInputTokens: 60000, OutputTokens: 200},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "exec", "--skip-git-repo-check", "-c", "model_context_window=100000", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "codex", "completed", "exit_code_0")
	rollout := onlyOne(t, "rollout", env.CodexRollouts())
	turns, thread, window := codexTurns(t, rollout)
	if window != 95000 {
		t.Errorf("rollout window %d, want 95000 (95 %% of 100000)", window)
	}
	if b := bindingOf(t, rs); dig(b, "telemetry_summary", "path") != rollout || dig(b, "telemetry_summary", "source") != "rollout" {
		t.Errorf("binding %s, want path %s", toJSON(b["telemetry_summary"]), rollout)
	}
	assertHarnessSession(t, state, session, rs, thread)
	assertPressure(t, rs, []wantPressure{
		{50100, 95000, "moderate", "low"},
		{80200, 95000, "high", "moderate"},
	})
	assertFrames(t, rs, turns)
}

// TestRunClaudeCompactionTelemetry: a first run fills 95.6 % of a 200 000
// auto-compact window (critical); a second run continues the same
// conversation, Claude compacts, and lifeloop records context.compacted
// with the transcript's pre/post tokens and the reset to low.
func TestRunClaudeCompactionTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	big := mockmodel.Usage{InputTokens: 3000, CacheCreationInputTokens: 7000, CacheReadInputTokens: 181000, OutputTokens: 300}
	mock := startMock(t, mockmodel.Config{Usage: mockmodel.DefaultUsage, UsageSequence: []mockmodel.Usage{big, big}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_AUTO_COMPACT_WINDOW", "200000")
	first := filepath.Join(t.TempDir(), "first")
	if res := env.Run(runTimeout, ll, "run", "--state-dir", first, "--", bin, "-p", "RUN_TOOL please"); res.ExitCode != 0 {
		t.Fatalf("first run exit %d: %s", res.ExitCode, res.Stderr)
	}
	_, rs := onlySession(t, first)
	assertPressure(t, rs, []wantPressure{{191300, 200000, "critical", "low"}})

	second := filepath.Join(t.TempDir(), "second")
	if res := env.Run(runTimeout, ll, "run", "--state-dir", second, "--", bin, "-p", "--continue", "second prompt"); res.ExitCode != 0 {
		t.Fatalf("second run exit %d: %s", res.ExitCode, res.Stderr)
	}
	session, rs := onlySession(t, second)
	var boundary map[string]any
	var transcript string
	for _, p := range env.ClaudeTranscripts() {
		for _, l := range readJSONL(t, p) {
			if l["subtype"] == "compact_boundary" {
				boundary, transcript = l, p
			}
		}
	}
	if boundary == nil {
		t.Fatalf("Claude did not compact; transcripts %v", env.ClaudeTranscripts())
	}
	compacted := telemetryCompactions(rs)
	if len(compacted) != 1 {
		t.Fatalf("context.compacted receipts from the transcript %d: %v", len(compacted), eventsOf(rs))
	}
	s := compacted[0]["telemetry_summary"]
	pre, post := num(dig(boundary, "compactMetadata", "preTokens")), num(dig(boundary, "compactMetadata", "postTokens"))
	if num(dig(s, "pre_tokens")) != pre || num(dig(s, "post_tokens")) != post || dig(s, "trigger") != "auto" || dig(s, "path") != transcript {
		t.Errorf("context.compacted %s, want pre %d post %d from %s", toJSON(s), pre, post, transcript)
	}
	if r := resetOf(rs); r == nil || num(dig(r, "telemetry_summary", "tokens")) != post || dig(r, "telemetry_summary", "level") != "low" {
		t.Errorf("pressure reset after compaction %v, want low at %d: %v", toJSON(r), post, eventsOf(rs))
	}
	_, sid := claudePromptIDs(t, transcript)
	assertHarnessSession(t, second, session, rs, sid)
}

// TestRunCodexCompactionTelemetry drives Codex into a mid-turn compaction
// (window 10000, auto-compact at 8000, 9300 tokens reported).
func TestRunCodexCompactionTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	ll := lifeloopBin(t)
	big := mockmodel.Usage{InputTokens: 9000, CacheReadInputTokens: 8000, OutputTokens: 300}
	mock := startMock(t, mockmodel.Config{Usage: mockmodel.DefaultUsage, UsageSequence: []mockmodel.Usage{big}})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "exec", "--skip-git-repo-check",
		"-c", "model_context_window=10000", "-c", "model_auto_compact_token_limit=8000", "RUN_TOOL please")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	_, rs := onlySession(t, state)
	rollout := onlyOne(t, "rollout", env.CodexRollouts())
	_, _, window := codexTurns(t, rollout)
	compacted := telemetryCompactions(rs)
	if len(compacted) != 1 {
		t.Fatalf("context.compacted receipts from the rollout %d: %v", len(compacted), eventsOf(rs))
	}
	s := compacted[0]["telemetry_summary"]
	post := num(dig(s, "post_tokens"))
	if num(dig(s, "pre_tokens")) != 9300 || post <= 0 || post >= 9300 || dig(s, "path") != rollout {
		t.Errorf("context.compacted %s, want pre 9300 and a smaller post", toJSON(s))
	}
	ps := telemetryPressure(rs)
	if len(ps) < 2 {
		t.Fatalf("pressure receipts %d: %v", len(ps), eventsOf(rs))
	}
	if s := ps[0]["telemetry_summary"]; num(dig(s, "tokens")) != 9300 || dig(s, "level") != "critical" || num(dig(s, "window")) != window {
		t.Errorf("pressure before compaction %s, want critical at 9300 of %d", toJSON(s), window)
	}
	if r := resetOf(rs); r == nil || num(dig(r, "telemetry_summary", "tokens")) != post {
		t.Errorf("pressure reset after compaction %s, want tokens %d", toJSON(r), post)
	}
}

// telemetryCompactions returns the context.compacted receipts read from
// the transcript or rollout (the hook bridge reports the compaction too,
// without token numbers).
func telemetryCompactions(rs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range receiptsFor(rs, "context.compacted") {
		if src := dig(r, "telemetry_summary", "source"); src == "transcript" || src == "rollout" {
			out = append(out, r)
		}
	}
	return out
}

// resetOf returns the pressure receipt a compaction caused.
func resetOf(rs []map[string]any) map[string]any {
	for _, r := range telemetryPressure(rs) {
		if dig(r, "telemetry_summary", "reason") == "compacted" {
			return r
		}
	}
	return nil
}

// concurrentPrompts are the prompts runConcurrentPrints sends.
var concurrentPrompts = []string{"first concurrent prompt", "second concurrent prompt"}

// runConcurrentPrints starts `lifeloop run -- BIN -p PROMPT` for each of
// concurrentPrompts at once in the same folder, checks that each exits 0,
// and returns the ledgers of the two sessions.
func runConcurrentPrints(t *testing.T, env *testharness.HarnessEnv, ll, state, bin string) map[string][]map[string]any {
	t.Helper()
	var wg sync.WaitGroup
	results := make([]testharness.Result, len(concurrentPrompts))
	for i, p := range concurrentPrompts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", p)
		}()
	}
	wg.Wait()
	for i, r := range results {
		if r.ExitCode != 0 {
			t.Fatalf("run %d exit %d: %s", i, r.ExitCode, r.Stderr)
		}
	}
	ledgers := sessionLedgers(t, state)
	if len(ledgers) != len(concurrentPrompts) {
		t.Fatalf("%d sessions", len(ledgers))
	}
	return ledgers
}

// TestRunClaudeConcurrentSameFolder starts two `lifeloop run -- claude -p`
// in the same folder at once: each session must be bound to its own
// transcript (the one holding its own prompt).
func TestRunClaudeConcurrentSameFolder(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	ledgers := runConcurrentPrints(t, env, ll, state, bin)
	seen := map[string]bool{}
	for session, rs := range ledgers {
		argv, _ := sessionRecord(t, state, session)["argv"].([]any)
		prompt := argv[len(argv)-1].(string)
		bindingOf(t, rs)
		path := followedFile(t, rs)
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), prompt) {
			t.Errorf("session %s (prompt %q) is bound to %s, which does not hold its prompt", session, prompt, path)
		}
		_, sid := claudePromptIDs(t, path)
		assertHarnessSession(t, state, session, rs, sid)
		if seen[path] {
			t.Errorf("both sessions bound to %s", path)
		}
		seen[path] = true
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// watchHarness starts `lifeloop watch --adapter adapter --cwd <project>`
// before the harness runs, runs it, interrupts the watch (SIGINT) as soon
// as the harness has exited, and returns the watch session's receipts.
// The interrupted watch reads what the harness wrote to its end before it
// ends, so every receipt is in (the idle end, `--until-idle`, is
// TestOTelFollowNewSessionsAndWatch's and the scripts' in commands/cli).
func watchHarness(t *testing.T, env *testharness.HarnessEnv, adapter, bin string, args ...string) (string, string, []map[string]any) {
	t.Helper()
	ll := lifeloopBin(t)
	state := stateDir(t)
	cmd := env.Command(ll, "watch", "--state-dir", state, "--adapter", adapter, "--cwd", env.Dir)
	var out strings.Builder
	cmd.Stdout = &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-done
	})
	// A SIGINT before the watch has opened its session would find no
	// handler yet.
	waitLedger(t, state, "the watch's session", func([]map[string]any) bool { return true })
	if res := env.Run(runTimeout, bin, args...); res.ExitCode != 0 {
		t.Fatalf("%s exited %d: %s", adapter, res.ExitCode, res.Stderr)
	}
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Fatalf("watch: %v; stdout %s", err, out.String())
		}
	case <-time.After(runTimeout):
		t.Fatal("watch did not end after SIGINT")
	}
	if !strings.Contains(out.String(), `"reason":"interrupted"`) {
		t.Errorf("watch printed %q", out.String())
	}
	session, rs := onlySession(t, state)
	rec := sessionRecord(t, state, session)
	if rec["integration_mode"] != "telemetry_only" || rec["state"] != "completed" {
		t.Errorf("session record %s", toJSON(rec))
	}
	for _, r := range rs {
		if r["integration_mode"] != "telemetry_only" || r["adapter_id"] != adapter {
			t.Errorf("receipt %v: mode %v adapter %v", r["event"], r["integration_mode"], r["adapter_id"])
		}
	}
	if last := rs[len(rs)-1]; last["event"] != "session.ended" || dig(last, "telemetry_summary", "reason") != "watch_interrupted" {
		t.Errorf("last receipt %s", toJSON(last))
	}
	return state, session, rs
}

// TestWatchClaude observes a `claude -p` tool turn that lifeloop did not
// launch: binding, frames, pressure with the mock's numbers.
func TestWatchClaude(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, CacheReadInputTokens: 5000, OutputTokens: 100},
		{InputTokens: 3000, CacheCreationInputTokens: 2000, CacheReadInputTokens: 75000, OutputTokens: 200},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.Setenv("CLAUDE_CODE_MAX_CONTEXT_TOKENS", "100000")
	state, session, rs := watchHarness(t, env, "claude", bin, "-p", "RUN_TOOL please")
	transcript := onlyOne(t, "transcript", env.ClaudeTranscripts())
	prompts, sid := claudePromptIDs(t, transcript)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != transcript {
		t.Errorf("binding not to %s", transcript)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{55100, 100000, "moderate", "low"},
		{80200, 100000, "high", "moderate"},
	})
	assertFrames(t, rs, prompts)
}

// TestWatchCodex observes a `codex exec` tool turn that lifeloop did not
// launch.
func TestWatchCodex(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.CodexBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 50000, OutputTokens: 100},
		{InputTokens: 80000, CacheReadInputTokens: 60000, OutputTokens: 200},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	state, session, rs := watchHarness(t, env, "codex", bin, "exec", "--skip-git-repo-check", "-c", "model_context_window=100000", "RUN_TOOL please")
	rollout := onlyOne(t, "rollout", env.CodexRollouts())
	turns, thread, _ := codexTurns(t, rollout)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != rollout {
		t.Errorf("binding not to %s", rollout)
	}
	assertHarnessSession(t, state, session, rs, thread)
	assertPressure(t, rs, []wantPressure{
		{50100, 95000, "moderate", "low"},
		{80200, 95000, "high", "moderate"},
	})
	assertFrames(t, rs, turns)
}

// TestRunClaudeNoTelemetry: --no-telemetry leaves the transcript alone (no
// binding, no pressure) and does not pin the session id.
func TestRunClaudeNoTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Usage: mockmodel.Usage{InputTokens: 190000}})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--no-telemetry", "--", bin, "-p", "hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d: %s", res.ExitCode, res.Stderr)
	}
	session, rs := onlySession(t, state)
	for _, r := range rs {
		if src := dig(r, "telemetry_summary", "source"); src == "transcript" {
			t.Errorf("telemetry receipt with --no-telemetry: %s", toJSON(r))
		}
	}
	argv, _ := sessionRecord(t, state, session)["argv"].([]any)
	if slices.Contains(argv, any("--session-id")) {
		t.Errorf("argv %v pins a session id", argv)
	}
}
