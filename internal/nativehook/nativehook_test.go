package nativehook

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters/builtin"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// TestHostHookChainsParents: `host-hook` without a wrapper records one
// hook call per process, yet its receipts chain as a wrapper's do —
// session.started first, a frame's stages to its frame.opening, the
// rest to session.started, session.ended to session.ending — because
// each call's moments go through the same driver, taken up from the
// session's ledger.
func TestHostHookChainsParents(t *testing.T) {
	root := t.TempDir()
	ad := AdapterFor(builtin.Default(), "claude")
	r := Recorder{Root: root, Adapter: ad, Durability: ledger.SyncEach, Now: time.Now, IDs: ids.NewULIDSource(time.Now, nil)}
	const hs = "11111111-2222-3333-4444-555555555555"
	for _, call := range []struct{ hook, input string }{
		{"SessionStart", `{"session_id":"` + hs + `","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`},
		{"UserPromptSubmit", `{"session_id":"` + hs + `","cwd":"/p","prompt_id":"pp-1","hook_event_name":"UserPromptSubmit","prompt":"x"}`},
		{"Stop", `{"session_id":"` + hs + `","prompt_id":"pp-1","hook_event_name":"Stop","stop_hook_active":false}`},
		{"SessionEnd", `{"session_id":"` + hs + `","prompt_id":"pp-1","hook_event_name":"SessionEnd","reason":"other"}`},
	} {
		mapped, err := hooks.Map(ad.Hooks(), ad.ID, call.hook, []byte(call.input))
		if err != nil {
			t.Fatalf("%s: %v", call.hook, err)
		}
		r.Record(mapped)
	}
	recs, err := statedir.ListSessions(root)
	if err != nil || len(recs) != 1 {
		t.Fatalf("sessions: %v, %v", recs, err)
	}
	event := map[string]contract.Event{}
	var got []string
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, recs[0].ID), 0) {
		if err != nil {
			t.Fatal(err)
		}
		rc := e.Receipt
		event[rc.ReceiptID] = rc.Event
		parent := "-"
		if rc.ParentReceiptID != nil {
			parent = string(event[*rc.ParentReceiptID])
		}
		got = append(got, fmt.Sprintf("%s → %s", rc.Event, parent))
	}
	want := []string{
		"session.started → -",
		"frame.opening → session.started",
		"frame.ending → frame.opening",
		"frame.ended → frame.opening",
		"session.ending → session.started",
		"session.ended → session.ending",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("receipts and the receipt each chains to:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
