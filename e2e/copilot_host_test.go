package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestHostApplyCopilotHooks installs lifeloop's hooks with `lifeloop host
// apply --adapter copilot` (a file of lifeloop's own in Copilot's hooks
// folder, beside a hooks file of the person's), runs the real `copilot
// -p` on a tool turn without `lifeloop run`, and checks lifeloop's
// ledger: one native_hook session keyed by Copilot's session id, the
// moments SessionStart, Stop and SessionEnd report, the turn's end in the
// session file's own frame, and the person's own hook still fired.
// `host remove` deletes lifeloop's file and leaves the person's as it
// was.
func TestHostApplyCopilotHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	bin := env.UseCopilot(t)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)

	hooksDir := filepath.Join(env.CopilotHome(), "hooks")
	if err := os.MkdirAll(hooksDir, 0o700); err != nil {
		t.Fatal(err)
	}
	marker := filepath.Join(t.TempDir(), "user-hook-fired")
	mine := filepath.Join(hooksDir, "mine.json")
	original := `{"version": 1, "hooks": {"agentStop": [{"type": "command", "bash": "touch ` + marker + `"}]}}` + "\n"
	if err := os.WriteFile(mine, []byte(original), 0o600); err != nil {
		t.Fatal(err)
	}
	// Copilot's own settings files are not lifeloop's to touch (Copilot
	// rewrites config.json itself when it runs).
	configs := func() string {
		var out []string
		for _, name := range []string{"config.json", "settings.json", "settings.local.json"} {
			b, _ := os.ReadFile(filepath.Join(env.CopilotHome(), name))
			out = append(out, name+": "+string(b))
		}
		return strings.Join(out, "\n")
	}
	before := configs()

	res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "copilot")
	if res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	own := filepath.Join(hooksDir, "lifeloop.json")
	if b, err := os.ReadFile(own); err != nil || !strings.Contains(string(b), ll+" host-hook --adapter copilot --hook Stop") {
		t.Fatalf("%s after apply: %v\n%s\n(apply said: %s)", own, err, b, res.Stdout)
	}
	if r := env.Run(runTimeout, ll, "host", "inspect", "--adapter", "copilot"); r.ExitCode != 0 {
		t.Fatalf("host inspect: exit %d\n%s%s", r.ExitCode, r.Stdout, r.Stderr)
	}
	if after := configs(); after != before {
		t.Errorf("host apply changed Copilot's settings:\n%s\nwas:\n%s", after, before)
	}
	if r := env.Run(runTimeout, ll, "host", "apply", "--adapter", "copilot", "--project", env.Dir); r.ExitCode != 2 {
		t.Errorf("host apply --project: exit %d, want 2 (usage)\n%s", r.ExitCode, r.Stderr)
	}

	res = env.Run(runTimeout, bin, "-p", "please RUN_TOOL", "--allow-all-tools")
	if res.ExitCode != 0 {
		t.Fatalf("copilot -p: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Errorf("the person's own agentStop hook did not fire: %v", err)
	}
	frames, sid := copilotSession(t, onlyOne(t, "session file", env.CopilotSessions()))
	if len(frames) != 1 {
		t.Fatalf("session file prompts %v, want 1", frames)
	}

	_, receipts := onlySession(t, state)
	want := "session.started frame.ending frame.ended session.ending session.ended"
	if got := strings.Join(eventsOf(receipts), " "); got != want {
		t.Fatalf("events %s, want %s (Copilot's SessionStart, Stop, SessionEnd; turns open from its session file only under lifeloop run)", got, want)
	}
	for i, r := range receipts {
		if r["integration_mode"] != "native_hook" || r["adapter_id"] != "copilot" || r["status"] != "observed" {
			t.Errorf("receipt %d: %v %v %v", i, r["integration_mode"], r["adapter_id"], r["status"])
		}
		if r["harness_session_id"] != sid {
			t.Errorf("receipt %d harness_session_id %v, want the session file's %s", i, r["harness_session_id"], sid)
		}
		if ev := r["event"].(string); strings.HasPrefix(ev, "frame.") {
			if f := frameOfReceipt(r); f != frames[0] {
				t.Errorf("receipt %d (%s) frame %q, want the session file's %s", i, ev, f, frames[0])
			}
		}
	}
	checkHookOnlyEnd(t, env, ll, receipts, "complete")

	before = configs()
	res = env.Run(runTimeout, ll, "host", "remove", "--adapter", "copilot")
	if res.ExitCode != 0 {
		t.Fatalf("host remove: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	left, _ := os.ReadDir(hooksDir)
	if len(left) != 1 || left[0].Name() != "mine.json" {
		t.Errorf("hooks folder after remove: %v, want only mine.json", left)
	}
	if b, _ := os.ReadFile(mine); string(b) != original {
		t.Errorf("the person's hooks file after remove:\n%s\nwant:\n%s", b, original)
	}
	if after := configs(); after != before || strings.Contains(after, "lifeloop") {
		t.Errorf("Copilot's settings after host remove:\n%s\nwas:\n%s", after, before)
	}
	if r := env.Run(runTimeout, ll, "host", "inspect", "--adapter", "copilot"); r.ExitCode != 1 {
		t.Errorf("host inspect after remove: exit %d, want 1 (missing)\n%s", r.ExitCode, r.Stdout)
	}
}

// TestRunCopilotWithHostHooks runs `copilot -p` under `lifeloop run` with
// lifeloop's hooks also installed for the person (host apply): their
// hooks run too (the test notes each call) beside the launch's plugin
// folder, and reach the wrapper; the session is still recorded once, each
// session and frame moment once, in the session file's frame, and no
// native_hook session is made beside it.
func TestRunCopilotWithHostHooks(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	env := testharness.NewHarnessEnv(t, startMock(t, mockmodel.Config{}))
	bin := env.UseCopilot(t)
	state := stateDir(t)
	env.Setenv("LIFELOOP_STATE_DIR", state)
	// The person's hooks run lifeloop through a program that notes each
	// call, so the test sees them run beside the plugin's.
	calls := filepath.Join(t.TempDir(), "host-hook-calls")
	probe := filepath.Join(t.TempDir(), "lifeloop-noting")
	script := "#!/bin/sh\necho \"$5\" >> " + calls + "\nexec " + ll + " \"$@\"\n"
	if err := os.WriteFile(probe, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	if res := env.Run(runTimeout, ll, "host", "apply", "--adapter", "copilot", "--command", probe); res.ExitCode != 0 {
		t.Fatalf("host apply: exit %d\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--", bin, "-p", "please RUN_TOOL", "--allow-all-tools")
	if res.ExitCode != 0 {
		t.Fatalf("exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	session, rs := onlySession(t, state)
	assertSessionLifecycle(t, rs, "copilot", "completed", "exit_code_0")
	file := onlyOne(t, "session file", env.CopilotSessions())
	frames, sid := copilotSession(t, file)
	assertFrames(t, rs, frames)
	assertFramesOnce(t, rs)
	assertHarnessSession(t, state, session, rs, sid)
	// The person's hooks ran (the plugin's did: the receipts below).
	if b, _ := os.ReadFile(calls); strings.Join(strings.Fields(string(b)), " ") != "SessionStart Stop SessionEnd" {
		t.Errorf("the person's lifeloop hooks ran for %q, want SessionStart Stop SessionEnd", b)
	}
	if e := lastOf(rs, "frame.ended"); dig(e, "telemetry_summary", "hook") != "Stop" {
		t.Errorf("frame.ended %s, want the Stop hook's", toJSON(e["telemetry_summary"]))
	}
	n := 0
	for _, ev := range eventsOf(rs) {
		if strings.HasPrefix(ev, "session.") {
			n++
		}
	}
	if n != 4 {
		t.Errorf("session moments %v, want one of each", eventsOf(rs))
	}
}
