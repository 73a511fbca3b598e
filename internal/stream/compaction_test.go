package stream

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// TestIdentifiedCompaction: a compaction that a hook and the transcript
// both report under one event id is recorded once, as the hook's
// (native), with the transcript's figures, whichever comes first; the
// transcript's waits up to CompactionWindow for the hook's, the hook's up
// to NativeWindow for the transcript's; a compaction without an id is
// recorded as reported.
func TestIdentifiedCompaction(t *testing.T) {
	const id = "msg_c/context.compacted"
	fromHook := func() Moment {
		return Moment{Event: contract.EventContextCompacted, EventID: id, Summary: map[string]any{"source": "hook", "trigger": "manual"}}
	}
	fromTranscript := func() Moment {
		return Moment{Event: contract.EventContextCompacted, EventID: id, Summary: map[string]any{"source": "database", "trigger": "manual", "pre_tokens": 17, "path": "db#s", "line": 9}}
	}
	type offer func(k *Keeper, now time.Time) []release
	hook := func(k *Keeper, now time.Time) []release { return one(k.offerHook(fromHook(), now, true)) }
	tr := func(k *Keeper, now time.Time) []release { return one(k.offerTranscript(fromTranscript(), now, true)) }
	for _, tc := range []struct {
		name    string
		offers  []offer
		gap     time.Duration // between the two offers
		wantSrc string
		wantPre any
		records int
	}{
		{"hook first", []offer{hook, tr}, 0, "hook", 17, 1},
		{"transcript first", []offer{tr, hook}, 0, "hook", 17, 1},
		{"the hook's, a while after the transcript's", []offer{tr, hook}, CompactionWindow - time.Second, "hook", 17, 1},
		{"the hook alone, after the window", []offer{hook}, NativeWindow, "hook", nil, 1},
		{"the transcript's, then a late hook", []offer{tr, hook}, CompactionWindow, "database", 17, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper, Bridged: map[contract.Event]bool{contract.EventContextCompacted: true}})
			now := time.Unix(1000, 0)
			var got []Moment
			rec := func(rs []release) {
				for _, r := range rs {
					got = append(got, k.admit(r.Moment)...)
				}
			}
			for i, o := range tc.offers {
				if i > 0 {
					now = now.Add(tc.gap)
					rec(k.release(now))
				}
				rec(o(k, now))
				rec(k.release(now))
			}
			if k.Waiting() {
				now = now.Add(CompactionWindow)
				rec(k.release(now))
			}
			if len(got) != tc.records || k.Waiting() {
				t.Fatalf("recorded %+v, still waiting %v", got, k.Waiting())
			}
			s := got[0].Summary
			if s["source"] != tc.wantSrc || s["pre_tokens"] != tc.wantPre || s["trigger"] != "manual" || (s["source"] == "hook") == (s["path"] != nil) {
				t.Errorf("summary %v", s)
			}
			if tc.wantSrc == "hook" && tc.wantPre != nil && s["transcript"] == nil {
				t.Errorf("the transcript's report is not attached: %v", s)
			}
		})
	}

	k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	plain := Moment{Event: contract.EventContextCompacted, Summary: map[string]any{"source": "hook"}}
	for i := range 2 {
		if len(k.admit(plain)) != 1 {
			t.Errorf("a compaction without an id, report %d: not recorded", i+1)
		}
	}
	k.resume([]contract.LifecycleReceipt{{ReceiptID: "r1", Event: contract.EventContextCompacted, EventID: id}})
	if len(k.admit(fromTranscript())) != 0 {
		t.Error("a keeper resumed from a ledger with the compaction records it again")
	}
}
