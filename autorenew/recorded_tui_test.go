package autorenew

import (
	"math"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// nth is the index of the n-th (1-based) receipt of event in rs, or -1.
func nth(rs []contract.LifecycleReceipt, event contract.Event, n int) int {
	for i, r := range rs {
		if r.Event == event {
			if n--; n == 0 {
				return i
			}
		}
	}
	return -1
}

// TestRecordedTUISessions runs the policy over a person's TUI session of
// each harness, recorded by the real binaries (testdata/README.md): a
// first turn at about 55 % of the window, a second over 75 %, the
// person's fresh `lifeloop renew` about 4 s after it, a third turn of
// the new conversation at about 15 %, then SIGTERM.
func TestRecordedTUISessions(t *testing.T) {
	for _, harness := range tuiRecorded {
		t.Run(harness, func(t *testing.T) {
			name := harness + "-tui.receipts.jsonl"
			rs := readStream(t, name)
			open := openAfter(rs)
			end1, end2, end3 := nth(rs, contract.EventFrameEnded, 1), nth(rs, contract.EventFrameEnded, 2), nth(rs, contract.EventFrameEnded, 3)
			p1, p2 := nth(rs, contract.EventContextPressureObserved, 1), nth(rs, contract.EventContextPressureObserved, 2)
			renewed := nth(rs, contract.EventSessionEnding, 1)
			if end3 < 0 || p2 < 0 || renewed < 0 || text(rs[renewed].TelemetrySummary["reason"]) != "renewal" {
				t.Fatalf("%s is not a three-turn session renewed by a person", name)
			}
			pct := func(i int) float64 { v, _ := number(rs[i].TelemetrySummary["percent"]); return v }
			if pct(p1) >= 70 || pct(p1) < 50 || pct(p2) < 70 {
				t.Fatalf("readings %v and %v: want the first in [50, 70), the second over 70", pct(p1), pct(p2))
			}

			for _, threshold := range []float64{50, 70} {
				cfg := Defaults(Threshold{Percent: threshold})
				// Never a renewal while a frame is open, whatever the time.
				for i := range rs {
					if !open[i] {
						continue
					}
					at := receiptTime(rs[i])
					for _, later := range []time.Duration{0, cfg.Settle, time.Minute, cfg.WaitMax, 2 * time.Hour} {
						if d := replayTo(cfg, rs, i+1).Next(at.Add(later)); d.Action == Renew {
							t.Fatalf("at %v %%: receipt %d (%s) with a frame open: Renew %s later", threshold, i, rs[i].Event, later)
						}
					}
				}
			}

			// At 70 %: the second turn crossed it; the policy asks once,
			// Settle after that turn ended, with that reading, before the
			// person's renewal. The new conversation's 15 % asks nothing.
			cfg := cfg70()
			asks, final := replayTimeline(cfg, rs)
			if final.Action != Done {
				t.Fatalf("the timeline ends with %s, want Done", final.Action)
			}
			if len(asks) != 1 {
				t.Fatalf("at 70 %%: %d renewals asked (%+v), want 1", len(asks), asks)
			}
			want := receiptTime(rs[end2]).Add(cfg.Settle)
			if pat := receiptTime(rs[p2]); pat.After(want) {
				want = pat
			}
			a := asks[0]
			if !a.at.Equal(want) || a.after < max(end2, p2) || a.after >= renewed {
				t.Fatalf("at 70 %%: asked after receipt %d at %s, want after the second turn's end (%d) and reading (%d) at %s",
					a.after, a.at.Format(time.RFC3339), end2, p2, want.Format(time.RFC3339))
			}
			if a.d.Evidence.TriggerPercent != math.Round(pct(p2)*10)/10 || a.d.Evidence.ThisHour != 1 || a.d.Resume {
				t.Fatalf("at 70 %%: evidence %+v (resume %v), want the second reading %v", a.d.Evidence, a.d.Resume, pct(p2))
			}
			// The person's renewal is not the policy's: it counts nothing.
			p := replayTo(cfg, rs, len(rs))
			if n := p.ThisHour(receiptTime(rs[len(rs)-1])); n != 0 {
				t.Fatalf("ThisHour %d after a person's renewal, want 0", n)
			}

			// At 50 %: the first turn crossed it already; asked Settle
			// after it ended (before the second turn opened), once.
			half := Defaults(Threshold{Percent: 50})
			asks, _ = replayTimeline(half, rs)
			if len(asks) != 1 {
				t.Fatalf("at 50 %%: %d renewals asked, want 1", len(asks))
			}
			want = receiptTime(rs[end1]).Add(half.Settle)
			if pat := receiptTime(rs[p1]); pat.After(want) {
				want = pat
			}
			if a := asks[0]; !a.at.Equal(want) || a.d.Evidence.TriggerPercent != math.Round(pct(p1)*10)/10 {
				t.Fatalf("at 50 %%: asked at %s with %v, want %s with the first reading %v", a.at.Format(time.RFC3339), a.d.Evidence.TriggerPercent, want.Format(time.RFC3339), pct(p1))
			}
		})
	}
}

// tuiRecorded are the harnesses whose TUI session is in testdata.
var tuiRecorded = []string{"claude", "codex", "gemini", "opencode", "pi", "openclaw"}
