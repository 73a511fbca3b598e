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
	real := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Reply before the renewal."})
	env := testharness.NewHarnessEnv(t, mock)
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte(slowStopClaude), 0o755); err != nil {
		t.Fatal(err)
	}
	env.Setenv("REAL_CLAUDE", real)
	state := stateDir(t)
	term := testharness.StartTerminal(t, env.Command(ll, "run", "--state-dir", state, "--tick", "1s", "--", bin), 120, 40)
	testharness.ClaudeStarted(t, term, state, 1)
	// A turn, so the resumed relaunch has a conversation to resume.
	term.Type("first prompt 6b1d")
	if err := term.WaitFor("first prompt 6b1d", screenTimeout); err != nil {
		t.Fatal(err)
	}
	term.Type("\r")
	testharness.ClaudeTurnsEnded(t, term, state, 1)
	ses, _ := onlySession(t, state)

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
