package stream

import (
	"strconv"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// BenchmarkTranscriptMoment is the keeper's share of one transcript
// moment's way to a receipt in `run`: offered, admitted, linked and
// noted as recorded (a turn of four frame stages and a pressure reading
// per five moments).
func BenchmarkTranscriptMoment(b *testing.B) {
	k := New(Config{Manifest: allDeclared(), Mode: contract.ModeLauncherWrapper})
	k.admit(Moment{Event: contract.EventSessionStarting})
	k.Recorded(Moment{Event: contract.EventSessionStarting}, "r0")
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
		k.bind(m.HarnessSessionID)
		if r, ok := k.offerTranscript(m, now, true); ok {
			for _, o := range k.admit(r.Moment) {
				o = k.link(o)
				k.Recorded(o, "r")
			}
		}
		n++
	}
}
