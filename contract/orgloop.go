package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// OrgLoopPlatform is the provenance.platform of every projected event.
const OrgLoopPlatform = "lifeloop"

// OrgLoopEvent is one OrgLoop lifecycle event.
type OrgLoopEvent struct {
	Type       string            `json:"type"`
	Source     string            `json:"source,omitempty"`
	Payload    OrgLoopPayload    `json:"payload"`
	Provenance OrgLoopProvenance `json:"provenance"`
}

// OrgLoopPayload is the event payload: the normalized lifecycle block and
// the session block.
type OrgLoopPayload struct {
	Lifecycle OrgLoopLifecycle `json:"lifecycle"`
	Session   OrgLoopSession   `json:"session"`
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

// OrgLoopProvenance says which connector produced the event and which
// session.<phase> it reports.
type OrgLoopProvenance struct {
	Platform      string `json:"platform"`
	PlatformEvent string `json:"platform_event"`
}

// OrgLoopOptions carries what a receipt does not: the session id to
// report (lifeloop's own session id; when empty the receipt's
// harness_session_id is used) and the optional event source label.
type OrgLoopOptions struct {
	SessionID string
	Source    string
	// Harness is the receipt's harness in OrgLoop's vocabulary (one of
	// OrgLoopHarnesses, from the adapter registry); "" is HarnessOther.
	Harness string
}

// ErrNoOrgLoopPhase is returned by ProjectOrgLoop for receipts that have no
// OrgLoop counterpart (ticks, context events, client delivery failures...).
var ErrNoOrgLoopPhase = errors.New("receipt has no OrgLoop lifecycle phase")

// ProjectOrgLoop projects a receipt into an OrgLoop lifecycle event:
//
//	session.started                        started   (non-terminal)
//	frame.opened                           active    reason running
//	frame.ended                            active    reason idle
//	session.ended                          phase/outcome/reason from telemetry_summary
//	                                       (ClassifyExit of exit_status/signal when only those are
//	                                       present; stopped/unknown/session_stopped when nothing is)
//	session.starting with status failed    failed/failure, reason = failure_class (launch failed)
//
// Every other receipt, and any failed receipt with a parent (a client
// delivery failure, not a session transition), returns ErrNoOrgLoopPhase.
// The dedupe key is <harness>:<session>:<phase>:<sequence> — OrgLoop's
// <harness>:<session>:<phase> would collapse repeated active transitions
// and the started/ended pairs of a renewed session, so the ledger sequence
// keeps each transition distinct; without a sequence (no ledger) the
// receipt_id stands in for it.
func ProjectOrgLoop(r LifecycleReceipt, o OrgLoopOptions) (OrgLoopEvent, error) {
	if r.Status == StatusFailed && r.ParentReceiptID != nil {
		return OrgLoopEvent{}, ErrNoOrgLoopPhase
	}
	var lc OrgLoopLifecycle
	switch {
	case r.Event == EventSessionStarted && r.Status != StatusFailed:
		lc.Phase = PhaseStarted
	case r.Event == EventFrameOpened && r.Status != StatusFailed:
		lc.Phase, lc.Reason = PhaseActive, "running"
	case r.Event == EventFrameEnded && r.Status != StatusFailed:
		lc.Phase, lc.Reason = PhaseActive, "idle"
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
	seq := r.ReceiptID
	if r.Sequence != nil {
		seq = strconv.FormatUint(*r.Sequence, 10)
	}
	lc.DedupeKey = harness + ":" + id + ":" + string(lc.Phase) + ":" + seq

	s := OrgLoopSession{ID: id, Adapter: r.AdapterID, Harness: harness}
	sum := r.TelemetrySummary
	s.Cwd, _ = sum[SummaryCwd].(string)
	s.StartedAt, _ = sum[SummaryStartedAt].(string)
	if lc.Phase == PhaseStarted && s.StartedAt == "" {
		s.StartedAt = time.Unix(r.AtEpochS, 0).UTC().Format(time.RFC3339)
	}
	if lc.Terminal {
		s.EndedAt, _ = sum[SummaryEndedAt].(string)
		if s.EndedAt == "" {
			s.EndedAt = time.Unix(r.AtEpochS, 0).UTC().Format(time.RFC3339)
		}
		if n, ok := summaryInt(sum, SummaryExitStatus); ok {
			s.ExitStatus = &n
		}
	}
	return OrgLoopEvent{
		Type:    orgLoopType(lc.Phase),
		Source:  o.Source,
		Payload: OrgLoopPayload{Lifecycle: lc, Session: s},
		Provenance: OrgLoopProvenance{
			Platform:      OrgLoopPlatform,
			PlatformEvent: "session." + string(lc.Phase),
		},
	}, nil
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
		Type    *string `json:"type"`
		Payload *struct {
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

func terminalWord(t bool) string {
	if t {
		return "terminal"
	}
	return "non-terminal"
}
