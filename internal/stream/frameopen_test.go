package stream

import (
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// emitted is a frame moment a client emits (parent "": a turn's).
func emitted(ev contract.Event, frame, parent string) step {
	return func(s *story) {
		fc := &contract.FrameContext{FrameID: frame, FrameClass: contract.FrameTopLevel}
		if parent != "" {
			p := parent
			fc.ParentFrameID, fc.FrameClass = &p, contract.FrameSubcall
		}
		s.d.Step(Fact{Kind: After, Now: s.now, Moment: Moment{Event: ev, Summary: map[string]any{"source": "emit"}, Frame: fc}})
	}
}

// TestFrameOpen: a top-level frame is open from its first stage to its
// frame.ended, held or recorded; a subcall alone is not a turn; the
// frames a renewal cuts off are closed.
func TestFrameOpen(t *testing.T) {
	s := newStory(t, Config{})
	check := func(when string, want bool, open int) {
		t.Helper()
		if got := s.d.FrameOpen(); got != want {
			t.Errorf("%s: FrameOpen %v, want %v (stream %v)", when, got, want, s.lines)
		}
		if got := len(s.d.OpenFrames()); got != open {
			t.Errorf("%s: %d open frames, want %d", when, got, open)
		}
	}
	wrapper(contract.EventSessionStarting)(s)
	started(false)(s)
	check("started", false, 0)
	emitted(contract.EventFrameOpening, "sub", "f0")(s)
	check("a subcall open", false, 1)
	emitted(contract.EventFrameEnded, "sub", "f0")(s)
	emitted(contract.EventFrameOpening, "f1", "")(s)
	check("a turn opening", true, 1)
	emitted(contract.EventFrameOpened, "f1", "")(s)
	check("a turn opened", true, 1)
	emitted(contract.EventFrameEnded, "f1", "")(s)
	check("the turn ended", false, 0)
	emitted(contract.EventFrameOpening, "f2", "")(s)
	check("the next turn", true, 1)
	s.fact(Fact{Kind: Renewal, Reason: "renewal", Moment: Moment{Event: contract.EventSessionEnding, Summary: map[string]any{"source": "renewal"}}})
	check("a renewal's stop", false, 0)
}

// TestFrameOpenWhileHeld: a transcript's frame.opening that waits for the
// hook's report of it is a turn under way already.
func TestFrameOpenWhileHeld(t *testing.T) {
	s := newStory(t, Config{Transcript: true, Bridged: map[contract.Event]bool{contract.EventFrameOpening: true}})
	wrapper(contract.EventSessionStarting)(s)
	started(false)(s)
	transcript(contract.EventFrameOpening, "f1", "hs")(s)
	if len(s.d.Holds()) == 0 {
		t.Fatalf("the transcript's frame.opening is not held: %v", s.lines)
	}
	if !s.d.FrameOpen() {
		t.Errorf("FrameOpen false while a turn's frame.opening is held")
	}
	wait(NativeWaitMax + time.Second)(s)
	if !s.d.FrameOpen() {
		t.Errorf("FrameOpen false once the turn's frame.opening is recorded: %v", s.lines)
	}
}
