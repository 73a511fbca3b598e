package autorenew

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// readStream reads a recorded ledger of testdata.
func readStream(t *testing.T, name string) []contract.LifecycleReceipt {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []contract.LifecycleReceipt
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 1<<24)
	for sc.Scan() {
		var r contract.LifecycleReceipt
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(out) == 0 {
		t.Fatalf("%s is empty", name)
	}
	return out
}

// openAfter says, per receipt index, whether a top-level frame is open
// once that receipt is in (told apart from the stream here, not by the
// policy).
func openAfter(rs []contract.LifecycleReceipt) []bool {
	open := map[string]bool{}
	out := make([]bool, len(rs))
	for i, r := range rs {
		id, _ := r.TelemetrySummary["frame_id"].(string)
		switch r.Event {
		case contract.EventFrameOpening, contract.EventFrameOpened:
			open[id] = true
		case contract.EventFrameEnded:
			delete(open, id)
		case contract.EventSessionEnding, contract.EventSessionEnded, contract.EventSessionStarted:
			clear(open)
		}
		out[i] = len(open) > 0
	}
	return out
}

// replayTo is a policy that observed rs[:n].
func replayTo(cfg Config, rs []contract.LifecycleReceipt, n int) *Policy {
	p := New(cfg)
	for _, r := range rs[:n] {
		p.Observe(r)
	}
	return p
}

// timelineAsk is one Renew of a timeline replay: after which receipt,
// when, and its evidence.
type timelineAsk struct {
	after int
	at    time.Time
	d     Decision
}

// replayTimeline runs the policy as its runner would over the recorded
// stream: each receipt at its at_epoch_s, and between two receipts Next
// again at each Until that comes before the next one. Records are
// Reported; Renews are answered Renewed (the stream does not show
// them: it was recorded without a policy).
func replayTimeline(cfg Config, rs []contract.LifecycleReceipt) (asks []timelineAsk, final Decision) {
	p := New(cfg)
	for i, r := range rs {
		p.Observe(r)
		now := receiptTime(r)
		next := now.Add(time.Hour)
		if i+1 < len(rs) {
			next = receiptTime(rs[i+1])
		}
		for steps := 0; steps < 100; steps++ {
			d := p.Next(now)
			final = d
			switch d.Action {
			case Renew:
				asks = append(asks, timelineAsk{after: i, at: now, d: d})
				p.Answered(now, Renewed)
				continue
			case Record:
				p.Reported(now)
				continue
			case Wait:
				if !d.Until.IsZero() && d.Until.Before(next) {
					now = d.Until
					continue
				}
			}
			break
		}
	}
	return asks, final
}

// TestRecordedStreams runs the policy (70 %, the defaults) over the
// one-shot tool turns of the six harnesses, recorded by the real
// binaries (testdata/README.md): the turn's second model request
// crosses 70 % while the frame is open.
func TestRecordedStreams(t *testing.T) {
	cases := []struct {
		harness string
		trigger float64 // the reading over 70 %, as the evidence rounds it
		// renewedInTime: the session stayed after the turn for longer
		// than Settle, so the policy would have asked before it ended.
		renewedInTime bool
	}{
		{"claude", 80.2, false},
		{"codex", 79.2, false},
		{"gemini", 76.4, true},
		{"opencode", 76, false},
		{"pi", 80.1, false},
		{"openclaw", 80.1, true},
	}
	cfg := cfg70()
	for _, c := range cases {
		t.Run(c.harness, func(t *testing.T) {
			rs := readStream(t, c.harness+".receipts.jsonl")
			open := openAfter(rs)
			crossed, ended := -1, -1
			for i, r := range rs {
				if r.Event == contract.EventContextPressureObserved && crossed < 0 {
					if pct, _ := number(r.TelemetrySummary["percent"]); pct >= 70 {
						crossed = i
					}
				}
				if r.Event == contract.EventFrameEnded && crossed >= 0 && ended < 0 {
					ended = i
				}
			}
			if crossed < 0 || ended < 0 {
				t.Fatalf("the recording has no reading over 70 %% (%d) or no frame.ended after it (%d)", crossed, ended)
			}
			if !open[crossed] {
				t.Fatalf("the crossing reading (receipt %d) came outside the frame: the recording does not test a crossing mid-turn", crossed)
			}
			endAt := receiptTime(rs[ended])
			for i := range rs {
				p := replayTo(cfg, rs, i+1)
				at := receiptTime(rs[i])
				d := p.Next(at)
				switch {
				case i < crossed:
					// Below the threshold or nothing known yet.
					if d.Action != Wait || !d.Until.IsZero() {
						t.Fatalf("receipt %d (%s): %s until %s, want a Wait for the next receipt", i, rs[i].Event, d.Action, since(d.Until))
					}
				case open[i]:
					// Over it, mid-turn: wait for the turn, bounded by WaitMax.
					if d.Action != Wait || !d.Until.Equal(receiptTime(rs[crossed]).Add(cfg.WaitMax)) {
						t.Fatalf("receipt %d (%s), frame open: %s until %s (%q)", i, rs[i].Event, d.Action, since(d.Until), d.Waiting)
					}
				case i >= ended && rs[i].Event != contract.EventSessionEnding && rs[i].Event != contract.EventSessionEnded && !p.ended:
					// Between turns: settle, then renew.
					if at.Before(endAt.Add(cfg.Settle)) {
						if d.Action != Wait || !d.Until.Equal(endAt.Add(cfg.Settle)) {
							t.Fatalf("receipt %d (%s), settling: %s until %s", i, rs[i].Event, d.Action, since(d.Until))
						}
						d = replayTo(cfg, rs, i+1).Next(endAt.Add(cfg.Settle))
					}
					if d.Action != Renew {
						t.Fatalf("receipt %d (%s), settled: %s (%q), want Renew", i, rs[i].Event, d.Action, d.Waiting)
					}
					if d.Evidence.TriggerPercent != c.trigger || d.Evidence.ThresholdPercent != 70 || d.Evidence.ThisHour != 1 || d.Evidence.Window == 0 || d.Evidence.TriggerTokens == 0 {
						t.Fatalf("evidence %+v, want trigger %v", d.Evidence, c.trigger)
					}
				}
				// Whatever the time, never a renewal while a frame is open.
				if open[i] {
					for _, later := range []time.Duration{0, cfg.Settle, time.Minute, cfg.WaitMax, 2 * time.Hour} {
						if d := replayTo(cfg, rs, i+1).Next(at.Add(later)); d.Action == Renew {
							t.Fatalf("receipt %d (%s): Renew %s later with a frame open", i, rs[i].Event, later)
						}
					}
				}
			}
			if d := replayTo(cfg, rs, len(rs)).Next(receiptTime(rs[len(rs)-1]).Add(time.Hour)); d.Action != Done {
				t.Fatalf("after the last receipt (%s): %s, want Done", rs[len(rs)-1].Event, d.Action)
			}

			asks, final := replayTimeline(cfg, rs)
			if final.Action != Done {
				t.Fatalf("the timeline ends with %s, want Done", final.Action)
			}
			switch {
			case c.renewedInTime && len(asks) != 1:
				t.Fatalf("timeline: %d renewals asked, want 1", len(asks))
			case c.renewedInTime:
				if a := asks[0]; a.after < ended || !a.at.Equal(endAt.Add(cfg.Settle)) || a.d.Evidence.TriggerPercent != c.trigger {
					t.Fatalf("timeline: asked after receipt %d at %s (trigger %v), want after the frame.ended (%d) at its end + Settle",
						a.after, a.at.Format(time.RFC3339), a.d.Evidence.TriggerPercent, ended)
				}
			case len(asks) != 0:
				t.Fatalf("timeline: asked after receipt %d, but the session ended within Settle of the turn", asks[0].after)
			}

			// At 85 % no reading crosses: never a renewal.
			high := Defaults(Threshold{Percent: 85})
			if asks, _ := replayTimeline(high, rs); len(asks) != 0 {
				t.Fatalf("at 85 %%: asked after receipt %d", asks[0].after)
			}
		})
	}
}
