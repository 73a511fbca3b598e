package e2e

import (
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"

	_ "modernc.org/sqlite"
)

// OpenClaw (2026.9.6) end to end: the real binary, with the Node 26
// installed next to it first on its PATH (HarnessEnv.UseOpenClaw),
// against the mock's Messages API through the anthropic-messages provider
// HarnessEnv writes into ~/.openclaw/openclaw.json (window
// testharness.OpenClawContextWindow). An OpenClaw process takes several
// seconds to start a turn, so each test runs few turns, in parallel with
// the others (each has its own HOME, hence its own state folder).

// openClawTurns reads OpenClaw's database in env (read-only) and returns
// the session id of its one session and the frame ids of its user
// entries, in order.
func openClawTurns(t *testing.T, env *testharness.HarnessEnv) (string, []string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: env.OpenClawDB()}).EscapedPath()+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var ids []string
	rows, err := db.QueryContext(t.Context(), "SELECT DISTINCT session_id FROM transcript_events")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id string
		_ = rows.Scan(&id)
		ids = append(ids, id)
	}
	rows.Close()
	if len(ids) != 1 {
		t.Fatalf("OpenClaw sessions %v, want one", ids)
	}
	var n int
	if err := db.QueryRowContext(t.Context(), `SELECT COUNT(*) FROM transcript_events WHERE session_id = ?
		AND json_extract(event_json, '$.type') = 'message' AND json_extract(event_json, '$.message.role') = 'user'`, ids[0]).Scan(&n); err != nil {
		t.Fatal(err)
	}
	var frames []string
	for i := 1; i <= n; i++ {
		frames = append(frames, pi.FrameID(ids[0], i))
	}
	return ids[0], frames
}

// assertOpenClawBinding checks the session's receipts carry its id from
// the first one that has it, and that the binding receipt, when there is
// one, names the session in OpenClaw's database. OpenClaw creates its
// session when it starts the first turn, seconds after it started
// (longer than session.started waits on a loaded machine): the id then
// rides on the receipts from the first frame on.
func assertOpenClawBinding(t *testing.T, env *testharness.HarnessEnv, state, session string, rs []map[string]any, sid string) {
	t.Helper()
	started := receiptsFor(rs, "session.started")
	if len(started) == 1 && dig(started[0], "telemetry_summary", "binding") != nil {
		b := started[0]
		if p := dig(b, "telemetry_summary", "path"); p != env.OpenClawDB()+"#"+sid || dig(b, "telemetry_summary", "source") != "database" {
			t.Errorf("binding %s, want path %s#%s", toJSON(b["telemetry_summary"]), env.OpenClawDB(), sid)
		}
	}
	for _, r := range rs {
		if strings.HasPrefix(r["event"].(string), "frame.") {
			if p := dig(r, "telemetry_summary", "path"); p != nil && p != env.OpenClawDB()+"#"+sid {
				t.Errorf("%s read from %v, want %s#%s", r["event"], p, env.OpenClawDB(), sid)
			}
		}
	}
	assertHarnessSession(t, state, session, rs, sid)
}

// TestRunOpenClawAgent: `lifeloop run -- openclaw agent --local -m …`
// against the mock, offline: the answer is printed, the session
// completes, no OpenClaw process survives, OrgLoop's projection names
// the harness "other" (its vocabulary has no OpenClaw) and the adapter
// openclaw, and the turn read from OpenClaw's database gives the frames,
// the session id and the pressure with the mock's exact numbers (input
// 100 000 + cache write 500 + cache read 20 000 + output 7 = 120 507 of
// the 200 000 window: moderate). With --no-hooks no plugin is loaded
// (TestRunOpenClawHookBridge has it) and no bridge file is written.
func TestRunOpenClawAgent(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply, UsageSequence: []mockmodel.Usage{
		{InputTokens: 100000, CacheCreationInputTokens: 500, CacheReadInputTokens: 20000, OutputTokens: 7},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	state := stateDir(t)
	events := t.TempDir() + "/orgloop.jsonl"
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--no-hooks", "--format", "orgloop", "--events", events, "--", bin, "agent", "--local", "-m", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- openclaw agent --local: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if res.Stderr != "" && strings.Contains(res.Stderr, "lifeloop") {
		t.Errorf("lifeloop wrote to stderr while the harness ran: %q", res.Stderr)
	}
	projected := readJSONL(t, events)
	for _, e := range projected {
		if dig(e, "payload", "session", "harness") != "other" || dig(e, "payload", "session", "adapter") != "openclaw" {
			t.Errorf("OrgLoop event %s", toJSON(e))
		}
	}
	if len(projected) == 0 || projected[len(projected)-1]["type"] != "actor.stopped" || dig(projected[len(projected)-1], "payload", "lifecycle", "phase") != "completed" {
		t.Errorf("OrgLoop events end with %v", projected[len(projected)-1:])
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
	assertHarnessVersion(t, env, rs, bin)
	assertNoDrift(t, rs)
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
	for _, r := range mock.Requests() {
		if r.Path != "/v1/messages" {
			t.Errorf("OpenClaw asked the mock for %s %s", r.Method, r.Path)
		}
	}
	if n := len(mock.RequestsOfKind("claude")); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	sid, turns := openClawTurns(t, env)
	if len(turns) != 1 {
		t.Fatalf("turns %v, want one", turns)
	}
	assertOpenClawBinding(t, env, state, session, rs, sid)
	assertOpenCodePressure(t, rs, []wantPressure{{120507, 200000, "moderate", "low"}})
	assertFrames(t, rs, turns)
	if got := dig(lastOf(rs, "frame.ended"), "telemetry_summary", "stop_reason"); got != "stop" {
		t.Errorf("frame.ended stop_reason %v, want stop", got)
	}
	assertCausalOrder(t, rs)
	for k, src := range frameSources(rs) {
		if src != "database" {
			t.Errorf("%s from %v, want the database", k, src)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(state, "bridges", "openclaw-*")); len(files) != 0 {
		t.Errorf("bridge written with --no-hooks: %v", files)
	}
}

// TestRunOpenClawTUI: a prompt typed into `openclaw chat` (its local
// terminal UI) under lifeloop is answered, its turn is in the ledger
// (from the database), and Ctrl-D on the empty editor ends the session as
// completed with no process left.
func TestRunOpenClawTUI(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ll := lifeloopBin(t)
	const reply = "Interactive reply through lifeloop."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin, "chat"), 160, 50)
	testharness.OpenClawScreenReady(t, term, 0)
	term.Type("hello through lifeloop")
	if err := term.WaitFor("hello through lifeloop", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	if err := term.WaitFor(reply, runTimeout); err != nil {
		t.Fatal(err)
	}
	testharness.WaitReceipts(t, term, state, "frame.ended", 1, screenTimeout)
	term.Type("\x04")
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after Ctrl-D; output:\n%s", code, sig, term.Output())
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
	sid, turns := openClawTurns(t, env)
	assertFrames(t, rs, turns)
	assertOpenClawBinding(t, env, state, session, rs, sid)
	assertNoProcessLeft(t, env, term.Pid())
}

// openClawSummary is the mock's reply: it carries the headings OpenClaw's
// compaction (mode safeguard) requires of a summary, so the summary the
// mock writes is accepted.
const openClawSummary = "## Decisions\nnone\n## Open TODOs\nnone\n## Constraints/Rules\nnone\n## Pending user asks\nnone\n## Exact identifiers\nnone"

// TestRunOpenClawCompaction: two `openclaw agent --local` runs on one
// session (--session-id), each under lifeloop. The first turn's prompt
// is 185 540 tokens (input 150 000 + cache write 500 + cache read 35 000
// + output 40) of the 200 000 window: critical, and past OpenClaw's
// threshold (window - 20 000). OpenClaw compacts before the next turn:
// the second run (a continued session: lifeloop reads the rows written
// after its launch) records context.compacted with tokensBefore, then its
// own turn, whose 2 010 tokens are low.
func TestRunOpenClawCompaction(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: openClawSummary, Usage: mockmodel.Usage{InputTokens: 2000, OutputTokens: 10}, UsageSequence: []mockmodel.Usage{
		{InputTokens: 150000, CacheCreationInputTokens: 500, CacheReadInputTokens: 35000, OutputTokens: 40},
	}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	const sid = "11111111-2222-4333-8444-555555555555"
	var ledgers [][]map[string]any
	for i, prompt := range []string{"fill the context", "go on"} {
		state := stateDir(t)
		// The second run makes three model requests (OpenClaw's memory
		// flush, the summary, the turn): on a loaded machine that takes
		// longer than one turn's bound.
		res := env.Run(2*runTimeout, ll, "run", "--state-dir", state, "--", bin, "agent", "--local", "--session-id", sid, "-m", prompt)
		if res.ExitCode != 0 {
			t.Fatalf("run %d: exit %d\nstdout: %s\nstderr: %s", i+1, res.ExitCode, res.Stdout, res.Stderr)
		}
		session, rs := onlySession(t, state)
		assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
		assertHarnessSession(t, state, session, rs, sid)
		ledgers = append(ledgers, rs)
	}
	first, second := ledgers[0], ledgers[1]
	assertOpenCodePressure(t, first, []wantPressure{{185540, 200000, "critical", "low"}})
	assertFrames(t, first, []string{pi.FrameID(sid, 1)})
	if n := len(receiptsFor(first, "context.compacted")); n != 0 {
		t.Errorf("first run: %d context.compacted", n)
	}
	compacted := receiptsFor(second, "context.compacted")
	if len(compacted) != 1 {
		t.Fatalf("second run: context.compacted receipts %d: %v", len(compacted), eventsOf(second))
	}
	s := compacted[0]["telemetry_summary"]
	if num(dig(s, "pre_tokens")) != 185540 || num(dig(s, "window")) != 200000 || dig(s, "source") != "database" {
		t.Errorf("context.compacted %s", toJSON(s))
	}
	// The continued session's turns are numbered from the launch on.
	assertFrames(t, second, []string{pi.FrameID(sid, 1)})
	var order []string
	for _, r := range second {
		switch r["event"] {
		case "context.compacted", "frame.opening", "frame.ended":
			order = append(order, r["event"].(string))
		}
	}
	if strings.Join(order, ",") != "context.compacted,frame.opening,frame.ended" {
		t.Errorf("second run order %v", order)
	}
	for _, r := range databasePressure(second) {
		t.Logf("second run pressure %s", toJSON(r["telemetry_summary"]))
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// TestRunOpenClawConcurrentSameFolder starts two `lifeloop run -- openclaw
// agent --local` in the same folder at once. One embedded OpenClaw owns a
// state folder at a time, so each has its own (OPENCLAW_STATE_DIR, with
// the same configuration): each lifeloop session is bound to the session
// in its own state folder's database, the one holding its own prompt.
func TestRunOpenClawConcurrentSameFolder(t *testing.T) {
	skipShort(t)
	t.Parallel()
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UseOpenClaw(t)
	cfg, err := os.ReadFile(filepath.Join(env.OpenClawStateDir(), "openclaw.json"))
	if err != nil {
		t.Fatal(err)
	}
	state := stateDir(t)
	var wg sync.WaitGroup
	dbs := make([]string, len(concurrentPrompts))
	errs := make([]error, len(concurrentPrompts))
	for i, p := range concurrentPrompts {
		dir := filepath.Join(env.Home, fmt.Sprintf("openclaw-state-%d", i))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "openclaw.json"), cfg, 0o600); err != nil {
			t.Fatal(err)
		}
		dbs[i] = filepath.Join(dir, "agents", "main", "agent", "openclaw-agent.sqlite")
		cmd := env.Command(ll, "run", "--state-dir", state, "--", bin, "agent", "--local", "-m", p)
		cmd.Env = append(cmd.Env, "OPENCLAW_STATE_DIR="+dir)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := cmd.CombinedOutput(); err != nil {
				errs[i] = fmt.Errorf("%w: %s", err, out)
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	ledgers := sessionLedgers(t, state)
	if len(ledgers) != len(concurrentPrompts) {
		t.Fatalf("%d sessions", len(ledgers))
	}
	seen := map[string]bool{}
	for session, rs := range ledgers {
		argv, _ := sessionRecord(t, state, session)["argv"].([]any)
		prompt := argv[len(argv)-1].(string)
		i := slices.Index(concurrentPrompts, prompt)
		// The database's receipts name the session they read (the frames
		// come from the bridge plugin, which names none; a frame the
		// database confirmed names it under "transcript").
		var path string
		for _, r := range rs {
			if p, ok := dig(r, "telemetry_summary", "path").(string); ok && dig(r, "telemetry_summary", "source") == "database" {
				path = p
			}
			// A hook's frame that the database's row confirmed carries the
			// row's provenance (the database read after the hook).
			if p, ok := dig(r, "telemetry_summary", "transcript", "path").(string); ok && path == "" {
				path = p
			}
		}
		db, sid, _ := strings.Cut(path, "#")
		if db != dbs[i] || sid == "" {
			t.Errorf("session %s (prompt %q) read from %q, want %s#<id>", session, prompt, path, dbs[i])
		}
		assertHarnessSession(t, state, session, rs, sid)
		if seen[sid] {
			t.Errorf("both sessions bound to %s", sid)
		}
		seen[sid] = true
		assertSessionLifecycle(t, rs, "openclaw", "completed", "exit_code_0")
	}
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}
