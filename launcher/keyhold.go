package launcher

import "time"

// Keys typed while a renewal stops the harness and starts it again are
// held (startRenewal) and handed to the new harness once it takes them
// (ptyio.Child.TakesKeys), whether or not the renewal still waits for
// the harness to name its session: it reads its terminal in raw mode
// (key by key, drawing the keys itself), and, where
// the adapter names one (adapters.InputReadyText), it has drawn the text
// that shows its prompt is up. Keys written before are echoed by the
// terminal and dropped by a TUI that is not reading its input yet.
// Releasing them at session.started lost them: a resumed harness is
// recorded as started at once, but some TUIs leave canonical mode and
// take keys seconds later (the figures are beside each adapter's
// ReadyText).

const (
	// keyHoldMax bounds how long typed keys wait for a relaunched
	// harness to read them; then they are released anyway (and a TUI
	// still starting drops them). Generous: on two busy cores one TUI
	// took 18–40 s to take keys after a renewal, and 20 s lost them.
	keyHoldMax = 60 * time.Second
	// keyHoldPoll is how often the terminal's mode is read while keys
	// wait: nothing announces a change of mode.
	keyHoldPoll = 10 * time.Millisecond
)

// holdKeys starts holding typed keys; a release still waiting for an
// earlier harness no longer applies.
func (s *supervisor) holdKeys() {
	s.keyHold++
	s.term.HoldInput()
}

// releaseKeysWhenRead releases the held keys once the harness now
// running reads its terminal key by key, exits, or keyHoldMax has
// passed; at once when none runs.
func (s *supervisor) releaseKeysWhenRead() {
	if s.keyReleased == s.keyHold {
		return // armed already for this hold
	}
	s.keyReleased = s.keyHold
	c := s.child
	if c == nil {
		s.term.ReleaseInput()
		return
	}
	hold, from := s.keyHold, s.cfg.Now()
	go func() { // ends when c reads keys, exits, keyHoldMax passes or the loop ends
		why := "the harness takes keys"
		poll := time.NewTicker(keyHoldPoll)
		defer poll.Stop()
		limit := time.NewTimer(keyHoldMax)
		defer limit.Stop()
	wait:
		for !c.TakesKeys() {
			select {
			case <-poll.C:
			case <-c.Done():
				why = "the harness exited"
				break wait
			case <-limit.C:
				why = "the harness showed no sign of taking keys in time"
				break wait
			case <-s.loopDone:
				return
			}
		}
		s.onLoop(func() {
			if s.keyHold != hold {
				return // a later renewal holds them now
			}
			s.term.ReleaseInput()
			s.log.Info("renewal: typed keys released", "why", why, "after", s.cfg.Now().Sub(from).Round(time.Millisecond))
		})
	}()
}
