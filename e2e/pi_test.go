package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/pi"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// Pi (1.6.0, with the project's Node 26; 0.73.1 through
// LIFELOOP_HARNESS_DIR or LIFELOOP_PI_BIN) end to end: the real
// binary against the mock's Messages API through the anthropic-messages
// provider HarnessEnv writes into ~/.pi/agent/models.json (window
// testharness.PiContextWindow).

// piQuit ends Pi's TUI with /quit.
func piQuit(t *testing.T, term *testharness.Terminal) {
	t.Helper()
	testharness.PiCommand(t, term, "/quit")
}

// piSession returns the user-message frame ids and the session id of a
// Pi session file.
func piSession(t *testing.T, path string) ([]string, string) {
	t.Helper()
	var sid string
	var frames []string
	n := 0
	for _, l := range readJSONL(t, path) {
		switch {
		case l["type"] == "session":
			sid, _ = l["id"].(string)
		case l["type"] == "message" && dig(l, "message", "role") == "user":
			n++
			frames = append(frames, pi.FrameID(sid, n))
		}
	}
	return frames, sid
}

// TestRunPiPrint: `lifeloop run -- pi -p` completes, with its events
// projected for OrgLoop (harness pi), and leaves no process.
func TestRunPiPrint(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	const reply = "Wrapped answer from the mock."
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	events := filepath.Join(t.TempDir(), "orgloop.jsonl")
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--format", "orgloop", "--events", events, "--", bin, "-p", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, reply) {
		t.Fatalf("lifeloop run -- pi -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	// OrgLoop's projection names the harness pi.
	projected := readJSONL(t, events)
	for _, e := range projected {
		if dig(e, "payload", "session", "harness") != "pi" || dig(e, "payload", "session", "adapter") != "pi" {
			t.Errorf("OrgLoop event %s", toJSON(e))
		}
	}
	if len(projected) == 0 || projected[len(projected)-1]["type"] != "actor.stopped" || dig(projected[len(projected)-1], "payload", "lifecycle", "phase") != "completed" {
		t.Errorf("OrgLoop events end with %v", projected[len(projected)-1:])
	}
	if res.Stderr != "" {
		t.Errorf("lifeloop wrote to stderr while the harness ran: %q", res.Stderr)
	}
	if n := len(mock.RequestsOfKind("claude")); n != 1 {
		t.Errorf("%d model requests, want 1", n)
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "pi", "completed", "exit_code_0")
	assertHarnessVersion(t, env, receipts, bin)
	if procs := env.StrayProcesses(); len(procs) > 0 {
		t.Errorf("processes left behind: %+v", procs)
	}
}

// startPiTUIUnderLifeloop starts `lifeloop run -- pi` in a PTY and waits
// for Pi's editor.
func startPiTUIUnderLifeloop(t *testing.T, reply string, extra ...string) (*testharness.Terminal, *testharness.HarnessEnv, string, *mockmodel.Server) {
	t.Helper()
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: reply})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	args := append([]string{"run", "--state-dir", state, "--tick", "1s"}, extra...)
	term := testharness.StartTerminal(t, env.Command(ll, append(args, "--", bin)...), 120, 40)
	testharness.PiScreenReady(t, term, 0)
	return term, env, state, mock
}

// TestRunPiTUI: a prompt typed into Pi's TUI under lifeloop is answered,
// its turn is in the ledger (from the session file), and /quit ends the
// session as completed with no process left.
func TestRunPiTUI(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state, _ := startPiTUIUnderLifeloop(t, reply)
	term.Type("hello through lifeloop")
	if err := term.WaitFor("hello through lifeloop", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	// The turn's end in the ledger, read from Pi's session file.
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
		_, rs := onlySession(t, state)
		if lastOf(rs, "frame.ended") != nil && lastOf(rs, "supervisor.tick") != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no frame.ended and supervisor.tick: %v\n%s", eventsOf(rs), term.Output())
		}
	}
	if err := term.WaitFor(reply, screenTimeout); err != nil {
		t.Fatal(err)
	}
	piQuit(t, term)
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v after /quit; output:\n%s", code, sig, term.Output())
	}
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "pi", "completed", "exit_code_0")
	frames, sid := piSession(t, onlyOne(t, "session file", env.PiSessions()))
	assertFrames(t, receipts, frames)
	if r := lastOf(receipts, "frame.ended"); r["harness_session_id"] != sid {
		t.Errorf("frame.ended harness_session_id %v, want %s", r["harness_session_id"], sid)
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// TestRunPiTUISigint: Pi exits 130 on SIGINT; lifeloop records the session
// as stopped by the signal, cancelled.
func TestRunPiTUISigint(t *testing.T) {
	skipShort(t)
	term, env, state, _ := startPiTUIUnderLifeloop(t, "unused")
	if err := term.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	code, sig, err := term.WaitTimeout(screenTimeout)
	if err != nil {
		t.Fatal(err)
	}
	if sig != 0 {
		t.Fatalf("lifeloop died of %v", sig)
	}
	t.Logf("lifeloop exited %d after SIGINT", code)
	_, receipts := onlySession(t, state)
	assertSessionLifecycle(t, receipts, "pi", "stopped", "sigint")
	if got := dig(lastOf(receipts, "session.ended"), "telemetry_summary", "outcome"); got != "cancelled" {
		t.Errorf("outcome %v, want cancelled", got)
	}
	if r := lastOf(receipts, "session.ending"); dig(r, "telemetry_summary", "reason") != "sigint" {
		t.Errorf("session.ending %v, want reason sigint", toJSON(r))
	}
	assertNoProcessLeft(t, env, term.Pid())
}

// piToolUsage is a tool turn's two replies: 110 200 then 161 300 tokens
// of the 200 000 window (55.1 % moderate, 80.65 % high), both under Pi's
// compaction threshold (200 000 - 16 384).
var piToolUsage = []mockmodel.Usage{
	{InputTokens: 100000, CacheReadInputTokens: 10000, OutputTokens: 200},
	{InputTokens: 150000, CacheCreationInputTokens: 1000, CacheReadInputTokens: 10000, OutputTokens: 300},
}

// TestRunPiTelemetry wraps `pi -p` around a tool turn: two pressure
// receipts with the mock's numbers, one frame with its four events, the
// session file's id on every receipt from the binding on. --no-hooks
// leaves the frames to the session file alone.
func TestRunPiTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: piToolUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--no-hooks", "--", bin, "-p", "RUN_TOOL please")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, mockmodel.DefaultToolReply) {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "pi", "completed", "exit_code_0")
	file := onlyOne(t, "session file", env.PiSessions())
	frames, sid := piSession(t, file)
	if !strings.HasSuffix(filepath.Base(file), "_"+sid+".jsonl") {
		t.Errorf("session file %s for session %s", file, sid)
	}
	if b := bindingOf(t, rs); dig(b, "telemetry_summary", "path") != file || dig(b, "telemetry_summary", "source") != "transcript" {
		t.Errorf("binding %s, want path %s", toJSON(b["telemetry_summary"]), file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{110200, testharness.PiContextWindow, "moderate", "low"},
		{161300, testharness.PiContextWindow, "high", "moderate"},
	})
	assertFrames(t, rs, frames)
	if got := dig(lastOf(rs, "frame.ended"), "telemetry_summary", "stop_reason"); got != "stop" {
		t.Errorf("frame.ended stop_reason %v, want stop", got)
	}
	if len(receiptsFor(rs, "capability.degraded")) != 0 {
		t.Errorf("unexpected degradation: %v", eventsOf(rs))
	}
}

// TestRunPiCompactionTelemetry: two prompts in one `pi -p` run; the first
// reply reports 190 540 tokens (critical, over Pi's threshold of
// 183 616), so Pi compacts before sending the second prompt. lifeloop
// records context.compacted with Pi's tokensBefore, the reset to low, and
// the second reply's level.
func TestRunPiCompactionTelemetry(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	big := mockmodel.Usage{InputTokens: 150000, CacheReadInputTokens: 40000, CacheCreationInputTokens: 500, OutputTokens: 40}
	mock := startMock(t, mockmodel.Config{UsageSequence: []mockmodel.Usage{big}})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	// Pi keeps the newest keepRecentTokens (default 20 000, estimated
	// from the text) out of a summary; 1.x compacts only when something
	// older is left to summarize, which these short prompts never leave.
	env.PiSettings(t, map[string]any{"compaction": map[string]any{"keepRecentTokens": 1}})
	state := stateDir(t)
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "first prompt", "second prompt")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	file := onlyOne(t, "session file", env.PiSessions())
	var entry map[string]any
	for _, l := range readJSONL(t, file) {
		if l["type"] == "compaction" {
			entry = l
		}
	}
	if entry == nil {
		t.Fatalf("Pi did not compact: %v", eventsOf(rs))
	}
	compacted := telemetryCompactions(rs)
	if len(compacted) != 1 {
		t.Fatalf("context.compacted receipts from the session file %d: %v", len(compacted), eventsOf(rs))
	}
	s := compacted[0]["telemetry_summary"]
	if num(dig(s, "pre_tokens")) != 190540 || num(dig(entry, "tokensBefore")) != 190540 || num(dig(s, "post_tokens")) != 0 ||
		dig(s, "trigger") != "harness" || dig(s, "path") != file || num(dig(s, "window")) != testharness.PiContextWindow {
		t.Errorf("context.compacted %s, want pre 190540 (tokensBefore %v), post 0 (unknown) from %s", toJSON(s), entry["tokensBefore"], file)
	}
	assertPressure(t, rs, []wantPressure{
		{190540, testharness.PiContextWindow, "critical", "low"},
		{0, testharness.PiContextWindow, "low", "critical"},
	})
	if r := resetOf(rs); r == nil {
		t.Errorf("no pressure reset after compaction: %v", eventsOf(rs))
	}
	frames, sid := piSession(t, file)
	assertFrames(t, rs, frames)
	assertHarnessSession(t, state, session, rs, sid)
	// Pi's summary requests offer no tools: side requests, which consume
	// no scripted usage.
	if n := len(mock.RequestsOfKind("claude-side")); n == 0 {
		t.Errorf("no summary request")
	}
}

// TestWatchPi observes a `pi -p` tool turn that lifeloop did not launch.
func TestWatchPi(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	mock := startMock(t, mockmodel.Config{UsageSequence: piToolUsage})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state, session, rs := watchHarness(t, env, "pi", bin, "-p", "RUN_TOOL please")
	file := onlyOne(t, "session file", env.PiSessions())
	frames, sid := piSession(t, file)
	if dig(bindingOf(t, rs), "telemetry_summary", "path") != file {
		t.Errorf("binding not to %s", file)
	}
	assertHarnessSession(t, state, session, rs, sid)
	assertPressure(t, rs, []wantPressure{
		{110200, testharness.PiContextWindow, "moderate", "low"},
		{161300, testharness.PiContextWindow, "high", "moderate"},
	})
	assertFrames(t, rs, frames)
}

// TestRunPiConcurrentSameFolder starts two `lifeloop run -- pi -p` in the
// same folder at once: each session must be bound to its own session file
// (the one holding its own prompt) and carry its own Pi session id. Pi's
// command line cannot choose a new session's file; the bridge extension
// tells lifeloop which file its Pi writes. (Without the bridge,
// --no-hooks, discovery goes by order and overlapping launches were seen
// swapped.)
func TestRunPiConcurrentSameFolder(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)
	state := stateDir(t)
	ledgers := runConcurrentPrints(t, env, ll, state, bin)
	seen := map[string]bool{}
	for session, rs := range ledgers {
		argv, _ := sessionRecord(t, state, session)["argv"].([]any)
		prompt := argv[len(argv)-1].(string)
		// The file of the Pi session the session.started binds (the
		// bridge extension names it before the transcript is read).
		bound := bindingOf(t, rs)["harness_session_id"]
		path := ""
		for _, f := range env.PiSessions() {
			if _, sid := piSession(t, f); sid == bound {
				path = f
			}
		}
		if path == "" {
			t.Fatalf("session %s is bound to Pi session %v, which has no file in %v", session, bound, env.PiSessions())
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(data), prompt) {
			t.Errorf("session %s (prompt %q) is bound to %s, which does not hold its prompt", session, prompt, path)
		}
		_, sid := piSession(t, path)
		assertHarnessSession(t, state, session, rs, sid)
		if seen[path] {
			t.Errorf("both sessions bound to %s", path)
		}
		seen[path] = true
	}
}

// TestRunPiTUINewSession: /new in Pi's TUI starts a second session (a new
// file) in the same process; lifeloop follows it: both Pi session ids
// bound (in session.json and on the receipts after each), each turn's
// frames under its own session, and the stream closes the first harness
// session and opens the second (assertSwitched: two started/ended pairs,
// OrgLoop and HCP follow).
func TestRunPiTUINewSession(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state, _ := startPiTUIUnderLifeloop(t, reply)
	turn := func(prompt string, n int) {
		t.Helper()
		term.Type(prompt)
		if err := term.WaitFor(prompt, screenTimeout); err != nil {
			t.Fatal(err)
		}
		term.Type("\r")
		for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
			if _, rs := onlySession(t, state); len(receiptsFor(rs, "frame.ended")) >= n {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("turn %d never ended; terminal:\n%s", n, term.Output())
			}
		}
	}
	turn("first session prompt", 1)
	testharness.PiCommand(t, term, "/new")
	// The new session's start is reported by the bridge extension: the
	// stream closes the first harness session and opens the second (the
	// process did not restart), and the new harness session id is bound
	// from then on.
	for deadline := time.Now().Add(screenTimeout); ; time.Sleep(100 * time.Millisecond) {
		session, _ := onlySession(t, state)
		if ids, _ := sessionRecord(t, state, session)["harness_session_ids"].([]any); len(ids) == 2 {
			break
		}
		if time.Now().After(deadline) {
			_, rs := onlySession(t, state)
			t.Fatalf("the session /new started was never bound: %v\n%s", eventsOf(rs), term.Output())
		}
	}
	turn("second session prompt", 2)
	piQuit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)", code, sig, err)
	}
	files := env.PiSessions()
	if len(files) != 2 {
		t.Fatalf("session files %v", files)
	}
	session, rs := onlySession(t, state)
	var want, sids []string
	for _, f := range files {
		frames, sid := piSession(t, f)
		want, sids = append(want, frames...), append(sids, sid)
	}
	assertFrames(t, rs, orderByReceipts(rs, want))
	assertFramesOnce(t, rs)
	for _, r := range receiptsFor(rs, "frame.ended") {
		if id := frameOfReceipt(r); !strings.HasPrefix(id, fmt.Sprint(r["harness_session_id"])+"#") {
			t.Errorf("frame %s ended under harness session %v", id, r["harness_session_id"])
		}
	}
	ids, _ := sessionRecord(t, state, session)["harness_session_ids"].([]any)
	for _, sid := range sids {
		if !slices.Contains(ids, any(sid)) {
			t.Errorf("session.json harness_session_ids %v, want %v", ids, sids)
		}
	}
	assertSwitched(t, env, state, "pi")
	assertNoProcessLeft(t, env, term.Pid())
}
