package launcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"syscall"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/router"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/stream"
)

// errCallerGone is the answer to a control caller whose connection ended
// (timeout, hang-up) before the loop answered; nothing was executed
// unless the loop had already taken the call.
func errCallerGone(ctx context.Context) error {
	return fmt.Errorf("control: the caller gave up: %w", context.Cause(ctx))
}

// errHarnessGone answers operations that need a running harness after
// it exited.
var errHarnessGone = errors.New("the harness has exited; the session is ending")

// onControl serves one control call on the loop. Every operation answers
// at once except renew, which answers when the renewal ends.
func (s *supervisor) onControl(call controlCall) {
	if call.req.Op == control.OpRenew {
		renewals{s}.onRenew(call.req.Args, call.reply)
		return
	}
	res, err := s.control(call.req)
	call.reply <- controlReply{res, err}
}

func (s *supervisor) control(req control.Request) (any, error) {
	switch req.Op {
	case control.OpStatus:
		return s.status(), nil
	case control.OpHook:
		return s.onHook(req.Args)
	}
	if s.drain != nil && s.renewing == nil {
		return nil, errHarnessGone
	}
	switch req.Op {
	case control.OpAbort:
		if s.stopping && s.aborting {
			return map[string]any{"state": s.rec.State, "note": "abort already in progress"}, nil
		}
		s.stop(contract.StoppedByAbort, syscall.SIGTERM)
		return map[string]any{"state": s.rec.State}, nil
	case control.OpPause, control.OpResume:
		return s.pauseResume(req.Op)
	case control.OpEmit:
		return s.onEmit(req.Args)
	default:
		return nil, fmt.Errorf("unknown control operation %q", req.Op)
	}
}

func (s *supervisor) status() control.Status {
	st := control.Status{Session: s.rec, Stopping: s.stopping, Renewing: s.renewing != nil, Activity: s.activity}
	if s.child != nil {
		pid := s.child.Pid()
		g, _ := s.sampler.Sample(pid, pid, nil)
		activity, idle := s.currentActivity()
		st.Alive, st.Processes = g.Alive, g.Procs
		if g.Usage {
			rss, cpu := g.RSSBytes, roundMillis(g.CPUSeconds)
			st.RSSBytes, st.CPUSeconds = &rss, &cpu
		}
		st.OutputBytes, st.IdleSeconds, st.Activity = s.child.Activity().BytesOut, roundMillis(idle), activity
	}
	st.FrameOpen = s.d.FrameOpen()
	st.Usage = s.cfg.Telemetry.meter().soFar()
	if at := s.turns.endedAt; !at.IsZero() {
		st.LastFrameEndedAt = &at
	}
	if s.term != nil {
		if at := s.term.LastKey(); !at.IsZero() {
			st.LastKeyAt = &at
		}
	}
	st.Attention = s.attentionNow()
	now := s.cfg.Now()
	for _, h := range s.d.Holds() {
		ch := control.Hold{Event: h.Event, Reason: h.Reason}
		if !h.Until.IsZero() {
			left := roundMillis(max(h.Until.Sub(now), 0).Seconds())
			ch.SecondsLeft = &left
		}
		st.Holding = append(st.Holding, ch)
	}
	return st
}

func (s *supervisor) pauseResume(op string) (any, error) {
	if s.renewing != nil {
		return nil, fmt.Errorf("cannot %s while a renewal stops and starts the harness", op)
	}
	from, to, sig := statedir.StateRunning, statedir.StatePaused, syscall.SIGSTOP
	if op == control.OpResume {
		from, to, sig = statedir.StatePaused, statedir.StateRunning, syscall.SIGCONT
	}
	if s.rec.State != from || s.child == nil {
		return nil, fmt.Errorf("cannot %s a session that is %s", op, s.rec.State)
	}
	if err := s.child.SignalGroup(sig); err != nil {
		return nil, err
	}
	s.rec.State = to
	s.saveRecord()
	s.tick(tickStateChange)
	return map[string]any{"state": s.rec.State}, nil
}

// onEmit records a moment a skill or an operator reported (`lifeloop
// emit` on a live session): in order with the wrapper's own receipts, and
// under the same coherence rules. The wrapper owns its session's
// lifecycle: a session.* or supervisor.tick moment is its own to record,
// and is refused, as is a moment that names no frame where it needs one
// or a payload that cannot be placed, and so is a moment under an
// idempotency key of another moment (keyHolder). A refusal records
// nothing and touches no state (see emitRefusal).
func (s *supervisor) onEmit(raw json.RawMessage) (any, error) {
	var a control.EmitArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("emit: bad arguments: %w", err)
	}
	// The key is checked against the ledger before the keeper or the
	// ledger sees the moment: a key of another moment is refused here, not
	// recorded as a failed receipt; a retry gets its original receipt.
	if held, retry, err := s.keyHolder(a); err != nil {
		return nil, err
	} else if retry {
		return held, nil
	}
	if err := s.emitRefusal(a); err != nil {
		return nil, err
	}
	m := Moment{Event: a.Event, Payloads: a.Payloads, Summary: a.TelemetryDetail, Degradations: a.Degradations}
	if a.Event == contract.EventCapabilityDegraded {
		m.Status = contract.StatusDegraded // as the wrapper's own degradations
	}
	if a.IdempotencyKey != "" {
		k := a.IdempotencyKey
		m.IdempotencyKey = &k
	}
	if a.FrameID != "" {
		fc := contract.FrameContext{FrameID: a.FrameID, FrameClass: contract.FrameTopLevel}
		if a.ParentFrameID != "" {
			p := a.ParentFrameID
			fc.ParentFrameID = &p
			fc.FrameClass = contract.FrameSubcall
		}
		m.Frame = &fc
	}
	// The emitted moment comes after everything observed before it.
	res, ok, err := s.d.Ask(stream.Fact{Kind: stream.After, Moment: m, Now: s.cfg.Now()})
	if err != nil {
		return nil, err
	}
	if !ok && m.IdempotencyKey != nil {
		// A replay the ledger file does not show yet (held in the
		// ledger's spool during a storage outage): the ledger answers.
		r, _, err := s.d.Ask(stream.Fact{Kind: stream.Replay, Moment: m})
		return r.Receipt, err
	}
	if !ok {
		return nil, fmt.Errorf("emit: the ledger already has %s for this harness session (or a later stage of frame %q); each is recorded once", a.Event, a.FrameID)
	}
	return res.Receipt, nil
}

// keyHolder checks an emitted moment's idempotency key against the
// session's ledger (ledger.CheckKey): retry is true, with the receipt the
// key holds, for the same moment again; a key of another moment is a
// *ledger.KeyConflictError. A moment without a key holds nothing.
func (s *supervisor) keyHolder(a control.EmitArgs) (held contract.LifecycleReceipt, retry bool, err error) {
	adapter := ""
	if s.cfg.Adapter != nil {
		adapter = s.cfg.Adapter.ID
	}
	r, retry, err := ledger.CheckKey(statedir.ReceiptsPath(s.cfg.StateDir, s.rec.ID), router.DefaultClientID, adapter, a.IdempotencyKey, a.Event, a.Payloads)
	var conflict *ledger.KeyConflictError
	if err != nil && !errors.As(err, &conflict) {
		err = fmt.Errorf("emit: reading the ledger for idempotency key %q: %w; nothing was recorded", a.IdempotencyKey, err)
	}
	return r, retry, err
}

// emitRefusal says why the live wrapper refuses an emitted moment before
// anything is recorded, or nil: a moment only the wrapper can know (the
// session's session.* moments and its supervisor's ticks), a frame moment
// without a frame id, or a payload that is invalid or needs a placement
// the adapter cannot provide.
func (s *supervisor) emitRefusal(a control.EmitArgs) error {
	id := s.rec.ID
	switch {
	case a.Event.IsSession():
		return fmt.Errorf("%s of session %s is recorded by its lifeloop run alone, which is running it; nothing was recorded: to end the session use `lifeloop abort %s`, to restart its harness `lifeloop renew %s`",
			a.Event, id, id, id)
	case a.Event == contract.EventSupervisorTick:
		return fmt.Errorf("supervisor.tick of session %s is its lifeloop run's own (its supervisor ticks); nothing was recorded", id)
	case a.Event.IsFrame() && a.FrameID == "":
		return fmt.Errorf("%s needs a frame id (--frame-id); nothing was recorded", a.Event)
	case a.Event == contract.EventCapabilityDegraded && len(a.Degradations) == 0:
		return errors.New("capability.degraded needs at least one capability degradation (capability, previous and current support); nothing was recorded")
	}
	for i, d := range a.Degradations {
		if err := d.Validate(); err != nil {
			return fmt.Errorf("capability degradation %d is invalid: %w; nothing was recorded", i+1, err)
		}
	}
	if s.cfg.Adapter == nil {
		return nil
	}
	m, site, now := s.cfg.Adapter.Manifest(), contract.HookSite(a.Event), s.cfg.Now()
	for _, p := range a.Payloads {
		if err := p.Check(now); err != nil {
			return fmt.Errorf("payload %s is refused (invalid_request): %w; nothing was recorded", p.PayloadID, err)
		}
		if d := site.Resolve(m, p); d.Outcome == contract.PlacementOutcomeFailed {
			fc := contract.FailurePlacementUnavailable
			if d.FailureClass != nil {
				fc = *d.FailureClass
			}
			return fmt.Errorf("payload %s cannot be placed with %s for adapter %s (%s): %s; nothing was recorded", p.PayloadID, a.Event, m.AdapterID, fc, d.Reason)
		}
	}
	return nil
}
