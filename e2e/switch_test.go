package e2e

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
)

// assertSwitched checks the ledger of a process whose harness switched to
// a new harness session once, after the process ended: one coherent
// stream of two harness sessions, the first closed by a session.ended
// with reason harness_session_switched under its own id, the second
// opened by session.starting/session.started under the new one, whose id
// later receipts carry and `status`/`top` name; OrgLoop sees each session started and stopped
// (its own dedupe keys) and HCP pauses the session with the old harness
// session id and runs it again with the new one, closing it once.
//
// The first session.started carries the old id, except for OpenCode's
// TUI: it creates its first session at the first prompt, after
// session.started stopped waiting to be named, so there a later receipt
// of the first harness session carries the old id.
func assertSwitched(t *testing.T, env *testharness.HarnessEnv, state, harness string) {
	t.Helper()
	session, rs := onlySession(t, state)
	if err := checkCoherent(rs); err != nil {
		t.Errorf("incoherent stream: %v\n%v", err, eventsOf(rs))
	}
	started, ended := receiptsFor(rs, "session.started"), receiptsFor(rs, "session.ended")
	if len(started) != 2 || len(ended) != 2 || len(receiptsFor(rs, "session.starting")) != 2 {
		t.Fatalf("want two started/ended pairs: %v", eventsOf(rs))
	}
	old, cur := started[0]["harness_session_id"], started[1]["harness_session_id"]
	if old == nil && harness == contract.HarnessOpenCode {
		old = ended[0]["harness_session_id"]
		if !slices.ContainsFunc(rs, func(r map[string]any) bool { return r["event"] != "session.ended" && r["harness_session_id"] == old }) {
			t.Errorf("no receipt of the first harness session %v before its end: %v", old, eventsOf(rs))
		}
	}
	if old == nil || cur == nil || old == cur {
		t.Fatalf("harness session ids %v then %v", old, cur)
	}
	if dig(ended[0], "telemetry_summary", "reason") != contract.HarnessSessionSwitched || ended[0]["harness_session_id"] != old {
		t.Errorf("the first session.ended: %v", ended[0])
	}
	if dig(started[1], "telemetry_summary", "reason") != contract.HarnessSessionSwitched {
		t.Errorf("the second session.started: %v", started[1])
	}
	if ended[1]["harness_session_id"] != cur || dig(ended[1], "telemetry_summary", "reason") == contract.HarnessSessionSwitched {
		t.Errorf("the last session.ended: %v", ended[1])
	}
	after := false
	for _, r := range rs {
		if r["receipt_id"] == started[1]["receipt_id"] {
			after = true
			continue
		}
		if after && r["harness_session_id"] != cur {
			t.Errorf("%v after the switch carries harness session %v, want %v", r["event"], r["harness_session_id"], cur)
		}
	}

	var st map[string]any
	llJSON(t, env, &st, "status", "--state-dir", state, "--json", session)
	if st["harness_session_id"] != cur {
		t.Errorf("status --json harness_session_id %v, want the current %v", st["harness_session_id"], cur)
	}
	ll := lifeloopBin(t)
	res := env.Run(runTimeout, ll, "top", "--json", "--state-dir", state)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(res.Stdout), &rows); err != nil || len(rows) != 1 || rows[0]["harness_session_id"] != cur {
		t.Errorf("top --json (%v): %s, want harness_session_id %v", err, res.Stdout, cur)
	}

	out := env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--latest", "--format", "orgloop")
	if out.ExitCode != 0 {
		t.Fatalf("receipts --format orgloop: exit %d: %s", out.ExitCode, out.Stderr)
	}
	keys := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
		if err := contract.CheckOrgLoopJSON([]byte(line)); err != nil {
			t.Errorf("orgloop: %v\n%s", err, line)
		}
		var ev contract.OrgLoopEvent
		_ = json.Unmarshal([]byte(line), &ev)
		if lc := ev.Payload.Lifecycle; lc.Phase != contract.PhaseActive {
			keys[lc.DedupeKey] = true
		}
	}
	for _, k := range []string{":started", ".s1:stopped", ".s1:started", ":completed"} {
		if !keys[harness+":"+session+k] {
			t.Errorf("orgloop: no %s%s among %v", session, k, keys)
		}
	}
	if len(keys) != 4 {
		t.Errorf("orgloop: started/terminal keys %v, want two sessions' starts and stops", keys)
	}

	out = env.Run(runTimeout, ll, "receipts", "--state-dir", state, "--latest", "--format", "hcp")
	if out.ExitCode != 0 {
		t.Fatalf("receipts --format hcp: exit %d: %s", out.ExitCode, out.Stderr)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out.Stdout), "\n") {
		var env map[string]any
		if err := json.Unmarshal([]byte(line), &env); err != nil {
			t.Fatalf("hcp: %v: %s", err, line)
		}
		switch et := dig(env, "payload", "event_type"); et {
		case "state_changed":
			got = append(got, fmt.Sprintf("%v %v", dig(env, "payload", "data", "to_state"), dig(env, "payload", "data", "harness_session_id")))
		case "session_closed":
			got = append(got, "closed")
		}
	}
	want := []string{"RUNNING <nil>", fmt.Sprintf("PAUSED %v", old), fmt.Sprintf("RUNNING %v", cur), "COMPLETED <nil>", "closed"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("hcp state changes %v, want %v", got, want)
	}
}

// TestRunClaudeTUIClear: /clear in Claude Code's TUI starts a new harness
// session (a new id and transcript) in the same process: the stream
// closes the first and opens the second (assertSwitched), and the turn
// after /clear is bound to the new one.
func TestRunClaudeTUIClear(t *testing.T) {
	skipShort(t)
	const reply = "Interactive reply through lifeloop."
	term, env, state := startClaudeTUIUnderLifeloop(t, reply)
	testharness.ClaudeScreenReady(t, term, 0)
	turn := func(prompt string, n int) {
		t.Helper()
		term.Type(prompt)
		if err := term.WaitFor(prompt, screenTimeout); err != nil {
			t.Fatal(err)
		}
		time.Sleep(250 * time.Millisecond)
		term.Type("\r")
		testharness.ClaudeTurnsEnded(t, term, state, n)
	}
	turn("first conversation prompt", 1)
	at := len(term.Output())
	term.Type("/clear")
	waitOutputAfter(t, term, at, "/clear", screenTimeout)
	time.Sleep(250 * time.Millisecond)
	term.Type("\r")
	testharness.ClaudeStarted(t, term, state, 2)
	turn("second conversation prompt", 2)
	testharness.ClaudeExit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v)\n%s", code, sig, err, term.Output())
	}
	assertSwitched(t, env, state, "claude-code")
	assertNoProcessLeft(t, env, term.Pid())
}
