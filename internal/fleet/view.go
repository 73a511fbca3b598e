// Package fleet folds the HCP L2 events of many machines' sessions, as
// one AMQP queue carries them, into one row per session: the fleet view
// of `lifeloop top --fleet` (docs/fleet.md). It is pure: envelopes in,
// rows out; reading the queue is Follow's (follow.go).
package fleet

import (
	"sort"
	"time"

	"github.com/lifeloop/lifeloop/internal/hcp"
)

// MachineName is the name this machine's sessions publish under
// (hcp.MachineName).
func MachineName(getenv func(string) string) string { return hcp.MachineName(getenv) }

// Row is what the fleet view shows of one HCP session.
type Row struct {
	Machine string `json:"machine"`
	// Session is the HCP session id (lifeloop's session id, or
	// <id>.c<N> for a continuation after the session had closed).
	Session string `json:"session_id"`
	Harness string `json:"harness,omitempty"`
	// State is seed 001's state (PENDING, RUNNING, PAUSED, ABORTING,
	// ABORTED, COMPLETED, FAILED, REJECTED); Reason the last transition's.
	State  string `json:"state"`
	Reason string `json:"reason,omitempty"`
	// Attention is the latest attention block the stream carried
	// (metadata.attention), nil when none.
	Attention map[string]any `json:"attention,omitempty"`
	// Usage is the session's usage as the stream carried it
	// (metadata.usage): its turns' blocks added up, or the totals its
	// end carried and the turns after them; nil when none.
	Usage     map[string]any `json:"usage,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	// LastEvent is the newest event's type, LastEventAt its time.
	LastEvent   string    `json:"last_event,omitempty"`
	LastEventAt time.Time `json:"last_event_at"`
	Sequence    uint64    `json:"sequence"`
	// Gaps counts the events missing before one that came (a sequence
	// jump the consumer gave up waiting on).
	Gaps   uint64 `json:"gaps,omitempty"`
	Closed bool   `json:"closed,omitempty"`
	// Stale: the session is not closed and its machine published nothing
	// (no event of any of its sessions, no heartbeat) for longer than the
	// view's bound.
	Stale bool `json:"stale,omitempty"`

	usage usageFold
}

// View is the fold. The zero value is not usable: use NewView.
type View struct {
	rows map[string]*Row
	// machines is the newest event time of each machine.
	machines map[string]time.Time
}

// NewView returns an empty view.
func NewView() *View { return &View{rows: map[string]*Row{}, machines: map[string]time.Time{}} }

// Apply folds one event in. Events of a session come in sequence order
// (the consumer sees to it); one at or below the last applied is a
// repeat and changes nothing.
func (v *View) Apply(e hcp.Envelope) {
	r := v.rows[e.SessionID]
	if r == nil {
		r = &Row{Session: e.SessionID, Machine: "unknown"}
		v.rows[e.SessionID] = r
	}
	seq := e.Payload.Sequence
	if seq <= r.Sequence {
		return
	}
	if r.Sequence > 0 && seq > r.Sequence+1 {
		r.Gaps += seq - r.Sequence - 1
	}
	r.Sequence = seq
	r.LastEvent = e.Payload.EventType
	at, err := time.Parse(time.RFC3339Nano, e.Timestamp)
	if err == nil && at.After(r.LastEventAt) {
		r.LastEventAt = at
	}
	d := e.Payload.Data
	meta, _ := d["metadata"].(map[string]any)
	switch e.Payload.EventType {
	case hcp.SessionCreated:
		r.CreatedAt = at
		r.State, _ = d["state"].(string)
		r.Harness, _ = d["adapter_id"].(string)
		if m, _ := meta["machine"].(string); m != "" {
			r.Machine = m
		}
	case hcp.StateChanged:
		if to, _ := d["to_state"].(string); to != "" {
			r.State = to
		}
		r.Reason, _ = d["reason"].(string)
	case hcp.SessionClosed:
		r.Closed = true
		if s, _ := d["final_state"].(string); s != "" {
			r.State = s
		}
	}
	if a, ok := meta["attention"].(map[string]any); ok {
		r.Attention = a
	}
	if u, ok := meta["usage"].(map[string]any); ok {
		if e.Payload.EventType == hcp.Progress {
			r.usage.turn(u)
		} else {
			r.usage.totals(u)
		}
		r.Usage = r.usage.block()
	}
	if r.LastEventAt.After(v.machines[r.Machine]) {
		v.machines[r.Machine] = r.LastEventAt
	}
}

// Heartbeat keeps h's machine fresh as of h.At (the machine's clock,
// as its events' times are): its open sessions are not stale for the
// view's bound after it. It creates no row and changes none.
func (v *View) Heartbeat(h Heartbeat) {
	if h.At.After(v.machines[h.Machine]) {
		v.machines[h.Machine] = h.At
	}
}

// MachineSeen is the newest event or heartbeat time of machine (zero:
// never heard of).
func (v *View) MachineSeen(machine string) time.Time { return v.machines[machine] }

// Rows returns a copy of every row, by machine then creation, with
// Stale set on the sessions not closed whose machine published nothing
// in the staleAfter before now (0: never stale).
func (v *View) Rows(now time.Time, staleAfter time.Duration) []Row {
	out := make([]Row, 0, len(v.rows))
	for _, r := range v.rows {
		c := *r
		c.Stale = staleAfter > 0 && !c.Closed && now.Sub(v.machines[c.Machine]) > staleAfter
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Machine != out[j].Machine {
			return out[i].Machine < out[j].Machine
		}
		if !out[i].CreatedAt.Equal(out[j].CreatedAt) {
			return out[i].CreatedAt.Before(out[j].CreatedAt)
		}
		return out[i].Session < out[j].Session
	})
	return out
}
