package launcher

import (
	"slices"
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

// queuedMoment is a moment waiting to be recorded; until is zero for a
// moment that only waits for those ahead of it. A held session.started
// (key keyStarted) answers reply with its receipt id once recorded;
// waitHook keeps it for the SessionStart hook even when the transcript
// names the session first.
type queuedMoment struct {
	key      string
	m        Moment
	until    time.Time
	reply    func(string)
	waitHook bool
	// fromHook marks a hook's moment (which a transcript moment never
	// replaces).
	fromHook bool
}

// keyStarted is the queue key of a held session.started.
const keyStarted = "session.started"

// queueKey is the key a later report of the same moment finds m by.
func queueKey(m Moment) string {
	if m.Event == contract.EventSessionStarted && m.Frame == nil {
		return keyStarted
	}
	if m.Frame == nil {
		return ""
	}
	return string(m.Event) + "\x00" + m.Frame.FrameID
}

// enqueueTelemetry records m now, or queues it when it may still be
// reported by a hook or when moments ahead of it wait. A transcript
// binding completes a held session.started; a transcript moment a hook
// already reported corroborates the hook's receipt.
func (s *supervisor) enqueueTelemetry(m Moment) {
	if m.HarnessSessionID != "" {
		s.noteHarnessSession(m.HarnessSessionID) // known at once, even while m waits
	}
	key := queueKey(m)
	if key == keyStarted {
		if i := s.queued(keyStarted); i >= 0 {
			q := &s.queue[i]
			q.m = mergeStarted(q.m, m)
			if !q.waitHook {
				q.until = time.Time{}
			}
			s.releaseQueue(s.cfg.Now())
			return
		}
	}
	if s.coh.has(m) {
		return // another source reported it first
	}
	if i := s.queued(key); key != "" && key != keyStarted && i >= 0 && s.queue[i].fromHook {
		s.queue[i].m.Summary["transcript"] = m.Summary // the hook's receipt, waiting, absorbs it
		return
	}
	q := queuedMoment{key: key, m: m}
	if key != "" && key != keyStarted && s.nativeFrames[m.Event] {
		q.until = s.cfg.Now().Add(nativeWindow) // native wins: wait for the hook's report
	} else if len(s.queue) == 0 {
		_, _, _ = s.commit(m, false)
		return
	}
	s.insert(q)
	s.settle(m)
	s.releaseQueue(s.cfg.Now())
}

// enqueueHook orders a hook moment that places nothing with the moments
// that wait: it takes the place of the transcript's report of the same
// moment, and a frame stage whose earlier stages only the transcript
// reports waits (up to nativeWindow) for them, so the frame's receipts
// keep their causal order.
func (s *supervisor) enqueueHook(m Moment) {
	key := queueKey(m)
	if i := s.queued(key); key != "" && key != keyStarted && i >= 0 {
		q := &s.queue[i]
		m.Summary["transcript"] = q.m.Summary // native wins; the transcript corroborates
		q.m, q.until, q.fromHook = m, time.Time{}, true
		s.releaseQueue(s.cfg.Now())
		return
	}
	if s.coh.has(m) {
		return
	}
	q := queuedMoment{key: key, m: m, fromHook: true}
	if s.missingEarlier(m, len(s.queue)) {
		q.until = s.cfg.Now().Add(nativeWindow)
	} else if len(s.queue) == 0 {
		_, _, _ = s.commit(m, false)
		return
	}
	s.insert(q)
	s.releaseQueue(s.cfg.Now())
}

// insert queues q before the first waiting moment of the same frame at a
// later stage (so a late earlier stage still comes first), else last.
func (s *supervisor) insert(q queuedMoment) {
	pos := len(s.queue)
	if k := frameStage(q.m.Event); k > 0 && q.m.Frame != nil {
		for i, e := range s.queue {
			if e.m.Frame != nil && e.m.Frame.FrameID == q.m.Frame.FrameID && frameStage(e.m.Event) > k {
				pos = i
				break
			}
		}
	}
	s.queue = slices.Insert(s.queue, pos, q)
	s.armQueue()
}

// missingEarlier reports whether frame moment m still lacks an earlier
// stage the transcript will report: declared by the manifest, neither
// recorded nor among the first upTo queued moments, with a transcript
// being read.
func (s *supervisor) missingEarlier(m Moment, upTo int) bool {
	k := frameStage(m.Event)
	if k <= 1 || m.Frame == nil || s.obs == nil {
		return false
	}
	id := m.Frame.FrameID
	for j := s.coh.frames[id] + 1; j < k; j++ {
		if !s.coh.declared[frameStages[j-1]] {
			continue
		}
		if !slices.ContainsFunc(s.queue[:upTo], func(e queuedMoment) bool {
			return e.m.Frame != nil && e.m.Frame.FrameID == id && frameStage(e.m.Event) == j
		}) {
			return true
		}
	}
	return false
}

// settle releases the hook moments of m's frame that waited for the
// earlier stages now queued ahead of them.
func (s *supervisor) settle(m Moment) {
	if m.Frame == nil {
		return
	}
	for i := range s.queue {
		e := &s.queue[i]
		if e.fromHook && !e.until.IsZero() && e.m.Frame != nil && e.m.Frame.FrameID == m.Frame.FrameID && !s.missingEarlier(e.m, i) {
			e.until = time.Time{}
		}
	}
}

// queued returns the index of the queued moment with key, or -1.
func (s *supervisor) queued(key string) int {
	for i, q := range s.queue {
		if q.key == key {
			return i
		}
	}
	return -1
}

// commitQueued records a moment that waited.
func (s *supervisor) commitQueued(q queuedMoment) {
	res, _, _ := s.commit(q.m, false)
	if q.reply != nil {
		q.reply(res.Receipt.ReceiptID)
	}
}

// releaseQueue records the queued moments whose wait is over, in order.
func (s *supervisor) releaseQueue(now time.Time) {
	for len(s.queue) > 0 && !s.queue[0].until.After(now) {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.commitQueued(q)
	}
	s.armQueue()
}

// flushQueue records every queued moment (the harness has exited).
func (s *supervisor) flushQueue() {
	for len(s.queue) > 0 {
		q := s.queue[0]
		s.queue = s.queue[1:]
		s.commitQueued(q)
	}
	s.armQueue()
}

// takeQueued is called for a hook moment: when another source's report
// of it waits in the queue, the moments ahead of it are recorded and it
// is removed and returned, for the hook's receipt to absorb.
func (s *supervisor) takeQueued(m Moment) (queuedMoment, bool) {
	key := queueKey(m)
	if key == "" {
		return queuedMoment{}, false
	}
	i := s.queued(key)
	if i < 0 {
		return queuedMoment{}, false
	}
	q := s.queue[i]
	ahead := slices.Clone(s.queue[:i])
	s.queue = slices.Delete(s.queue, 0, i+1)
	for _, a := range ahead {
		s.commitQueued(a)
	}
	s.armQueue()
	return q, true
}

// releaseStarted records a held session.started and what waits ahead of
// it: moment by reports something later, so the session has started (and
// by's harness session id, if any, names it).
func (s *supervisor) releaseStarted(by Moment) {
	i := s.queued(keyStarted)
	if i < 0 {
		return
	}
	if by.HarnessSessionID != "" && s.queue[i].m.HarnessSessionID == "" {
		s.queue[i].m = mergeStarted(s.queue[i].m, Moment{HarnessSessionID: by.HarnessSessionID})
	}
	ahead := slices.Clone(s.queue[:i+1])
	s.queue = slices.Delete(s.queue, 0, i+1)
	for _, a := range ahead {
		s.commitQueued(a)
	}
	s.armQueue()
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
