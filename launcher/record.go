package launcher

import (
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/hooks"
)

// DefaultBindWait bounds how long session.started waits for the harness
// to name its session (a SessionStart hook, the transcript's first line)
// before it is recorded with what is known. Nothing the person does waits
// for it (typed keys go to a relaunched harness once it takes them), so
// it is sized for a slow start: a TUI relaunched on two busy cores
// fired its SessionStart hook more than 5 s after its start.
const DefaultBindWait = 10 * time.Second

// hookBindFactor stretches the wait when payloads wait for the
// SessionStart hook to place them: only that hook's receipt can carry them.
const hookBindFactor = 3

// The path of every moment the supervisor records: emit (ordered behind
// moments that wait in the queue) → commit (coherence: dropped, or with
// the frame stages it implies) → recordOne (harness session id, parent
// link, the Recorder) → noteReceipt (the links later receipts need).

// emit records m now, or queues it behind the moments that wait.
func (s *supervisor) emit(m Moment) {
	if len(s.queue) > 0 {
		s.queue = append(s.queue, queuedMoment{m: m})
		s.armQueue()
		return
	}
	_, _, _ = s.commit(m, false)
}

// commit records m unless the stream already tells it (coherence.go),
// preceded by the frame stages it implies. ok is false when m was
// dropped; res is m's own receipt (sync: recorded with the synchronous
// clients, see SyncRecorder).
func (s *supervisor) commit(m Moment, sync bool) (res SyncResult, ok bool, err error) {
	if m.HarnessSessionID != "" {
		s.noteHarnessSession(m.HarnessSessionID)
	}
	out := s.coh.admit(m)
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
	if m.HarnessSessionID == "" {
		m.HarnessSessionID = s.harnessSessionID
	}
	if m.Parent == nil {
		m.Parent = s.parentFor(m)
	}
	if m.Frame != nil && m.Summary["frame_id"] == nil {
		m.Summary = clone(m.Summary)
		m.Summary["frame_id"] = m.Frame.FrameID
	}
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
	s.noteReceipt(m, res.Receipt.ReceiptID)
	return res, nil
}

// noteReceipt remembers the receipts later ones link to.
func (s *supervisor) noteReceipt(m Moment, id string) {
	switch m.Event {
	case contract.EventSessionStarting:
		s.startingReceipt, s.endingReceipt = id, ""
	case contract.EventSessionStarted:
		s.startedReceipt = id
	case contract.EventSessionEnding:
		s.endingReceipt = id
	case contract.EventFrameOpening:
		if m.Frame != nil {
			s.frameReceipts[m.Frame.FrameID] = id
		}
	}
}

// parentFor is the receipt m chains to: session.started to its
// session.starting, a relaunch's session.starting to the session.started
// before it, session.ended to session.ending, a frame's moments to its
// opening (or its parent frame's), everything else to session.started.
func (s *supervisor) parentFor(m Moment) *string {
	ref := func(ids ...string) *string {
		for _, id := range ids {
			if id != "" {
				return &id
			}
		}
		return nil
	}
	switch m.Event {
	case contract.EventSessionStarting:
		return ref(s.startedReceipt)
	case contract.EventSessionStarted:
		return ref(s.startingReceipt)
	case contract.EventSessionEnded:
		return ref(s.endingReceipt, s.startedReceipt, s.startingReceipt)
	}
	if m.Frame != nil {
		if id, ok := s.frameReceipts[m.Frame.FrameID]; ok {
			return &id
		}
		if m.Frame.ParentFrameID != nil {
			if id, ok := s.frameReceipts[*m.Frame.ParentFrameID]; ok {
				return &id
			}
		}
	}
	return ref(s.startedReceipt, s.startingReceipt)
}

// noteHarnessSession remembers a harness session id: in session.json and
// on every later receipt.
func (s *supervisor) noteHarnessSession(id string) {
	s.harnessSessionID = id
	if !s.harnessSessions[id] {
		s.harnessSessions[id] = true
		s.rec.HarnessSessionIDs = append(s.rec.HarnessSessionIDs, id)
		s.saveRecord()
	}
}

// expectsBinding reports whether the harness will name its session: the
// transcript of a new harness session, or the hook bridge's SessionStart
// hook. A pinned launch knows the id but still waits for the evidence
// that the harness took it; a resumed one is named by its hook only (its
// transcript goes on).
func (s *supervisor) expectsBinding() bool {
	if s.cfg.Telemetry != nil && !s.resumed {
		return true
	}
	return len(s.cfg.BridgeArgs) > 0 && s.bridgeStartsSessions()
}

// bridgeStartsSessions reports whether the hook bridge has a hook that
// reports session.started.
func (s *supervisor) bridgeStartsSessions() bool {
	spec := s.cfg.Adapter.Hooks()
	if spec == nil {
		return false
	}
	for _, h := range spec.Hooks {
		if h.Role == hooks.RoleSessionStart {
			return true
		}
	}
	return false
}

// emitStarted records a harness session's session.started: at once when
// its harness session id is known or nothing will tell it, else held in
// the queue until the SessionStart hook or the transcript names the
// session, or the bind wait passes. reply, when set, gets the receipt id.
func (s *supervisor) emitStarted(m Moment, reply func(string)) {
	waitHook := len(s.pendingFor(contract.EventSessionStarted)) > 0 && len(s.cfg.BridgeArgs) > 0
	if !s.expectsBinding() && !waitHook {
		if len(s.queue) > 0 {
			s.queue = append(s.queue, queuedMoment{key: keyStarted, m: m, reply: reply})
			s.armQueue()
			return
		}
		res, _, _ := s.commit(m, false)
		if reply != nil {
			reply(res.Receipt.ReceiptID)
		}
		return
	}
	wait := s.cfg.BindWait
	if waitHook {
		wait *= hookBindFactor
	}
	s.queue = append(s.queue, queuedMoment{key: keyStarted, m: m, until: s.cfg.Now().Add(wait), reply: reply, waitHook: waitHook})
	s.armQueue()
}

// mergeStarted is the held session.started completed by the evidence
// that named the session: the evidence's id and provenance, the held
// moment's own facts (pid, renewal step, payload receipts).
func mergeStarted(held, evidence Moment) Moment {
	out := held
	if evidence.HarnessSessionID == "" {
		evidence.HarnessSessionID = held.HarnessSessionID
	}
	out.HarnessSessionID = evidence.HarnessSessionID
	if evidence.EventID != "" {
		out.EventID = evidence.EventID
	}
	sum := clone(evidence.Summary)
	for k, v := range held.Summary {
		sum[k] = v
	}
	if out.HarnessSessionID != "" {
		sum["binding"] = "harness_session_id"
	}
	out.Summary = sum
	out.Payloads = append(out.Payloads, evidence.Payloads...)
	out.Warnings = append(out.Warnings, evidence.Warnings...)
	return out
}
