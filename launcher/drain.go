package launcher

import "time"

// drainQuiet is how long the supervisor keeps taking telemetry moments
// after a harness exited, once none arrive: the last lines a harness
// writes before it exits (the turn's end, its usage) are read within
// milliseconds of the write. drainMax bounds the whole drain.
const (
	drainQuiet = 500 * time.Millisecond
	drainMax   = 3 * time.Second
)

// drainState is the loop's phase after a harness exited: the telemetry
// still in flight is recorded, so the harness session's last receipts
// come before its session.ended (or before a relaunch's watcher takes
// over). Hooks are still served meanwhile (a harness may report its last
// turn as it exits). It ends drainQuiet after the last moment once no
// moment waits for its hook, or at drainMax.
type drainState struct {
	quiet, deadline *time.Timer
	quietOver       bool
	// then runs when the drain ends; nil ends the session.
	then func()
}

// beginDrain starts draining; then runs when it is over (nil: the
// session ends).
func (s *supervisor) beginDrain(then func()) {
	if s.drain != nil {
		return
	}
	s.drain = &drainState{quiet: time.NewTimer(drainQuiet), deadline: time.NewTimer(drainMax), then: then}
	if s.obs == nil {
		s.drain.quietOver = true
	}
	s.drainStep()
}

// channels returns the drain's timers (nil when not draining).
func (d *drainState) channels() (quiet, deadline <-chan time.Time) {
	if d == nil {
		return nil, nil
	}
	return d.quiet.C, d.deadline.C
}

// moment notes a telemetry moment: the quiet period starts again.
func (d *drainState) moment() {
	if d == nil {
		return
	}
	d.quietOver = false
	d.quiet.Reset(drainQuiet)
}

// drainStep ends the drain once it is quiet and nothing waits for a hook.
func (s *supervisor) drainStep() {
	if s.drain != nil && s.drain.quietOver && len(s.queue) == 0 {
		s.endDrain()
	}
}

// endDrain records what still waits and runs what follows the drain.
func (s *supervisor) endDrain() {
	d := s.drain
	if d == nil {
		return
	}
	d.quiet.Stop()
	d.deadline.Stop()
	s.drain = nil
	s.flushQueue()
	if d.then == nil {
		s.done = true
		return
	}
	d.then()
}
