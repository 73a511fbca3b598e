// Package hcp projects a session's lifecycle receipts into the HCP L2
// event stream (seed 001): each event in an L1 envelope of type "event",
// with a per-session sequence that is gapless over the events the
// projection emits and deterministic, so replaying a ledger from its
// start yields the same events with the same sequences and message ids.
//
// The mapping (docs/contract.md, "HCP L2 event stream"):
//
//	first receipt                       session_created {state: PENDING, metadata {machine}
//	                                    when SetMachine named it}; when it is not a
//	                                    session.starting or session.started (an emit-only
//	                                    session), state_changed PENDING → RUNNING, reason observed
//	session.started (first)             state_changed PENDING → RUNNING, reason started
//	supervisor.tick whose state differs state_changed <from> → <to>, reason the tick's trigger
//	supervisor.tick with trigger         progress {stage attention_changed, message,
//	attention_changed                    metadata {attention: the block}}
//	supervisor.tick whose attention      warning {code attention_needs_permission or
//	opens an episode of needs_permission attention_stopped_on_error, details {attention}}
//	or stopped_on_error
//	(every state_changed carries the latest attention block, once a
//	receipt had one, as metadata.attention)
//	session.ending of a caller's stop   state_changed → ABORTING, reason abort, sigint,
//	(abort, SIGINT/SIGTERM/SIGHUP/      sigterm, …
//	SIGQUIT to the wrapper)
//	a renewal's session.ending          state_changed RUNNING → PAUSED, reason renewal
//	                                    (a policy renewal's state_changed events carry
//	                                    metadata {policy: the evidence of its receipts})
//	a renewal's session.started         checkpoint_created per continuation payload, then
//	                                    state_changed PAUSED → RUNNING, reason renewed
//	                                    (recovered_from_checkpoint when the renewal was recovered);
//	                                    no tick between a renewal's first step and this one
//	                                    changes the state
//	a failed renewal's fallback_started state_changed PAUSED → RUNNING, reason renewal_failed
//	(its relaunch died; the harness      (the relaunch's failed session.ended gave an error)
//	started again as launched)
//	a switch's session.ended (reason    state_changed RUNNING → PAUSED, reason
//	harness_session_switched)           harness_session_switched, with the old
//	                                    harness_session_id (the session is not closed)
//	a switch's session.started          state_changed PAUSED → RUNNING, reason
//	                                    harness_session_switched, with the new
//	                                    harness_session_id
//	session.started after a lost        state_changed PAUSED → RUNNING, reason
//	wrapper (run --continue-session)    recovered_from_checkpoint
//	frame.opening/opened/ending/ended   progress {stage, message, frame_id}; a turn's
//	                                    frame.ended with metadata {usage: its block}
//	capability.degraded, gap receipts,  warning {code, message, details}; a renewal
//	                                    policy's report has its policy object in details
//	receipt warnings
//	status failed                       error {code, message, recoverable}
//	session.ended, wrapper_lost         state_changed → PAUSED, reason wrapper_lost (the
//	(not while ABORTING)                session is kept: run --continue-session resumes it)
//	session.ended (not a renewal's)     state_changed → final state (FinalState), then session_closed;
//	                                    its state_changed events carry metadata {usage: the
//	                                    session's totals} when it has them
//	a receipt of continuation N after   a new HCP session <session>.c<N>: session_created with
//	session_closed (run --continue-     metadata {lifeloop_session_id, continues_session_id,
//	session of an ended session)        continuation}, sequence from 1; a renewal it finishes
//	                                    goes PENDING → RUNNING, reason recovered_from_checkpoint
//	session.ended failed before         state_changed PENDING → REJECTED, reason the summary's
//	session.started (launch failed)     reason or the failure class, then session_closed
//	session.starting refused by         error, then state_changed PENDING → REJECTED and
//	capability negotiation              session_closed
//
// Every state_changed is a transition of seed 001's table (Transitions):
// where a receipt skips a state (a session ended while PENDING or PAUSED,
// aborted without its session.ending), the states between are walked
// with the same reason. Every other receipt (ticks without a state
// change, context events, a renewal's session.ended and
// session.starting, a switch's session.starting) has no event. Nothing
// is emitted after session_closed but a continuation's HCP session.
package hcp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/attention"
)

// Version is the hcp_version of every envelope.
const Version = "1.0"

// MessageType is the L1 message type of every envelope.
const MessageType = "event"

// Event types (seed 001's standard event types that the projection emits).
const (
	SessionCreated    = "session_created"
	StateChanged      = "state_changed"
	Progress          = "progress"
	Warning           = "warning"
	Error             = "error"
	CheckpointCreated = "checkpoint_created"
	SessionClosed     = "session_closed"
)

// StandardEventTypes lists seed 001's standard event types: the ones a
// consumer accepts.
var StandardEventTypes = []string{SessionCreated, StateChanged, Progress, "intermediate_result", "log", Warning, Error, CheckpointCreated, SessionClosed}

// EventTypes lists the event types the projection emits.
var EventTypes = []string{SessionCreated, StateChanged, Progress, Warning, Error, CheckpointCreated, SessionClosed}

// Session states, as seed 001 spells them.
const (
	StatePending   = "PENDING"
	StateRunning   = "RUNNING"
	StatePaused    = "PAUSED"
	StateAborting  = "ABORTING"
	StateAborted   = "ABORTED"
	StateCompleted = "COMPLETED"
	StateFailed    = "FAILED"
	StateRejected  = "REJECTED"
)

// Envelope is one L1 message carrying an L2 event.
type Envelope struct {
	HCPVersion string `json:"hcp_version"`
	// MessageID is derived from the receipt id and the event's place among
	// the receipt's events: the same receipt always yields the same ids.
	MessageID string `json:"message_id"`
	// Timestamp is the receipt's time, RFC 3339 UTC with milliseconds.
	Timestamp string `json:"timestamp"`
	SessionID string `json:"session_id"`
	Type      string `json:"type"`
	Payload   Event  `json:"payload"`
}

// Event is the envelope's payload.
type Event struct {
	EventType string         `json:"event_type"`
	Sequence  uint64         `json:"sequence"`
	Data      map[string]any `json:"data"`
}

const timeLayout = "2006-01-02T15:04:05.000Z"

// Projector turns one session's receipts, given in ledger order, into
// its events. It keeps the session's state and the last sequence; feed
// it every receipt of the ledger from the start (Project) to resume.
// It is not safe for concurrent use.
type Projector struct {
	// sessionID is the HCP session the events carry now: lifeloopID, or
	// lifeloopID.c<N> once continuation N reopened a closed session.
	sessionID, lifeloopID string
	// continues is the HCP session the current one continues ("" for
	// the first); continuation the highest continuation number projected.
	continues    string
	continuation int
	seq          uint64
	state        string
	opened       bool
	closed       bool
	// lost: the session's wrapper was lost (sealed); a later
	// session.started is its recovery.
	lost bool
	// renewing: a renewal has begun (its session.ending, ended or
	// starting) and its relaunch's session.started has not come yet. A
	// tick meanwhile describes a harness being stopped or started again:
	// it never resumes the session, the relaunch's session.started does.
	renewing bool
	// through is the ledger sequence of the last receipt projected.
	through uint64
	// attention is the latest attention block a receipt carried (nil
	// before one); warned the episode (id@since) last warned about.
	attention map[string]any
	warned    string
	// machine names the machine the session runs on (session_created's
	// metadata.machine; "" leaves it out).
	machine string
}

// NewProjector returns the projector of session sessionID (lifeloop's
// session id, the envelopes' session_id).
func NewProjector(sessionID string) *Projector {
	return &Projector{sessionID: sessionID, lifeloopID: sessionID}
}

// EnvMachine names this machine in the events its sessions project
// (default: the host name).
const EnvMachine = "LIFELOOP_MACHINE"

// MachineName is the name this machine's sessions go by in their events:
// $LIFELOOP_MACHINE, else the host name, else "unknown". Every projection
// on the machine (a publisher, an --events file, a replay) names the
// same one, so a replay of a ledger yields the events that were sent.
func MachineName(getenv func(string) string) string {
	if m := strings.TrimSpace(getenv(EnvMachine)); m != "" {
		return m
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "unknown"
}

// SetMachine names the machine the session runs on: session_created
// carries it as metadata.machine, so a consumer of many machines' events
// (a fleet view) knows where each session is.
func (p *Projector) SetMachine(name string) { p.machine = name }

// Sequence returns the sequence of the last event emitted (0: none yet).
func (p *Projector) Sequence() uint64 { return p.seq }

// State returns the session state after the receipts projected so far
// ("" before session_created).
func (p *Projector) State() string { return p.state }

// SessionID returns the HCP session id the projector's events carry now.
func (p *Projector) SessionID() string { return p.sessionID }

// Through returns the ledger sequence of the last receipt projected.
func (p *Projector) Through() uint64 { return p.through }

// Project returns the events of r, the next receipt of the session's
// ledger. A receipt with a ledger sequence at or below the last one
// projected is a repeat and yields nothing.
func (p *Projector) Project(r contract.LifecycleReceipt) []Envelope {
	if r.Sequence != nil {
		if *r.Sequence <= p.through {
			return nil
		}
		p.through = *r.Sequence
	}
	n := continuationOf(r)
	if p.closed {
		if n <= p.continuation {
			return nil
		}
		p.reopen(n)
	}
	p.continuation = max(p.continuation, n)
	b := batch{p: p, r: r, usage: usageOf(r)}
	sum := r.TelemetrySummary
	// A tick's attention, or session.ended's (the session's, with the
	// episode its end closed): the metadata of the state_changed events
	// from here on.
	block, hasAttention := attention.BlockFrom(sum)
	if hasAttention {
		p.attention = attentionMap(sum, block)
	}
	renewalStep, _ := sum["renewal_step"].(string)
	reason, _ := sum[contract.SummaryReason].(string)

	if renewalStep != "" && renewalStep != "started" {
		p.renewing = true
	}
	if !p.opened {
		b.add(SessionCreated, p.created(r))
		p.opened = true
		p.state = StatePending
		if r.Event != contract.EventSessionStarting && r.Event != contract.EventSessionStarted && r.Event != contract.EventSessionEnded {
			b.transition(StateRunning, "observed")
		}
	}
	switch r.Event {
	case contract.EventSessionStarted:
		if r.Status == contract.StatusFailed {
			break
		}
		switch {
		case reason == contract.HarnessSessionSwitched && p.state == StatePaused:
			b.transitionData(StateRunning, reason, switchData(r))
		case p.state == StatePending && renewalStep != "started":
			b.transition(StateRunning, "started")
		case p.state == StatePaused && p.lost && renewalStep == "":
			b.transition(StateRunning, "recovered_from_checkpoint")
		case renewalStep == contract.RenewalStepFallbackStarted && p.state == StatePaused:
			// A renewal whose relaunch died: the harness runs again as
			// the person launched it, nothing delivered.
			b.transitionData(StateRunning, "renewal_failed", policyMetadata(sum))
		case renewalStep == "started":
			for _, pr := range r.PayloadReceipts {
				b.add(CheckpointCreated, map[string]any{
					"checkpoint_id": pr.PayloadID,
					"description":   fmt.Sprintf("continuation payload (%s) of renewal attempt %v, placed %s", pr.PayloadKind, sum["renewal_attempt"], pr.Placement),
					"resumable":     pr.Status == contract.PlacementOutcomeDelivered,
					"created_at":    b.timestamp(),
				})
			}
			why := "renewed"
			if rec, _ := sum["renewal_recovered"].(bool); rec || p.lost || p.state == StatePending {
				// PENDING: a continuation finishing the renewal in an
				// HCP session of its own (its predecessor was closed).
				why = "recovered_from_checkpoint"
			}
			if p.state == StatePaused || p.state == StatePending {
				b.transitionData(StateRunning, why, policyMetadata(sum))
			}
		}
		p.lost, p.renewing = false, false
	case contract.EventSupervisorTick:
		if s, ok := sum["state"].(string); ok && !p.renewing {
			to := strings.ToUpper(s)
			if to != p.state && (to == StateRunning || to == StatePaused) && Valid(p.state, to) {
				trigger, _ := sum["trigger"].(string)
				if trigger == "" {
					trigger = "state_change"
				}
				b.transition(to, trigger)
			}
		}
		if hasAttention {
			b.attentionTick(sum, block)
		}
	case contract.EventSessionEnding:
		switch {
		case renewalStep == "ending" && p.state == StateRunning:
			b.transitionData(StatePaused, "renewal", policyMetadata(sum))
		case callerStop(reason):
			b.walk(StateAborting, reason)
		}
	case contract.EventFrameOpening, contract.EventFrameOpened, contract.EventFrameEnding, contract.EventFrameEnded:
		if r.Status != contract.StatusFailed {
			d := progress(r)
			b.usageMetadata(d)
			b.add(Progress, d)
		}
	case contract.EventCapabilityDegraded:
		for _, d := range r.CapabilityDegradations {
			details := map[string]any{"capability": d.Capability, "previous_support": string(d.PreviousSupport), "current_support": string(d.CurrentSupport)}
			if d.Evidence != nil {
				details["evidence"] = *d.Evidence
			}
			if pm, ok := sum["policy"].(map[string]any); ok {
				// A renewal policy client's report: its decision, reason,
				// detail and evidence.
				details["policy"] = copyMap(pm)
			}
			b.add(Warning, map[string]any{
				"code":    "capability_degraded",
				"message": fmt.Sprintf("capability %s degraded from %s to %s", d.Capability, d.PreviousSupport, d.CurrentSupport),
				"details": details,
			})
		}
	case contract.EventReceiptGapDetected:
		b.add(Warning, map[string]any{"code": "receipt_gap_detected", "message": "the ledger recorded a gap in a source's sequence", "details": copyMap(sum)})
	}
	if r.Status == contract.StatusFailed {
		b.add(Error, failed(r))
	}
	for _, w := range r.Warnings {
		b.add(Warning, map[string]any{"code": w.Code, "message": w.Message, "details": map[string]any{"event": string(r.Event)}})
	}
	if r.Event == contract.EventSessionStarting && p.state == StatePending && refused(r) {
		b.close(StateRejected, string(*r.FailureClass))
	}
	if r.Event == contract.EventSessionEnded && renewalStep == "" && !conflict(r) {
		switch {
		case reason == contract.HarnessSessionSwitched:
			// The harness switched to a new harness session inside its
			// process: paused until the new one's session.started, never
			// closed.
			if p.state == StateRunning {
				b.transitionData(StatePaused, reason, switchData(r))
			}
		case r.Status == contract.StatusFailed && p.state == StatePending:
			// The harness never started: the launch failed (126, 127, …).
			why := reason
			if why == "" && r.FailureClass != nil {
				why = string(*r.FailureClass)
			}
			b.close(StateRejected, why)
		case reason == WrapperLost && p.state != StatePending && p.state != StateAborting:
			// Kept, not closed: run --continue-session may resume it.
			b.walk(StatePaused, reason)
			p.lost = true
		default:
			if reason == "" {
				reason = "session_ended"
			}
			b.close(FinalState(p.state, sum, r.Status), reason)
		}
	}
	return b.out
}

// WrapperLost is the session.ended reason of a session sealed after its
// wrapper died (internal/seal).
const WrapperLost = "wrapper_lost"

// callerStop reports whether a session.ending reason is a stop asked by
// lifeloop's caller: an abort, or SIGINT, SIGTERM, SIGHUP or SIGQUIT sent
// to the wrapper. seed 001 reaches ABORTED only through ABORTING ("Caller
// sends abort"). A --max-duration timeout is not one: it ends FAILED
// with reason timeout, as the seed's Session Timeout says.
func callerStop(reason string) bool {
	switch reason {
	case contract.StoppedByAbort, contract.StoppedBySIGINT, contract.StoppedBySIGTERM, "sighup", "sigquit":
		return true
	}
	return false
}

// Transitions is seed 001's table of valid state transitions.
var Transitions = map[string][]string{
	StatePending:  {StateRunning, StateRejected},
	StateRunning:  {StatePaused, StateAborting, StateCompleted, StateFailed},
	StatePaused:   {StateRunning, StateAborting},
	StateAborting: {StateAborted},
}

// Valid reports whether from → to is in seed 001's table.
func Valid(from, to string) bool { return slices.Contains(Transitions[from], to) }

// Terminal reports whether state ends a session in seed 001.
func Terminal(state string) bool {
	switch state {
	case StateRejected, StateAborted, StateCompleted, StateFailed:
		return true
	}
	return false
}

// path is the shortest walk from → to over Transitions (nil when there
// is none, or from == to).
func path(from, to string) []string {
	prev := map[string]string{from: ""}
	queue := []string{from}
	for len(queue) > 0 {
		at := queue[0]
		queue = queue[1:]
		for _, n := range Transitions[at] {
			if _, seen := prev[n]; seen {
				continue
			}
			prev[n] = at
			if n == to {
				var out []string
				for s := to; s != from; s = prev[s] {
					out = append([]string{s}, out...)
				}
				return out
			}
			queue = append(queue, n)
		}
	}
	return nil
}

// batch collects the events of one receipt.
type batch struct {
	p   *Projector
	r   contract.LifecycleReceipt
	out []Envelope
	// usage is the receipt's usage block (usageOf), nil when it has none.
	usage map[string]any
}

func (b *batch) timestamp() string {
	return time.Unix(b.r.AtEpochS, 0).UTC().Format(timeLayout)
}

func (b *batch) add(eventType string, data map[string]any) {
	b.p.seq++
	b.out = append(b.out, Envelope{
		HCPVersion: Version,
		MessageID:  MessageID(b.r.ReceiptID, len(b.out)),
		Timestamp:  b.timestamp(),
		SessionID:  b.p.sessionID,
		Type:       MessageType,
		Payload:    Event{EventType: eventType, Sequence: b.p.seq, Data: data},
	})
}

// walk moves to state to through the states seed 001's table puts
// between, each with reason; nothing when no walk leads there.
func (b *batch) walk(to, reason string) {
	for _, s := range path(b.p.state, to) {
		b.transition(s, reason)
	}
}

// close walks to the terminal state final and emits session_closed.
func (b *batch) close(final, reason string) {
	b.walk(final, reason)
	b.add(SessionClosed, map[string]any{"final_state": final, "reason": reason})
	b.p.closed = true
}

func (b *batch) transition(to, reason string) { b.transitionData(to, reason, nil) }

// transitionData is transition with extra data on the state_changed.
func (b *batch) transitionData(to, reason string, extra map[string]any) {
	if to == b.p.state {
		return
	}
	d := map[string]any{"from_state": b.p.state, "to_state": to, "reason": reason}
	for k, v := range extra {
		d[k] = v
	}
	b.attentionMetadata(d)
	b.usageMetadata(d)
	b.add(StateChanged, d)
	b.p.state = to
}

// policyMetadata is the metadata a policy renewal's state_changed
// events carry: {"metadata": {"policy": <the evidence its receipts
// carry>}}; nil for a renewal a person asked for.
func policyMetadata(sum map[string]any) map[string]any {
	pm, ok := sum["policy"].(map[string]any)
	if !ok || len(pm) == 0 {
		return nil
	}
	return map[string]any{"metadata": map[string]any{"policy": copyMap(pm)}}
}

// switchData names the harness sessions of a switch inside one process:
// the one a session.ended closes, or the one a session.started opens.
func switchData(r contract.LifecycleReceipt) map[string]any {
	d := map[string]any{}
	if r.HarnessSessionID != nil {
		d["harness_session_id"] = *r.HarnessSessionID
	}
	if n, ok := r.TelemetrySummary[contract.SummarySwitch]; ok {
		d["harness_session_switch"] = n
	}
	return d
}

// MessageID is the message id of the index-th event of receipt
// receiptID: a UUID-shaped digest (version nibble 8, RFC 9562 custom).
func MessageID(receiptID string, index int) string {
	sum := sha256.Sum256(fmt.Appendf(nil, "lifeloop.hcp/%s/%d", receiptID, index))
	sum[6] = sum[6]&0x0f | 0x80
	sum[8] = sum[8]&0x3f | 0x80
	h := hex.EncodeToString(sum[:16])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

// created is session_created's data: the state, and risk_level and
// session_token only when the receipt carries them (lifeloop has no L3
// safety layer, so normally it does not); an HCP session that continues
// a closed one names it and lifeloop's session in metadata.
func (p *Projector) created(r contract.LifecycleReceipt) map[string]any {
	d := map[string]any{"state": StatePending, "adapter_id": r.AdapterID}
	for _, k := range []string{"risk_level", "session_token"} {
		if v, ok := r.TelemetrySummary[k].(string); ok && v != "" {
			d[k] = v
		}
	}
	meta := map[string]any{}
	if p.continues != "" {
		meta = map[string]any{"lifeloop_session_id": p.lifeloopID, "continues_session_id": p.continues, "continuation": p.continuation}
	}
	if p.machine != "" {
		meta["machine"] = p.machine
	}
	if len(meta) > 0 {
		d["metadata"] = meta
	}
	return d
}

// reopen starts HCP session <lifeloop session>.c<n> after the current
// one closed: seed 001's terminal states are final, so `run
// --continue-session` of an ended session (continuation n) is a new HCP
// session, its sequence from 1, that names the one it continues.
func (p *Projector) reopen(n int) {
	*p = Projector{
		sessionID: fmt.Sprintf("%s.c%d", p.lifeloopID, n), lifeloopID: p.lifeloopID,
		continues: p.sessionID, continuation: n, through: p.through, machine: p.machine,
	}
}

// continuationOf is r's continuation number (contract.SummaryContinuation),
// 0 when it has none.
func continuationOf(r contract.LifecycleReceipt) int {
	switch v := r.TelemetrySummary[contract.SummaryContinuation].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

func progress(r contract.LifecycleReceipt) map[string]any {
	stage := string(r.Event)
	frame, _ := r.TelemetrySummary["frame_id"].(string)
	d := map[string]any{"stage": stage}
	if frame != "" {
		d["frame_id"] = frame
		d["message"] = fmt.Sprintf("frame %s %s", frame, strings.TrimPrefix(stage, "frame."))
	} else {
		d["message"] = "frame " + strings.TrimPrefix(stage, "frame.")
	}
	return d
}

func failed(r contract.LifecycleReceipt) map[string]any {
	code := "failed"
	if r.FailureClass != nil {
		code = string(*r.FailureClass)
	}
	recoverable := r.RetryClass != nil && *r.RetryClass != contract.RetryDoNot
	return map[string]any{
		"code":        code,
		"message":     fmt.Sprintf("%s failed (%s)", r.Event, code),
		"recoverable": recoverable,
	}
}

// conflict reports whether r is the failed receipt of an idempotency key
// reused with other content: a refusal (its error event says so), never
// the session's end.
func conflict(r contract.LifecycleReceipt) bool {
	return r.Status == contract.StatusFailed && r.FailureClass != nil && *r.FailureClass == contract.FailureStateConflict
}

// refused reports whether a failed session.starting is a refused
// capability negotiation (the session is rejected, it never starts)
// rather than a launch that failed.
func refused(r contract.LifecycleReceipt) bool {
	if r.Status != contract.StatusFailed || r.FailureClass == nil {
		return false
	}
	switch *r.FailureClass {
	case contract.FailureCapabilityUnsupported, contract.FailureCapabilityDegraded, contract.FailureOperatorRequired:
		return true
	}
	return false
}

// FinalState is the terminal state a session.ended receipt reports, the
// session being in state current: ABORTED after ABORTING (a caller's
// stop); COMPLETED for phase completed, and for a session.ended that
// carries no phase and is not failed (an end reported by a hook or
// `emit`, with no exit classification); FAILED otherwise — a harness
// killed by a signal nobody asked lifeloop to send, a timeout, a
// failure: seed 001's "unrecoverable error".
func FinalState(current string, sum map[string]any, status contract.ReceiptStatus) string {
	if current == StateAborting {
		return StateAborted
	}
	phase, _ := sum[contract.SummaryPhase].(string)
	switch {
	case phase == string(contract.PhaseCompleted):
		return StateCompleted
	case phase == "" && status != contract.StatusFailed:
		return StateCompleted
	default:
		return StateFailed
	}
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// Validation errors of Decode.
var (
	ErrNotHCP = errors.New("not an HCP event envelope")
)

// Decode parses one message body as an HCP event envelope and checks
// what a consumer relies on: hcp_version, type "event", a session id, a
// message id, a known event type and a sequence of at least 1.
func Decode(body []byte) (Envelope, error) {
	var e Envelope
	dec := json.NewDecoder(strings.NewReader(string(body)))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		return Envelope{}, fmt.Errorf("%w: %w", ErrNotHCP, err)
	}
	switch {
	case e.HCPVersion != Version:
		return Envelope{}, fmt.Errorf("%w: hcp_version %q, want %q", ErrNotHCP, e.HCPVersion, Version)
	case e.Type != MessageType:
		return Envelope{}, fmt.Errorf("%w: type %q, want %q", ErrNotHCP, e.Type, MessageType)
	case e.SessionID == "":
		return Envelope{}, fmt.Errorf("%w: no session_id", ErrNotHCP)
	case e.MessageID == "":
		return Envelope{}, fmt.Errorf("%w: no message_id", ErrNotHCP)
	case !slices.Contains(StandardEventTypes, e.Payload.EventType):
		return Envelope{}, fmt.Errorf("%w: payload.event_type %q is not a standard event type", ErrNotHCP, e.Payload.EventType)
	case e.Payload.Sequence == 0:
		return Envelope{}, fmt.Errorf("%w: payload.sequence must be 1 or more", ErrNotHCP)
	}
	return e, nil
}
