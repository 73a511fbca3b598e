package e2e

import (
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testharness"
	"github.com/lifeloop/lifeloop/internal/testharness/mockmodel"
	"github.com/lifeloop/lifeloop/renewal"
)

// TestContinueSessionFinishesInterruptedRenewal: a wrapper killed in the
// middle of a renewal (payload stored, harness stopped, relaunch not yet
// done) loses nothing: `lifeloop run --continue-session` relaunches with
// the pending payload, which reaches the model exactly once.
func TestContinueSessionFinishesInterruptedRenewal(t *testing.T) {
	t.Parallel() // see the package doc
	skipShort(t)
	bin := testharness.ClaudeBin(t)
	ll := lifeloopBin(t)
	mock := startMock(t, mockmodel.Config{Reply: "Plain answer."})
	env := testharness.NewHarnessEnv(t, mock)
	state := stateDir(t)

	res := env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--", bin, "-p", "first")
	if res.ExitCode != 0 {
		t.Fatalf("first run: exit %d: %s", res.ExitCode, res.Stderr)
	}
	rec, err := statedir.Latest(state)
	if err != nil {
		t.Fatal(err)
	}

	// The state a wrapper killed between stopping the harness and
	// relaunching it leaves behind.
	const marker = "LIFELOOP-RECOVERED-MARKER-6"
	pf := payloadFile(t, env.Dir, "pay_recover", marker)
	put := exec.CommandContext(t.Context(), ll, "continuation", "put", "--state-dir", state, rec.ID, pf)
	put.Env = env.Env()
	if out, err := put.CombinedOutput(); err != nil {
		t.Fatalf("continuation put: %v: %s", err, out)
	}
	now := time.Now()
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)), renewal.Status{
		State: renewal.StateRelaunching, Attempt: 1, PayloadPending: true, StartedAt: &now, UpdatedAt: now,
	}); err != nil {
		t.Fatal(err)
	}

	res = env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", rec.ID, "--", bin, "-p", "second")
	if res.ExitCode != 0 {
		t.Fatalf("continued run: exit %d\nstdout: %s\nstderr: %s", res.ExitCode, res.Stdout, res.Stderr)
	}
	n := len(mock.RequestsOfKind("claude"))
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude"), marker); !ok {
		st, _ := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)))
		logb, _ := os.ReadFile(statedir.LogPath(state, rec.ID))
		t.Fatalf("the continued session's model request does not carry the pending payload; status %+v\nlog:\n%s", st, logb)
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(state, rec.ID)))
	if err != nil || st.State != renewal.StateDelivered {
		t.Fatalf("renewal status %+v, %v", st, err)
	}
	left, _ := os.ReadDir(statedir.ContinuationPath(state, rec.ID))
	if len(left) != 0 {
		t.Errorf("continuation store still holds %d files", len(left))
	}

	// Continuing again delivers nothing twice.
	res = env.Run(runTimeout, ll, "run", "--state-dir", state, "--tick", "0", "--continue-session", rec.ID, "--", bin, "-p", "third")
	if res.ExitCode != 0 {
		t.Fatalf("third run: exit %d: %s", res.ExitCode, res.Stderr)
	}
	if _, ok := anyRequestCarries(t, mock.RequestsOfKind("claude")[n:], marker); ok {
		t.Errorf("the payload was delivered a second time")
	}
	_, receipts := onlySession(t, state)
	delivered := 0
	for _, r := range receipts {
		prs, _ := r["payload_receipts"].([]any)
		for _, pr := range prs {
			if dig(pr, "payload_id") == "pay_recover" && dig(pr, "status") == "delivered" {
				delivered++
			}
		}
	}
	if delivered != 1 {
		t.Errorf("%d delivered receipts for the payload, want 1 (events %v)", delivered, eventsOf(receipts))
	}
}
