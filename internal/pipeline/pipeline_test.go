package pipeline

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/sink"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

func generic(t *testing.T) *adapters.Adapter {
	t.Helper()
	a, err := builtin.Default().Lookup(adapters.GenericID)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestNewSessionRecordsIntoItsLedger(t *testing.T) {
	root := t.TempDir()
	events := filepath.Join(t.TempDir(), "events.jsonl")
	p, err := Open(Options{
		StateDir: root, NewSession: true, Log: true, Adapter: generic(t), Mode: contract.ModeLauncherWrapper,
		Events: []string{events}, Format: sink.FormatLifeloop, IDs: &ids.Sequential{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "ses_00000000000000000000000001" || p.Dir != statedir.SessionDir(root, p.ID) {
		t.Fatalf("session %q in %q", p.ID, p.Dir)
	}
	res, err := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarting})
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt.Sequence == nil || *res.Receipt.Sequence != 1 {
		t.Fatalf("sequence = %v, want 1", res.Receipt.Sequence)
	}
	if res.Receipt.InvocationID != "inv_00000000000000000000000002" {
		t.Fatalf("invocation id %q: want the one minted after the session id", res.Receipt.InvocationID)
	}
	p.Close()
	p.Close() // idempotent
	if _, err := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionEnded}); err == nil {
		t.Fatal("Route after Close succeeded")
	}
	n := 0
	for _, err := range ledger.ReadSince(statedir.ReceiptsPath(root, p.ID), 0) {
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n != 1 {
		t.Fatalf("ledger holds %d receipts, want 1", n)
	}
	for _, f := range []string{statedir.LogPath(root, p.ID), events} {
		if _, err := os.Stat(f); err != nil {
			t.Fatal(err)
		}
	}
}

func TestNoSessionLeavesSequenceNull(t *testing.T) {
	p, err := Open(Options{Adapter: generic(t), Mode: contract.ModeManualSkill})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	res, err := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarted})
	if err != nil {
		t.Fatal(err)
	}
	if res.Receipt.Sequence != nil || p.ID != "" {
		t.Fatalf("sequence %v, session %q: want neither", res.Receipt.Sequence, p.ID)
	}
}

func TestMissingSessionIsALedgerError(t *testing.T) {
	_, err := Open(Options{StateDir: t.TempDir(), Session: "nope", Adapter: generic(t), Mode: contract.ModeManualSkill})
	var lerr *LedgerError
	if !errors.As(err, &lerr) {
		t.Fatalf("err = %v, want a LedgerError", err)
	}
}

func TestSyncRouterSharesTheLedger(t *testing.T) {
	root := t.TempDir()
	p, err := Open(Options{StateDir: root, NewSession: true, Adapter: generic(t), Mode: contract.ModeLauncherWrapper})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	sync, err := p.SyncRouter()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarting})
	b, _ := sync.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarted})
	if *a.Receipt.Sequence != 1 || *b.Receipt.Sequence != 2 || a.Receipt.InvocationID != b.Receipt.InvocationID {
		t.Fatalf("receipts %d %s and %d %s: want sequences 1, 2 and one invocation",
			*a.Receipt.Sequence, a.Receipt.InvocationID, *b.Receipt.Sequence, b.Receipt.InvocationID)
	}
}

// TestSessionLogKeepsEveryRenewalLine: the session log limits repeated
// faults but never a renewal's lines, nor a held session.started (once
// per harness session): ten renewals, ten lines of each kind.
func TestSessionLogKeepsEveryRenewalLine(t *testing.T) {
	root := t.TempDir()
	p, err := Open(Options{StateDir: root, NewSession: true, Log: true, Adapter: generic(t), Mode: contract.ModeLauncherWrapper, IDs: &ids.Sequential{}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		p.Log.Info("renewal: stopping the harness", "signal", "SIGTERM")
		p.Log.Info("session.started held", "reason", "waiting for the relaunched harness to name its session")
		p.Log.Info("renewal done", "state", "delivered", "attempt", i+1)
	}
	p.Close()
	data, err := os.ReadFile(statedir.LogPath(root, p.ID))
	if err != nil {
		t.Fatal(err)
	}
	n, h, m := strings.Count(string(data), `"renewal: stopping the harness"`), strings.Count(string(data), `"session.started held"`), strings.Count(string(data), `"renewal done"`)
	if n != 10 || h != 10 || m != 10 {
		t.Fatalf("ten renewals logged %d stop lines, %d held session.started and %d done lines:\n%s", n, h, m, data)
	}
}
