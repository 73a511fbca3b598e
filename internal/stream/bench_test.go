package stream

import (
	"strconv"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// BenchmarkTranscriptMoment is the keeper's share of one transcript
// moment's way to a receipt in `run`: one Transcript fact stepped
// through the driver, which admits, links, records (here: nothing) and
// notes it recorded (a turn of four frame stages and a pressure reading
// per five moments).
func BenchmarkTranscriptMoment(b *testing.B) {
	d := NewDriver(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper},
		func(Moment, bool) (struct{}, string, error) { return struct{}{}, "r", nil }, Callbacks{})
	d.Step(Fact{Kind: Direct, Moment: Moment{Event: contract.EventSessionStarting}})
	now := time.Unix(1000, 0)
	evs := []contract.Event{contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded, contract.EventContextPressureObserved}
	sum := map[string]any{"source": "transcript", "frame_id": "x"}
	n := 0
	for b.Loop() {
		ev := evs[n%len(evs)]
		m := Moment{Event: ev, Summary: sum, HarnessSessionID: "hs"}
		if ev != contract.EventContextPressureObserved {
			m.Frame = &contract.FrameContext{FrameID: strconv.Itoa(n / len(evs))}
		}
		d.Step(Fact{Kind: Transcript, Moment: m, Now: now, TranscriptOpen: true})
		n++
	}
}
