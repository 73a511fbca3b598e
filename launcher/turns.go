package launcher

import (
	"fmt"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
)

// turns is what the supervisor knows of the harness's turns from the
// receipts it records: when the latest turn (top-level frame) opened and
// when one last ended in this harness conversation. A renewal asked
// between turns is checked against it (notBetweenTurns), and status
// reports it.
type turns struct {
	// openedID and openedAt are the latest turn and when its first
	// receipt (frame.opening or frame.opened) was recorded.
	openedID string
	openedAt time.Time
	// endedAt is when a turn's frame.ended was last recorded (zero: none
	// in this conversation).
	endedAt time.Time
}

// recorded notes receipt m, recorded at time at.
func (t *turns) recorded(m Moment, at time.Time) {
	if m.Event == contract.EventSessionStarting {
		if resume, _ := m.Summary["resume"].(bool); !resume {
			*t = turns{} // a new conversation: its turns are still to come
		}
		return
	}
	if m.Frame == nil || !isTurn(*m.Frame) {
		return
	}
	switch m.Event {
	case contract.EventFrameOpening, contract.EventFrameOpened:
		if m.Frame.FrameID != t.openedID {
			t.openedID, t.openedAt = m.Frame.FrameID, at
		}
	case contract.EventFrameEnded:
		t.endedAt = at
	}
}

// isTurn reports whether fc is a turn's frame (top-level), not a
// subcall's.
func isTurn(fc contract.FrameContext) bool {
	return fc.FrameClass == contract.FrameTopLevel || (fc.FrameClass == "" && fc.ParentFrameID == nil)
}

// notBetweenTurns says why a renewal asked between turns
// (renewal.Request.BetweenTurns, a policy client's) cannot happen now,
// or nil: a turn is under way (a top-level frame recorded or held and not
// ended), no turn has ended in this harness conversation yet, or a key
// was typed at the terminal since the latest turn OPENED. Since it
// opened, not since it ended: a TUI keeps keys typed while the model
// works as a draft in its input box, and a renewal would throw that draft
// away; keys typed before the opening (the prompt itself and its Enter)
// are the turn's own. A dialog open in the harness (attention
// needs_permission or needs_answer, attention.go) is no safe moment
// either, whatever the frames say. The refusal is a control.Refusal with code
// control.CodeNotBetweenTurns: nothing was recorded or stopped, and the
// client asks again later.
func (s *supervisor) notBetweenTurns() error {
	refuse := func(format string, args ...any) error {
		return &control.Refusal{Code: control.CodeNotBetweenTurns,
			Message: "renew between turns: " + fmt.Sprintf(format, args...) + "; nothing was done: ask again once the harness is between turns"}
	}
	t := s.turns
	if st, open := s.dialogOpen(); open {
		return refuse("the harness waits for the person's answer (%s)", st)
	}
	switch {
	case s.d.FrameOpen():
		return refuse("a turn is under way")
	case t.endedAt.IsZero():
		return refuse("no turn has ended in this harness conversation yet")
	}
	if k := s.term.LastKey(); !k.IsZero() && k.After(t.openedAt) {
		return refuse("a key was typed at the terminal at %s, after the latest turn began (a draft may be in the harness's input box)", k.UTC().Format(time.TimeOnly))
	}
	return nil
}
