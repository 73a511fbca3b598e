package stream

import (
	"slices"
	"time"

	"github.com/lifeloop/lifeloop/contract"
)

// The keeper's one door: facts go in (Step), receipts to record come
// out (Ready), each acknowledged once recorded (Recorded); what is held
// (Holds) and when the keeper next needs a Due fact (Next) are read
// after. A step only notes the fact: its work runs as Ready is asked
// for the next receipt, one phase at a time, so every moment is admitted
// and linked after the receipts before it were recorded — in the order
// the wrapper, the hook bridge and the transcript reported them.

// Kind says what a Fact reports.
type Kind int

const (
	// Own is a moment of the wrapper's own (a tick, a degradation):
	// recorded now unless moments wait, then behind them.
	Own Kind = iota
	// Direct is a moment recorded now, whatever waits: the launch's
	// session.starting, the session's end, a host-hook call's moment.
	Direct
	// After is a moment that comes after everything observed before it
	// (an emitted moment): the held session.started and every queued
	// moment are recorded first.
	After
	// Replay is an emitted moment recorded again under its idempotency
	// key (the ledger answers with the receipt it has): linked and
	// recorded without being admitted.
	Replay
	// Stop is a stop's session.ending: After, with the turns still open
	// closed first (frame.ended, stop_reason Reason, cancelled).
	Stop
	// Renewal is a renewal's step (Resumed: the relaunch resumes the
	// harness session): After; its session.ending closes the open turns
	// as Stop does, its session.starting opens the next harness session,
	// and its session.started is held, as the launch's, unless the
	// relaunch resumed a named session.
	Renewal
	// Started is a launch's session.started (PayloadsWaitHook: payloads
	// wait for the session-start hook to place them; also a Renewal's
	// session.started): recorded now when
	// nothing will name the session, else held until something does or
	// the bind wait passes.
	Started
	// Transcript is a transcript moment (TranscriptOpen): its harness
	// session id is bound at once; it waits for the hook's report of it
	// when the bridge reports it too.
	Transcript
	// Hook is a hook moment that places nothing (TranscriptOpen): it
	// takes the place of the transcript's report of it, or waits for the
	// transcript's earlier stages of its frame.
	Hook
	// Placing is a hook moment that may place payloads: another source's
	// report of it that waits is absorbed, and it is recorded now (Sync:
	// with the synchronous clients, Record.Sync).
	Placing
	// HookCall is a hook call reaching the wrapper: what waits for the
	// bridge's report waits longer.
	HookCall
	// Due is time passing: what waited until Now is released.
	Due
	// Drained says nothing more can come from the harness (it exited and
	// its transcript was read to its end): everything held is released.
	Drained
	// Bind names the harness session the launch chose (Moment's
	// HarnessSessionID).
	Bind
)

// Fact is one thing the keeper is told.
type Fact struct {
	Kind   Kind
	Moment Moment
	// Now is when it happened.
	Now time.Time
	// TranscriptOpen says a transcript is still being read (Transcript,
	// Hook, Placing).
	TranscriptOpen bool
	// PayloadsWaitHook: see Started.
	PayloadsWaitHook bool
	// Resumed: see Renewal.
	Resumed bool
	// Reason is why the harness is stopped (Stop, Renewal).
	Reason string
	// Sync asks for the synchronous clients (Placing: a hook that can
	// place payloads).
	Sync bool
}

// Record is a receipt to record: the moment complete (harness session
// id, parent receipt, frame id), in order.
type Record struct {
	Moment Moment
	// Sync says its clients answer now (a hook that may place payloads).
	Sync bool
	// Answer says it is the stepped fact's own moment, whose receipt
	// answers the step.
	Answer bool
}

// outgoing is a released moment on its way to be recorded.
type outgoing struct {
	m            Moment
	sync, answer bool
	// admitted: the stream rules already took it (Replay, or a stage
	// admit returned).
	admitted bool
}

// pending is a stepped fact not yet worked through, and the phase it is
// at; a Placing fact keeps the report of its moment it took from the
// queue.
type pending struct {
	f     Fact
	phase int
	q     heldMoment
	held  bool
	// aside: stepped while a receipt was being recorded (stepFirst); its
	// receipts never answer the step under way.
	aside bool
}

// Step tells the keeper fact f. Its receipts come out of Ready.
func (k *Keeper) Step(f Fact) {
	k.todo = append(k.todo, pending{f: f})
}

// stepFirst tells the keeper fact f ahead of the facts not yet worked
// through (one stepped while a receipt is being recorded: it follows
// that receipt).
func (k *Keeper) stepFirst(f Fact) {
	k.todo = slices.Insert(k.todo, k.todoAt, pending{f: f, aside: true})
}

// Ready returns the next receipt to record; ok is false when there is
// none. Record it, then call Recorded (unless recording failed), then
// ask again.
func (k *Keeper) Ready() (r Record, ok bool) {
	for k.admittedAt == len(k.admitted) {
		k.admitted, k.admittedAt = k.admitted[:0], 0
		if k.outAt == len(k.out) {
			k.out, k.outAt = k.out[:0], 0
		}
		switch {
		case k.outAt < len(k.out):
			o := k.out[k.outAt]
			k.outAt++
			k.admitOut(o)
		case k.todoAt < len(k.todo):
			if !k.run(&k.todo[k.todoAt]) {
				k.todoAt++
			}
		default:
			k.todo, k.todoAt = k.todo[:0], 0
			return Record{}, false
		}
	}
	o := k.admitted[k.admittedAt]
	k.admittedAt++
	return Record{Moment: k.link(o.m), Sync: o.sync, Answer: o.answer}, true
}

// Bound returns the harness session ids the session never had before,
// bound since the last call (the caller saves them in the session
// record).
func (k *Keeper) Bound() []string {
	b := k.fresh
	k.fresh = nil
	return b
}

// admitOut takes released moment o through the stream rules: its
// harness session id is bound, and it becomes the receipts to record.
func (k *Keeper) admitOut(o outgoing) {
	if o.admitted {
		k.admitted = append(k.admitted, o)
		return
	}
	if o.m.HarnessSessionID != "" {
		k.bind(o.m.HarnessSessionID)
	}
	ms := k.admit(o.m)
	for i, m := range ms {
		last := i == len(ms)-1
		k.admitted = append(k.admitted, outgoing{m: m, sync: o.sync && last, answer: o.answer && last, admitted: true})
	}
}

// send releases moments to record, in order.
func (k *Keeper) send(rs ...release) {
	for _, r := range rs {
		k.out = append(k.out, outgoing{m: r.Moment})
	}
}

// sendOne releases r when ok.
func (k *Keeper) sendOne(r release, ok bool) {
	if ok {
		k.send(r)
	}
}

// answer releases m, the stepped fact's own moment.
func (k *Keeper) answer(m Moment, sync bool) {
	k.out = append(k.out, outgoing{m: m, sync: sync, answer: true})
}

// run runs the next phase of fact p, once the receipts the phase before
// released are recorded; more says phases remain.
func (k *Keeper) run(p *pending) (more bool) {
	if p.aside {
		from := len(k.out)
		defer func() {
			for i := from; i < len(k.out); i++ {
				k.out[i].answer = false
			}
		}()
	}
	f := &p.f
	m, now := f.Moment, f.Now
	i := p.phase
	p.phase++
	switch f.Kind {
	case Own:
		if r, ok := k.offer(m); ok {
			k.answer(r.Moment, false)
		}
	case Direct:
		k.answer(m, false)
	case Replay:
		k.out = append(k.out, outgoing{m: m, answer: true, admitted: true})
	case After, Stop, Renewal:
		if i == 0 {
			// What waited comes first.
			k.send(k.releaseStarted(Moment{})...)
			k.send(k.flush()...)
			return true
		}
		return k.afterSettled(f, i-1)
	case Started:
		k.sendStarted(m, now, f.PayloadsWaitHook, true)
	case Transcript:
		if i == 0 {
			k.succeed(m)
			if m.HarnessSessionID != "" {
				k.bind(m.HarnessSessionID)
			}
			k.sendOne(k.offerTranscript(m, now, f.TranscriptOpen))
			return true
		}
		k.send(k.release(now)...)
	case Hook:
		switch i {
		case 0:
			k.send(k.releaseStarted(m)...)
			return true
		case 1:
			k.sendOne(k.offerHook(m, now, f.TranscriptOpen))
			return true
		}
		k.send(k.release(now)...)
	case Placing:
		return k.placing(p, i)
	case HookCall:
		k.hookArrived(now)
	case Due:
		k.send(k.release(now)...)
	case Drained:
		k.readToEnd()
		k.send(k.flush()...)
	case Bind:
		k.bind(m.HarnessSessionID)
	}
	return false
}

// sendStarted offers a session.started: released now, or held (Holds
// says why). answer says its receipt answers the step.
func (k *Keeper) sendStarted(m Moment, now time.Time, payloadsWaitHook, answer bool) {
	if r, ok := k.offerStarted(m, now, payloadsWaitHook); ok {
		k.out = append(k.out, outgoing{m: r.Moment, answer: answer})
	}
}

// afterSettled runs phase i of an After, Stop or Renewal fact once what
// waited was recorded.
func (k *Keeper) afterSettled(f *Fact, i int) (more bool) {
	m := f.Moment
	closes := f.Kind == Stop || f.Kind == Renewal && m.Event == contract.EventSessionEnding
	switch {
	case closes && i == 0:
		k.closeCutOffTurns(f.Reason)
		return true
	case f.Kind == Renewal && m.Event == contract.EventSessionStarting:
		k.relaunch(f.Resumed) // a fresh harness session names itself
		k.answer(m, false)
	case f.Kind == Renewal && m.Event == contract.EventSessionStarted:
		if f.Resumed && k.harness != "" {
			k.answer(m, false) // the resumed harness keeps the session it had
			return false
		}
		k.sendStarted(m, f.Now, f.PayloadsWaitHook, false) // the renewal does not wait for it
	default:
		k.answer(m, false)
	}
	return false
}

// placing runs phase i of a hook moment that may place payloads: the
// report of it that waits (and what waits ahead of it) is taken from the
// queue, the hook's receipt absorbs it, and it is recorded now.
func (k *Keeper) placing(p *pending, i int) (more bool) {
	m := &p.f.Moment
	switch i {
	case 0:
		var ahead []release
		ahead, p.q, p.held = k.take(*m)
		k.send(ahead...)
		return true
	case 1:
		switch {
		case p.held && p.q.Started:
			*m = mergeStarted(p.q.Moment, *m) // the hook names the session the held receipt waited for
		case p.held:
			m.Summary = cloneSummary(m.Summary)
			m.Summary["transcript"] = p.q.Moment.Summary // native wins; the transcript corroborates
		case m.Event != contract.EventSessionStarted:
			k.send(k.releaseStarted(*m)...) // the session has started: this hook reports a later moment
		}
		return true
	}
	k.answer(*m, p.f.Sync)
	return false
}

// closeCutOffTurns releases the end of every turn still open when the
// harness is stopped (a renewal, an abort, a signal to the wrapper)
// while an answer is under way or a permission dialog is open:
// frame.ended (after the frame.ending the manifest implies), stop_reason
// the stop's reason, outcome cancelled. They come before the stop's
// session.ending: nothing of a harness session's frames follows it.
func (k *Keeper) closeCutOffTurns(reason string) {
	for _, fc := range k.OpenFrames() {
		f := fc
		sum := map[string]any{"source": "wrapper", "stop_reason": reason, contract.SummaryOutcome: string(contract.LifecycleCancelled)}
		k.send(release{Moment: Moment{Event: contract.EventFrameEnded, Frame: &f, Summary: sum}})
	}
}

// succeed opens the next harness session when a transcript's
// session.started names a new one and no launch step of the caller's
// will (telemetry_only: `watch` following the newer file of a resumed or
// renewed harness): its session.* moments are told again.
func (k *Keeper) succeed(m Moment) {
	if k.cfg.Mode == contract.ModeTelemetryOnly && m.Event == contract.EventSessionStarted &&
		m.HarnessSessionID != "" && k.harness != "" && m.HarnessSessionID != k.harness {
		k.nextHarnessSession()
	}
}
