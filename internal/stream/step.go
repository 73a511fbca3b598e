package stream

import (
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

// Step tells the keeper fact f. Its receipts come out of Ready.
func (k *Keeper) Step(f Fact) {
	k.todo = append(k.todo, k.phases(f)...)
}

// stepFirst tells the keeper fact f ahead of the facts not yet worked
// through (one stepped while a receipt is being recorded: it follows
// that receipt).
func (k *Keeper) stepFirst(f Fact) {
	k.todo = append(k.phases(f), k.todo...)
}

// Ready returns the next receipt to record; ok is false when there is
// none. Record it, then call Recorded (unless recording failed), then
// ask again.
func (k *Keeper) Ready() (r Record, ok bool) {
	for len(k.admitted) == 0 {
		switch {
		case len(k.out) > 0:
			o := k.out[0]
			k.out = k.out[1:]
			k.admitOut(o)
		case len(k.todo) > 0:
			phase := k.todo[0]
			k.todo = k.todo[1:]
			phase()
		default:
			return Record{}, false
		}
	}
	o := k.admitted[0]
	k.admitted = k.admitted[1:]
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

// phases are the steps of fact f, each run once the receipts the one
// before released are recorded.
func (k *Keeper) phases(f Fact) []func() {
	m, now := f.Moment, f.Now
	due := func() { k.send(k.release(now)...) }
	settle := func() {
		k.send(k.releaseStarted(Moment{})...)
		k.send(k.flush()...)
	}
	switch f.Kind {
	case Own:
		return []func(){func() {
			if r, ok := k.offer(m); ok {
				k.out = append(k.out, outgoing{m: r.Moment, answer: true})
			}
		}}
	case Direct:
		return []func(){func() { k.answer(m, false) }}
	case Replay:
		return []func(){func() { k.out = append(k.out, outgoing{m: m, answer: true, admitted: true}) }}
	case After:
		return []func(){settle, func() { k.answer(m, false) }}
	case Stop:
		return []func(){settle, func() { k.closeCutOffTurns(f.Reason) }, func() { k.answer(m, false) }}
	case Renewal:
		return append([]func(){settle}, k.renewalStep(f)...)
	case Started:
		return []func(){func() { k.sendStarted(m, now, f.PayloadsWaitHook, true) }}
	case Transcript:
		return []func(){func() {
			k.succeed(m)
			if m.HarnessSessionID != "" {
				k.bind(m.HarnessSessionID)
			}
			k.sendOne(k.offerTranscript(m, now, f.TranscriptOpen))
		}, due}
	case Hook:
		return []func(){
			func() { k.send(k.releaseStarted(m)...) },
			func() { k.sendOne(k.offerHook(m, now, f.TranscriptOpen)) },
			due,
		}
	case Placing:
		return k.placing(m, f.Sync)
	case HookCall:
		return []func(){func() { k.hookArrived(now) }}
	case Due:
		return []func(){due}
	case Drained:
		return []func(){func() {
			k.readToEnd()
			k.send(k.flush()...)
		}}
	case Bind:
		return []func(){func() { k.bind(m.HarnessSessionID) }}
	}
	return nil
}

// sendStarted offers a session.started: released now, or held (Holds
// says why). answer says its receipt answers the step.
func (k *Keeper) sendStarted(m Moment, now time.Time, payloadsWaitHook, answer bool) {
	if r, ok := k.offerStarted(m, now, payloadsWaitHook); ok {
		k.out = append(k.out, outgoing{m: r.Moment, answer: answer})
	}
}

// renewalStep is the phases of a renewal's step, after what waited.
func (k *Keeper) renewalStep(f Fact) []func() {
	m := f.Moment
	switch m.Event {
	case contract.EventSessionEnding:
		return []func(){func() { k.closeCutOffTurns(f.Reason) }, func() { k.answer(m, false) }}
	case contract.EventSessionStarting:
		return []func(){func() {
			k.relaunch(f.Resumed) // a fresh harness session names itself
			k.answer(m, false)
		}}
	case contract.EventSessionStarted:
		return []func(){func() {
			if f.Resumed && k.harness != "" {
				k.answer(m, false) // the resumed harness keeps the session it had
				return
			}
			k.sendStarted(m, f.Now, f.PayloadsWaitHook, false) // the renewal does not wait for it
		}}
	}
	return []func(){func() { k.answer(m, false) }}
}

// placing is the phases of a hook moment that may place payloads: the
// report of it that waits (and what waits ahead of it) is taken from
// the queue, the hook's receipt absorbs it, and it is recorded now.
func (k *Keeper) placing(m Moment, sync bool) []func() {
	var q heldMoment
	var held bool
	return []func(){
		func() {
			var ahead []release
			ahead, q, held = k.take(m)
			k.send(ahead...)
		},
		func() {
			switch {
			case held && q.Started:
				m = mergeStarted(q.Moment, m) // the hook names the session the held receipt waited for
			case held:
				m.Summary = cloneSummary(m.Summary)
				m.Summary["transcript"] = q.Moment.Summary // native wins; the transcript corroborates
			case m.Event != contract.EventSessionStarted:
				k.send(k.releaseStarted(m)...) // the session has started: this hook reports a later moment
			}
		},
		func() { k.answer(m, sync) },
	}
}

// closeCutOffTurns releases the end of every turn still open when the
// harness is stopped (a renewal, an abort, a signal to the wrapper)
// while an answer is under way or a permission dialog is open:
// frame.ended (after the frame.ending the manifest implies), stop_reason
// the stop's reason, outcome cancelled. They come before the stop's
// session.ending: nothing of a harness session's frames follows it.
func (k *Keeper) closeCutOffTurns(reason string) {
	for _, fc := range k.openFrames() {
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
