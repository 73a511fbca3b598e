// Package top is `lifeloop top`: every session of a state directory at a
// glance, kept current from the sessions' own files (session.json, the
// receipt ledger, renewal.json) as they change, and a terminal UI that
// renews, aborts, pauses and resumes the selected session through the
// same control-socket operations as the CLI commands.
//
// The package has three parts: Row and its fold over receipts (this
// file), Source, which keeps one Row per session current from fsnotify
// events on the state directory, and the view and the interactive model.
package top

import (
	"time"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ledger"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/renewal"
)

// Pressure is a session's last observed context pressure.
type Pressure struct {
	Level   string  `json:"level"`
	Tokens  int64   `json:"tokens"`
	Window  int64   `json:"window"`
	Percent float64 `json:"percent"`
}

// Row is what top shows of one session. It is built from session.json,
// the receipts of the session's ledger (folded in order) and its renewal
// status; nothing in it asks the live wrapper.
type Row struct {
	ID        string     `json:"id"`
	Harness   string     `json:"harness"`
	State     string     `json:"state"`
	Cwd       string     `json:"cwd"`
	Pid       int        `json:"pid,omitempty"`
	StartedAt *time.Time `json:"started_at,omitempty"`
	EndedAt   *time.Time `json:"ended_at,omitempty"`
	// Frames counts frame.opened receipts (turns the harness took).
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
}

// Ended reports whether the session's state is terminal.
func (r Row) Ended() bool { return statedir.SessionState(r.State).IsTerminal() }

// DisplayState is the state top shows: the record's, or "renewing" while
// a renewal stops and starts the harness.
func (r Row) DisplayState() string {
	if r.RenewalPending && renewal.State(r.Renewal).InProgress() && !r.Ended() {
		return "renewing"
	}
	return r.State
}

// applyRecord takes the fields session.json owns.
func (r *Row) applyRecord(rec statedir.SessionRecord) {
	r.ID, r.Harness, r.State, r.Cwd, r.Pid = rec.ID, rec.AdapterID, string(rec.State), rec.Cwd, rec.Pid
	r.StartedAt, r.EndedAt = rec.StartedAt, rec.EndedAt
}

// applyRenewal takes the fields renewal.json owns.
func (r *Row) applyRenewal(st renewal.Status) {
	r.Renewal = string(st.State)
	if st.State == renewal.StateNotAttempted {
		r.Renewal = ""
	}
	r.RenewalPending = st.State.InProgress() || st.PayloadPending
}

// fold updates r with one receipt of its ledger.
func (r *Row) fold(e ledger.Entry) {
	rc := e.Receipt
	r.Sequence = e.Sequence
	at := time.Unix(rc.AtEpochS, 0).UTC()
	s := rc.TelemetrySummary
	switch rc.Event {
	case contract.EventSupervisorTick:
		if a, ok := s["activity"].(string); ok {
			r.Activity = a
		}
		if idle, ok := s["idle_seconds"].(float64); ok {
			t := at.Add(-time.Duration(idle * float64(time.Second)))
			r.OutputAt = &t
		}
		return // ticks are heartbeats, not the last event
	case contract.EventFrameOpened:
		r.Frames++
	case contract.EventContextPressureObserved:
		p := &Pressure{Level: str(s["level"]), Tokens: num(s["tokens"]), Window: num(s["window"])}
		if v, ok := s["percent"].(float64); ok {
			p.Percent = v
		} else if p.Window > 0 {
			p.Percent = 100 * float64(p.Tokens) / float64(p.Window)
		}
		r.Pressure = p
	case contract.EventContextCompacted:
		if r.Pressure != nil {
			if post := num(s["post_tokens"]); post > 0 && r.Pressure.Window > 0 {
				r.Pressure.Tokens = post
				r.Pressure.Percent = 100 * float64(post) / float64(r.Pressure.Window)
			}
		}
	}
	r.LastEvent = string(rc.Event)
	r.LastEventAt = &at
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func num(v any) int64 {
	switch n := v.(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	case int:
		return int64(n)
	}
	return 0
}
