// Package sessionview condenses one lifeloop session into what a person
// wants to see at a glance: its record (session.json), what its receipt
// ledger says so far (frames, last pressure, last frame, last event), its
// latest renewal, what a renewal policy client did for it (policy.go)
// and, while its wrapper runs, whether the harness is idle.
//
// The human views of `lifeloop sessions` and `lifeloop status` are built on
// it, and so can any other live view: Load builds a Summary from the files
// of a session; Apply folds one more receipt into it, so a view that
// follows the ledger (ledger.Follow) keeps it current without re-reading;
// SetLive adds the live numbers of a running wrapper (Live asks for them).
//
// States and events are carried as the strings found on disk: a view must
// render any state, including ones added after this package was written.
package sessionview

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/control"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// Summary is one session at a glance. Zero values mean "not known".
type Summary struct {
	// ID is the lifeloop session id; Short(ID) is its display form.
	ID string
	// Harness is the adapter id of the wrapped harness.
	Harness string
	// State is session.json's state, as written (render it, do not
	// enumerate it).
	State string
	// Terminal is true when the session has ended (no further transition).
	Terminal bool
	// Cwd and Pid are the working directory and the wrapper's pid.
	Cwd string
	Pid int
	// Argv is the wrapped command line.
	Argv []string
	// Started and Ended come from session.json (nil when unknown).
	Started *time.Time
	Ended   *time.Time
	// Exit is how the harness ended, when it has.
	Exit *statedir.ExitInfo
	// Term is the terminal `run` was started on (session.json), nil when
	// not known.
	Term *statedir.Terminal
	// Parent is the session that started this one (session.json), nil
	// when none is known.
	Parent *statedir.Parent
	// Continues is the session whose harness session this one resumed
	// (session.json: a resumed background session), "" when none.
	Continues string

	// Receipts is the number of receipts folded in; LastSequence the
	// highest sequence seen.
	Receipts     int
	LastSequence uint64
	// Frames is the number of distinct frames (turns) seen in frame.*
	// receipts.
	Frames int
	// LastFrame is the most recent frame.* receipt, nil before the first.
	LastFrame *FrameMark
	// Pressure is the most recent context.pressure_observed, nil before
	// the first.
	Pressure *Pressure
	// LastEvent is the most recent receipt, nil before the first.
	LastEvent *EventMark

	// Renewal is the session's latest renewal, nil when none was attempted.
	Renewal *Renewal
	// Policy is what a renewal policy client did and does for the
	// session (its renewals' evidence, its reports, its state file); nil
	// when no client ever did. Views show PolicyShown.
	Policy *Policy

	// HarnessSession is the harness session id the latest session.started
	// named: the current one, after the harness switched to a new
	// harness session inside its process ("" when none was named).
	HarnessSession string
	// HarnessVersion is the version the latest session.started recorded.
	HarnessVersion string
	// Attention is the latest supervisor.tick's attention block, nil
	// before the first (a harness whose signals tell nothing has none).
	// Views show AttentionShown.
	Attention *Attention
	// Usage is the tokens and cost of the session's model calls (its
	// receipts' usage blocks, or the live wrapper's), nil when none.
	Usage *Usage
	// Drift describes each capability.degraded that reported harness
	// drift (what could not be read, in which version), in ledger order.
	Drift []string

	// Live is true when the numbers below come from a running wrapper.
	Live bool
	// Activity is the harness's activity as its wrapper reports it
	// ("idle", "active", ...), "" when not live.
	Activity string
	// Idle is how long the harness has produced no output (live only).
	Idle time.Duration
	// Holding says, one line each, what the session's stream holds back
	// and why (live only; control.Hold).
	Holding []string

	frames map[string]struct{}
	usage  usageTracker
}

// FrameMark is the latest frame event of a session.
type FrameMark struct {
	ID    string
	Event string
	At    time.Time
}

// Pressure is the latest context pressure reading.
type Pressure struct {
	Level   string
	Percent float64 // 0..100; -1 when the receipt carries none
	Tokens  int64
	Window  int64
	At      time.Time
}

// EventMark is the latest receipt of a session.
type EventMark struct {
	Sequence uint64
	Event    string
	Status   string
	At       time.Time
}

// Renewal is the state of a session's latest renewal.
type Renewal struct {
	State string
	// Attempt is renewal.json's attempt number.
	Attempt int
	// Pending is true while the renewal has not finished (it stops,
	// relaunches or delivers) or its payloads wait for delivery.
	Pending    bool
	PayloadIDs []string
	// ContinuedIn is the session that records the harness session the
	// renewal resumed, when it is another (a background session's).
	ContinuedIn string
}

// FromRecord starts a Summary from a session record, with no receipts.
func FromRecord(rec statedir.SessionRecord) Summary {
	return Summary{
		ID: rec.ID, Harness: rec.AdapterID, State: string(rec.State), Terminal: rec.State.IsTerminal(),
		Cwd: rec.Cwd, Pid: rec.Pid, Argv: rec.Argv,
		Started: rec.StartedAt, Ended: rec.EndedAt, Exit: rec.Exit, Term: rec.Terminal, Parent: rec.Parent,
		Continues: rec.Continues,
	}
}

// Load builds the Summary of session rec under the state root: its
// record, every receipt of its ledger and its renewal status. It does not
// ask a live wrapper (see Live). Ledger lines that are not receipts are
// skipped (`lifeloop ledger verify` reports them); a ledger that cannot be
// read at all, or an unreadable renewal.json, is an error, returned with
// the Summary built so far.
func Load(root string, rec statedir.SessionRecord) (Summary, error) {
	s := FromRecord(rec)
	var errs []error
	for e, err := range ledger.ReadSince(statedir.ReceiptsPath(root, rec.ID), 0) {
		var le *ledger.LineError
		if errors.As(err, &le) {
			continue
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("ledger of %s: %w", rec.ID, err))
			break
		}
		s.Apply(e.Receipt)
	}
	st, err := renewal.ReadStatus(renewal.StatusPath(statedir.SessionDir(root, rec.ID)))
	if err != nil {
		errs = append(errs, err)
	} else {
		s.SetRenewal(st)
	}
	ar, err := ReadAutorenew(statedir.SessionDir(root, rec.ID))
	if err != nil {
		errs = append(errs, err)
	}
	s.SetAutorenew(ar)
	return s, errors.Join(errs...)
}

// Apply folds one receipt into the summary. Receipts are expected in
// sequence order; one with a sequence not above LastSequence is ignored
// (a replayed line).
func (s *Summary) Apply(r contract.LifecycleReceipt) {
	if r.Sequence != nil {
		if s.Receipts > 0 && *r.Sequence <= s.LastSequence {
			return
		}
		s.LastSequence = *r.Sequence
	}
	s.Receipts++
	at := time.Unix(r.AtEpochS, 0).UTC()
	s.LastEvent = &EventMark{Sequence: s.LastSequence, Event: string(r.Event), Status: string(r.Status), At: at}
	if s.Harness == "" {
		s.Harness = r.AdapterID
	}
	s.applyPolicy(r, at)
	if a, ok := AttentionOf(r); ok {
		s.Attention = a
	}
	s.usage.apply(r)
	s.Usage = s.usage.usage()
	switch {
	case r.Event.IsFrame():
		id := FrameID(r)
		if s.frames == nil {
			s.frames = map[string]struct{}{}
		}
		if _, seen := s.frames[id]; !seen {
			s.frames[id] = struct{}{}
			s.Frames++
		}
		s.LastFrame = &FrameMark{ID: id, Event: string(r.Event), At: at}
	case r.Event == contract.EventContextPressureObserved:
		p := &Pressure{Percent: -1, At: at}
		p.Level, _ = r.TelemetrySummary["level"].(string)
		if v, ok := Number(r.TelemetrySummary["percent"]); ok {
			p.Percent = v
		}
		if v, ok := Number(r.TelemetrySummary["tokens"]); ok {
			p.Tokens = int64(v)
		}
		if v, ok := Number(r.TelemetrySummary["window"]); ok {
			p.Window = int64(v)
		}
		if p.Percent < 0 && p.Window > 0 {
			p.Percent = 100 * float64(p.Tokens) / float64(p.Window)
		}
		s.Pressure = p
	case r.Event == contract.EventSessionStarting:
		// A renewal's fresh relaunch starts a new conversation: the old
		// one's pressure no longer holds until the new one is read.
		// So does a switch to a new harness session inside the process.
		reset, _ := r.TelemetrySummary["context_reset"].(bool)
		if why, _ := r.TelemetrySummary[contract.SummaryReason].(string); reset || why == contract.HarnessSessionSwitched {
			s.Pressure = nil
		}
	case r.Event == contract.EventSessionStarted:
		if r.HarnessSessionID != nil && *r.HarnessSessionID != "" {
			s.HarnessSession = *r.HarnessSessionID
		}
		if v, _ := r.TelemetrySummary["harness_version"].(string); v != "" {
			s.HarnessVersion = v
		}
	case r.Event == contract.EventCapabilityDegraded:
		if reason, _ := r.TelemetrySummary["reason"].(string); driftReasons[reason] {
			for _, d := range r.CapabilityDegradations {
				if d.Evidence != nil {
					s.Drift = append(s.Drift, fmt.Sprintf("%s %s → %s: %s", d.Capability, d.PreviousSupport, d.CurrentSupport, *d.Evidence))
				}
			}
		}
	}
}

// driftReasons are the telemetry_summary.reason values of the
// capability.degraded receipts that report harness drift.
var driftReasons = map[string]bool{"harness_drift": true, "harness_version_unproven": true}

// SetRenewal records the session's renewal status; a status in state
// not_attempted clears it.
func (s *Summary) SetRenewal(st renewal.Status) {
	if st.State == renewal.StateNotAttempted || st.State == "" {
		s.Renewal = nil
		return
	}
	s.Renewal = &Renewal{State: string(st.State), Attempt: st.Attempt, Pending: st.State.InProgress() || st.PayloadPending, PayloadIDs: st.PayloadIDs, ContinuedIn: st.ContinuedIn}
}

// SetLive records what a running wrapper reports (see Live). Its session
// record is newer than the one on disk when Load ran, so state and pid
// are taken from it too.
func (s *Summary) SetLive(st control.Status) {
	s.Live = true
	s.Holding = s.Holding[:0]
	for _, h := range st.Holding {
		s.Holding = append(s.Holding, h.String())
	}
	if u, ok := UsageFrom(st.Usage); ok {
		s.Usage = &u
	}
	s.Activity = st.Activity
	s.Idle = time.Duration(st.IdleSeconds * float64(time.Second))
	if st.Session.ID == s.ID {
		if st.Session.State != "" {
			s.State, s.Terminal = string(st.Session.State), st.Session.State.IsTerminal()
		}
		if st.Session.Pid > 0 {
			s.Pid = st.Session.Pid
		}
	}
}

// Live asks the wrapper of session id under root for its live status,
// waiting at most timeout. ok is false (and err nil) when no wrapper
// answers: the session has ended or its wrapper is gone.
func Live(ctx context.Context, root, id string, timeout time.Duration) (st control.Status, ok bool, err error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = control.Call(cctx, control.SocketFor(root, id), control.OpStatus, nil, &st)
	if errors.Is(err, control.ErrNotLive) {
		return control.Status{}, false, nil
	}
	if err != nil {
		return control.Status{}, false, err
	}
	return st, true, nil
}

// Duration is how long the session has run: from Started to Ended, or to
// now while it has not ended. Zero when Started is unknown.
func (s *Summary) Duration(now time.Time) time.Duration {
	if s.Started == nil {
		return 0
	}
	end := now
	switch {
	case s.Ended != nil:
		end = *s.Ended
	case s.Terminal && s.LastEvent != nil:
		end = s.LastEvent.At
	}
	if d := end.Sub(*s.Started); d > 0 {
		return d
	}
	return 0
}

// FrameID is the frame a frame.* or pressure receipt belongs to: its
// telemetry_summary.frame_id, else its event id without the
// "/<event>" suffix lifeloop appends, else the event id.
func FrameID(r contract.LifecycleReceipt) string {
	if id, ok := r.TelemetrySummary["frame_id"].(string); ok && id != "" {
		return id
	}
	if id, ok := strings.CutSuffix(r.EventID, "/"+string(r.Event)); ok {
		return id
	}
	return r.EventID
}

// Source says where a receipt's evidence came from: the
// telemetry_summary.source a watcher or hook wrote ("transcript", "hook",
// "inferred", ...), "operator" for a manual_skill receipt, else "process"
// (the wrapper's own observation of the harness process).
func Source(r contract.LifecycleReceipt) string {
	if src, ok := r.TelemetrySummary["source"].(string); ok && src != "" {
		return src
	}
	if r.IntegrationMode == contract.ModeManualSkill {
		return "operator"
	}
	return "process"
}

// Number reads a telemetry_summary number (float64, json.Number or an
// integer type).
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case uint64:
		return float64(n), true
	case interface{ Float64() (float64, error) }:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

// Short is the display form of a session id. A lifeloop id is a prefix,
// an underscore and a 26-character ULID whose first ten characters are its
// creation time; Short keeps the prefix and the ULID's last 8 characters
// (random, so ids minted in the same millisecond still differ):
// "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F" is shown as "ses_2C3D4E5F". Other ids
// longer than 16 characters are cut to their first 16.
func Short(id string) string {
	if prefix, ulid, ok := strings.Cut(id, "_"); ok && len(ulid) == 26 && !strings.Contains(ulid, "_") {
		return prefix + "_" + ulid[len(ulid)-8:]
	}
	if len(id) > 16 {
		return id[:16]
	}
	return id
}
