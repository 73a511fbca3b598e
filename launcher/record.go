package launcher

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// DefaultBindWait bounds how long session.started waits for the harness
// to name its session (a SessionStart hook, the transcript's first line)
// before it is recorded with what is known. Nothing the person does waits
// for it (typed keys go to a relaunched harness once it takes them), so
// it is sized for a slow start: a TUI relaunched on two busy cores
// fired its SessionStart hook more than 5 s after its start.
const DefaultBindWait = 10 * time.Second

// HookFailedWarning marks the receipt `lifeloop host-hook` records when a
// hook call could not reach its wrapper.
const HookFailedWarning = stream.HookFailedWarning

// The rules of the story live in internal/stream; the supervisor is the
// I/O around its keeper. The path of every moment the supervisor
// records: offer it to the keeper (emit, enqueueTelemetry, enqueueHook,
// emitStarted) → record what the keeper says is ready, then what its
// queue releases (recordReady, releaseQueue) → commit (the keeper's
// Admit: dropped, or with the frame stages it implies) → recordOne (the
// keeper's Link: harness session id, parent link; the Recorder; the
// keeper's Recorded) → arm the one queue timer at the keeper's Next.

// newKeeper returns the keeper of a session run with cfg.
func newKeeper(cfg Config) *stream.Keeper {
	var manifest contract.AdapterManifest
	kc := stream.Config{Mode: contract.ModeLauncherWrapper, Transcript: cfg.Telemetry != nil, BindWait: cfg.BindWait}
	if cfg.Adapter != nil {
		manifest = cfg.Adapter.Manifest()
		if cfg.bridged() {
			spec, frames := cfg.BridgeHooks, cfg.BridgeFrames
			if b := cfg.Adapter.HookBridge(); spec == nil && b != nil {
				spec, frames = b.Hooks(), b.BridgedFrameEvents()
			}
			kc.Bridged = map[contract.Event]bool{}
			for _, e := range frames {
				kc.Bridged[e] = true
			}
			kc.HookNamesSession = spec != nil && slices.ContainsFunc(spec.Hooks, func(h hooks.Hook) bool { return h.Role == hooks.RoleSessionStart })
		}
	}
	kc.Manifest = manifest
	k := stream.New(kc)
	k.Known(cfg.Record.HarnessSessionIDs)
	k.Resume(cfg.Prior)
	return k
}

// bridged reports whether `run` installed the hook bridge (arguments,
// environment or both).
func (c Config) bridged() bool { return len(c.BridgeArgs) > 0 || len(c.BridgeEnv) > 0 }

// bridgePlaces reports whether the hook bridge has a hook that can place
// payloads at event: a prompt submission's for frame.opening, a session
// start's for session.started (the default, also when event is unset).
func bridgePlaces(ad *adapters.Adapter, event contract.Event) bool {
	role := hooks.RoleSessionStart
	if event == contract.EventFrameOpening {
		role = hooks.RolePromptSubmit
	}
	spec := ad.Hooks()
	return spec != nil && slices.ContainsFunc(spec.Hooks, func(h hooks.Hook) bool { return h.Role == role && spec.CanInject(h.Name) })
}

// emit records m now, or queues it behind the moments that wait.
func (s *supervisor) emit(m Moment) {
	if r, ok := s.k.Offer(m); ok {
		s.commitQueued(r)
	}
}

// enqueueTelemetry offers a transcript moment to the keeper; its harness
// session id is known at once, even while m waits.
func (s *supervisor) enqueueTelemetry(m Moment) {
	if m.HarnessSessionID != "" {
		s.bind(m.HarnessSessionID)
	}
	if r, ok := s.k.OfferTranscript(m, s.cfg.Now(), s.obs != nil); ok {
		s.commitQueued(r)
	}
	s.releaseQueue(s.cfg.Now())
}

// enqueueHook offers a hook moment that places nothing.
func (s *supervisor) enqueueHook(m Moment) {
	if r, ok := s.k.OfferHook(m, s.cfg.Now(), s.obs != nil); ok {
		s.commitQueued(r)
	}
	s.releaseQueue(s.cfg.Now())
}

// emitStarted records a harness session's session.started: at once when
// its harness session id is known or nothing will tell it, else held
// until the SessionStart hook or the transcript names the session, or the
// bind wait passes. reply, when set, gets the receipt id.
func (s *supervisor) emitStarted(m Moment, reply func(string)) {
	waitHook := len(s.pendingFor(contract.EventSessionStarted)) > 0 && s.cfg.bridged()
	var tag any
	if reply != nil {
		tag = reply
	}
	now := s.cfg.Now()
	if r, ok := s.k.OfferStarted(m, tag, now, waitHook); ok {
		s.commitQueued(r)
	} else {
		for _, h := range s.k.Holds() {
			if h.Event == contract.EventSessionStarted && !h.Until.IsZero() {
				s.log.Info("session.started held", "reason", h.Reason, "at_most", h.Until.Sub(now).Round(time.Millisecond))
			}
		}
	}
	s.armQueue()
}

// recordReady records moments the keeper released, in order.
func (s *supervisor) recordReady(rs []stream.Ready) {
	for _, r := range rs {
		s.commitQueued(r)
	}
}

// commitQueued records a moment the keeper released and answers the
// reply it was offered with.
func (s *supervisor) commitQueued(r stream.Ready) {
	res, _, _ := s.commit(r.Moment, false)
	if reply, ok := r.Tag.(func(string)); ok {
		reply(res.Receipt.ReceiptID)
	}
}

// releaseQueue records the queued moments whose wait is over, in order.
func (s *supervisor) releaseQueue(now time.Time) {
	for r, ok := s.k.Pop(now); ok; r, ok = s.k.Pop(now) {
		s.commitQueued(r)
	}
	s.armQueue()
}

// flushQueue records every queued moment (the harness has exited).
func (s *supervisor) flushQueue() {
	for r, ok := s.k.PopAny(); ok; r, ok = s.k.PopAny() {
		s.commitQueued(r)
	}
	s.armQueue()
}

// releaseStarted records a held session.started and what waits ahead of
// it: moment by reports something later.
func (s *supervisor) releaseStarted(by Moment) {
	s.recordReady(s.k.ReleaseStarted(by))
	s.armQueue()
}

// armQueue points the queue timer at the keeper's next deadline.
func (s *supervisor) armQueue() {
	if s.queueTimer == nil {
		s.queueTimer = time.NewTimer(time.Hour)
		s.queueTimer.Stop()
	}
	s.queueTimer.Stop()
	at, ok := s.k.Next()
	if !ok {
		return
	}
	d := at.Sub(s.cfg.Now())
	if at.IsZero() || d < 0 {
		d = 0
	}
	s.queueTimer.Reset(d)
}

// commit records m unless the stream already tells it, preceded by the
// frame stages it implies. ok is false when m was dropped; res is m's own
// receipt (sync: recorded with the synchronous clients, see
// SyncRecorder).
func (s *supervisor) commit(m Moment, sync bool) (res SyncResult, ok bool, err error) {
	if m.HarnessSessionID != "" {
		s.bind(m.HarnessSessionID)
	}
	out := s.k.Admit(m)
	if len(out) == 0 {
		s.log.Debug("moment already in the stream; dropped", "event", m.Event)
		return SyncResult{}, false, nil
	}
	for i, o := range out {
		last := i == len(out)-1
		r, rerr := s.recordOne(s.withHarnessVersion(o), sync && last)
		if last {
			if o.Event == contract.EventSessionStarted && rerr == nil {
				defer s.warnUnprovenVersion()
			}
			return r, rerr == nil, rerr
		}
	}
	return res, false, nil
}

// recordOne records one moment through the Recorder.
func (s *supervisor) recordOne(m Moment, sync bool) (SyncResult, error) {
	m = s.withContinuation(s.k.Link(m))
	var res SyncResult
	var err error
	if sync && s.cfg.HookRecorder != nil {
		res, err = s.cfg.HookRecorder.RecordSync(s.ctx, m)
	} else {
		res.Receipt, err = s.cfg.Recorder.Record(s.ctx, m)
	}
	if err != nil {
		s.log.Error("recording receipt failed", "event", m.Event, "err", err)
		return res, err
	}
	s.k.Recorded(m, res.Receipt.ReceiptID)
	if startsProcess(m.Event, m.Summary) {
		s.processes++
	}
	return res, nil
}

// withContinuation marks a session.* moment recorded by a wrapper that
// continued a session after a lost wrapper with the continuation's
// number (contract.SummaryContinuation): its start and end are a new
// incarnation, with OrgLoop keys of their own.
func (s *supervisor) withContinuation(m Moment) Moment {
	if s.continuation == 0 || !strings.HasPrefix(string(m.Event), "session.") {
		return m
	}
	m.Summary = maps.Clone(m.Summary)
	if m.Summary == nil {
		m.Summary = map[string]any{}
	}
	m.Summary[contract.SummaryContinuation] = s.continuation
	return m
}

// bind notes a harness session id: on every later receipt and, the first
// time, in session.json.
func (s *supervisor) bind(id string) {
	if s.k.Bind(id) {
		s.rec.HarnessSessionIDs = append(s.rec.HarnessSessionIDs, id)
		s.saveRecord()
	}
}
