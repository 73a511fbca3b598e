package contract

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file holds OrgLoop's lifecycle event contract: the exit-status
// classification shared with the launcher, the telemetry_summary keys that
// session.ended receipts carry, the projection of receipts into OrgLoop
// events, and the conformance check OrgLoop requires of every connector.

// LifecyclePhase is an OrgLoop lifecycle phase.
type LifecyclePhase string

// OrgLoop lifecycle phases. started and active are non-terminal; the rest
// are terminal.
const (
	PhaseStarted   LifecyclePhase = "started"
	PhaseActive    LifecyclePhase = "active"
	PhaseCompleted LifecyclePhase = "completed"
	PhaseFailed    LifecyclePhase = "failed"
	PhaseStopped   LifecyclePhase = "stopped"
)

// LifecyclePhases lists every OrgLoop phase.
var LifecyclePhases = []LifecyclePhase{PhaseStarted, PhaseActive, PhaseCompleted, PhaseFailed, PhaseStopped}

// Terminal reports whether p ends a session.
func (p LifecyclePhase) Terminal() bool {
	switch p {
	case PhaseCompleted, PhaseFailed, PhaseStopped:
		return true
	default:
		return false
	}
}

// Valid reports whether p is a known phase.
func (p LifecyclePhase) Valid() bool { return slices.Contains(LifecyclePhases, p) }

// LifecycleOutcome is what happened when a session reached a terminal
// phase. It records what happened, not what should happen next.
type LifecycleOutcome string

// OrgLoop lifecycle outcomes.
const (
	LifecycleSuccess   LifecycleOutcome = "success"
	LifecycleFailure   LifecycleOutcome = "failure"
	LifecycleCancelled LifecycleOutcome = "cancelled"
	LifecycleUnknown   LifecycleOutcome = "unknown"
)

// LifecycleOutcomes lists every OrgLoop outcome.
var LifecycleOutcomes = []LifecycleOutcome{LifecycleSuccess, LifecycleFailure, LifecycleCancelled, LifecycleUnknown}

// Valid reports whether o is a known outcome.
func (o LifecycleOutcome) Valid() bool { return slices.Contains(LifecycleOutcomes, o) }

// Stop reasons a supervisor records in ExitFacts.StoppedBy when it
// delivered the stop itself. Other non-empty values are allowed and are
// reported verbatim as the reason.
const (
	StoppedBySIGINT  = "sigint"
	StoppedBySIGTERM = "sigterm"
	StoppedByAbort   = "abort"
	StoppedByTimeout = "timeout"
	StoppedByRenewal = "renewal"
)

// HarnessSessionSwitched is the telemetry_summary.reason of the
// session.ended that closes a harness session the harness switched away
// from inside one process (a new conversation started in place), and of
// the session.starting and session.started that open the new one. The
// process is still alive; SummarySwitch numbers the switch (1, 2, …).
const (
	HarnessSessionSwitched = "harness_session_switched"
	SummarySwitch          = "harness_session_switch"
)

// A renewal's receipts name their step in telemetry_summary.renewal_step
// (ending, ended, starting, started). A relaunch that exits before it is
// ready adds relaunch_failed (its failed session.ended), then
// fallback_starting and fallback_started: the harness started again as
// the person launched it.
const (
	SummaryRenewalStep         = "renewal_step"
	RenewalStepRelaunchFailed  = "relaunch_failed"
	RenewalStepFallbackStarted = "fallback_started"
)

// ExitFacts is what a supervisor knows about how a harness process ended.
type ExitFacts struct {
	// Code is the exit status when the process exited normally (-1 when it
	// did not).
	Code int
	// Signaled is true when the wait status says the process died of a
	// signal; Signal is then its number.
	Signaled bool
	Signal   int
	// StoppedBy is empty, or the reason the supervisor itself stopped the
	// process (StoppedBy* constants or another short machine reason).
	StoppedBy string
	// FromWaitStatus says Code and Signal were read from a real wait
	// status, so a code above 127 is a plain exit code, not 128+N.
	FromWaitStatus bool
}

// ExitClass is the lifecycle classification of an exit.
type ExitClass struct {
	Phase   LifecyclePhase
	Outcome LifecycleOutcome
	Reason  string
}

// ClassifyExit maps how a harness ended to an OrgLoop phase, outcome and
// reason:
//
//	StoppedBy "timeout"               failed     failure    timeout
//	StoppedBy other (non-empty)       stopped    cancelled  <StoppedBy>
//	died of signal 2 / 9 / 15         stopped    cancelled  sigint / sigkill / sigterm
//	died of another signal N          stopped    cancelled  signal_N
//	exit 0                            completed  success    exit_code_0
//	exit 1–127                        failed     failure    exit_code_N
//	exit > 127 with FromWaitStatus    failed     failure    exit_code_N
//	exit 128+N (N = 2, 9, 15, other)  stopped    cancelled  sigint / sigkill / sigterm / signal_N
//	anything else                     stopped    unknown    session_stopped
//
// A stop lifeloop delivered wins over the exit status, because a harness
// that catches SIGTERM and exits 0 was still stopped. Exit codes above 128
// follow OrgLoop's table: shells and most harnesses report death of a
// child by signal N as 128+N.
func ClassifyExit(e ExitFacts) ExitClass {
	switch {
	case e.StoppedBy == StoppedByTimeout:
		return ExitClass{PhaseFailed, LifecycleFailure, StoppedByTimeout}
	case e.StoppedBy != "":
		return ExitClass{PhaseStopped, LifecycleCancelled, e.StoppedBy}
	case e.Signaled && e.Signal > 0:
		return ExitClass{PhaseStopped, LifecycleCancelled, signalReason(e.Signal)}
	case e.Code == 0:
		return ExitClass{PhaseCompleted, LifecycleSuccess, "exit_code_0"}
	case e.Code >= 1 && e.Code <= 127, e.FromWaitStatus && e.Code > 127:
		return ExitClass{PhaseFailed, LifecycleFailure, "exit_code_" + strconv.Itoa(e.Code)}
	case e.Code >= 129 && e.Code <= 255:
		return ExitClass{PhaseStopped, LifecycleCancelled, signalReason(e.Code - 128)}
	default:
		return ExitClass{PhaseStopped, LifecycleUnknown, "session_stopped"}
	}
}

func signalReason(n int) string {
	switch n {
	case 2:
		return "sigint"
	case 9:
		return "sigkill"
	case 15:
		return "sigterm"
	default:
		return "signal_" + strconv.Itoa(n)
	}
}

// Keys of the telemetry_summary that session.ended receipts carry. The
// OrgLoop projection reads them.
const (
	// SummaryPhase, SummaryOutcome, SummaryReason: the ExitClass, as
	// strings.
	SummaryPhase   = "phase"
	SummaryOutcome = "outcome"
	SummaryReason  = "reason"
	// SummaryExitStatus is the exit code (a number; absent when the
	// process died of a signal).
	SummaryExitStatus = "exit_status"
	// SummarySignal is the signal number the process died of (a number;
	// absent when it exited).
	SummarySignal = "signal"
	// SummaryDurationS is the session's wall-clock duration in seconds.
	SummaryDurationS = "duration_s"
	// SummaryStartedAt and SummaryEndedAt are RFC 3339 timestamps.
	SummaryStartedAt = "started_at"
	SummaryEndedAt   = "ended_at"
	// SummaryCwd is the harness's working directory.
	SummaryCwd = "cwd"
)

// SessionEndedSummary builds the telemetry_summary of a session.ended
// receipt from an exit classification and its facts. Zero times and an
// empty cwd are left out.
func SessionEndedSummary(c ExitClass, e ExitFacts, startedAt, endedAt time.Time, cwd string) map[string]any {
	m := map[string]any{
		SummaryPhase:   string(c.Phase),
		SummaryOutcome: string(c.Outcome),
		SummaryReason:  c.Reason,
	}
	if e.Signaled {
		m[SummarySignal] = e.Signal
	} else if e.Code >= 0 {
		m[SummaryExitStatus] = e.Code
	}
	if !startedAt.IsZero() {
		m[SummaryStartedAt] = startedAt.UTC().Format(time.RFC3339)
	}
	if !endedAt.IsZero() {
		m[SummaryEndedAt] = endedAt.UTC().Format(time.RFC3339)
	}
	if !startedAt.IsZero() && !endedAt.IsZero() {
		m[SummaryDurationS] = math.Round(endedAt.Sub(startedAt).Seconds()*1000) / 1000
	}
	if cwd != "" {
		m[SummaryCwd] = cwd
	}
	return m
}

// OrgLoop event types.
const (
	OrgLoopResourceChanged = "resource.changed"
	OrgLoopActorStopped    = "actor.stopped"
)

// OrgLoop harness identifiers: OrgLoop's wire vocabulary (seed 003). Each
// harness folder under adapters/ names its own (Description.OrgLoopHarness).
const (
	HarnessClaudeCode = "claude-code"
	HarnessCodex      = "codex"
	HarnessOpenCode   = "opencode"
	HarnessPi         = "pi"
	HarnessPiRust     = "pi-rust"
	HarnessOther      = "other"
)

// OrgLoopHarnesses lists OrgLoop's known harness identifiers.
var OrgLoopHarnesses = []string{HarnessClaudeCode, HarnessCodex, HarnessOpenCode, HarnessPi, HarnessPiRust, HarnessOther}

// OrgLoopPlatform is the provenance.platform and provenance.author of
// every projected event: lifeloop is the connector, as agent-ctl is for
// the harnesses it polls.
const OrgLoopPlatform = "lifeloop"

// OrgLoopEvent is one OrgLoop event carrying the lifecycle contract: the
// shape OrgLoop's SDK validates (validateEvent) and its connectors emit.
type OrgLoopEvent struct {
	// ID is "evt_" and 16 lowercase hex digits, derived from the receipt
	// id, so printing the same receipt again yields the same id.
	ID string `json:"id"`
	// Timestamp is the receipt's time, ISO 8601 UTC with milliseconds.
	Timestamp string `json:"timestamp"`
	// Source is the OrgLoop source id (OrgLoopOptions.Source, default the
	// harness).
	Source     string            `json:"source"`
	Type       string            `json:"type"`
	Provenance OrgLoopProvenance `json:"provenance"`
	Payload    OrgLoopPayload    `json:"payload"`
	// TraceID is "trc_" and 16 lowercase hex digits, one per session.
	TraceID string `json:"trace_id,omitempty"`
}

// OrgLoopPayload is the event payload: the normalized lifecycle and
// session blocks, and the flat fields OrgLoop's coding-agent connector
// puts beside them (duration_seconds and exit_status on terminal events
// only, and only when known: OrgLoop's connectors write 0 for an unknown
// value, which would read as a clean exit).
type OrgLoopPayload struct {
	Lifecycle        OrgLoopLifecycle `json:"lifecycle"`
	Session          OrgLoopSession   `json:"session"`
	SessionID        string           `json:"session_id"`
	WorkingDirectory string           `json:"working_directory"`
	DurationSeconds  *float64         `json:"duration_seconds,omitempty"`
	ExitStatus       *int             `json:"exit_status,omitempty"`
	// RenewalPolicy is, on the stop and start of a renewal a policy client
	// asked for, the evidence its receipts carry (telemetry_summary.policy:
	// the client, the threshold, the pressure that crossed it, the
	// handoff note's digest, the renewals this hour and the limit).
	RenewalPolicy map[string]any `json:"renewal_policy,omitempty"`
	// Attention is, on a change of attention to a waiting state, the
	// tick's attention block (state, since_epoch_ms, source, evidence,
	// detail, episode, turn, waited_ms) without the episode it closed;
	// on a terminal event, the session's block its session.ended carries
	// (waited_ms per kind, and closed: the episode the end closed).
	Attention map[string]any `json:"attention,omitempty"`
	// Usage is, on a turn's end (frame.ended) and on a stop, the usage
	// block its receipt carries: tokens per kind, the cost with its
	// provenance, per model (orgLoopUsage).
	Usage map[string]any `json:"usage,omitempty"`
}

// OrgLoopLifecycle is payload.lifecycle. Outcome is set on terminal
// phases.
type OrgLoopLifecycle struct {
	Phase     LifecyclePhase   `json:"phase"`
	Terminal  bool             `json:"terminal"`
	Outcome   LifecycleOutcome `json:"outcome,omitempty"`
	Reason    string           `json:"reason,omitempty"`
	DedupeKey string           `json:"dedupe_key"`
}

// OrgLoopSession is payload.session. EndedAt and ExitStatus appear on
// terminal phases only.
type OrgLoopSession struct {
	ID         string `json:"id"`
	Adapter    string `json:"adapter"`
	Harness    string `json:"harness"`
	Cwd        string `json:"cwd,omitempty"`
	StartedAt  string `json:"started_at,omitempty"`
	EndedAt    string `json:"ended_at,omitempty"`
	ExitStatus *int   `json:"exit_status,omitempty"`
}

// OrgLoopProvenance says which connector produced the event, which
// session.<phase> it reports, and for which session and folder.
type OrgLoopProvenance struct {
	Platform         string `json:"platform"`
	PlatformEvent    string `json:"platform_event"`
	Author           string `json:"author"`
	AuthorType       string `json:"author_type"`
	SessionID        string `json:"session_id"`
	WorkingDirectory string `json:"working_directory"`
}

// OrgLoopOptions carries what a receipt does not.
type OrgLoopOptions struct {
	// SessionID is the session to report: lifeloop's own session id; when
	// empty the receipt's harness_session_id is used.
	SessionID string
	// Source is the OrgLoop source id; "" is the harness.
	Source string
	// Harness is the receipt's harness in OrgLoop's vocabulary (one of
	// OrgLoopHarnesses, from the adapter registry); "" is HarnessOther.
	Harness string
	// Cwd is the session's working directory, used when the receipt
	// carries none (session.started does not).
	Cwd string
}

// ErrNoOrgLoopPhase is returned by ProjectOrgLoop for receipts that have no
// OrgLoop counterpart (ticks but a change of attention to a waiting state,
// context events, client delivery failures...).
var ErrNoOrgLoopPhase = errors.New("receipt has no OrgLoop lifecycle phase")

// orgLoopTime is ISO 8601 UTC with milliseconds, as OrgLoop writes it.
const orgLoopTime = "2006-01-02T15:04:05.000Z"

// ProjectOrgLoop projects a receipt into an OrgLoop lifecycle event:
//
//	session.started                        started   (non-terminal)
//	frame.opened                           active    reason running
//	frame.ended                            active    reason idle; payload.usage its usage block
//	supervisor.tick, trigger               active    reason the attention state (needs_permission,
//	attention_changed, to a waiting state            needs_answer, waiting_for_input, stopped_on_error),
//	                                                 payload.attention the block
//	session.ended                          phase/outcome/reason from telemetry_summary;
//	                                       payload.usage the session's usage block
//	                                       (ClassifyExit of exit_status/signal when only those are
//	                                       present; stopped/unknown/session_stopped when nothing is,
//	                                       but completed/success/session_ended for a manual_skill
//	                                       or native_hook receipt: a reported end, see reportedEnd)
//	session.starting with status failed    failed/failure, reason = failure_class (launch failed)
//
//	session.ended with status failed       failed/failure, reason = summary reason or failure_class
//	                                       (a launch that failed after session.starting, e.g. 126/127)
//
// Every other receipt returns ErrNoOrgLoopPhase, and so does an
// idempotency conflict (with or without a parent), a failed receipt
// with a parent that is not a session transition (a client delivery
// failure: see sessionTransitionFailed), a renewal's relaunch that died
// before it started, and an end sealed inside a renewal after its stop
// (SummaryRenewalInterrupted).
//
// The dedupe key of started and terminal phases is OrgLoop's
// <harness>:<session>:<phase>, where the session of the stop and start a
// renewal records is <session>.r<N> (N its renewal_attempt), so each
// harness start and stop of a renewed session has a key of its own; the
// stop and start of a harness's Nth switch to a new harness session
// inside one process are keyed <session>.s<N> the same way. An
// active phase happens many times per session, so its key is
// <harness>:<session>:active:<ledger sequence> (the receipt id without a
// ledger): stable for one transition, distinct between transitions; an
// attention change's is <harness>:<session>:active:attention.<episode>,
// one per episode of waiting.
//
// Exit statuses are reported as a shell reports them: the exit code, or
// 128+N for a process that died of signal N.
func ProjectOrgLoop(r LifecycleReceipt, o OrgLoopOptions) (OrgLoopEvent, error) {
	if r.Status == StatusFailed && (idempotencyConflict(r) || r.ParentReceiptID != nil && !sessionTransitionFailed(r)) {
		return OrgLoopEvent{}, ErrNoOrgLoopPhase
	}
	if summaryString(r.TelemetrySummary, SummaryRenewalStep) == RenewalStepRelaunchFailed {
		// A relaunch that died before it started was never a started
		// incarnation: nothing to close.
		return OrgLoopEvent{}, ErrNoOrgLoopPhase
	}
	if n, ok := summaryInt(r.TelemetrySummary, SummaryRenewalInterrupted); ok && n > 0 && r.Event == EventSessionEnded {
		// The end sealed for a wrapper lost in a renewal, after that
		// renewal's stop: the harness's stop is already that renewal's
		// stopped event, and `run --continue-session` finishes the
		// renewal (its start) and ends the session.
		return OrgLoopEvent{}, ErrNoOrgLoopPhase
	}
	var lc OrgLoopLifecycle
	attReason, attStep, attBlock, attChange := orgLoopAttention(r)
	switch {
	case r.Event == EventSessionStarted && r.Status != StatusFailed:
		lc.Phase = PhaseStarted
	case attChange:
		lc.Phase, lc.Reason = PhaseActive, attReason
	case r.Event == EventFrameOpened && r.Status != StatusFailed:
		lc.Phase, lc.Reason = PhaseActive, "running"
	case r.Event == EventFrameEnded && r.Status != StatusFailed:
		lc.Phase, lc.Reason = PhaseActive, "idle"
	case r.Event == EventSessionEnded && r.Status == StatusFailed && !LifecyclePhase(summaryString(r.TelemetrySummary, SummaryPhase)).Terminal():
		lc.Phase, lc.Outcome, lc.Reason = PhaseFailed, LifecycleFailure, summaryString(r.TelemetrySummary, SummaryReason)
		if lc.Reason == "" && r.FailureClass != nil {
			lc.Reason = string(*r.FailureClass)
		}
	case reportedEnd(r):
		// A reported end: the reporter, who alone tells this session's
		// story, says it finished (HCP: COMPLETED).
		lc.Phase, lc.Outcome, lc.Reason = PhaseCompleted, LifecycleSuccess, summaryString(r.TelemetrySummary, SummaryReason)
		if lc.Reason == "" {
			lc.Reason = ReportedEndReason // HCP's session_closed reason too
		}
	case r.Event == EventSessionEnded:
		c := endedClass(r.TelemetrySummary)
		lc.Phase, lc.Outcome, lc.Reason = c.Phase, c.Outcome, c.Reason
	case (r.Event == EventSessionStarting || r.Event == EventSessionStarted) && r.Status == StatusFailed:
		lc.Phase, lc.Outcome, lc.Reason = PhaseFailed, LifecycleFailure, "launch_failed"
		if r.FailureClass != nil {
			lc.Reason = string(*r.FailureClass)
		}
	default:
		return OrgLoopEvent{}, ErrNoOrgLoopPhase
	}
	lc.Terminal = lc.Phase.Terminal()

	id := o.SessionID
	if id == "" && r.HarnessSessionID != nil {
		id = *r.HarnessSessionID
	}
	if id == "" {
		return OrgLoopEvent{}, fmt.Errorf("receipt %s: no session id to report; pass OrgLoopOptions.SessionID", r.ReceiptID)
	}
	harness := o.Harness
	if harness == "" {
		harness = HarnessOther
	}
	lc.DedupeKey = OrgLoopDedupeKey(harness, OrgLoopIncarnation(r, id), lc.Phase)
	if lc.Phase == PhaseActive {
		step := r.ReceiptID
		if r.Sequence != nil {
			step = strconv.FormatUint(*r.Sequence, 10)
		}
		if attChange {
			step = attStep
		}
		lc.DedupeKey += ":" + step
	}

	at := time.Unix(r.AtEpochS, 0).UTC()
	s := OrgLoopSession{ID: id, Adapter: r.AdapterID, Harness: harness}
	sum := r.TelemetrySummary
	s.Cwd, _ = sum[SummaryCwd].(string)
	if s.Cwd == "" {
		s.Cwd = o.Cwd
	}
	s.StartedAt, _ = sum[SummaryStartedAt].(string)
	if lc.Phase == PhaseStarted && s.StartedAt == "" {
		s.StartedAt = at.Format(time.RFC3339)
	}
	p := OrgLoopPayload{SessionID: id, WorkingDirectory: s.Cwd}
	if lc.Terminal {
		s.EndedAt, _ = sum[SummaryEndedAt].(string)
		if s.EndedAt == "" {
			s.EndedAt = at.Format(time.RFC3339)
		}
		if n, ok := shellExitStatus(sum); ok {
			s.ExitStatus = &n
			p.ExitStatus = &n
		}
		if d, ok := sum[SummaryDurationS].(float64); ok && d >= 0 {
			p.DurationSeconds = &d
		}
	}
	p.Lifecycle, p.Session = lc, s
	p.RenewalPolicy = renewalPolicy(sum)
	switch {
	case attChange:
		p.Attention = orgLoopAttentionBlock(attBlock)
	case lc.Terminal:
		p.Attention = orgLoopSessionAttention(sum)
	}
	p.Usage = orgLoopUsage(r, lc)
	source := o.Source
	if source == "" {
		source = harness
	}
	return OrgLoopEvent{
		ID:        orgLoopID("evt_", "event", r.ReceiptID),
		Timestamp: at.Format(orgLoopTime),
		Source:    source,
		Type:      orgLoopType(lc.Phase),
		Provenance: OrgLoopProvenance{
			Platform:         OrgLoopPlatform,
			PlatformEvent:    "session." + string(lc.Phase),
			Author:           OrgLoopPlatform,
			AuthorType:       "bot",
			SessionID:        id,
			WorkingDirectory: s.Cwd,
		},
		Payload: p,
		TraceID: orgLoopID("trc_", "trace", id),
	}, nil
}

// renewalPolicy is the policy evidence of a renewal's receipt (its
// telemetry_summary "policy" object), nil for any other receipt.
func renewalPolicy(sum map[string]any) map[string]any {
	pm, ok := sum["policy"].(map[string]any)
	if !ok || len(pm) == 0 || summaryString(sum, SummaryReason) != StoppedByRenewal {
		return nil
	}
	return maps.Clone(pm)
}

// ReportedEndReason is the reason of a reported end: the session.ended
// of a session no wrapper runs, whose reporter says it ended — `emit`
// (manual_skill) or the harness's own session-end hook (native_hook,
// recorded by host-hook). OrgLoop reports it completed/success, HCP
// closes it COMPLETED, with this reason.
const ReportedEndReason = "session_ended"

// SummaryHarnessReason is the telemetry_summary key of a reported end
// that carries the harness's own reason for it (the reason its
// session-end hook gave), beside lifeloop's.
const SummaryHarnessReason = "harness_reason"

// ReportedEndSummary is the telemetry_summary of a reported end:
// completed/success/session_ended (no exit status: no process exit was
// seen), the harness's reason when it gave one, and the times and cwd
// that are known.
func ReportedEndSummary(harnessReason string, startedAt, endedAt time.Time, cwd string) map[string]any {
	m := SessionEndedSummary(ExitClass{PhaseCompleted, LifecycleSuccess, ReportedEndReason}, ExitFacts{Code: -1}, startedAt, endedAt, cwd)
	if harnessReason != "" {
		m[SummaryHarnessReason] = harnessReason
	}
	return m
}

// reportedEnd reports whether r is a reported end without an exit
// classification: a session.ended of a session no wrapper runs (emit,
// or a hook with no wrapper) whose summary says nothing of how a process
// ended.
func reportedEnd(r LifecycleReceipt) bool {
	return r.Event == EventSessionEnded && (r.IntegrationMode == ModeManualSkill || r.IntegrationMode == ModeNativeHook) && !classified(r.TelemetrySummary)
}

// classified reports whether a session.ended summary says how the session
// ended: a phase, an exit status or a signal.
func classified(sum map[string]any) bool {
	if LifecyclePhase(summaryString(sum, SummaryPhase)).Terminal() {
		return true
	}
	_, code := summaryInt(sum, SummaryExitStatus)
	_, sig := summaryInt(sum, SummarySignal)
	return code || sig
}

// idempotencyConflict reports whether r is the failed receipt the ledger
// records for a key reused with other content: a refusal, not a
// transition, whatever its event (docs/orgloop.md: a conflict has no
// event).
func idempotencyConflict(r LifecycleReceipt) bool {
	return r.FailureClass != nil && *r.FailureClass == FailureStateConflict
}

// sessionTransitionFailed reports whether a failed receipt records the
// session itself failing (a launch that failed after session.starting, a
// wrapper that died before its harness started): a session.starting,
// session.started or session.ended with a telemetry summary, not an
// idempotency conflict. A client's delivery failure repeats its parent's
// event with no summary.
func sessionTransitionFailed(r LifecycleReceipt) bool {
	switch r.Event {
	case EventSessionStarting, EventSessionStarted, EventSessionEnded:
	default:
		return false
	}
	if r.FailureClass != nil && *r.FailureClass == FailureStateConflict {
		return false
	}
	return len(r.TelemetrySummary) > 0
}

// SummaryContinuation is the telemetry_summary key numbering the wrapper
// that recorded a receipt: N on what the Nth `run --continue-session`
// after a lost wrapper recorded (and on the end sealed when that wrapper
// was lost in turn); absent for the session's first wrapper.
const SummaryContinuation = "continuation"

// SummaryRenewalInterrupted is the telemetry_summary key of the end
// sealed for a wrapper lost in the middle of a renewal, after that
// renewal recorded its harness's stop (renewal_step ended) and its
// relaunch's session.starting, before its session.started: N, the
// renewal's attempt. That end is the wrapper's and the never-started
// relaunch's, not a harness's (the one that ran is stopped and posted as
// the renewal's stop), so it has no OrgLoop event and does not close an
// incarnation: the continuation finishes renewal N (its start is that
// renewal's) and ends the incarnation the renewal belongs to.
const SummaryRenewalInterrupted = "renewal_interrupted"

// OrgLoopIncarnation is the session id the dedupe key of r's phase
// carries: id, id.r<N> for the stop and start renewal N recorded
// (telemetry_summary.reason "renewal" and renewal_attempt N), id.s<N>
// for the stop and start of the harness's Nth switch to a new harness
// session inside one process (reason harness_session_switched), or
// id.c<N> for the start and end the Nth continuation of a session whose
// wrapper was lost recorded (continuation N): each incarnation has one
// start and one end.
func OrgLoopIncarnation(r LifecycleReceipt, id string) string {
	sum := r.TelemetrySummary
	if summaryString(sum, SummaryReason) == HarnessSessionSwitched {
		if n, ok := summaryInt(sum, SummarySwitch); ok && n > 0 {
			return id + ".s" + strconv.Itoa(n)
		}
	}
	if summaryString(sum, SummaryReason) == StoppedByRenewal {
		if n, ok := summaryInt(sum, "renewal_attempt"); ok && n > 0 {
			return id + ".r" + strconv.Itoa(n)
		}
	}
	if n, ok := summaryInt(sum, SummaryContinuation); ok && n > 0 {
		return id + ".c" + strconv.Itoa(n)
	}
	return id
}

func summaryString(sum map[string]any, key string) string {
	s, _ := sum[key].(string)
	return s
}

// OrgLoopDedupeKey is OrgLoop's dedupe key of a lifecycle transition,
// <harness>:<session_id>:<phase> (buildDedupeKey in OrgLoop's SDK).
func OrgLoopDedupeKey(harness, sessionID string, phase LifecyclePhase) string {
	return harness + ":" + sessionID + ":" + string(phase)
}

// orgLoopID is prefix and the first 16 hex digits of a SHA-256 over kind
// and value: the same value always yields the same id.
func orgLoopID(prefix, kind, value string) string {
	h := sha256.Sum256([]byte("lifeloop.orgloop." + kind + "\x00" + value))
	return prefix + hex.EncodeToString(h[:8])
}

// shellExitStatus is the exit status of a session.ended summary as a
// shell reports it: the exit code, or 128+N when the process died of
// signal N.
func shellExitStatus(sum map[string]any) (int, bool) {
	if n, ok := summaryInt(sum, SummaryExitStatus); ok {
		return n, true
	}
	if n, ok := summaryInt(sum, SummarySignal); ok && n > 0 {
		return 128 + n, true
	}
	return 0, false
}

func orgLoopType(p LifecyclePhase) string {
	if p.Terminal() {
		return OrgLoopActorStopped
	}
	return OrgLoopResourceChanged
}

// endedClass reads the exit classification of a session.ended receipt.
func endedClass(sum map[string]any) ExitClass {
	phase, _ := sum[SummaryPhase].(string)
	outcome, _ := sum[SummaryOutcome].(string)
	reason, _ := sum[SummaryReason].(string)
	if p := LifecyclePhase(phase); p.Terminal() {
		o := LifecycleOutcome(outcome)
		if !o.Valid() {
			o = LifecycleUnknown
		}
		return ExitClass{Phase: p, Outcome: o, Reason: reason}
	}
	if sig, ok := summaryInt(sum, SummarySignal); ok {
		return ClassifyExit(ExitFacts{Code: -1, Signaled: true, Signal: sig})
	}
	if code, ok := summaryInt(sum, SummaryExitStatus); ok {
		return ClassifyExit(ExitFacts{Code: code})
	}
	return ExitClass{PhaseStopped, LifecycleUnknown, "session_stopped"}
}

// summaryInt reads an integer from a summary that may have been built in
// memory (int) or decoded from JSON (float64, json.Number).
func summaryInt(sum map[string]any, key string) (int, bool) {
	switch v := sum[key].(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case uint64:
		return int(v), true
	case float64:
		if v == math.Trunc(v) && math.Abs(v) < 1<<31 {
			return int(v), true
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return int(n), true
		}
	}
	return 0, false
}

// AssertLifecycleConformance checks ev against OrgLoop's five
// conformance rules, on its JSON encoding: (1) payload.lifecycle shape
// (phase, terminal, outcome, dedupe_key), (2) payload.session shape (id,
// adapter, harness), (3) phase/terminal consistency, (4) an outcome on
// terminal events, (5) event type consistency (terminal → actor.stopped,
// else resource.changed); and the required provenance fields.
func AssertLifecycleConformance(ev OrgLoopEvent) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	return CheckOrgLoopJSON(b)
}

// CheckOrgLoopJSON is AssertLifecycleConformance for an encoded event,
// e.g. one line of `lifeloop events --format orgloop`.
func CheckOrgLoopJSON(data []byte) error {
	var ev struct {
		ID        *string `json:"id"`
		Timestamp *string `json:"timestamp"`
		Source    *string `json:"source"`
		TraceID   *string `json:"trace_id"`
		Type      *string `json:"type"`
		Payload   *struct {
			Lifecycle *struct {
				Phase     *string `json:"phase"`
				Terminal  *bool   `json:"terminal"`
				Outcome   *string `json:"outcome"`
				Reason    *string `json:"reason"`
				DedupeKey *string `json:"dedupe_key"`
			} `json:"lifecycle"`
			Session *struct {
				ID      *string `json:"id"`
				Adapter *string `json:"adapter"`
				Harness *string `json:"harness"`
			} `json:"session"`
		} `json:"payload"`
		Provenance *struct {
			Platform      *string `json:"platform"`
			PlatformEvent *string `json:"platform_event"`
		} `json:"provenance"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&ev); err != nil {
		return fmt.Errorf("orgloop event: %w", err)
	}
	var errs []string
	bad := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	empty := func(s *string) bool { return s == nil || *s == "" }

	// OrgLoop's validateEvent: id, timestamp, source, type, provenance.
	if ev.ID == nil || !prefixedHex(*ev.ID, "evt_", 16) {
		bad("id must be \"evt_\" and 16 lowercase hex digits")
	}
	if ev.Timestamp == nil {
		bad("timestamp is missing")
	} else if _, err := time.Parse(orgLoopTime, *ev.Timestamp); err != nil {
		bad("timestamp %q is not ISO 8601 UTC with milliseconds", *ev.Timestamp)
	}
	if empty(ev.Source) {
		bad("source is missing")
	}
	if ev.TraceID != nil && !prefixedHex(*ev.TraceID, "trc_", 16) {
		bad("trace_id must be \"trc_\" and 16 lowercase hex digits")
	}
	if ev.Payload == nil || ev.Payload.Lifecycle == nil {
		bad("payload.lifecycle is missing")
	}
	if ev.Payload == nil || ev.Payload.Session == nil {
		bad("payload.session is missing")
	}
	if len(errs) > 0 {
		return errors.New("orgloop conformance: " + strings.Join(errs, "; "))
	}
	lc, s := ev.Payload.Lifecycle, ev.Payload.Session
	// Rule 1: lifecycle shape.
	phase := LifecyclePhase("")
	if empty(lc.Phase) || !LifecyclePhase(*lc.Phase).Valid() {
		bad("payload.lifecycle.phase must be one of %v", LifecyclePhases)
	} else {
		phase = LifecyclePhase(*lc.Phase)
	}
	if lc.Terminal == nil {
		bad("payload.lifecycle.terminal must be a boolean")
	}
	if lc.Outcome != nil && !LifecycleOutcome(*lc.Outcome).Valid() {
		bad("payload.lifecycle.outcome %q must be one of %v", *lc.Outcome, LifecycleOutcomes)
	}
	if empty(lc.DedupeKey) {
		bad("payload.lifecycle.dedupe_key is missing")
	}
	// Rule 2: session shape.
	if empty(s.ID) {
		bad("payload.session.id is missing")
	}
	if empty(s.Adapter) {
		bad("payload.session.adapter is missing")
	}
	if empty(s.Harness) {
		bad("payload.session.harness is missing")
	} else if !slices.Contains(OrgLoopHarnesses, *s.Harness) {
		bad("payload.session.harness %q must be one of %v", *s.Harness, OrgLoopHarnesses)
	}
	if phase != "" && lc.Terminal != nil {
		// Rule 3: phase/terminal consistency.
		if phase.Terminal() != *lc.Terminal {
			bad("payload.lifecycle.terminal is %v but phase %q is %s", *lc.Terminal, phase, terminalWord(phase.Terminal()))
		}
		// Rule 4: terminal events carry an outcome.
		if *lc.Terminal && empty(lc.Outcome) {
			bad("terminal events must carry payload.lifecycle.outcome")
		}
		// Started and terminal transitions happen once per harness start:
		// the key is exactly <harness>:<session_id>:<phase>, or
		// <harness>:<session_id>.r<N>:<phase> for a renewal's, .s<N> for a switch's.
		if phase != PhaseActive && !empty(lc.DedupeKey) && !empty(s.ID) && !empty(s.Harness) {
			want := OrgLoopDedupeKey(*s.Harness, *s.ID, phase)
			if *lc.DedupeKey != want && !renewalKey(*lc.DedupeKey, *s.Harness, *s.ID, phase) {
				bad("payload.lifecycle.dedupe_key is %q, want %q", *lc.DedupeKey, want)
			}
		}
		// Rule 5: event type consistency.
		want := OrgLoopResourceChanged
		if *lc.Terminal {
			want = OrgLoopActorStopped
		}
		if ev.Type == nil || *ev.Type != want {
			got := "<missing>"
			if ev.Type != nil {
				got = *ev.Type
			}
			bad("type is %q, want %q for a %s phase", got, want, terminalWord(*lc.Terminal))
		}
	}
	if ev.Provenance == nil || empty(ev.Provenance.Platform) {
		bad("provenance.platform is missing")
	}
	if ev.Provenance == nil || empty(ev.Provenance.PlatformEvent) {
		bad("provenance.platform_event is missing")
	} else if phase != "" && *ev.Provenance.PlatformEvent != "session."+string(phase) {
		bad("provenance.platform_event is %q, want %q", *ev.Provenance.PlatformEvent, "session."+string(phase))
	}
	if len(errs) > 0 {
		return errors.New("orgloop conformance: " + strings.Join(errs, "; "))
	}
	return nil
}

// renewalKey reports whether key is <harness>:<id>.r<N>:<phase> (a
// renewal's), <harness>:<id>.s<N>:<phase> (a switch's) or
// <harness>:<id>.c<N>:<phase> (a continuation's), N > 0.
func renewalKey(key, harness, id string, phase LifecyclePhase) bool {
	var mid string
	ok := false
	for _, kind := range []string{".r", ".s", ".c"} {
		if mid, ok = strings.CutPrefix(key, harness+":"+id+kind); ok {
			break
		}
	}
	if !ok {
		return false
	}
	n, ok := strings.CutSuffix(mid, ":"+string(phase))
	if !ok {
		return false
	}
	v, err := strconv.Atoi(n)
	return err == nil && v > 0 && strconv.Itoa(v) == n
}

func terminalWord(t bool) string {
	if t {
		return "terminal"
	}
	return "non-terminal"
}
