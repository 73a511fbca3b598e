package e2e

import (
	"database/sql"
	"net/url"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"

	_ "modernc.org/sqlite"
)

// openCodeTurns reads OpenCode's database in env (read-only) and returns
// its one top-level session's id and the ids of the user messages that
// start a turn (every user message but compaction requests), in order.
func openCodeTurns(t *testing.T, env *testharness.HarnessEnv) (string, []string) {
	t.Helper()
	ids, turns := openCodeSessions(t, env)
	if len(ids) != 1 {
		t.Fatalf("OpenCode sessions %v, want one", ids)
	}
	return ids[0], turns[ids[0]]
}

// openCodeSessions reads OpenCode's database in env (read-only) and
// returns its top-level sessions' ids, oldest first, and each one's
// turns (the ids of the user messages that start a turn: every user
// message but compaction requests), in order.
func openCodeSessions(t *testing.T, env *testharness.HarnessEnv) ([]string, map[string][]string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: env.OpenCodeDB()}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	rows, err := db.QueryContext(t.Context(), "SELECT id FROM session WHERE parent_id IS NULL ORDER BY time_created, id")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	turns := map[string][]string{}
	for _, sid := range ids {
		rows, err = db.QueryContext(t.Context(), `SELECT m.id, (SELECT json_extract(p.data, '$.type') FROM part p WHERE p.message_id = m.id ORDER BY p.id LIMIT 1)
			FROM message m WHERE m.session_id = ? AND json_extract(m.data, '$.role') = 'user' ORDER BY m.id`, sid)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var id string
			var first sql.NullString
			if err := rows.Scan(&id, &first); err != nil {
				t.Fatal(err)
			}
			if first.String != "compaction" {
				turns[sid] = append(turns[sid], id)
			}
		}
		rows.Close()
	}
	return ids, turns
}

// databasePressure returns the pressure receipts read from OpenCode's
// database.
func databasePressure(rs []map[string]any) []map[string]any {
	var out []map[string]any
	for _, r := range receiptsFor(rs, "context.pressure_observed") {
		if dig(r, "telemetry_summary", "source") == "database" {
			out = append(out, r)
		}
	}
	return out
}

// assertOpenCodePressure checks the pressure receipts from the database:
// exactly want, in order, with provenance and the percent of the raw
// numbers.
func assertOpenCodePressure(t *testing.T, rs []map[string]any, want []wantPressure) {
	t.Helper()
	got := databasePressure(rs)
	if len(got) != len(want) {
		var desc []string
		for _, r := range got {
			desc = append(desc, toJSON(r["telemetry_summary"]))
		}
		t.Fatalf("got %d pressure receipts, want %d:\n%s\nevents %v", len(got), len(want), strings.Join(desc, "\n"), eventsOf(rs))
	}
	for i, w := range want {
		s := got[i]["telemetry_summary"]
		if num(dig(s, "tokens")) != w.tokens || num(dig(s, "window")) != w.window || dig(s, "level") != w.level || dig(s, "previous_level") != w.prev {
			t.Errorf("pressure %d: %s, want tokens %d window %d %s → %s", i, toJSON(s), w.tokens, w.window, w.prev, w.level)
		}
		if dig(s, "path") == nil || dig(s, "line") == nil {
			t.Errorf("pressure %d without provenance: %s", i, toJSON(s))
		}
	}
}

// assertOpenCodeBinding checks the binding receipt names the session
// (from OpenCode's database or the bridge plugin) and every later
// receipt carries its id.
func assertOpenCodeBinding(t *testing.T, env *testharness.HarnessEnv, state, session string, rs []map[string]any, sid string) {
	t.Helper()
	// The TUI creates its session at the first prompt, after
	// session.started stopped waiting for it (docs/contract.md): the id
	// then rides on the receipts from the first one that has it. A
	// session.started that waited is named by whichever came first: the
	// database's row (its path) or the bridge plugin's session.created.
	started := receiptsFor(rs, "session.started")
	if len(started) == 1 && dig(started[0], "telemetry_summary", "binding") != nil {
		b := started[0]
		byPlugin := dig(b, "telemetry_summary", "source") == "hook" && dig(b, "telemetry_summary", "hook") == "session" && b["harness_session_id"] == sid
		byDatabase := dig(b, "telemetry_summary", "source") == "database" && dig(b, "telemetry_summary", "path") == env.OpenCodeDB()+"#"+sid
		if !byPlugin && !byDatabase {
			t.Errorf("binding %s, want the plugin's session %s or the database's path %s#%s", toJSON(b["telemetry_summary"]), sid, env.OpenCodeDB(), sid)
		}
	}
	assertHarnessSession(t, state, session, rs, sid)
}

// TestRunOpenCodeRun: `lifeloop run -- opencode run …` against the mock's
// Anthropic Messages API: the answer is printed, the session completes,
// no OpenCode process survives, the turn's frames carry the ids OpenCode's
// database gives it (reported by the bridge plugin), and the
// database gives the session id and the pressure with the mock's exact
// numbers (input 100 + cache write 2000 + cache read 3000 + output 7 = 5107
// of the configured 10 000 window: moderate).
func TestRunOpenCodeRun(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply, UsageSequence: []mockmodel.Usage{
		{InputTokens: 100, CacheCreationInputTokens: 2000, CacheReadInputTokens: 3000, OutputTokens: 7},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "run", "say", "hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- opencode run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "opencode", "completed", "exit_code_0")
	assertHarnessVersion(t, env, rs, bin)
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
	for _, r := range mock.Requests() {
		if r.Path != "/v1/messages" {
			t.Errorf("OpenCode asked the mock for %s %s", r.Method, r.Path)
		}
	}
	sid, turns := openCodeTurns(t, env)
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{{5107, 10000, "moderate", "low"}})
	assertFrames(t, rs, turns)
	if got := dig(lastOf(rs, "frame.ended"), "telemetry_summary", "stop_reason"); got != "stop" {
		t.Errorf("frame.ended stop_reason %v, want stop", got)
	}
	assertCausalOrder(t, rs)
	// A one-shot loads no bridge plugin: the database reports its frames.
	for k, src := range frameSources(rs) {
		if src != "database" {
			t.Errorf("%s from %v, want the database", k, src)
		}
	}
	if plugins, _ := filepath.Glob(filepath.Join(state, "bridges", "opencode-*")); len(plugins) != 0 {
		t.Errorf("plugin written for a one-shot: %v", plugins)
	}
}

// assertCausalOrder checks one session.started from the wrapper before
// any telemetry and before the frames, each frame's receipts in
// order, and session.ended last.
func assertCausalOrder(t *testing.T, rs []map[string]any) {
	t.Helper()
	bound := false
	pos := map[string]int{}
	for i, r := range rs {
		ev := r["event"].(string)
		// session.started comes first; it binds the session id when OpenCode
		// named it within the bind wait (a TUI names it at the first
		// prompt, which may be later).
		if ev == "session.started" {
			bound = true
		}
		if strings.HasPrefix(ev, "frame.") {
			if !bound {
				t.Errorf("%s #%d before session.started", ev, i+1)
			}
			pos[frameOfReceipt(r)+" "+ev] = i
		}
	}
	for k, i := range pos {
		frame, ev, _ := strings.Cut(k, " ")
		order := []string{"frame.opening", "frame.opened", "frame.ending", "frame.ended"}
		for j, e := range order {
			if e != ev {
				continue
			}
			for _, earlier := range order[:j] {
				if p, ok := pos[frame+" "+earlier]; ok && p > i {
					t.Errorf("frame %s: %s after %s", frame, earlier, ev)
				}
			}
		}
	}
	if last := rs[len(rs)-1]["event"]; last != "session.ended" {
		t.Errorf("last receipt %v, want session.ended", last)
	}
}

// TestRunOpenCodeCompactionTelemetry: a turn fills 90.5 % of a 10 000
// window (critical); OpenCode compacts automatically inside the same
// `opencode run` (it compacts at limit.context - limit.output = 8000),
// then runs its synthetic continue turn. lifeloop records the critical
// level, context.compacted (auto, pre_tokens 9050, under the compaction
// request's id) with the reset to low, and frames for both turns, all
// from the database: a one-shot loads no bridge plugin (TestRunOpenCodeTUI
// has the plugin's report of a compaction).
func TestRunOpenCodeCompactionTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{{InputTokens: 9000, OutputTokens: 50}}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 2000})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "run", "fill", "the", "context")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "opencode", "completed", "exit_code_0")
	sid, turns := openCodeTurns(t, env)
	if len(turns) != 2 {
		t.Fatalf("turns %v, want the prompt and the continue turn after compaction", turns)
	}
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	compacted := receiptsFor(rs, "context.compacted")
	if len(compacted) != 1 {
		t.Fatalf("context.compacted receipts %d: %v", len(compacted), eventsOf(rs))
	}
	s := compacted[0]["telemetry_summary"]
	if dig(s, "trigger") != "auto" || num(dig(s, "pre_tokens")) != 9050 || num(dig(s, "window")) != 10000 || dig(s, "source") != "database" {
		t.Errorf("context.compacted %s, want trigger auto, pre_tokens 9050, window 10000 from the database", toJSON(s))
	}
	if want := openCodeCompactionRequest(t, env, sid) + "/context.compacted"; compacted[0]["event_id"] != want {
		t.Errorf("context.compacted event_id %v, want %s", compacted[0]["event_id"], want)
	}
	assertOpenCodePressure(t, rs, []wantPressure{
		{9050, 10000, "critical", "low"},
		{0, 10000, "low", "critical"},
	})
	if r := databasePressure(rs)[1]; dig(r, "telemetry_summary", "reason") != "compacted" {
		t.Errorf("reset %s, want reason compacted", toJSON(r["telemetry_summary"]))
	}
	assertFrames(t, rs, turns)
	assertFramesOnce(t, rs)
	assertCausalOrder(t, rs)
	// The compaction comes after the first turn ended and before the
	// continue turn opened.
	var order []string
	for _, r := range rs {
		switch r["event"] {
		case "frame.ended", "context.compacted", "frame.opening":
			order = append(order, r["event"].(string))
		}
	}
	if strings.Join(order, ",") != "frame.opening,frame.ended,context.compacted,frame.opening,frame.ended" {
		t.Errorf("order %v", order)
	}
}

// openCodeCompactionRequest returns the id of session sid's one user
// message whose first part is a compaction part.
func openCodeCompactionRequest(t *testing.T, env *testharness.HarnessEnv, sid string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: env.OpenCodeDB()}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	err = db.QueryRowContext(t.Context(), `SELECT m.id FROM message m WHERE m.session_id = ? AND json_extract(m.data, '$.role') = 'user'
		AND (SELECT json_extract(p.data, '$.type') FROM part p WHERE p.message_id = m.id ORDER BY p.id LIMIT 1) = 'compaction'`, sid).Scan(&id)
	if err != nil {
		t.Fatalf("the compaction request: %v", err)
	}
	return id
}

// TestWatchOpenCode observes an `opencode run` that lifeloop did not
// launch: `lifeloop watch --adapter opencode` finds its session in the
// database, binds its id and records its frames and pressure.
func TestWatchOpenCode(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{{InputTokens: 7000, CacheReadInputTokens: 600, OutputTokens: 20}}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	state, session, rs := watchHarness(t, env, "opencode", bin, "run", "watched", "turn")
	sid, turns := openCodeTurns(t, env)
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{{7620, 10000, "high", "low"}})
	assertFrames(t, rs, turns)
}

// TestWatchOpenCodeLatest: `lifeloop watch --adapter opencode --latest`
// picks the newest finished OpenCode session of the folder in OpenCode's
// database, binds its id from its rows (its earlier turn is history: not
// reported again, its pressure level is kept), and records the turn that
// `opencode run -s <id>` then adds: frames and pressure from the moderate
// level the history left (5107 → 7620 of 10 000).
func TestWatchOpenCodeLatest(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{
		{InputTokens: 100, CacheCreationInputTokens: 2000, CacheReadInputTokens: 3000, OutputTokens: 7},
		{InputTokens: 7000, CacheReadInputTokens: 600, OutputTokens: 20},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	if res := env.Run(runTimeout, bin, "run", "first", "turn"); res.ExitCode != 0 {
		t.Fatalf("opencode exited %d: %s", res.ExitCode, res.Stderr)
	}
	sid, first := openCodeTurns(t, env)

	state := stateDir(t)
	cmd := env.Command(ll, "watch", "--state-dir", state, "--adapter", "opencode", "--latest", "--cwd", env.Dir)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
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
	// The binding comes from the session's existing rows: the watch has
	// taken the session's end by then.
	waitForEvent(t, state, "session.started", runTimeout)
	if res := env.Run(runTimeout, bin, "run", "-s", sid, "second", "turn"); res.ExitCode != 0 {
		t.Fatalf("opencode -s exited %d: %s", res.ExitCode, res.Stderr)
	}
	waitForEvent(t, state, "frame.ended", runTimeout)
	_ = cmd.Process.Signal(syscall.SIGINT)
	select {
	case err := <-done:
		done <- err
		if err != nil {
			t.Fatalf("watch: %v; output %s", err, out.String())
		}
	case <-time.After(runTimeout):
		t.Fatal("watch did not end on SIGINT")
	}
	if !strings.Contains(out.String(), `"reason":"interrupted"`) {
		t.Errorf("watch printed %q", out.String())
	}
	session, rs := onlySession(t, state)
	if rec := sessionRecord(t, state, session); rec["integration_mode"] != "telemetry_only" || rec["state"] != "completed" {
		t.Errorf("session record %s", toJSON(rec))
	}
	sid2, turns := openCodeTurns(t, env)
	if sid2 != sid || len(turns) != 2 || turns[0] != first[0] {
		t.Fatalf("OpenCode turns %v in %s, want the first %v and one more", turns, sid2, first)
	}
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{{7620, 10000, "high", "moderate"}})
	assertFrames(t, rs, turns[1:])
}

// TestRunOpenCodePayloadAtLaunch: `lifeloop run --payload` places the
// envelope for OpenCode at launch: the mock finds it in the system prompt
// of the conversation request (not in the user's message), the process
// table never shows it (OPENCODE_CONFIG_CONTENT naming its file is set in
// the environment), and session.starting records it delivered.
func TestRunOpenCodePayloadAtLaunch(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	const marker = "LIFELOOP-LAUNCH-MARKER-opencode"
	pf := payloadFile(t, env.Dir, "pay_launch", marker)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--payload", pf, "--", bin, "run", "say", "hello")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	path, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), marker)
	if !ok || !strings.HasPrefix(path, ".system") {
		t.Errorf("payload in a conversation request: %v at %q, want in the system prompt", ok, path)
	}
	session, receipts := onlySession(t, state)
	starting := lastOf(receipts, "session.starting")
	prs, _ := starting["payload_receipts"].([]any)
	if len(prs) != 1 || dig(prs[0], "status") != "delivered" || dig(prs[0], "payload_id") != "pay_launch" {
		t.Errorf("session.starting payload receipts: %v", starting["payload_receipts"])
	}
	argv, _ := sessionRecord(t, state, session)["argv"].([]any)
	if strings.Contains(toJSON(argv), marker) || strings.Contains(toJSON(argv), "OPENCODE_CONFIG_CONTENT") {
		t.Errorf("recorded argv %v", argv)
	}
}

// TestRunOpenCodeToolTurn: a turn with a tool call is two model requests
// (OpenCode stores one assistant message per request, the first finishing
// with tool-calls): one frame, ended once by the second answer, and the
// usage of each request in turn — 5220 (moderate) then 7630 (high) of
// 10 000.
func TestRunOpenCodeToolTurn(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.OpenCodeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{ToolReply: "The tool ran.", UsageSequence: []mockmodel.Usage{
		{InputTokens: 5200, OutputTokens: 20},
		{InputTokens: 7600, OutputTokens: 30},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	env.SetOpenCodeLimits(testharness.OpenCodeLimits{Context: 10000, Output: 1000})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "run", "please", "RUN_TOOL", "now")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "The tool ran.") {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "opencode", "completed", "exit_code_0")
	sid, turns := openCodeTurns(t, env)
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	assertOpenCodeBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{
		{5220, 10000, "moderate", "low"},
		{7630, 10000, "high", "moderate"},
	})
	assertFrames(t, rs, turns)
	assertCausalOrder(t, rs)
	if n := len(mock.RequestsOfKind("claude")); n != 2 {
		t.Errorf("%d conversation requests, want 2 (the tool call and the answer)", n)
	}
}
