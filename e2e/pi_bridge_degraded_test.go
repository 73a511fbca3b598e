package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

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
