package seal

import (
	"context"
	"testing"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestAContinuedSessionLostAgainIsSealedAgain: a session whose wrapper
// was lost, continued (`run --continue-session`: a new incarnation,
// continuation 1) and lost once more gets a second sealed end — not
// taken for a replay of the first — that closes continuation 1's
// incarnation; Continuation numbers the next wrapper 2.
func TestAContinuedSessionLostAgainIsSealedAgain(t *testing.T) {
	root := t.TempDir()
	rec, release := newSession(t, root)
	release()
	if _, err := Check(root, rec, Options{Registry: builtin.Default()}); err != nil {
		t.Fatal(err)
	}
	prior := receipts(t, root, rec.ID)
	if n := Continuation(prior); n != 1 {
		t.Fatalf("Continuation after one lost wrapper: %d, want 1", n)
	}

	// The continuing wrapper: its start carries continuation 1, then it
	// is lost too.
	p, err := pipeline.Open(pipeline.Options{StateDir: root, Session: rec.ID, Adapter: builtin.Default().Resolve(nil), Mode: contract.ModeLauncherWrapper})
	if err != nil {
		t.Fatal(err)
	}
	lock, err := statedir.HoldWrapper(root, rec.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []contract.Event{contract.EventSessionStarting, contract.EventSessionStarted} {
		if _, err := p.Route(context.Background(), moment.Moment{Event: ev, Summary: map[string]any{contract.SummaryContinuation: 1}}); err != nil {
			t.Fatal(err)
		}
	}
	p.Close()
	rec.State = statedir.StateRunning
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	_ = lock.Close()
	if _, err := Check(root, rec, Options{Registry: builtin.Default()}); err != nil {
		t.Fatal(err)
	}

	ends := ended(t, root, rec.ID)
	if len(ends) != 2 {
		t.Fatalf("%d session.ended after two lost wrappers, want 2", len(ends))
	}
	for i, want := range []string{rec.ID, rec.ID + ".c1"} {
		if got := contract.OrgLoopIncarnation(ends[i], rec.ID); got != want {
			t.Errorf("sealed end %d belongs to incarnation %s, want %s", i+1, got, want)
		}
	}
	if n := Continuation(receipts(t, root, rec.ID)); n != 2 {
		t.Errorf("Continuation after two lost wrappers: %d, want 2", n)
	}
}

func receipts(t *testing.T, root, id string) []contract.LifecycleReceipt {
	t.Helper()
	var out []contract.LifecycleReceipt
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e.Receipt)
	}
	return out
}
