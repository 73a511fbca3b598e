package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
)

// TestRunPiBridgeUnreadable: lifeloop never keeps Pi from starting. Pi
// exits 1 at launch when an extension it was given fails to load, so a
// bridge extension that cannot be read (here its file in the state
// folder's bridges folder is a directory) is not given to Pi: Pi starts
// without it, answers, and one capability.degraded receipt says the
// hooks are unavailable and why; the session's story is the wrapper's
// and Pi's session file's.
func TestRunPiBridgeUnreadable(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	bin := env.UsePi(t)

	// The bridge file a launch writes: its name depends on the lifeloop
	// program's path, so a first launch names it.
	first := stateDir(t)
	if res := env.Run(runTimeout, ll, "run", "--state-dir", first, "--tick", "0", "--", bin, "-p", "say hello"); res.ExitCode != 0 {
		t.Fatalf("first launch: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	bridges, err := filepath.Glob(filepath.Join(first, "bridges", "pi-lifeloop-bridge-*.ts"))
	if err != nil || len(bridges) != 1 {
		t.Fatalf("bridge files %v (%v), want one", bridges, err)
	}
	state := stateDir(t)
	unreadable := filepath.Join(state, "bridges", filepath.Base(bridges[0]))
	if err := os.MkdirAll(filepath.Join(unreadable, "index.ts"), 0o700); err != nil {
		t.Fatal(err)
	}

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--", bin, "-p", "say hello")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "Plain answer.") {
		t.Fatalf("exit %d, want Pi's 0 and its answer\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	_, receipts := onlySession(t, state)
	var degraded []map[string]any
	for _, r := range receipts {
		if r["event"] == "capability.degraded" {
			degraded = append(degraded, r)
		}
		if dig(r, "telemetry_summary", "source") == "hook" {
			t.Errorf("a hook receipt without the bridge: %v", r)
		}
	}
	if len(degraded) != 1 {
		t.Fatalf("%d capability.degraded receipts, want 1: %v", len(degraded), eventsOf(receipts))
	}
	d, _ := degraded[0]["capability_degradations"].([]any)
	if len(d) != 1 {
		t.Fatalf("degradations %v, want one", degraded[0]["capability_degradations"])
	}
	deg := d[0].(map[string]any)
	if deg["capability"] != "hooks" || deg["previous_support"] != "native" || deg["current_support"] != "unavailable" ||
		!strings.Contains(deg["evidence"].(string), unreadable) {
		t.Errorf("degradation %v, want hooks native → unavailable naming %s", deg, unreadable)
	}
	if ended := lastOf(receipts, "session.ended"); dig(ended, "telemetry_summary", "outcome") != "success" {
		t.Errorf("session.ended %v", ended)
	}
	// Pi's session file still reports the turn.
	frames := 0
	for _, r := range receipts {
		if r["event"] == "frame.ended" {
			frames++
		}
	}
	if frames != 1 {
		t.Errorf("%d frame.ended receipts, want 1 (from the session file): %v", frames, eventsOf(receipts))
	}
}

// TestRenewPiBridgeUnreadable: a renewal plans its relaunch as the first
// launch plans its start, bridge included: a bridge extension that became
// unreadable after the first launch (its file in the bridges folder is
// now a directory) is not given to the relaunched Pi, which would exit 1
// on it. The renewal is delivered, Pi runs again without the bridge, and
// one capability.degraded says the hooks are unavailable and why.
func TestRenewPiBridgeUnreadable(t *testing.T) {
	skipShort(t)
	ll := lifeloopBin(t)
	term, env, state, _ := startPiTUIUnderLifeloop(t, "Plain answer.")
	bridges, err := filepath.Glob(filepath.Join(state, "bridges", "pi-lifeloop-bridge-*.ts"))
	if err != nil || len(bridges) != 1 {
		t.Fatalf("bridge files %v (%v), want one", bridges, err)
	}
	if err := os.Remove(bridges[0]); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(bridges[0], "index.ts"), 0o700); err != nil {
		t.Fatal(err)
	}
	ses, _ := onlySession(t, state)
	before := len(term.Output())
	res := env.Run(runTimeout, ll, "renew", "--state-dir", state, "--fresh", "--reason", "e2e", ses)
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "renewal delivered") {
		t.Fatalf("lifeloop renew: exit %d\nstdout: %s\nstderr: %s\nterminal:\n%s", res.ExitCode, res.Stdout, res.Stderr, term.Output())
	}
	testharness.PiRelaunched(t, term, before)
	live, err := statedir.ReadSession(state, ses)
	if err != nil {
		t.Fatal(err)
	}
	if argv := strings.Join(live.Argv, " "); strings.Contains(argv, "--extension") {
		t.Errorf("the relaunch's command line still gives Pi the unreadable bridge: %q", live.Argv)
	}
	quitAt := len(term.Output())
	piQuit(t, term)
	if code, sig, err := term.WaitTimeout(screenTimeout); err != nil || code != 0 || sig != 0 {
		t.Fatalf("lifeloop exited with code %d signal %v (%v); output:\n%s", code, sig, err, term.Output()[quitAt:])
	}
	_, receipts := onlySession(t, state)
	var degraded []map[string]any
	for _, r := range receipts {
		if r["event"] == "capability.degraded" && dig(r, "telemetry_summary", "reason") == "hook_bridge_unavailable" {
			degraded = append(degraded, r)
		}
	}
	if len(degraded) != 1 {
		t.Fatalf("%d capability.degraded receipts for the bridge, want 1: %v", len(degraded), eventsOf(receipts))
	}
	d, _ := degraded[0]["capability_degradations"].([]any)
	if len(d) != 1 || !strings.Contains(d[0].(map[string]any)["evidence"].(string), bridges[0]) {
		t.Errorf("degradation %v, want one naming %s", degraded[0]["capability_degradations"], bridges[0])
	}
	if ended := lastOf(receipts, "session.ended"); dig(ended, "telemetry_summary", "outcome") != "success" {
		t.Errorf("session.ended %v", ended)
	}
}
