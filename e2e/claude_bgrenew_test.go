package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

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
// session. The new session records only its own turn: the transcript's
// earlier turns, written before the resume was asked for, are history
// (they were recorded, once, by the first session), and the prompt
// reached the model.
func TestClaudeBackgroundResumeRecorded(t *testing.T) {
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "bg resume reply from the mock"})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	env.Setenv("PATH", filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	prefix, _ := json.Marshal([]string{ll, "procwrap", "--adapter", "claude"})
	env.Setenv("CLAUDE_CODE_PROCESS_WRAPPER", string(prefix))
	t.Cleanup(func() {
		stop := exec.Command(bin, "daemon", "stop", "--any")
		stop.Env, stop.Dir = env.Env(), env.Dir
		_ = stop.Run()
	})
	seen := func() string {
		var b strings.Builder
		for id, s := range bgSessions(t, state, "") {
			fmt.Fprintf(&b, "\n%s %s pid %d harness %v: %v", id, s.State, s.Pid, s.Harness, eventsOf(s.Receipts))
		}
		return b.String()
	}

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
	if len(next.Harness) != 1 || next.Harness[0] != harness || next.State != "running" {
		t.Errorf("resumed session %s: harness sessions %v, state %s; want %s, running", next.ID, next.Harness, next.State, harness)
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
