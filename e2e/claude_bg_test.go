package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// bgSession is a lifeloop session recorded for one of Claude's
// background sessions, as its session.json and ledger say.
type bgSession struct {
	ID      string
	Pid     int
	State   string
	Harness []string
	Parent  map[string]any
	// Continues is the session that recorded the same harness session
	// before, in a process that ended.
	Continues string
	Receipts  []map[string]any
}

// bgSessions reads every session under state but skip (the wrapped TUI's).
func bgSessions(t *testing.T, state, skip string) map[string]bgSession {
	t.Helper()
	out := map[string]bgSession{}
	for id, rs := range sessionLedgers(t, state) {
		if id == skip {
			continue
		}
		b, err := os.ReadFile(filepath.Join(state, "sessions", id, "session.json"))
		if err != nil {
			continue
		}
		var rec struct {
			Pid       int            `json:"pid"`
			State     string         `json:"state"`
			Harness   []string       `json:"harness_session_ids"`
			Parent    map[string]any `json:"parent"`
			Continues string         `json:"continues"`
		}
		if json.Unmarshal(b, &rec) != nil {
			continue
		}
		out[id] = bgSession{ID: id, Pid: rec.Pid, State: rec.State, Harness: rec.Harness, Parent: rec.Parent, Continues: rec.Continues, Receipts: rs}
	}
	return out
}

// ownWrapperStarts reads the log of the person's own process wrapper:
// pid → the first argument of the Claude command line it exec'd.
func ownWrapperStarts(t *testing.T, log string) map[int]string {
	t.Helper()
	out := map[int]string{}
	b, _ := os.ReadFile(log)
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		pid, arg, _ := strings.Cut(line, " ")
		if n, err := strconv.Atoi(pid); err == nil {
			out[n] = arg
		}
	}
	return out
}

// bgKind is what the person's wrapper saw pid start as: "daemon",
// "pty-host", "cold", "spare" or "".
func bgKind(starts map[int]string, pid int) string {
	arg, ok := starts[pid]
	switch {
	case !ok:
		return ""
	case arg == "daemon":
		return "daemon"
	case arg == "--bg-pty-host":
		return "pty-host"
	case arg == "--bg-spare":
		return "spare"
	case arg == "--session-id":
		return "cold"
	}
	return "other"
}

// TestClaudeBackgroundSessions: `lifeloop run -- claude` makes lifeloop
// Claude's process wrapper, chaining the person's own (the user setting
// processWrapper, a script that logs and execs). The `claude --bg` the
// wrapped TUI runs, three at once per turn (its Bash tool) until one went
// cold and one to a warm spare, more started beside them, cold and from a
// warm spare, and one under the wrapper `host apply --process-wrapper`
// set, each become a lifeloop session of their own: the binding of
// Claude's session id, frames, pressure, the pid, a parent link to the
// TUI's session for those it started, cold or spare (and none for the
// others), a `top --json` row, and session.ended when Claude stops them.
// The daemon and PTY hosts are no sessions; the person's wrapper ran for
// every process, and `host remove` gave its setting back.
func TestClaudeBackgroundSessions(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{
		Reply: "bg reply from the mock",
		// Three at once: at least one finds no warm spare ready and goes
		// cold.
		ToolCommand: "for i in 1 2 3; do " + bin + " --bg \"bg from tui $i\" & done; wait",
		Usage:       mockmodel.Usage{InputTokens: 120000, OutputTokens: 5},
	})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	t.Cleanup(func() {
		// The test's context is over by now: a command of its own.
		stop := exec.Command(bin, "daemon", "stop", "--any")
		stop.Env, stop.Dir = env.Env(), env.Dir
		_ = stop.Run()
	})

	// The person's own wrapper, set in their user settings.
	wrapLog := filepath.Join(env.Home, "own-wrapper.log")
	wrapper := filepath.Join(env.Home, "own-wrapper.sh")
	script := "#!/bin/sh\necho \"$$ $2\" >> " + wrapLog + "\nexec \"$@\"\n"
	if err := os.WriteFile(wrapper, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	settings, _ := json.Marshal(map[string]any{"processWrapper": wrapper})
	if err := os.WriteFile(filepath.Join(env.Home, ".claude", "settings.json"), settings, 0o600); err != nil {
		t.Fatal(err)
	}

	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--", bin, "--permission-mode", "acceptEdits", "--allowedTools", "Bash"), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	tuiID, _ := onlySession(t, state)
	tuiHarness := ""
	waitFor(t, "the TUI's harness session id", func() bool {
		b, _ := os.ReadFile(filepath.Join(state, "sessions", tuiID, "session.json"))
		var rec struct {
			IDs []string `json:"harness_session_ids"`
		}
		_ = json.Unmarshal(b, &rec)
		if len(rec.IDs) > 0 {
			tuiHarness = rec.IDs[0]
		}
		return tuiHarness != ""
	}, func() string { return "" })

	// A background session whose turn ended: frames, binding, pressure.
	done := func(s bgSession) bool {
		return lastOf(s.Receipts, "frame.ended") != nil && len(s.Harness) > 0 && lastOf(s.Receipts, "context.pressure_observed") != nil
	}
	// Each turn of the TUI runs three `claude --bg` at once, until one
	// went cold and one was served by a warm spare (which one a start
	// gets is Claude's choice: the daemon keeps one spare ready, and the
	// first start after the daemon came up often goes cold).
	fromTUI := map[string]bgSession{}
	tuiKinds := map[string]bool{}
	for turn := 1; turn <= 3 && !(tuiKinds["cold"] && tuiKinds["spare"]); turn++ {
		waitFor(t, fmt.Sprintf("the TUI's turn %d over", turn-1), func() bool {
			n := 0
			for _, r := range sessionLedgers(t, state)[tuiID] {
				if r["event"] == "frame.ended" {
					n++
				}
			}
			return n >= turn-1
		}, func() string { return "" })
		prompt := fmt.Sprintf("start some in the background, turn %d %s", turn, mockmodel.DefaultToolTrigger)
		term.Type(prompt)
		if err := term.WaitFor(prompt, screenTimeout); err != nil {
			t.Fatal(err)
		}
		term.Type("\r")
		waitFor(t, fmt.Sprintf("the TUI's %d background sessions recorded with a finished turn", 3*turn), func() bool {
			for id, s := range bgSessions(t, state, tuiID) {
				if done(s) {
					fromTUI[id] = s
				}
			}
			return len(fromTUI) >= 3*turn
		}, func() string {
			wl, _ := os.ReadFile(wrapLog)
			dl, _ := os.ReadFile(filepath.Join(env.Home, ".claude", "daemon.log"))
			out := term.Output()
			return fmt.Sprintf("sessions %v\nwrapper log:\n%s\ndaemon log:\n%s\nscreen tail:\n%q", bgSessions(t, state, tuiID), wl, dl, out[max(0, len(out)-3000):])
		})
		tuiStarts := ownWrapperStarts(t, wrapLog)
		for _, s := range fromTUI {
			tuiKinds[bgKind(tuiStarts, s.Pid)] = true
		}
	}
	// Every one names the session that ran `claude --bg`: a cold one in
	// its environment, a warm spare (started before anyone asked for it)
	// through what the daemon recorded of its claim.
	var first bgSession
	tuiStarts := ownWrapperStarts(t, wrapLog)
	for _, s := range fromTUI {
		switch kind := bgKind(tuiStarts, s.Pid); kind {
		case "cold", "spare":
			if s.Parent["harness_session_id"] != tuiHarness || s.Parent["session_id"] != tuiID {
				t.Errorf("parent of the TUI's %s background session %s: %v, want harness session %s of lifeloop session %s", kind, s.ID, s.Parent, tuiHarness, tuiID)
			}
			if kind == "cold" || first.ID == "" {
				first = s
			}
		default:
			t.Errorf("session %s follows pid %d, which the person's wrapper saw start as %q", s.ID, s.Pid, kind)
		}
	}
	// Which kinds the TUI's starts get is Claude's choice: in three turns
	// it has handed them all to spares, or (less often) all cold; each
	// kind that came is checked above, and both are wanted below, among
	// all the starts.
	if first.ID == "" {
		t.Fatalf("no background session of the TUI's recorded: %v", fromTUI)
	}
	t.Logf("the TUI's background sessions started as %v", tuiKinds)

	// More beside it, two at once, until one came cold and one from a
	// warm spare (which one a start gets is Claude's choice).
	kinds := map[string]bool{}
	for round := 0; round < 4 && !(kinds["cold"] && kinds["spare"]); round++ {
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Go(func() {
				res := env.Run(time.Minute, bin, "--bg", "bg beside "+strconv.Itoa(round)+"."+strconv.Itoa(i))
				if res.ExitCode != 0 {
					t.Errorf("claude --bg: rc %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
				}
			})
		}
		wg.Wait()
		want := len(fromTUI) + 2*(round+1)
		waitFor(t, fmt.Sprintf("%d background sessions with a finished turn", want), func() bool {
			n := 0
			for _, s := range bgSessions(t, state, tuiID) {
				if done(s) {
					n++
				}
			}
			return n >= want
		}, func() string { return fmt.Sprint(bgSessions(t, state, tuiID)) })
		starts := ownWrapperStarts(t, wrapLog)
		for _, s := range bgSessions(t, state, tuiID) {
			kinds[bgKind(starts, s.Pid)] = true
		}
	}
	// Which kind a start gets is Claude's: the daemon spawns a spare again
	// as soon as one is claimed (2.1.332 dispatches cold only when it has
	// none, or for a spare of another version), so under load every start
	// can find one — a full run had 17 of 17 served by spares. Each kind
	// that came was checked above and below; one that did not is said.
	for _, k := range []string{"cold", "spare"} {
		if !kinds[k] {
			t.Logf("no %s start came in this run (Claude's choice): its parent link and binding are not proven here", k)
		}
	}

	// The daemon and the PTY hosts went through the person's wrapper (and
	// lifeloop's), and are no sessions.
	starts := ownWrapperStarts(t, wrapLog)
	seen := map[string]int{}
	for pid := range starts {
		seen[bgKind(starts, pid)]++
	}
	if seen["daemon"] == 0 || seen["pty-host"] == 0 {
		t.Errorf("the person's wrapper saw %v, want the daemon and PTY hosts too", seen)
	}
	bg := bgSessions(t, state, tuiID)
	for _, s := range bg {
		if k := bgKind(starts, s.Pid); k != "cold" && k != "spare" {
			t.Errorf("session %s follows pid %d, which started as %q", s.ID, s.Pid, k)
		}
		if _, tui := fromTUI[s.ID]; !tui && s.Parent != nil {
			t.Errorf("session %s, started outside any session, has parent %v", s.ID, s.Parent)
		}
		if r := lastOf(s.Receipts, "session.started"); r == nil || dig(r, "telemetry_summary", "binding") != "harness_session_id" {
			t.Errorf("session %s: no binding session.started: %v", s.ID, eventsOf(s.Receipts))
		}
	}

	// top lists them, with the pid, Claude's session and the parent.
	res := env.Run(time.Minute, ll, "top", "--json", "--state-dir", state)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &rows); err != nil {
		t.Fatalf("top --json: %v: %s %s", err, res.Stdout, res.Stderr)
	}
	for _, s := range bg {
		i := slices.IndexFunc(rows, func(r map[string]any) bool { return r["id"] == s.ID })
		if i < 0 {
			t.Errorf("top --json has no row for background session %s", s.ID)
			continue
		}
		if rows[i]["harness_session_id"] != s.Harness[0] || num(rows[i]["pid"]) != s.Pid {
			t.Errorf("top row %v, want harness session %s, pid %d", rows[i], s.Harness[0], s.Pid)
		}
		if s.ID == first.ID && dig(rows[i], "parent", "session_id") != tuiID {
			t.Errorf("top row of %s: parent %v, want %s", s.ID, rows[i]["parent"], tuiID)
		}
	}

	// `claude stop` ends one; `claude daemon stop --any` the rest.
	short := first.Harness[0][:8]
	if r := env.Run(time.Minute, bin, "stop", short); r.ExitCode != 0 {
		t.Fatalf("claude stop %s: rc %d: %s %s", short, r.ExitCode, r.Stdout, r.Stderr)
	}
	ended := func(id string) func() bool {
		return func() bool {
			s := bgSessions(t, state, tuiID)[id]
			return s.State == "completed" && lastOf(s.Receipts, "session.ended") != nil
		}
	}
	waitFor(t, "the stopped session's end", ended(first.ID), func() string { return fmt.Sprint(bgSessions(t, state, tuiID)[first.ID]) })
	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	for id := range bg {
		waitFor(t, "the end of "+id, ended(id), func() string { return fmt.Sprint(bgSessions(t, state, tuiID)[id]) })
		if got := dig(lastOf(bgSessions(t, state, tuiID)[id].Receipts, "session.ended"), "telemetry_summary", "reason"); got != "watch_harness_exited" {
			t.Errorf("session %s ended with reason %v, want watch_harness_exited", id, got)
		}
	}

	// Installed for a person's own `claude --bg`: the user setting, which
	// chains the wrapper set there; remove puts it back.
	if r := env.Run(time.Minute, ll, "host", "apply", "--adapter", "claude", "--process-wrapper"); r.ExitCode != 0 {
		t.Fatalf("host apply --process-wrapper: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	before := len(ownWrapperStarts(t, wrapLog))
	if r := env.Run(time.Minute, bin, "--bg", "bg with the wrapper installed"); r.ExitCode != 0 {
		t.Fatalf("claude --bg with the wrapper installed: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	var installed bgSession
	waitFor(t, "a session of the installed wrapper with a finished turn", func() bool {
		for id, s := range bgSessions(t, state, tuiID) {
			if _, old := bg[id]; !old && done(s) {
				installed = s
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprint(bgSessions(t, state, tuiID)) })
	if installed.Parent != nil {
		t.Errorf("session %s, started from a shell, has parent %v", installed.ID, installed.Parent)
	}
	if len(ownWrapperStarts(t, wrapLog)) <= before {
		t.Error("the person's wrapper did not run under the installed wrapper")
	}
	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the end of "+installed.ID, ended(installed.ID), func() string { return fmt.Sprint(bgSessions(t, state, tuiID)[installed.ID]) })
	if r := env.Run(time.Minute, ll, "host", "remove", "--adapter", "claude", "--process-wrapper"); r.ExitCode != 0 {
		t.Fatalf("host remove --process-wrapper: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	var after map[string]any
	b, _ := os.ReadFile(filepath.Join(env.Home, ".claude", "settings.json"))
	if err := json.Unmarshal(b, &after); err != nil || after["processWrapper"] != wrapper {
		t.Errorf("settings after host remove: %s (%v), want processWrapper %q", b, err, wrapper)
	}

	for _, s := range bgSessions(t, state, tuiID) {
		t.Logf("background session %s: %s pid %d, parent %v, %d receipts: %v", s.ID, bgKind(starts, s.Pid), s.Pid, s.Parent, len(s.Receipts), eventsOf(s.Receipts))
	}
	testharness.ClaudeExit(t, term)
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatal(err)
	}
}

// waitFor polls ok every 200 ms until it holds, failing the test after
// screenTimeout with what seen says.
func waitFor(t *testing.T, what string, ok func() bool, seen func() string) {
	t.Helper()
	deadline := time.Now().Add(screenTimeout)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %s; seen: %s", what, screenTimeout, seen())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
