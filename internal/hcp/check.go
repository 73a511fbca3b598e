package hcp

import "fmt"

// CheckStream checks one session's events, in order, against seed 001:
// the first is session_created in state PENDING; sequences run from 1
// without gaps; every state_changed leaves the current state for one the
// seed's table (Transitions) allows; session_closed comes at most once,
// last, in the terminal state reached. A stream without session_closed
// is a session still open (running, or kept after a lost wrapper).
func CheckStream(es []Envelope) error {
	state := ""
	for i, e := range es {
		p := e.Payload
		if p.Sequence != uint64(i+1) {
			return fmt.Errorf("event %d (%s): sequence %d, want %d", i, p.EventType, p.Sequence, i+1)
		}
		if i == 0 {
			if p.EventType != SessionCreated || p.Data["state"] != StatePending {
				return fmt.Errorf("the stream opens with %s %v, want session_created in state PENDING", p.EventType, p.Data)
			}
			state = StatePending
			continue
		}
		if state == "closed" {
			return fmt.Errorf("event %d (%s) after session_closed", i, p.EventType)
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
