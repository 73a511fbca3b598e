package renewal

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
)

// A renewal does not call into the harness or the stream: it returns the
// next thing it needs done as an Action, and the caller (the supervisor
// loop's side, launcher's renewals) does it and hands back the Answer
// (Steps.Next). The orchestrator keeps only its files: the status, the
// continuation store.

// ActionKind is what a renewal asks for next.
type ActionKind int

const (
	// ActRecord records a lifecycle moment: Event, Summary (never a
	// payload body) and PayloadReceipts; the answer is its receipt id ("" if
	// it follows later). Every summary of a renewal step has "reason":
	// "renewal", "renewal_attempt" and "renewal_step" (ending, ended,
	// starting, started), which together identify the step for
	// deduplication.
	ActRecord ActionKind = iota + 1
	// ActStop ends the current harness without acting on its screen (never
	// typing into its terminal): Signal to the harness's process group,
	// then SIGTERM and SIGKILL, waiting up to Grace after each; the answer
	// is how it ended. On a harness that already ended the answer comes at
	// once (with the facts there are, possibly zero) and no error.
	ActStop
	// ActStart launches a start of kind Launch of Argv (before
	// PrepareLaunch) with Payloads placed on it, planned as the first
	// launch is (PrepareLaunch, then adapters.Adapter.PlaceLaunchPayloads),
	// on the same terminal; the answer comes once it is ready (it takes
	// keys), an *ExitedBeforeReady when it exited before.
	ActStart
)

// Action is the next thing a renewal needs done.
type Action struct {
	Kind            ActionKind
	Event           contract.Event
	Summary         map[string]any
	PayloadReceipts []contract.PayloadReceipt
	Signal          syscall.Signal
	Grace           time.Duration
	Launch          adapters.LaunchKind
	Argv            []string
	Payloads        []contract.PayloadEnvelope
}

// Answer is how an Action went: ReceiptID for ActRecord, Exit for
// ActStop, and Err when it failed.
type Answer struct {
	ReceiptID string
	Exit      contract.ExitFacts
	Err       error
}

// Steps is one renewal (Renew, Recover) as the actions it asks for: the
// caller calls Next with the answer to the previous action (none at the
// first call) until it returns false, then reads Result. A Steps must be
// driven to its end; it runs no step before the first Next.
type Steps struct {
	next   func() (Action, bool)
	answer Answer
	out    Outcome
	err    error
}

// Next hands in the answer to the last action and returns the next one;
// false when the renewal has ended.
func (s *Steps) Next(a Answer) (Action, bool) {
	s.answer = a
	return s.next()
}

// Result is how the renewal ended, once Next returned false.
func (s *Steps) Result() (Outcome, error) { return s.out, s.err }

// steps runs body, holding the orchestrator, as a Steps whose actions
// are those body asks for through o.do; hid is the current harness
// session id ("" when not known).
func (o *Orchestrator) steps(hid string, body func() (Outcome, error)) *Steps {
	s := &Steps{}
	s.next, _ = iter.Pull(func(yield func(Action) bool) {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.hid = hid
		o.do = func(a Action) Answer {
			if !yield(a) {
				return Answer{Err: errAbandoned}
			}
			return s.answer
		}
		s.out, s.err = body()
	})
	return s
}

// errAbandoned answers the actions of a Steps its caller stopped driving.
var errAbandoned = errors.New("renewal: abandoned by its caller")

// ExitedBeforeReady is an ActStart's error when the harness it started
// exited before it was ready to take keys: the relaunch failed.
type ExitedBeforeReady struct{ Facts contract.ExitFacts }

func (e *ExitedBeforeReady) Error() string {
	if e.Facts.Signaled {
		return fmt.Sprintf("the relaunched harness was killed by signal %d before it was ready", e.Facts.Signal)
	}
	return fmt.Sprintf("the relaunched harness exited at once (exit code %d) before it was ready", e.Facts.Code)
}

// Request asks for one renewal. It is the args of the control operation
// launcher.OpRenew.
type Request struct {
	// Resume continues the harness conversation (its harness session id
	// must be known); otherwise the harness starts a fresh one.
	Resume bool `json:"resume"`
	// Reason is free text for the status file and receipts.
	Reason string `json:"reason,omitempty"`
	// Payloads are stored, then delivered at the relaunch.
	Payloads []contract.PayloadEnvelope `json:"payloads,omitempty"`
	// DropUndelivered drops the stored payloads the relaunch cannot
	// place (their receipts say so) instead of keeping them, labelled,
	// for a later renewal.
	DropUndelivered bool `json:"drop_undelivered,omitempty"`
	// BetweenTurns makes the renewal conditional, as a policy client
	// asks for it: the live wrapper refuses it (control.Refusal with
	// code control.CodeNotBetweenTurns), recording nothing, while a turn
	// (top-level frame) is open, before any turn ended in the harness
	// conversation, or when a key was typed at the terminal since the
	// latest turn opened (a person's draft is never thrown away).
	BetweenTurns bool `json:"between_turns,omitempty"`
	// Policy is the evidence of a policy client's renewal (nil for a
	// person's): recorded in each receipt of the renewal and in
	// renewal.json.
	Policy *Policy `json:"policy,omitempty"`
}

// Outcome is the result of Renew or Recover.
type Outcome struct {
	State   State `json:"state"`
	Attempt int   `json:"attempt"`
	Resumed bool  `json:"resumed"`
	// Started is true when this renewal started the harness (ActStart).
	// A Recover that finds the harness already started with the payloads
	// (state pending_delivery) only records and returns Started=false:
	// the caller then starts the harness itself if none runs.
	Started         bool                            `json:"started"`
	Placement       contract.ManifestPlacementClass `json:"placement,omitempty"`
	PayloadReceipts []contract.PayloadReceipt       `json:"payload_receipts"`
	Recovered       bool                            `json:"recovered"`
	// UndeliveredIDs are the payloads the relaunch could not deliver
	// (state undelivered), dropped when DroppedUndelivered, else kept.
	UndeliveredIDs     []string `json:"undelivered_payload_ids,omitempty"`
	DroppedUndelivered bool     `json:"dropped_undelivered,omitempty"`
	// CarriedIDs are delivered payloads an earlier renewal had left
	// undelivered.
	CarriedIDs []string `json:"carried_payload_ids,omitempty"`
	// ContinuedIn is the lifeloop session that records the harness
	// session after a renewal the harness continued in a process of its
	// own (Status.ContinuedIn).
	ContinuedIn string `json:"continued_in,omitempty"`
}

// DefaultGrace is how long an ActStop waits after each stop signal.
const DefaultGrace = 10 * time.Second

// Orchestrator renews one wrapped session: it stops the harness and
// starts it again with the pending continuation payloads placed at
// launch. Every step is written to the status file before the next one
// runs, so that a renewal interrupted anywhere (the wrapper killed) is
// finished by Recover on a new Orchestrator over the same files, with each
// payload delivered exactly once and each step recorded once.
//
// The one window that cannot be closed without the harness's help is a
// crash between an ActStart's answer and the status write that follows
// it: Recover then starts the harness again with the same payloads (the
// first harness died with its wrapper, so the payload reaches one live
// harness).
//
// Its Steps run one at a time (a second one's first Next waits for the
// first to end); an Orchestrator must not be copied after use.
type Orchestrator struct {
	// Adapter is the session's adapter; it gives the relaunch command
	// line, the launch placement and the stop signal.
	Adapter *adapters.Adapter
	// Argv is the session's command line as the user gave it to
	// `lifeloop run` (before PrepareLaunch).
	Argv  []string
	Store *Store
	// StatusPath is the renewal.json file (StatusPath(sessionDir)).
	StatusPath string
	// Now is the clock; default time.Now.
	Now func() time.Time
	// Grace is an ActStop's; default DefaultGrace.
	Grace time.Duration
	// Negotiated is the renewal support the session's clients negotiated,
	// or nil. A renewal that can no longer do what was negotiated fails
	// with capability_degraded instead of capability_unsupported or
	// placement_unavailable.
	Negotiated *contract.RenewalSupport

	mu sync.Mutex
	// hid is the harness session id the running Steps started with, and
	// do asks its caller for an action (both set while it runs).
	hid string
	do  func(Action) Answer
}

func (o *Orchestrator) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Orchestrator) harnessID() string { return o.hid }

func (o *Orchestrator) stopSignal() syscall.Signal {
	sig, _ := o.Adapter.StopSignal()
	return sig
}

func (o *Orchestrator) grace() time.Duration {
	if o.Grace > 0 {
		return o.Grace
	}
	return DefaultGrace
}

func available(s contract.SupportState) bool {
	switch s {
	case contract.SupportNative, contract.SupportSynthesized, contract.SupportPartial:
		return true
	}
	return false
}

// relaunchArgv returns the relaunch command line or the failure that
// prevents any renewal.
func (o *Orchestrator) relaunchArgv(hid string, resume bool) ([]string, error) {
	if o.Adapter == nil {
		return nil, failf(contract.FailureAdapterUnavailable, "no adapter for this session")
	}
	argv, ok := o.Adapter.RelaunchArgv(o.Argv, hid, resume)
	if ok {
		return argv, nil
	}
	if resume && hid == "" {
		if _, fresh := o.Adapter.RelaunchArgv(o.Argv, "", false); fresh {
			return nil, failf(contract.FailureIdentityUnavailable, "the harness session id is not known yet, so the conversation cannot be resumed; renew with --fresh, or wait until the harness has written its first transcript line")
		}
	}
	if o.Negotiated != nil && available(o.Negotiated.Reset.WrapperMediated) {
		return nil, failf(contract.FailureCapabilityDegraded, "wrapper-mediated reset was negotiated, but adapter %s has no relaunch path for %q; reread the manifest before retrying", o.Adapter.ID, o.Argv)
	}
	if r := o.Adapter.Manifest().Renewal; r != nil && r.Reset.Manual == contract.SupportManual {
		return nil, failf(contract.FailureOperatorRequired, "adapter %s can only be reset by hand: restart the harness yourself", o.Adapter.ID)
	}
	return nil, failf(contract.FailureCapabilityUnsupported, "adapter %s has no safe relaunch path for this command line; renewal needs an adapter whose manifest claims renewal.reset.wrapper_mediated (see `lifeloop adapters`)", o.Adapter.ID)
}

// site is where the relaunch through relaunch (before PrepareLaunch)
// places payloads: the one placement resolver's launch site
// (adapters.Adapter.LaunchSite), the first launch's and the hook's too.
func (o *Orchestrator) site(relaunch []string, resume bool) contract.PlacementSite {
	kind := adapters.LaunchFresh
	if resume {
		kind = adapters.LaunchResume
	}
	return o.Adapter.LaunchSite(o.Adapter.PrepareLaunch(relaunch), kind)
}

// Renew renews the session: validates req (payload_too_large,
// payload_rejected, placement_unavailable), checks that a relaunch path
// exists (capability_unsupported, operator_required, capability_degraded,
// identity_unavailable) — all before touching the harness — then stores
// the payloads, writes status stopping and runs the steps. An unfinished
// earlier renewal is continued rather than started over. Failures are
// *Error values carrying their failure class.
//
// harnessID is the current harness session id ("" when not known yet).
func (o *Orchestrator) Renew(req Request, harnessID string) *Steps {
	return o.steps(harnessID, func() (Outcome, error) { return o.renew(req) })
}

func (o *Orchestrator) renew(req Request) (Outcome, error) {
	st, err := ReadStatus(o.StatusPath)
	if err != nil {
		return Outcome{}, &Error{Class: contract.FailureInternalError, Err: err}
	}
	if st.State == StatePendingDelivery {
		// The earlier renewal already started the harness; finish its
		// records before renewing again.
		if _, err := o.advance(&st, false); err != nil {
			return outcomeOf(st, false), err
		}
	}
	hid := o.harnessID()
	relaunch, err := o.relaunchArgv(hid, req.Resume)
	if err != nil {
		return o.refuse(st, req, err)
	}
	site, m := o.site(relaunch, req.Resume), o.Adapter.Manifest()
	target := site.Slot
	for _, p := range req.Payloads {
		if err := o.Store.Validate(p); err != nil {
			return o.refuse(st, req, err)
		}
		d := site.Resolve(m, p)
		if d.Outcome != contract.PlacementOutcomeFailed {
			continue
		}
		if target == "" {
			// No placement fits: say so when it is because the body
			// would be in the harness's argv.
			if aerr := o.Adapter.ArgvPlacementError(relaunch, ""); aerr != nil {
				return o.refuse(st, req, failf(contract.FailurePlacementUnavailable, "payload %q cannot be delivered at the relaunch: %v", p.PayloadID, aerr))
			}
		}
		class := *d.FailureClass
		if target == "" && o.Negotiated != nil && available(o.Negotiated.Continuation.PayloadDelivery) {
			class = contract.FailureCapabilityDegraded
		}
		return o.refuse(st, req, failf(class, "payload %q cannot be delivered at the relaunch: %s", p.PayloadID, d.Reason))
	}
	for _, p := range req.Payloads {
		if _, err := o.Store.Put(p); err != nil {
			return o.refuse(st, req, err)
		}
	}
	pending, err := o.Store.Pending()
	if err != nil {
		return outcomeOf(st, false), &Error{Class: contract.FailureInternalError, Err: err}
	}
	now := o.now().UTC()
	if !st.State.InProgress() {
		st = Status{State: StateStopping, Attempt: st.Attempt + 1, HarnessSessionID: hid, StartedAt: &now}
	}
	st.Resume, st.Reason, st.Recovered, st.DropUndelivered = req.Resume, req.Reason, false, req.DropUndelivered
	st.Policy = req.Policy
	st.PayloadIDs = ids(pending)
	st.PayloadPending = len(pending) > 0
	st.LastError = nil
	if err := o.write(&st); err != nil {
		return outcomeOf(st, false), err
	}
	return o.advance(&st, false)
}

// Recover finishes a renewal left in progress (stopping, relaunching or
// pending_delivery) by an interrupted Renew — typically by a wrapper that
// was killed — and cleans up payloads of a renewal that was recorded as
// delivered but not yet dropped. With nothing to finish it returns the
// current status's outcome and does nothing.
//
// harnessID is the current harness session id ("" when not known).
func (o *Orchestrator) Recover(harnessID string) *Steps {
	return o.steps(harnessID, o.recover)
}

func (o *Orchestrator) recover() (Outcome, error) {
	st, err := ReadStatus(o.StatusPath)
	if err != nil {
		return Outcome{}, &Error{Class: contract.FailureInternalError, Err: err}
	}
	if st.State == StateDelivered || st.State == StateExpired || st.State == StateUndelivered {
		o.settle(st)
		return outcomeOf(st, false), nil
	}
	if !st.State.InProgress() {
		return outcomeOf(st, false), nil
	}
	if st.State == StatePendingDelivery {
		// The harness started with the payloads died with the wrapper
		// that ran it (Recover runs before a continued wrapper starts
		// one): start it again with them, so a live harness has them.
		st.State = StateRelaunching
	}
	if _, err := o.relaunchArgv(o.relaunchID(st), st.Resume); err != nil {
		return o.fail(&st, err)
	}
	st.Recovered = true
	return o.advance(&st, false)
}

// relaunchID is the harness session id to resume: the one the renewal
// started from, else the current one.
func (o *Orchestrator) relaunchID(st Status) string {
	if st.HarnessSessionID != "" {
		return st.HarnessSessionID
	}
	return o.harnessID()
}

// refuse reports a failure found before anything was touched. The status
// records it as an attempt of its own, as req asked it (resume, reason),
// with its own time and none of the previous attempt's payloads or times,
// unless an earlier renewal is still in progress (whose state Recover
// needs).
func (o *Orchestrator) refuse(st Status, req Request, err error) (Outcome, error) {
	if st.State.InProgress() {
		return outcomeOf(st, false), err
	}
	now := o.now().UTC()
	refused := Status{Attempt: st.Attempt + 1, HarnessSessionID: o.harnessID(), StartedAt: &now, FinishedAt: &now,
		Resume: req.Resume, Reason: req.Reason, DropUndelivered: req.DropUndelivered, Policy: req.Policy}
	return o.fail(&refused, err)
}

// fail records err in the status (state failed) and returns it.
func (o *Orchestrator) fail(st *Status, err error) (Outcome, error) {
	st.State = StateFailed
	st.LastError = statusError(err, o.now())
	if werr := o.write(st); werr != nil {
		return outcomeOf(*st, false), errors.Join(err, werr)
	}
	return outcomeOf(*st, false), err
}

func statusError(err error, now time.Time) *StatusError {
	c := ClassOf(err)
	return &StatusError{Message: err.Error(), FailureClass: c, RetryClass: c.DefaultRetry(), At: now.UTC()}
}

func (o *Orchestrator) write(st *Status) error {
	st.UpdatedAt = o.now().UTC()
	if err := WriteStatus(o.StatusPath, *st); err != nil {
		return &Error{Class: contract.FailureInternalError, Err: err}
	}
	return nil
}

// StepSummary is the telemetry summary of a receipt the renewal records
// at step (ending, ended, …): reason renewal, its attempt, the step,
// whether it resumes, and its policy and recovery when it has them.
func (st *Status) StepSummary(step string) map[string]any {
	summary := map[string]any{"reason": "renewal", "renewal_attempt": st.Attempt, contract.SummaryRenewalStep: step, "resume": st.Resume}
	if st.Recovered {
		summary["renewal_recovered"] = true
	}
	if st.Policy != nil {
		summary["policy"] = st.Policy.Map()
	}
	return summary
}

func (o *Orchestrator) record(st *Status, ev contract.Event, step string, extra map[string]any, prs []contract.PayloadReceipt) string {
	summary := st.StepSummary(step)
	for k, v := range extra {
		summary[k] = v
	}
	id := o.do(Action{Kind: ActRecord, Event: ev, Summary: summary, PayloadReceipts: prs}).ReceiptID
	if id == "" {
		// A recorder that returns no id still counts as recorded.
		id = "recorded"
	}
	return id
}

// advance runs the steps from st.State to the end.
func (o *Orchestrator) advance(st *Status, started bool) (Outcome, error) {
	for {
		switch st.State {
		case StateStopping:
			if st.EndingReceiptID == "" {
				st.EndingReceiptID = o.record(st, contract.EventSessionEnding, "ending", nil, nil)
				if err := o.write(st); err != nil {
					return outcomeOf(*st, started), err
				}
			}
			stopped := o.do(Action{Kind: ActStop, Signal: o.stopSignal(), Grace: o.grace()})
			facts, err := stopped.Exit, stopped.Err
			if err != nil {
				class := contract.FailureTransportError
				if errors.Is(err, context.DeadlineExceeded) {
					class = contract.FailureTimeout
				}
				return o.fail(st, &Error{Class: class, Err: fmt.Errorf("stop the harness: %w", err)})
			}
			if facts.StoppedBy == "" {
				facts.StoppedBy = contract.StoppedByRenewal
			}
			if st.EndedReceiptID == "" {
				st.EndedReceiptID = o.record(st, contract.EventSessionEnded, "ended", exitSummary(facts), nil)
			}
			st.State = StateRelaunching
			if err := o.write(st); err != nil {
				return outcomeOf(*st, started), err
			}
		case StateRelaunching:
			launch, err := o.plan(st)
			if err != nil {
				return o.fail(st, err)
			}
			if st.StartingReceiptID == "" {
				extra := map[string]any{"manifest_placement": string(st.Placement)}
				if !st.Resume {
					// A fresh conversation: the context pressure the old
					// one reached no longer holds (sessionview forgets it).
					extra["context_reset"] = true
				}
				st.StartingReceiptID = o.record(st, contract.EventSessionStarting, "starting", extra, nil)
			}
			if err := o.write(st); err != nil {
				return outcomeOf(*st, started), err
			}
			if err := o.do(launch).Err; err != nil {
				var died *ExitedBeforeReady
				if errors.As(err, &died) {
					return o.fallBack(st, died)
				}
				class := contract.FailureTransportError
				if len(st.PayloadIDs) > 0 {
					class = contract.FailurePayloadRejected
				}
				// The payloads stay stored: a later renew or Recover
				// delivers them.
				return o.fail(st, &Error{Class: class, Err: fmt.Errorf("start the harness again: %w", err)})
			}
			started = true
			st.State = StatePendingDelivery
			if err := o.write(st); err != nil {
				return outcomeOf(*st, started), err
			}
		case StatePendingDelivery:
			if st.StartedReceiptID == "" {
				extra := map[string]any{"manifest_placement": string(st.Placement)}
				if len(st.UndeliveredIDs) > 0 {
					extra["undelivered_payloads"] = undeliveredFate(st.DropUndelivered)
				}
				if len(st.CarriedIDs) > 0 {
					extra["carried_payload_ids"] = st.CarriedIDs
				}
				st.StartedReceiptID = o.record(st, contract.EventSessionStarted, "started", extra, st.PayloadReceipts)
			}
			now := o.now().UTC()
			st.State, st.FinishedAt = StateDelivered, &now
			st.PayloadPending = len(st.UndeliveredIDs) > 0 && !st.DropUndelivered
			switch {
			case len(st.ExpiredIDs) > 0:
				st.State = StateExpired
				st.LastError = statusError(failf(contract.FailurePayloadRejected, "payloads %q expired before they could be delivered", st.ExpiredIDs), now)
			case len(st.UndeliveredIDs) > 0:
				st.State = StateUndelivered
				st.LastError = statusError(failf(contract.FailurePlacementUnavailable, "payloads %q were not delivered at this relaunch (their payload receipts say why); %s", st.UndeliveredIDs, undeliveredFate(st.DropUndelivered)), now)
			}
			if err := o.write(st); err != nil {
				return outcomeOf(*st, started), err
			}
			o.settle(*st)
			return outcomeOf(*st, started), nil
		default:
			return outcomeOf(*st, started), nil
		}
	}
}

// fallBack ends a renewal whose relaunch exited before it was ready: it
// records that harness session's end (renewal_step relaunch_failed), the
// status failed, and starts the person's own command line again
// (renewal_step fallback_starting, fallback_started) so the session goes
// on as it was launched, without the payloads, which stay stored. When
// that start fails too, the harness is gone: the session ends with it.
// The fallback is not recovered after a crash: the status is failed, and
// a continued wrapper starts the harness itself.
func (o *Orchestrator) fallBack(st *Status, died *ExitedBeforeReady) (Outcome, error) {
	facts := died.Facts
	facts.StoppedBy = ""
	ended := exitSummary(facts)
	ended["failure_class"] = string(contract.FailureAdapterUnavailable)
	o.record(st, contract.EventSessionEnded, "relaunch_failed", ended, nil)
	err := failf(contract.FailureAdapterUnavailable, "%v; the session goes on with its own command line %q, and the payloads stay stored for a later renewal (`lifeloop renewal status`)", died, o.Argv)
	if len(st.PayloadIDs) == 0 {
		err = failf(contract.FailureAdapterUnavailable, "%v; the session goes on with its own command line %q (`lifeloop renewal status`)", died, o.Argv)
	}
	out, _ := o.fail(st, err)
	resume := map[string]any{"resume": false, "renewal_fallback": true}
	o.record(st, contract.EventSessionStarting, "fallback_starting", resume, nil)
	if serr := o.do(Action{Kind: ActStart, Launch: adapters.LaunchFresh, Argv: slices.Clone(o.Argv)}).Err; serr != nil {
		return out, failf(contract.FailureAdapterUnavailable, "%v; starting its own command line %q again failed too (%v): the session ends", died, o.Argv, serr)
	}
	out.Started = true
	o.record(st, contract.EventSessionStarted, "fallback_started", resume, nil)
	return out, err
}

// plan returns the relaunch's start: its command line and the pending
// payloads it places (the launcher plans the start as it plans the
// first launch's, through the same resolver), and sets st.PayloadIDs (the payloads delivered), st.Placement
// and st.PayloadReceipts. Payloads of this renewal that expired meanwhile
// get a failed receipt and end the renewal in state expired; stored
// payloads (e.g. put with `continuation put`) that cannot be placed at
// this launch get their placement decision's receipt (failed or skipped)
// and stay stored until they expire or are dropped.
func (o *Orchestrator) plan(st *Status) (Action, error) {
	relaunch, err := o.relaunchArgv(o.relaunchID(*st), st.Resume)
	if err != nil {
		return Action{}, err
	}
	all, err := o.Store.all()
	if err != nil {
		return Action{}, &Error{Class: contract.FailureInternalError, Err: err}
	}
	now := o.Store.now()
	var receipts []contract.PayloadReceipt
	st.ExpiredIDs = nil
	labelled := map[string]bool{}
	for _, rec := range all {
		p := rec.Payload
		labelled[p.PayloadID] = rec.Undelivered != nil
		if o.Store.expired(rec, now) && slices.Contains(st.PayloadIDs, p.PayloadID) {
			r := contract.PayloadReceipt{PayloadID: p.PayloadID, PayloadKind: p.PayloadKind, Status: contract.PlacementOutcomeFailed, ByteSize: p.ByteSize, ContentDigest: p.ContentDigest}
			if len(p.AcceptablePlacements) > 0 {
				r.Placement = p.AcceptablePlacements[0].Placement
			}
			receipts = append(receipts, r)
			st.ExpiredIDs = append(st.ExpiredIDs, p.PayloadID)
		}
	}
	if _, err := o.Store.Expire(); err != nil {
		return Action{}, &Error{Class: contract.FailureInternalError, Err: err}
	}
	pending, err := o.Store.Pending()
	if err != nil {
		return Action{}, &Error{Class: contract.FailureInternalError, Err: err}
	}
	site, m := o.site(relaunch, st.Resume), o.Adapter.Manifest()
	var text []contract.PayloadEnvelope
	var delivered []string
	for _, p := range pending {
		d := site.Resolve(m, p)
		receipts = append(receipts, d.Receipt(p))
		switch d.Outcome {
		case contract.PlacementOutcomeDelivered, contract.PlacementOutcomeDegraded:
			if d.Target == nil && d.Placement != contract.PlacementReceiptOnly {
				// Degraded without a route: nothing was delivered.
				continue
			}
			delivered = append(delivered, p.PayloadID)
			if d.KeepBody {
				text = append(text, p)
			}
		}
	}
	// Checked before the harness is stopped again: the launch plan places
	// them the same way (PrepareLaunch, then PlaceLaunchPayloads).
	kind := adapters.LaunchFresh
	if st.Resume {
		kind = adapters.LaunchResume
	}
	placed, err := o.Adapter.PlaceLaunchPayloads(o.Adapter.PrepareLaunch(relaunch), kind, text)
	if err != nil || len(placed.Rest) > 0 {
		if err == nil {
			err = fmt.Errorf("adapter %s cannot place payloads on %q", o.Adapter.ID, relaunch)
		}
		return Action{}, failf(contract.FailurePlacementUnavailable, "%v", err)
	}
	st.Placement = placed.Target
	st.PayloadIDs = delivered
	st.PayloadReceipts = receipts
	st.UndeliveredIDs, st.CarriedIDs = nil, nil
	for _, p := range pending {
		switch {
		case !slices.Contains(delivered, p.PayloadID):
			st.UndeliveredIDs = append(st.UndeliveredIDs, p.PayloadID)
		case labelled[p.PayloadID]:
			st.CarriedIDs = append(st.CarriedIDs, p.PayloadID)
		}
	}
	return Action{Kind: ActStart, Launch: kind, Argv: relaunch, Payloads: text}, nil
}

// undeliveredFate says what became of the payloads a relaunch could not
// place.
func undeliveredFate(dropped bool) string {
	if dropped {
		return "dropped"
	}
	return "kept"
}

// settle finishes a renewal's store once its status is final: the
// delivered payloads are dropped, and the undelivered ones dropped or
// labelled as the request chose. It is idempotent, so Recover runs it
// again after a crash.
func (o *Orchestrator) settle(st Status) {
	o.drop(st.PayloadIDs)
	if st.DropUndelivered {
		o.drop(st.UndeliveredIDs)
		return
	}
	at := o.now().UTC()
	if st.FinishedAt != nil {
		at = *st.FinishedAt
	}
	for _, id := range st.UndeliveredIDs {
		u := Undelivered{Attempt: st.Attempt, Resume: st.Resume, HarnessSessionID: st.HarnessSessionID, At: at}
		for _, r := range st.PayloadReceipts {
			if r.PayloadID == id {
				u.Status = r.Status
			}
		}
		_ = o.Store.Label(id, u)
	}
}

// drop removes delivered payloads; one already gone is fine.
func (o *Orchestrator) drop(ids []string) {
	for _, id := range ids {
		_ = o.Store.Drop(id)
	}
}

func exitSummary(f contract.ExitFacts) map[string]any {
	c := contract.ClassifyExit(f)
	m := map[string]any{"exit_code": f.Code, "stopped_by": f.StoppedBy, "phase": string(c.Phase), "outcome": string(c.Outcome), "exit_reason": c.Reason}
	if f.Signaled {
		m["signal"] = f.Signal
	}
	return m
}

func ids(ps []contract.PayloadEnvelope) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.PayloadID
	}
	return out
}

func outcomeOf(st Status, started bool) Outcome {
	prs := st.PayloadReceipts
	if prs == nil {
		prs = []contract.PayloadReceipt{}
	}
	out := Outcome{
		State: st.State, Attempt: st.Attempt, Resumed: st.Resume, Started: started,
		Placement: st.Placement, PayloadReceipts: prs, Recovered: st.Recovered,
		UndeliveredIDs: st.UndeliveredIDs, CarriedIDs: st.CarriedIDs,
	}
	out.DroppedUndelivered = len(st.UndeliveredIDs) > 0 && st.DropUndelivered
	return out
}
