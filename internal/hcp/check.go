package hcp

import "fmt"

// CheckStream checks one lifeloop session's events, in order, against
// seed 001: the first is session_created in state PENDING; sequences run
// from 1 without gaps; every state_changed leaves the current state for
// one the seed's table (Transitions) allows; session_closed comes at most
// once, last, in the terminal state reached. A stream without
// session_closed is a session still open (running, or kept after a lost
// wrapper). After a session_closed, a continuation of the session
// (`run --continue-session`) opens a new HCP session: a session_created
// with another session_id, whose events are checked the same way, from
// sequence 1.
func CheckStream(es []Envelope) error {
	state, session, first := "", "", 0
	for i, e := range es {
		p := e.Payload
		if state == "closed" && p.EventType == SessionCreated && e.SessionID != session {
			state, first = "", i // a continuation's HCP session
		}
		if p.Sequence != uint64(i-first+1) {
			return fmt.Errorf("event %d (%s): sequence %d, want %d", i, p.EventType, p.Sequence, i-first+1)
		}
		if i == first {
			if p.EventType != SessionCreated || p.Data["state"] != StatePending {
				return fmt.Errorf("the stream of HCP session %s opens with %s %v, want session_created in state PENDING", e.SessionID, p.EventType, p.Data)
			}
			state, session = StatePending, e.SessionID
			continue
		}
		if state == "closed" {
			return fmt.Errorf("event %d (%s) after session_closed", i, p.EventType)
		}
		if e.SessionID != session {
			return fmt.Errorf("event %d (%s) of HCP session %s inside session %s", i, p.EventType, e.SessionID, session)
		}
		switch p.EventType {
		case SessionCreated:
			return fmt.Errorf("event %d: a second session_created", i)
		case StateChanged:
			from, _ := p.Data["from_state"].(string)
			to, _ := p.Data["to_state"].(string)
			if from != state {
				return fmt.Errorf("event %d: state_changed from %s, but the session is %s", i, from, state)
			}
			if !Valid(from, to) {
				return fmt.Errorf("event %d: %s → %s is not a transition of seed 001", i, from, to)
			}
			state = to
		case SessionClosed:
			if final, _ := p.Data["final_state"].(string); final != state || !Terminal(final) {
				return fmt.Errorf("event %d: session_closed with final_state %v in state %s", i, p.Data["final_state"], state)
			}
			state = "closed"
		}
		if Terminal(state) && p.EventType != StateChanged {
			return fmt.Errorf("event %d (%s) in terminal state %s before session_closed", i, p.EventType, state)
		}
	}
	if Terminal(state) {
		return fmt.Errorf("terminal state %s without session_closed", state)
	}
	return nil
}
