package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// countOf counts the receipts of event.
func countOf(receipts []map[string]any, event string) int {
	n := 0
	for _, r := range receipts {
		if r["event"] == event {
			n++
		}
	}
	return n
}

// TestClaudeBackgroundResumeRecorded: a background session lifeloop's
// process wrapper records, stopped with Claude's own `claude stop` and
// continued with `claude --bg --resume SESSION PROMPT` (the manual form
// of a background session's renewal): Claude continues the same session
// (same id, same transcript, the earlier turns sent to the model with the
// new prompt), in a new process — a warm spare or a cold start —, which
// lifeloop records as a new lifeloop session bound to the same harness
// session, which names the first as the one it continues (session.json
// continues). The new session records only its own turn: the transcript's
// earlier turns, written before the resume was asked for, are history
// (they were recorded, once, by the first session), and the prompt
// reached the model.
func TestClaudeBackgroundResumeRecorded(t *testing.T) {
	skipShort(t)
	bin, _, mock, env, state, seen := startWrappedBackground(t, "bg resume reply from the mock")

	res := env.Run(time.Minute, bin, "--bg", "the first prompt FIRSTMARK")
	m := backgrounded.FindStringSubmatch(res.Stdout)
	if res.ExitCode != 0 || m == nil {
		t.Fatalf("claude --bg: rc %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	var first bgSession
	waitFor(t, "the first session's turn recorded", func() bool {
		for _, s := range bgSessions(t, state, "") {
			if lastOf(s.Receipts, "frame.ended") != nil && len(s.Harness) > 0 {
				first = s
				return true
			}
		}
		return false
	}, seen)
	harness := first.Harness[0]
	if !strings.HasPrefix(harness, m[1]) {
		t.Fatalf("recorded harness session %s for background session %s", harness, m[1])
	}

	if r := env.Run(time.Minute, bin, "stop", m[1]); r.ExitCode != 0 {
		t.Fatalf("claude stop %s: rc %d: %s %s", m[1], r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the first session's end", func() bool {
		s := bgSessions(t, state, "")[first.ID]
		return s.State == "completed" && lastOf(s.Receipts, "session.ended") != nil
	}, seen)

	res = env.Run(time.Minute, bin, "--bg", "--resume", harness, "go on SECONDMARK")
	if m2 := backgrounded.FindStringSubmatch(res.Stdout); res.ExitCode != 0 || m2 == nil || m2[1] != m[1] {
		t.Fatalf("claude --bg --resume %s: rc %d, want the same session %s: %s %s", harness, res.ExitCode, m[1], res.Stdout, res.Stderr)
	}
	var next bgSession
	waitFor(t, "the resumed session's turn recorded", func() bool {
		for id, s := range bgSessions(t, state, "") {
			if id != first.ID && lastOf(s.Receipts, "frame.ended") != nil {
				next = s
				return true
			}
		}
		return false
	}, seen)
	// Let anything more the transcript holds be read.
	time.Sleep(3 * time.Second)
	next = bgSessions(t, state, "")[next.ID]
	t.Logf("first %s: %v; resumed %s (pid %d): %v", first.ID, eventsOf(bgSessions(t, state, "")[first.ID].Receipts), next.ID, next.Pid, eventsOf(next.Receipts))
	if len(next.Harness) != 1 || next.Harness[0] != harness || next.State != "running" || next.Continues != first.ID {
		t.Errorf("resumed session %s: harness sessions %v, state %s, continues %q; want %s, running, continuing %s", next.ID, next.Harness, next.State, next.Continues, harness, first.ID)
	}
	if first.Continues != "" {
		t.Errorf("the first session continues %q", first.Continues)
	}
	if r := lastOf(next.Receipts, "session.started"); r == nil || dig(r, "telemetry_summary", "binding") != "harness_session_id" {
		t.Errorf("resumed session: no binding session.started: %v", eventsOf(next.Receipts))
	}
	if n := countOf(next.Receipts, "frame.ended"); n != 1 {
		t.Errorf("resumed session recorded %d turns, want its own one (the earlier turn is the first session's)", n)
	}
	if n := countOf(bgSessions(t, state, "")[first.ID].Receipts, "frame.ended"); n != 1 {
		t.Errorf("first session recorded %d turns, want 1", n)
	}
	// The prompt reached the model with the earlier conversation.
	reqs := mock.RequestsOfKind("claude")
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "SECONDMARK") || !strings.Contains(last, "FIRSTMARK") {
		t.Errorf("the resumed session's model request holds the prompt %v, the earlier turn %v", strings.Contains(last, "SECONDMARK"), strings.Contains(last, "FIRSTMARK"))
	}

	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the resumed session's end", func() bool {
		return bgSessions(t, state, "")[next.ID].State == "completed"
	}, seen)
}

// TestRenewClaudeBackgroundSession: `lifeloop renew SESSION --note FILE`
// on a background session lifeloop's process wrapper records stops it
// with `claude stop` and resumes the same conversation with `claude --bg
// --resume SESSION NOTE`: the old lifeloop session ends as the
// renewal's stop (the renewal's session.ending, then its one
// session.ended, completed, stopped_by renewal with the attempt; OrgLoop:
// one start and one end; HCP paused for the renewal, closed COMPLETED),
// a new one binds
// the same harness session (session.json continues: the old one; `top
// --json` links both ways) and
// records only the resumed turn, the note
// reached the model as the resumed session's prompt (with the earlier
// turn), the payload's receipt says delivered because Claude's transcript
// shows it, and the old session's renewal.json names the new session.
// renew runs where lifeloop is not the process wrapper, and sets it for
// the resume. A fresh renewal or one without a note is refused and stops
// nothing. The note's text is in none of the sessions' files.
func TestRenewClaudeBackgroundSession(t *testing.T) {
	skipShort(t)
	bin, ll, mock, env, state, seen := startWrappedBackground(t, "bg renew reply from the mock")

	if res := env.Run(time.Minute, bin, "--bg", "the first prompt FIRSTMARK"); res.ExitCode != 0 {
		t.Fatalf("claude --bg: rc %d: %s %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	var first bgSession
	waitFor(t, "the first session's turn recorded", func() bool {
		for _, s := range bgSessions(t, state, "") {
			if lastOf(s.Receipts, "frame.ended") != nil && len(s.Harness) > 0 {
				first = s
				return true
			}
		}
		return false
	}, seen)
	harness := first.Harness[0]

	note := filepath.Join(env.Home, "handoff.md")
	const noteText = "Go on from the handoff NOTEMARK-7f3a."
	if err := os.WriteFile(note, []byte(noteText), 0o600); err != nil {
		t.Fatal(err)
	}
	// Refused, nothing stopped: a fresh renewal, a renewal without a note.
	for _, args := range [][]string{{"--fresh", "--note", note}, {"--resume"}} {
		r := env.Run(time.Minute, ll, append(append([]string{"renew", "--state-dir", state}, args...), first.ID)...)
		if r.ExitCode != 1 || !strings.Contains(r.Stderr, "background session") {
			t.Errorf("renew %v: rc %d: %s %s; want refused (1), naming a background session", args, r.ExitCode, r.Stdout, r.Stderr)
		}
	}
	if s := bgSessions(t, state, "")[first.ID]; s.State != "running" {
		t.Fatalf("a refused renewal left the session %s", s.State)
	}

	// renew is run where the wrapper is not set (a shell beside the
	// session): it sets lifeloop's for the resume itself.
	env.Setenv("CLAUDE_CODE_PROCESS_WRAPPER", "")
	r := env.Run(3*time.Minute, ll, "renew", "--state-dir", state, "--note", note, first.ID)
	t.Logf("renew: rc %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	if r.ExitCode != 0 || !strings.Contains(r.Stdout, "renewal delivered") || !strings.Contains(r.Stdout, ": delivered (payload placement pre_prompt_frame") {
		t.Fatalf("renew: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	var st struct {
		State       string `json:"state"`
		Resume      bool   `json:"resume"`
		ContinuedIn string `json:"continued_in"`
		Harness     string `json:"harness_session_id"`
		Receipts    []struct {
			Status string `json:"status"`
			Digest string `json:"content_digest"`
			Size   int    `json:"byte_size"`
		} `json:"payload_receipts"`
	}
	b, err := os.ReadFile(filepath.Join(state, "sessions", first.ID, "renewal.json"))
	if err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("renewal.json: %v: %s", err, b)
	}
	if st.State != "delivered" || !st.Resume || st.Harness != harness || len(st.Receipts) != 1 || st.Receipts[0].Status != "delivered" || st.Receipts[0].Size != len(noteText) || st.Receipts[0].Digest == "" {
		t.Errorf("renewal.json: %s", b)
	}
	if !strings.Contains(r.Stdout, "continued in session "+st.ContinuedIn) {
		t.Errorf("renew's output does not name the session it continued in (%s): %s", st.ContinuedIn, r.Stdout)
	}

	all := bgSessions(t, state, "")
	if s := all[first.ID]; s.State != "completed" || lastOf(s.Receipts, "session.ended") == nil {
		t.Errorf("the renewed session: state %s, %v; want completed with session.ended", s.State, eventsOf(s.Receipts))
	} else {
		// The end is the renewal's: one session.ending (reason renewal,
		// step ending, as under `run`) right before the one session.ended
		// (reason renewal, the renewal's stop, and the session's final end:
		// no step), attempt 1.
		evs := eventsOf(s.Receipts)
		n := len(evs)
		if countOf(s.Receipts, "session.ended") != 1 || countOf(s.Receipts, "session.ending") != 1 || n < 2 || evs[n-2] != "session.ending" || evs[n-1] != "session.ended" {
			t.Errorf("the renewed session's receipts %v; want one session.ending, then one session.ended, last", evs)
		}
		ending, end := lastOf(s.Receipts, "session.ending"), lastOf(s.Receipts, "session.ended")
		if ending == nil || dig(ending, "telemetry_summary", "reason") != "renewal" || num(dig(ending, "telemetry_summary", "renewal_attempt")) != 1 || dig(ending, "telemetry_summary", "renewal_step") != "ending" {
			t.Errorf("the renewed session's session.ending: %v; want reason renewal, renewal_attempt 1, renewal_step ending", dig(ending, "telemetry_summary"))
		}
		// The end is the session's final one (the conversation goes on in
		// a lifeloop session of its own): the watch's reason, completed,
		// stopped by the renewal, no renewal_step.
		if end == nil || dig(end, "telemetry_summary", "reason") != "watch_harness_exited" || dig(end, "telemetry_summary", "stopped_by") != "renewal" ||
			num(dig(end, "telemetry_summary", "renewal_attempt")) != 1 || dig(end, "telemetry_summary", "renewal_step") != nil || dig(end, "telemetry_summary", "phase") != "completed" {
			t.Errorf("the renewed session's end: %v; want the session's final end, stopped by renewal attempt 1", dig(end, "telemetry_summary"))
		}
		// OrgLoop: the session's one incarnation starts once and ends once
		// (the end keyed to it, not to a renewal's incarnation).
		org := env.Run(time.Minute, ll, "receipts", "--state-dir", state, "--format", "orgloop", first.ID)
		starts, ends := 0, 0
		for line := range strings.Lines(org.Stdout) {
			var ev contract.OrgLoopEvent
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Fatalf("orgloop line %q: %v", line, err)
			}
			lc := ev.Payload.Lifecycle
			switch {
			case lc.Phase == contract.PhaseStarted && lc.DedupeKey == "claude-code:"+first.ID+":started":
				starts++
			case lc.Terminal && lc.DedupeKey == "claude-code:"+first.ID+":"+string(lc.Phase):
				ends++
			case lc.Phase != contract.PhaseActive:
				t.Errorf("orgloop: %+v, a transition of another incarnation", lc)
			}
		}
		if org.ExitCode != 0 || starts != 1 || ends != 1 {
			t.Errorf("receipts --format orgloop: rc %d, %d starts and %d ends of %s; want 1 and 1\n%s%s", org.ExitCode, starts, ends, first.ID, org.Stdout, org.Stderr)
		}
		// HCP: paused for the renewal, then closed (the resume is an HCP
		// session of its own).
		h := env.Run(time.Minute, ll, "receipts", "--state-dir", state, "--format", "hcp", first.ID)
		if h.ExitCode != 0 || strings.Count(h.Stdout, `"session_closed"`) != 1 || !strings.Contains(h.Stdout, `"from_state":"RUNNING","reason":"renewal","to_state":"PAUSED"`) || !strings.Contains(h.Stdout, `"final_state":"COMPLETED"`) {
			t.Errorf("receipts --format hcp: rc %d; want paused for the renewal, closed once\n%s%s", h.ExitCode, h.Stdout, h.Stderr)
		}
	}
	var next bgSession
	waitFor(t, "the resumed session's turn recorded", func() bool {
		next = bgSessions(t, state, "")[st.ContinuedIn]
		return lastOf(next.Receipts, "frame.ended") != nil
	}, seen)
	time.Sleep(2 * time.Second)
	next = bgSessions(t, state, "")[st.ContinuedIn]
	t.Logf("first %s: %v; continued in %s (pid %d): %v", first.ID, eventsOf(bgSessions(t, state, "")[first.ID].Receipts), next.ID, next.Pid, eventsOf(next.Receipts))
	if len(next.Harness) != 1 || next.Harness[0] != harness || next.State != "running" || next.Pid == first.Pid || next.Continues != first.ID {
		t.Errorf("continued session %s: harness sessions %v, state %s, pid %d, continues %q; want %s, running, a new process, continuing %s", next.ID, next.Harness, next.State, next.Pid, next.Continues, harness, first.ID)
	}
	if n := countOf(next.Receipts, "frame.ended"); n != 1 {
		t.Errorf("continued session recorded %d turns, want the resumed one", n)
	}
	// top links the two: the old row is continued in the new, the new
	// continues the old.
	topRes := env.Run(time.Minute, ll, "top", "--json", "--state-dir", state)
	var rows []map[string]any
	if err := json.Unmarshal([]byte(topRes.Stdout), &rows); err != nil {
		t.Fatalf("top --json: %v: %s %s", err, topRes.Stdout, topRes.Stderr)
	}
	links := map[string][2]any{}
	for _, r := range rows {
		links[fmt.Sprint(r["id"])] = [2]any{r["continues"], r["continued_in"]}
	}
	if l := links[first.ID]; l[1] != next.ID || l[0] != nil {
		t.Errorf("top --json: the renewed session's links %v, want continued_in %s", l, next.ID)
	}
	if l := links[next.ID]; l[0] != first.ID || l[1] != nil {
		t.Errorf("top --json: the resumed session's links %v, want continues %s", l, first.ID)
	}
	reqs := mock.RequestsOfKind("claude")
	last := string(reqs[len(reqs)-1].Body)
	if !strings.Contains(last, "NOTEMARK-7f3a") || !strings.Contains(last, "FIRSTMARK") {
		t.Errorf("the resumed session's model request holds the note %v, the earlier turn %v", strings.Contains(last, "NOTEMARK-7f3a"), strings.Contains(last, "FIRSTMARK"))
	}
	// The note's text is in none of the two sessions' files (receipts,
	// log, renewal.json).
	for _, id := range []string{first.ID, next.ID} {
		lb, _ := os.ReadFile(filepath.Join(state, "sessions", id, "receipts.jsonl"))
		if len(lb) == 0 {
			t.Errorf("session %s has no receipts", id)
		}
		_ = filepath.WalkDir(filepath.Join(state, "sessions", id), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(p); strings.Contains(string(b), "NOTEMARK") {
					t.Errorf("%s holds the note's text", p)
				}
			}
			return nil
		})
	}

	if r := env.Run(time.Minute, bin, "daemon", "stop", "--any"); r.ExitCode != 0 {
		t.Fatalf("claude daemon stop --any: rc %d: %s %s", r.ExitCode, r.Stdout, r.Stderr)
	}
	waitFor(t, "the continued session's end", func() bool {
		return bgSessions(t, state, "")[next.ID].State == "completed"
	}, seen)
}

// startWrappedBackground starts what both background tests run on: the
// mock answering reply, a harness home with lifeloop as Claude's process
// wrapper (CLAUDE_CODE_PROCESS_WRAPPER) and its state folder, and Claude's
// daemon stopped when the test ends; seen lists the recorded background
// sessions for a failure's message.
func startWrappedBackground(t *testing.T, reply string) (bin, ll string, mock *mockmodel.Server, env *testharness.HarnessEnv, state string, seen func() string) {
	t.Helper()
	bin = testharness.ClaudeBin(t)
	ll = lifeloopBin(t)
	mock = startMock(t, mockmodel.Config{Reply: reply})
	env = testharness.NewHarnessEnv(t, mock)
	state = stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	prefix, _ := json.Marshal([]string{ll, "procwrap", "--adapter", "claude"})
	env.Setenv("CLAUDE_CODE_PROCESS_WRAPPER", string(prefix))
	t.Cleanup(func() {
		// The test's context is over by now: a bound of its own.
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		stop := exec.CommandContext(ctx, bin, "daemon", "stop", "--any")
		stop.Env, stop.Dir = env.Env(), env.Dir
		_ = stop.Run()
	})
	seen = func() string {
		var b strings.Builder
		for id, s := range bgSessions(t, state, "") {
			fmt.Fprintf(&b, "\n%s %s pid %d harness %v: %v", id, s.State, s.Pid, s.Harness, eventsOf(s.Receipts))
		}
		return b.String()
	}
	return bin, ll, mock, env, state, seen
}
