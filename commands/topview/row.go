// Package topview is what `lifeloop top` shows, without a terminal UI:
// one Row per session of a state directory, built on
// sessionview.Summary (this file); Source, which reads the sessions'
// own files (session.json, the receipt ledger, renewal.json) and keeps
// the rows current from fsnotify events as they change; and the table
// (table.go), plain text with ANSI styles, which `top --once` prints and
// the live view draws. It links no terminal UI library, so the lifeloop
// program prints `top --once` and `--json` itself; commands/top, linked
// only into lifeloop-top, is the live view over it.
package topview

import (
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// DefaultRecent is how long top shows a session after it ended.
const DefaultRecent = time.Hour

// Pressure is a session's last observed context pressure.
type Pressure struct {
	Level   string  `json:"level"`
	Tokens  int64   `json:"tokens"`
	Window  int64   `json:"window"`
	Percent float64 `json:"percent"`
}

// Row is what top shows of one session (and prints with --json). It is
// built from a sessionview.Summary (session.json, the receipts of the
// session's ledger folded in order, its renewal status) and what top adds
// to it from the same ledger: the activity the wrapper's supervisor.tick
// receipts report, and the last event other than a tick. Nothing in it
// asks the live wrapper.
type Row struct {
	ID string `json:"id"`
	// Machine is the machine the session runs on (the fleet view's rows
	// only).
	Machine string `json:"machine,omitempty"`
	Harness string `json:"harness"`
	// HarnessSessionID is the current harness session (the latest
	// session.started's id: a switch inside the process names a new one).
	HarnessSessionID string     `json:"harness_session_id,omitempty"`
	State            string     `json:"state"`
	Cwd              string     `json:"cwd"`
	Pid              int        `json:"pid,omitempty"`
	StartedAt        *time.Time `json:"started_at,omitempty"`
	EndedAt          *time.Time `json:"ended_at,omitempty"`
	// Frames counts the distinct frames (turns) of the ledger.
	Frames int `json:"frames"`
	// Pressure is the last context.pressure_observed; nil when none.
	Pressure *Pressure `json:"pressure,omitempty"`
	// Activity is the last supervisor.tick's activity (active/idle), and
	// OutputAt when the harness last wrote to its terminal as that tick
	// saw it.
	Activity string     `json:"activity,omitempty"`
	OutputAt *time.Time `json:"last_output_at,omitempty"`
	// LastEvent is the newest receipt's event (supervisor ticks left
	// out), LastEventAt its time and Sequence the newest sequence read.
	LastEvent   string     `json:"last_event,omitempty"`
	LastEventAt *time.Time `json:"last_event_at,omitempty"`
	Sequence    uint64     `json:"sequence"`
	// Renewal is the state of the session's latest renewal (renewal.json),
	// "" when none was attempted; RenewalPending is true while one is in
	// progress or its payloads wait in the continuation store.
	Renewal        string `json:"renewal,omitempty"`
	RenewalPending bool   `json:"renewal_pending"`
	// Policy is what a renewal policy client did and does for the
	// session: the evidence of the latest renewal when it was the
	// policy's, the policy's latest report, and the attached client's
	// autorenew.json (its threshold, its limit); nil when none of these.
	Policy *sessionview.Policy `json:"policy,omitempty"`
	// Attention is whether the session waits for a person, from its
	// latest supervisor.tick's attention block; nil when no tick carried
	// one, or the session ended.
	Attention *Attention `json:"attention,omitempty"`
	// Usage is the tokens and cost of the session's model calls (its
	// ledger's usage blocks); nil when none.
	Usage *sessionview.Usage `json:"usage,omitempty"`
	// Terminal is the terminal the session was started on (OpenCommand
	// says how to reach it); nil when not known.
	Terminal *statedir.Terminal `json:"terminal,omitempty"`
	// Parent is the session that started this one (a harness's
	// background session), when known.
	Parent *statedir.Parent `json:"parent,omitempty"`
	// Continues is the session whose harness session this one resumed,
	// ContinuedIn the one that resumed this one's (a background session's
	// renewal: each is a lifeloop session of its own); "" when none.
	Continues   string `json:"continues,omitempty"`
	ContinuedIn string `json:"continued_in,omitempty"`
	// External is set on a session lifeloop did not start and does not
	// supervise, which its harness listed (FromExternal); nil on
	// lifeloop's own sessions.
	External *External `json:"external,omitempty"`
}

// Ended reports whether the session's state is terminal.
func (r Row) Ended() bool { return statedir.SessionState(r.State).IsTerminal() }

// Shown reports whether top lists the row at now: every session not
// ended, and an ended one for recent after it ended (all: always).
func (r Row) Shown(now time.Time, all bool, recent time.Duration) bool {
	return all || !r.Ended() || r.EndedAt == nil || now.Sub(*r.EndedAt) <= recent
}

// DisplayState is the state top shows: the record's, or "renewing" while
// a renewal stops and starts the harness.
func (r Row) DisplayState() string {
	if r.RenewalPending && renewal.State(r.Renewal).InProgress() && !r.Ended() {
		return "renewing"
	}
	return r.State
}

// session is one session as Source keeps it: the shared summary and
// what top adds.
type session struct {
	sum         sessionview.Summary
	activity    string
	outputAt    *time.Time
	lastEvent   string
	lastEventAt *time.Time
}

// setRecord takes a (re)read session.json, keeping what the receipts
// and the renewal status said.
func (s *session) setRecord(rec statedir.SessionRecord) {
	fresh := sessionview.FromRecord(rec)
	sum := s.sum
	sum.ID, sum.Harness, sum.State, sum.Terminal = fresh.ID, fresh.Harness, fresh.State, fresh.Terminal
	sum.Cwd, sum.Pid, sum.Argv, sum.Started, sum.Ended, sum.Exit = fresh.Cwd, fresh.Pid, fresh.Argv, fresh.Started, fresh.Ended, fresh.Exit
	sum.Term, sum.Parent, sum.Continues = fresh.Term, fresh.Parent, fresh.Continues
	if sum.Harness == "" {
		sum.Harness = s.sum.Harness
	}
	s.sum = sum
}

// apply folds one receipt of the ledger.
func (s *session) apply(e ledger.Entry) {
	if s.sum.Receipts > 0 && e.Sequence <= s.sum.LastSequence {
		return
	}
	s.sum.Apply(e.Receipt)
	rc := e.Receipt
	at := time.Unix(rc.AtEpochS, 0).UTC()
	if rc.Event == contract.EventSupervisorTick {
		if a, ok := rc.TelemetrySummary["activity"].(string); ok {
			s.activity = a
		}
		if idle, ok := sessionview.Number(rc.TelemetrySummary["idle_seconds"]); ok {
			t := at.Add(-time.Duration(idle * float64(time.Second)))
			s.outputAt = &t
		}
		return // ticks are heartbeats, not the last event
	}
	s.lastEvent, s.lastEventAt = string(rc.Event), &at
}

// row is the session as top shows it.
func (s *session) row() Row {
	sum := s.sum
	r := Row{
		ID: sum.ID, Harness: sum.Harness, State: sum.State, Cwd: sum.Cwd, Pid: sum.Pid,
		StartedAt: sum.Started, EndedAt: sum.Ended, Frames: sum.Frames,
		Activity: s.activity, OutputAt: s.outputAt, LastEvent: s.lastEvent, LastEventAt: s.lastEventAt,
		Sequence: sum.LastSequence, HarnessSessionID: sum.HarnessSession,
	}
	if p := sum.Pressure; p != nil {
		r.Pressure = &Pressure{Level: p.Level, Tokens: p.Tokens, Window: p.Window, Percent: max(p.Percent, 0)}
	}
	if rn := sum.Renewal; rn != nil {
		r.Renewal, r.RenewalPending, r.ContinuedIn = rn.State, rn.Pending, rn.ContinuedIn
	}
	r.Continues = sum.Continues
	r.Policy = sum.PolicyShown()
	r.Attention = sum.AttentionShown()
	r.Terminal, r.Parent = sum.Term, sum.Parent
	r.Usage = sum.Usage
	return r
}
