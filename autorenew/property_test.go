package autorenew

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// TestRandomSessionsKeepTheRules drives the policy with random sessions
// (turns, readings, answers of every kind, renewals by the policy and by a
// person, time passing) and checks each Renew against a model of the
// stream kept here: never with a frame open, before Settle after the last
// turn, below the threshold or before a turn ended in the conversation;
// never a second ask before the answer; never more than PerHour policy
// renewals (asked Renewed or Failed) in any hour.
func TestRandomSessionsKeepTheRules(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) { randomSession(t, seed) })
	}
}

func randomSession(t *testing.T, seed uint64) {
	rng := rand.New(rand.NewPCG(seed, 52))
	cfg := cfg70()
	cfg.PerHour = 1 + rng.IntN(3)
	cfg.WaitMax = time.Duration(1+rng.IntN(20)) * time.Minute
	p := New(cfg)
	now := t0
	var (
		open        string // the open frame, "" when none
		frames      int
		lastEnd     time.Time
		endedInConv int
		over        bool
		asked       bool
		renewals    []time.Time // policy renewals: Renewed and Failed asks
		log         []string
	)
	see := func(r contract.LifecycleReceipt) {
		log = append(log, fmt.Sprintf("%s %s %v", since(now), r.Event, r.TelemetrySummary))
		p.Observe(r)
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("seed %d: %s\nstream:\n%v", seed, fmt.Sprintf(format, args...), log)
	}
	newConversation := func(byPolicy bool) {
		s := map[string]any{"reason": "renewal"}
		if byPolicy {
			s["policy"] = map[string]any{"client": "lifeloop-autorenew"}
		}
		see(receipt(contract.EventSessionEnding, now, s))
		see(receipt(contract.EventSessionEnded, now, s))
		see(receipt(contract.EventSessionStarting, now, s))
		see(receipt(contract.EventSessionStarted, now, s))
		open, endedInConv, over, lastEnd = "", 0, false, time.Time{}
	}
	see(receipt(contract.EventSessionStarted, now, nil))
	for step := 0; step < 300; step++ {
		now = now.Add(time.Duration(rng.IntN(90_000)) * time.Millisecond)
		switch k := rng.IntN(10); {
		case k < 3 && open == "":
			frames++
			open = fmt.Sprint("f", frames)
			see(receipt(contract.EventFrameOpening, now, map[string]any{"frame_id": open}))
		case k < 5 && open != "":
			see(receipt(contract.EventFrameEnded, now, map[string]any{"frame_id": open}))
			open, lastEnd = "", now.Truncate(time.Second) // at_epoch_s: whole seconds
			endedInConv++
		case k < 7:
			pct := float64(rng.IntN(1000)) / 10
			see(receipt(contract.EventContextPressureObserved, now, map[string]any{"percent": pct, "window": float64(100000)}))
			over = pct >= 70
		case k == 7 && rng.IntN(4) == 0:
			newConversation(false) // a person's renewal
		}
		for range 5 {
			d := p.Next(now)
			switch d.Action {
			case Renew:
				switch {
				case asked:
					fail("Renew at %s before the last ask was answered", since(now))
				case open != "":
					fail("Renew at %s with frame %s open", since(now), open)
				case !over:
					fail("Renew at %s below the threshold or with the pressure unknown", since(now))
				case endedInConv == 0:
					fail("Renew at %s before a turn ended in this conversation", since(now))
				case now.Before(lastEnd.Add(cfg.Settle)):
					fail("Renew at %s, less than Settle after the turn ended at %s", since(now), since(lastEnd))
				}
				n := 0
				for _, r := range renewals {
					if now.Sub(r) < time.Hour {
						n++
					}
				}
				if n >= cfg.PerHour {
					fail("Renew at %s with %d policy renewals in the last hour (limit %d)", since(now), n, cfg.PerHour)
				}
				if d.Evidence.ThisHour != n+1 {
					fail("Renew at %s says %d this hour, want %d", since(now), d.Evidence.ThisHour, n+1)
				}
				asked = true
				if d := p.Next(now.Add(time.Duration(rng.IntN(10)) * time.Second)); d.Action == Renew {
					fail("a second Renew at %s before the first was answered", since(now))
				}
				switch res := Result(rng.IntN(4)); res {
				case Renewed:
					p.Answered(now, res)
					// Counted at its receipts' at_epoch_s (whole seconds).
					renewals = append(renewals, now.Truncate(time.Second))
					newConversation(true)
				case Failed:
					p.Answered(now, res)
					renewals = append(renewals, now)
				default:
					p.Answered(now, res)
				}
				asked = false
				continue
			case Record:
				p.Reported(now)
				continue
			case Done:
				fail("Done while the session runs")
			}
			break
		}
	}
}
