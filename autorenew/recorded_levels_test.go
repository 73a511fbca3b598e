package autorenew

import (
	"testing"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/telemetry"
)

// TestRecordedLevelsDecideWhatThePolicySees: two Claude Code turns at
// 55.1 % and 72.1 % (testdata/README.md). With the default levels
// (50/75/90) the wrapper records no reading of the second turn (no
// level change), so a 70 % policy never asks; with the levels LevelsFor
// gives 70 % (`run --levels 50,70,90`) it asks once, Settle after the
// second turn, at 72.1 %.
func TestRecordedLevelsDecideWhatThePolicySees(t *testing.T) {
	cfg := cfg70()
	if got := LevelsFor(cfg.Threshold, telemetry.DefaultLevels); got != (telemetry.Levels{Moderate: 0.5, High: 0.7, Critical: 0.9}) {
		t.Fatalf("LevelsFor(70%%) = %+v: the recording below used 50,70,90", got)
	}
	def := readStream(t, "claude-levels-default.receipts.jsonl")
	if n := countEvent(def, contract.EventContextPressureObserved); n != 1 {
		t.Fatalf("default levels: %d readings recorded, want the first turn's alone", n)
	}
	if asks, final := replayTimeline(cfg, def); len(asks) != 0 || final.Action != Done {
		t.Fatalf("default levels: %d asks, then %s; want none, then Done", len(asks), final.Action)
	}

	at70 := readStream(t, "claude-levels-70.receipts.jsonl")
	asks, final := replayTimeline(cfg, at70)
	if len(asks) != 1 || final.Action != Done {
		t.Fatalf("levels 50,70,90: %d asks, then %s; want one, then Done", len(asks), final.Action)
	}
	end2 := nth(at70, contract.EventFrameEnded, 2)
	if a := asks[0]; a.d.Evidence.TriggerPercent != 72.1 || !a.at.Equal(receiptTime(at70[end2]).Add(cfg.Settle)) {
		t.Fatalf("asked at %s with %v, want the second turn's end + Settle with 72.1", since(a.at), a.d.Evidence.TriggerPercent)
	}
}

func countEvent(rs []contract.LifecycleReceipt, ev contract.Event) int {
	n := 0
	for _, r := range rs {
		if r.Event == ev {
			n++
		}
	}
	return n
}
