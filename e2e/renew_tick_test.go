package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/hcp"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// slowStopClaude is the real Claude Code behind a shell that takes 1.5 s
// to exit once it is asked to stop (SIGINT, a renewal's stop signal for
// Claude, or SIGTERM): with ticks every second, a tick always falls
// inside the renewal's stop.
const slowStopClaude = `#!/bin/bash
trap "sleep 1.5; exit 143" TERM INT
"$REAL_CLAUDE" "$@"
`

// slowStopRun is a real Claude TUI under `lifeloop run`, behind
// slowStopClaude, that has answered one turn.
type slowStopRun struct {
	ll, real, state, ses string
	mock                 *mockmodel.Server
	env                  *testharness.HarnessEnv
	term                 *testharness.Terminal
}

// startSlowStopClaudeAfterATurn starts it with `run --tick tick` against a
// mock answering reply and drives one turn, so a resumed relaunch has a
// conversation to resume.
func startSlowStopClaudeAfterATurn(t *testing.T, reply, tick string) slowStopRun {
	t.Helper()
	r := slowStopRun{real: testharness.ClaudeBin(t), ll: lifeloopBin(t)}
	r.mock = startMock(t, mockmodel.Config{Reply: reply})
	r.env = testharness.NewHarnessEnv(t, r.mock)
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(slowStopClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	r.env.Setenv("REAL_CLAUDE", r.real)
	r.state = stateDir(t)
	r.term = testharness.StartTerminal(t, r.env.Command(r.ll, "run", "--state-dir", r.state, "--tick", tick, "--", bin), 120, 40)
	testharness.ClaudeStarted(t, r.term, r.state, 1)
	const prompt = "first prompt 6b1d"
	r.term.Type(prompt)
	if err := r.term.WaitFor(prompt, screenTimeout); err != nil {
		t.Fatal(err)
	}
	r.term.Type("\r")
	testharness.ClaudeTurnsEnded(t, r.term, r.state, 1)
	r.ses, _ = onlySession(t, r.state)
	return r
}

// TestRenewalSurvivesATickDuringItsStop: a real Claude TUI whose stop is
// slowed is renewed with a payload under `run --tick 1s` after a turn. The ticks
// recorded while the old harness stops and the new one starts never say
// running, and HCP tells the renewal: RUNNING → PAUSED (renewal), one
// checkpoint_created for the delivered payload, PAUSED → RUNNING
// (renewed). Before issue 51's fix such a tick said running, HCP resumed
// the session with reason interval and the relaunch yielded neither the
// checkpoint nor renewed.
func TestRenewalSurvivesATickDuringItsStop(t *testing.T) {
	skipShort(t)
	s := startSlowStopClaudeAfterATurn(t, "Reply before the renewal.", "1s")
	ll, env, term, state, ses := s.ll, s.env, s.term, s.state, s.ses

	pf := writePayloadFile(t, "pay_tick", "TICK-RENEWAL-PAYLOAD-2e7c", contract.PlacementDeveloperEquivalentFrame)
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--resume", "--payload", pf, ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
		t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	testharness.ClaudeStarted(t, term, state, 2)
	testharness.ClaudeExit(t, term)
	if _, _, err := term.WaitTimeout(screenTimeout); err != nil {
		t.Fatalf("lifeloop did not exit: %v", err)
	}

	_, rs := onlySession(t, state)
	inRenewal, running := 0, 0
	renewing := false
	for _, r := range rs {
		switch step := dig(r, "telemetry_summary", "renewal_step"); {
		case r["event"] == "session.ending" && step == "ending":
			renewing = true
		case r["event"] == "session.started" && step == "started":
			renewing = false
		case r["event"] == "supervisor.tick" && renewing:
			inRenewal++
			if dig(r, "telemetry_summary", "state") == "running" {
				running++
			}
		}
	}
	if inRenewal == 0 {
		t.Fatalf("no tick fell inside the renewal (the case this test is about):\n%s", describeStream(rs))
	}
	if running > 0 {
		t.Errorf("%d of the %d ticks recorded during the renewal say running:\n%s", running, inRenewal, describeStream(rs))
	}

	p := hcp.NewProjector(ses)
	var es []hcp.Envelope
	for _, m := range rs {
		b, _ := json.Marshal(m)
		var r contract.LifecycleReceipt
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatal(err)
		}
		es = append(es, p.Project(r)...)
	}
	var story []string
	for _, e := range es {
		d := e.Payload.Data
		switch e.Payload.EventType {
		case hcp.StateChanged:
			story = append(story, d["from_state"].(string)+">"+d["to_state"].(string)+":"+d["reason"].(string))
		case hcp.CheckpointCreated:
			story = append(story, "checkpoint:"+d["checkpoint_id"].(string))
		}
	}
	want := "PENDING>RUNNING:started RUNNING>PAUSED:renewal checkpoint:pay_tick PAUSED>RUNNING:renewed RUNNING>COMPLETED:exit_code_0"
	if got := strings.Join(story, " "); got != want {
		t.Errorf("HCP story:\n got %s\nwant %s\nreceipts:\n%s", got, want, describeStream(rs))
	}
}
