// Package seal notices sessions whose wrapper died without recording their
// end, and seals them: exactly one final session.ended in the ledger
// (outcome unknown, reason wrapper_lost, a torn tail repaired on the way)
// and state lost in session.json. A wrapper lost while a renewal stopped
// its harness is sealed with that renewal's stop instead, which the
// continuation goes on from. Every command that lists or opens a
// session calls Check, so a consumer waiting for session.ended gets it
// from whichever command looks first.
//
// A wrapper is gone when nobody holds its session's wrapper lock
// (statedir.WrapperGone) — never judged by a pid. Two commands sealing at
// once record one session.ended: the receipt carries an idempotency key
// and deterministic content, so the ledger keeps the first and treats the
// second as a replay.
//
// The harness may outlive its wrapper (it ignored the terminal's hangup):
// Orphans finds what is left of its process group, told apart from a
// process that reused its pid by the start time recorded at launch.
package seal

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/moment"
	"github.com/lifeloop/lifeloop/internal/pipeline"
	"github.com/lifeloop/lifeloop/internal/procfs"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// ReasonWrapperLost is the session.ended reason (and warning code) of a
// sealed session.
const ReasonWrapperLost = "wrapper_lost"

// Options are what sealing needs besides the session.
type Options struct {
	Registry *adapters.Registry
	Now      func() time.Time
	// Cleanup, when set, removes what the dead wrapper left for the
	// session whose folder is dir (launch placement files, a control
	// socket in the temporary folder).
	Cleanup func(dir string) error
}

// Check returns rec as it stands now: when rec is not ended but its
// wrapper is gone, the session is sealed first and the sealed record
// returned. An error means the session could not be sealed (e.g. its
// ledger's disk is still full); rec is then returned unchanged.
func Check(root string, rec statedir.SessionRecord, o Options) (statedir.SessionRecord, error) {
	if rec.State.IsTerminal() || !statedir.WrapperGone(root, rec.ID) {
		return rec, nil
	}
	return seal(root, rec, o)
}

// Unlisted seals the sessions a wrapper died in before their session.json
// was first written, or whose session.json a power loss left empty or
// torn (session.json is not synced: the ledger is the truth): they have a
// ledger and a free wrapper lock, and no readable record, so no list
// shows them. Each gets its record rebuilt from the ledger, state lost or
// the state its recorded end implies. It returns their records.
func Unlisted(root string, o Options) ([]statedir.SessionRecord, error) {
	entries, err := os.ReadDir(statedir.SessionsDir(root))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil // no sessions folder: nothing to seal
	}
	if err != nil {
		return nil, fmt.Errorf("looking for sessions to seal: %w", err)
	}
	var out []statedir.SessionRecord
	var errs []error
	for _, e := range entries {
		id := e.Name()
		if !e.IsDir() || statedir.ValidateSessionID(id) != nil {
			continue
		}
		if _, err := statedir.ReadSession(root, id); !errors.Is(err, statedir.ErrSessionNotFound) && !errors.Is(err, statedir.ErrNotARecord) {
			continue
		}
		if !statedir.WrapperGone(root, id) {
			continue // still starting
		}
		rec := statedir.SessionRecord{ID: id, State: statedir.StatePending, IntegrationMode: string(contract.ModeLauncherWrapper)}
		for en, err := range ledger.ReadSince(statedir.ReceiptsPath(root, id), 0) {
			if err == nil {
				rec.AdapterID, rec.IntegrationMode = en.Receipt.AdapterID, string(en.Receipt.IntegrationMode)
				t := time.Unix(en.Receipt.AtEpochS, 0)
				rec.StartedAt = &t
			}
			break
		}
		sealed, err := seal(root, rec, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, sealed)
	}
	return out, errors.Join(errs...)
}

// CheckAll is Check over a list, keeping each record's place; errors are
// joined.
func CheckAll(root string, recs []statedir.SessionRecord, o Options) ([]statedir.SessionRecord, error) {
	var errs []error
	for i, r := range recs {
		s, err := Check(root, r, o)
		if err != nil {
			errs = append(errs, err)
		}
		recs[i] = s
	}
	return recs, errors.Join(errs...)
}

// history is what sealing needs from a ledger.
type history struct {
	last      contract.LifecycleReceipt // the last receipt
	started   string                    // receipt id of the last session.started
	ended     *contract.LifecycleReceipt
	harnessID string
	// closed counts the session's ends before: the wrapper sealed now
	// is the closed-th continuation's (contract.SummaryContinuation).
	closed int
	// ends counts the session's ends sealed or recorded before, those
	// inside a renewal included: each sealed end has a key of its own.
	ends int
	// gap is the attempt of a renewal that recorded its harness's stop
	// after the last session.started (0: none): the wrapper was lost
	// inside it.
	gap int
	// segStarted and segEnded: the last harness session (from the last
	// session.starting) recorded its session.started, its session.ended.
	segStarted, segEnded bool
	// stopping is the renewal whose session.ending is the last session
	// moment (the wrapper was lost while that renewal stopped its
	// harness, before the stop was recorded); nil when there is none.
	stopping *contract.LifecycleReceipt
}

// sessionEnd reports whether r is an end of the session: a
// session.ended that is neither a step of a renewal nor a switch's (the
// session goes on after those) — the harness's exit, a failed launch, or
// the end sealed for a lost wrapper.
func sessionEnd(r contract.LifecycleReceipt) bool {
	if r.Event != contract.EventSessionEnded || summaryString(r, contract.SummaryRenewalStep) != "" {
		return false
	}
	reason := summaryString(r, contract.SummaryReason)
	return reason != contract.StoppedByRenewal && reason != contract.HarnessSessionSwitched
}

// closes reports whether r ends an incarnation of the session: an end of
// the session other than one sealed inside a renewal after its harness's
// stop (contract.SummaryRenewalInterrupted), which the continuation
// finishes within the same incarnation.
func closes(r contract.LifecycleReceipt) bool {
	_, interrupted := r.TelemetrySummary[contract.SummaryRenewalInterrupted]
	return sessionEnd(r) && !interrupted
}

func summaryString(r contract.LifecycleReceipt, key string) string {
	s, _ := r.TelemetrySummary[key].(string)
	return s
}

// summaryAttempt is r's renewal_attempt, 0 when it has none.
func summaryAttempt(r contract.LifecycleReceipt) int {
	switch v := r.TelemetrySummary["renewal_attempt"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	}
	return 0
}

// Continuation numbers the wrapper that continues a session whose
// receipts so far are prior (`run --continue-session`): N after N ends
// of the session that closed an incarnation (a lost wrapper's sealed
// end, or a harness's exit). Its start and end carry it
// (contract.SummaryContinuation): a new incarnation with OrgLoop keys of
// its own, as a renewal's. A wrapper lost inside a renewal after that
// renewal recorded its harness's stop closes nothing: right after the
// stop nothing is sealed (that harness session's end is recorded); after
// the relaunch's session.starting the sealed end carries
// contract.SummaryRenewalInterrupted (Interrupted). The continuation
// finishes the renewal — its session.started is that renewal's start —
// and ends the incarnation the renewal belongs to, under the same
// number. A wrapper lost after a renewal's session.ending, before its
// harness's stop was recorded, is sealed with that stop (the renewal's
// session.ended, renewal_step ended: the harness went with its wrapper),
// which closes nothing either; the continuation goes on from the
// renewal's relaunch (RenewalStopped).
func Continuation(prior []contract.LifecycleReceipt) int {
	n := 0
	for _, r := range prior {
		if closes(r) {
			n++
		}
	}
	return n
}

// RenewalStopped reports the renewal whose harness's stop (its
// session.ended, renewal_step ended) is the last session moment of
// prior: its attempt and that receipt's id (0, "" when there is none).
// A continuation finishes that renewal from its relaunch: the stop is
// recorded, whether by the lost wrapper or by the seal.
func RenewalStopped(prior []contract.LifecycleReceipt) (int, string) {
	for i := len(prior) - 1; i >= 0; i-- {
		r := prior[i]
		if !strings.HasPrefix(string(r.Event), "session.") {
			continue
		}
		if r.Event == contract.EventSessionEnded && summaryString(r, contract.SummaryRenewalStep) == "ended" {
			return summaryAttempt(r), r.ReceiptID
		}
		return 0, ""
	}
	return 0, ""
}

// Interrupted is the attempt of the renewal a continuation of a session
// whose receipts so far are prior must finish when its last harness
// session was sealed inside that renewal, after its relaunch's
// session.starting (the sealed end carries
// contract.SummaryRenewalInterrupted); 0 otherwise. The continuation
// then opens a harness session of its own with a session.starting (the
// renewal's was ended by the seal).
func Interrupted(prior []contract.LifecycleReceipt) int {
	for i := len(prior) - 1; i >= 0; i-- {
		r := prior[i]
		if !strings.HasPrefix(string(r.Event), "session.") {
			continue
		}
		if r.Event != contract.EventSessionEnded {
			return 0
		}
		switch v := r.TelemetrySummary[contract.SummaryRenewalInterrupted].(type) {
		case float64:
			return int(v)
		case int:
			return v
		}
		return 0
	}
	return 0
}

func readHistory(path string) history {
	var h history
	for e, err := range ledger.ReadSince(path, 0) {
		if err != nil {
			continue
		}
		r := e.Receipt
		h.last = r
		if strings.HasPrefix(string(r.Event), "session.") {
			h.stopping = nil
		}
		switch r.Event {
		case contract.EventSessionEnding:
			if summaryString(r, contract.SummaryRenewalStep) == "ending" && h.segStarted {
				rc := r
				h.stopping = &rc
			}
		case contract.EventSessionStarting:
			h.ended = nil
			h.segStarted, h.segEnded = false, false
		case contract.EventSessionStarted:
			h.started, h.ended = r.ReceiptID, nil
			if r.Status != contract.StatusFailed {
				h.gap, h.segStarted = 0, true
			}
		case contract.EventSessionEnded:
			h.segEnded = true
			switch {
			case sessionEnd(r):
				rc := r
				h.ended = &rc
				h.ends++
				if closes(r) {
					h.closed++
				}
			case summaryString(r, contract.SummaryRenewalStep) == "ended":
				h.gap = summaryAttempt(r)
			}
		}
		if r.HarnessSessionID != nil && *r.HarnessSessionID != "" {
			h.harnessID = *r.HarnessSessionID
		}
	}
	return h
}

func seal(root string, rec statedir.SessionRecord, o Options) (statedir.SessionRecord, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	h := readHistory(statedir.ReceiptsPath(root, rec.ID))
	out := rec
	switch {
	case h.ended != nil && h.ended.TelemetrySummary[contract.SummaryReason] != ReasonWrapperLost:
		// The end is in the ledger; only session.json missed it (e.g. the
		// disk filled between the two writes).
		out.State = stateOf(*h.ended)
		t := time.Unix(h.ended.AtEpochS, 0)
		out.EndedAt = &t
	default:
		// Not ended, or sealed by a command racing this one. A wrapper
		// lost inside a renewal right after its harness's stop (that
		// harness session's end is recorded, no relaunch began) gets no
		// second end of it: the continuation finishes the renewal.
		if h.ended == nil && !h.segEnded {
			if err := recordEnd(root, rec, h, o); err != nil {
				return rec, fmt.Errorf("session %s lost its wrapper but cannot be sealed: %w", rec.ID, err)
			}
		}
		out.State = statedir.StateLost
		_, t := span(rec, h)
		out.EndedAt = &t
		out.Exit = &statedir.ExitInfo{Code: -1, Outcome: string(contract.LifecycleUnknown), Phase: string(contract.PhaseStopped), Reason: ReasonWrapperLost}
	}
	if o.Cleanup != nil {
		if err := o.Cleanup(statedir.SessionDir(root, rec.ID)); err != nil {
			return rec, fmt.Errorf("session %s: removing what its wrapper left: %w", rec.ID, err)
		}
	}
	out.UpdatedAt = o.Now()
	if err := statedir.WriteSession(root, out); err != nil {
		return rec, fmt.Errorf("session %s: recording it as %s: %w", rec.ID, out.State, err)
	}
	return out, nil
}

// endTime is the last moment the session is known to have lived: its
// last receipt (deterministic, so racing sealers record the same
// content).
func endTime(rec statedir.SessionRecord, h history) time.Time {
	if h.last.AtEpochS > 0 {
		return time.Unix(h.last.AtEpochS, 0)
	}
	if rec.StartedAt != nil {
		return *rec.StartedAt
	}
	return rec.UpdatedAt
}

// span is the sealed session's start and end: the recorded start, to
// the whole second (receipt times are whole seconds), and endTime, never
// before that start, so ended_at ≥ started_at and duration_s ≥ 0.
func span(rec statedir.SessionRecord, h history) (start, end time.Time) {
	end = endTime(rec, h)
	if rec.StartedAt != nil {
		start = rec.StartedAt.Truncate(time.Second)
		if end.Before(start) {
			end = start
		}
	}
	return start, end
}

// recordEnd appends the sealing session.ended through the session's
// pipeline (which repairs a torn tail on opening).
func recordEnd(root string, rec statedir.SessionRecord, h history, o Options) error {
	ad := adapterOf(o.Registry, rec.AdapterID)
	mode := contract.IntegrationMode(rec.IntegrationMode)
	if !mode.Valid() {
		mode = contract.ModeLauncherWrapper
	}
	p, err := pipeline.Open(pipeline.Options{StateDir: root, Session: rec.ID, Adapter: ad, Mode: mode, Now: o.Now})
	if err != nil {
		return err
	}
	defer p.Close()

	started, ended := span(rec, h)
	class := contract.ExitClass{Phase: contract.PhaseStopped, Outcome: contract.LifecycleUnknown, Reason: ReasonWrapperLost}
	if h.stopping != nil {
		// Lost while a renewal stopped the harness: the harness went with
		// its wrapper, and this end is that renewal's stop.
		class.Reason = contract.StoppedByRenewal
	}
	sum := contract.SessionEndedSummary(class, contract.ExitFacts{Code: -1}, started, ended, rec.Cwd)
	if rec.Pid > 0 {
		sum["pid"] = rec.Pid
	}
	key := "lifeloop-seal:" + rec.ID
	if h.closed > 0 {
		// The wrapper of the closed-th continuation was lost in turn: its
		// end belongs to that incarnation.
		sum[contract.SummaryContinuation] = h.closed
	}
	if h.ends > 0 {
		// A wrapper lost after an earlier end: a key of its own.
		key += fmt.Sprintf(":%d", h.ends)
	}
	if h.gap > 0 {
		// Lost inside a renewal after its harness's stop: the
		// continuation finishes the renewal (Continuation).
		sum[contract.SummaryRenewalInterrupted] = h.gap
	}
	if h.stopping != nil {
		// Lost inside a renewal before its harness's stop was recorded:
		// the seal records that stop as the renewal would have
		// (renewal_step ended), so the renewal's incarnation ends once
		// and the continuation finishes the renewal from its relaunch
		// (RenewalStopped).
		for _, k := range []string{"renewal_attempt", contract.SummaryRenewalStep, "resume", contract.SummaryContinuation} {
			if v, ok := h.stopping.TelemetrySummary[k]; ok {
				sum[k] = v
			}
		}
		sum[contract.SummaryRenewalStep] = "ended"
	}
	m := moment.Moment{
		Event:            contract.EventSessionEnded,
		IdempotencyKey:   &key,
		HarnessSessionID: h.harnessID,
		Summary:          sum,
		Warnings: []contract.Warning{{Code: ReasonWrapperLost, Message: fmt.Sprintf(
			"the lifeloop wrapper of this session (pid %d) ended without recording the session's end; the session was sealed when it was next looked at",
			rec.WrapperPid)}},
	}
	if h.last.ReceiptID == "" {
		// The wrapper died after opening the session's ledger and before
		// recording anything: the sealed story starts where a launch
		// starts, so it stays one coherent stream (a session.ended never
		// comes first). Idempotent like the end, for racing sealers.
		skey := "lifeloop-seal-start:" + rec.ID
		sum := map[string]any{contract.SummaryReason: ReasonWrapperLost}
		if rec.Cwd != "" {
			sum["cwd"] = rec.Cwd
		}
		res, err := p.Route(context.Background(), moment.Moment{Event: contract.EventSessionStarting, IdempotencyKey: &skey, Summary: sum})
		if err != nil {
			return err
		}
		startID := res.Receipt.ReceiptID
		m.Parent = &startID
	}
	if h.started != "" {
		m.Parent = &h.started
	}
	if !h.segStarted {
		// The wrapper died before its harness (or a renewal's relaunch)
		// was known to start: that launch failed as far as the stream
		// can tell.
		fc := contract.FailureInternalError
		m.Failure = &fc
	}
	if _, err := p.Route(context.Background(), m); err != nil {
		return err
	}
	p.Close()
	if n, cause := p.Unrecorded(); n > 0 {
		return fmt.Errorf("the ledger could not be written (%s)", ledger.CauseText(cause))
	}
	return nil
}

func adapterOf(reg *adapters.Registry, id string) *adapters.Adapter {
	if reg != nil {
		if a, err := reg.Lookup(id); err == nil {
			return a
		}
		return reg.Resolve(nil)
	}
	return nil
}

// stateOf is the session state a recorded session.ended implies.
func stateOf(r contract.LifecycleReceipt) statedir.SessionState {
	switch r.TelemetrySummary[contract.SummaryOutcome] {
	case string(contract.LifecycleSuccess):
		return statedir.StateCompleted
	case string(contract.LifecycleCancelled):
		return statedir.StateAborted
	}
	return statedir.StateFailed
}

// Orphans returns the live processes (sorted pids) left of session rec's
// harness: members of the process group its harness led, zombies
// excluded. None when the harness's pid now belongs to another process
// (its start time differs from the one recorded at launch).
func Orphans(rec statedir.SessionRecord) []int {
	if rec.Pid <= 0 {
		return nil
	}
	all, err := procfs.Scan()
	if err != nil {
		return nil
	}
	var out []int
	for _, s := range all {
		if s.PID == rec.Pid && rec.PidStartTicks != 0 && s.StartTicks != rec.PidStartTicks {
			return nil // the pid was reused: not the harness
		}
		// The harness led its own session and group (setsid); the kernel
		// does not reuse a pid still in use as a group or session id.
		if s.PGrp == rec.Pid && s.Session == rec.Pid && s.State != 'Z' {
			out = append(out, s.PID)
		}
	}
	return out
}
