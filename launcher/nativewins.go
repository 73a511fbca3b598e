package launcher

import (
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// Native wins: when the hook bridge and the transcript report the same
// frame moment, the hook's receipt is the one recorded and the
// transcript's provenance is attached to it. A transcript moment the
// bridge also reports therefore waits in a queue for up to nativeWindow;
// telemetry moments behind it wait too, so receipts keep the transcript's
// order. A hook that never comes releases the transcript moment when the
// window ends; a hook that comes after the transcript moment was recorded
// is a duplicate and is dropped (the ledger is append-only).

// nativeWindow is how long a transcript frame moment waits for the hook
// that reports the same moment.
const nativeWindow = 2 * time.Second

// bridgedFrameEvents are the frame events the hook bridge of `run`
// reports natively for an adapter (adapters.HookBridge).
func bridgedFrameEvents(ad *adapters.Adapter) map[contract.Event]bool {
	b := ad.HookBridge()
	if b == nil {
		return nil
	}
	out := map[contract.Event]bool{}
	for _, e := range b.BridgedFrameEvents() {
		out[e] = true
	}
	return out
}

// queuedMoment is a telemetry moment waiting to be recorded; until is
// zero for a moment that only waits for those ahead of it.
type queuedMoment struct {
	key   string
	m     Moment
	until time.Time
}

func frameKey(m Moment) string {
	if m.Frame == nil {
		return ""
	}
	return string(m.Event) + "\x00" + m.Frame.FrameID
}

// enqueueTelemetry records m now, or queues it when it may still be
// reported by a hook or when moments ahead of it wait.
func (s *supervisor) enqueueTelemetry(m Moment) {
	if m.HarnessSessionID != "" {
		s.noteHarnessSession(m.HarnessSessionID) // known at once, even while m waits
	}
	key := frameKey(m)
	if key != "" && s.seenFrames[key] {
		return // a hook reported it first
	}
	hold := key != "" && s.nativeFrames[m.Event]
	if !hold && len(s.queue) == 0 {
		s.observe(m)
		return
	}
	q := queuedMoment{key: key, m: m}
	if hold {
		q.until = s.cfg.Now().Add(nativeWindow)
	}
	s.queue = append(s.queue, q)
	s.armQueue()
}

// releaseQueue records the queued moments whose wait is over, in order.
func (s *supervisor) releaseQueue(now time.Time) {
	for len(s.queue) > 0 && !s.queue[0].until.After(now) {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.observe(q.m)
	}
	s.armQueue()
}

// flushQueue records every queued moment (the harness has exited).
func (s *supervisor) flushQueue() {
	for len(s.queue) > 0 {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.observe(q.m)
	}
	s.armQueue()
}

// takeQueued is called for a hook moment: when the transcript's version
// of it waits in the queue, the moments ahead of it are recorded, it is
// removed, and its provenance is returned to attach to the hook's receipt.
func (s *supervisor) takeQueued(m Moment) (map[string]any, bool) {
	key := frameKey(m)
	if key == "" {
		return nil, false
	}
	for i, q := range s.queue {
		if q.key != key {
			continue
		}
		ahead := s.queue[:i]
		s.queue = s.queue[i+1:]
		for _, a := range ahead {
			s.observe(a.m)
		}
		s.armQueue()
		return q.m.Summary, true
	}
	return nil, false
}

// armQueue points the queue timer at the head's deadline.
func (s *supervisor) armQueue() {
	if s.queueTimer == nil {
		s.queueTimer = time.NewTimer(time.Hour)
		s.queueTimer.Stop()
	}
	s.queueTimer.Stop()
	if len(s.queue) == 0 {
		return
	}
	d := s.queue[0].until.Sub(s.cfg.Now())
	if s.queue[0].until.IsZero() || d < 0 {
		d = 0
	}
	s.queueTimer.Reset(d)
}
