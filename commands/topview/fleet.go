package topview

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/commands/sessionview"
	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/fleet"
)

// machineColumn names the machine a fleet row's session runs on.
var machineColumn = column{"MACHINE", 12, func(r Row, _ time.Time, _ int) (string, *Style) { return orDash(r.Machine), nil }}

// withMachine puts the machine column first when a row has a machine
// (the fleet view's rows; a state directory's have none).
func withMachine(cols []column, rows []Row) []column {
	if !slices.ContainsFunc(rows, func(r Row) bool { return r.Machine != "" }) {
		return cols
	}
	return append([]column{machineColumn}, cols...)
}

// FromFleet is a fleet view's row (a session as its machine's HCP
// events tell it) as top shows it: seed 001's state in lifeloop's words
// (RUNNING → running), the session's creation as its start and its last
// event as its end once closed, "stale" as its activity when its
// machine has gone quiet, the missing events after the last event, and
// the attention and usage blocks the stream carried. What the stream
// does not carry (folder, frames, pressure, renewals) stays empty.
func FromFleet(f fleet.Row) Row {
	r := Row{
		ID: f.Session, Machine: f.Machine, Harness: f.Harness, State: strings.ToLower(f.State),
		Sequence: f.Sequence, LastEvent: f.LastEvent,
	}
	if !f.CreatedAt.IsZero() {
		at := f.CreatedAt
		r.StartedAt = &at
	}
	if !f.LastEventAt.IsZero() {
		at := f.LastEventAt
		r.LastEventAt = &at
		if f.Closed {
			r.EndedAt = &at
		}
	}
	if f.Reason != "" && r.LastEvent != "" {
		r.LastEvent += " (" + f.Reason + ")"
	}
	if f.Gaps > 0 {
		r.LastEvent += fmt.Sprintf(" · %d missing", f.Gaps)
	}
	if f.Stale {
		r.Activity = "stale"
	}
	if b, ok := attention.BlockFrom(f.Attention); ok && !f.Closed {
		r.Attention = &sessionview.Attention{Block: b, At: f.LastEventAt}
	}
	if u, ok := sessionview.UsageFrom(f.Usage); ok {
		r.Usage = &u
	}
	return r
}

// FromFleetRows converts rows (FromFleet) in top's order (SortRows).
func FromFleetRows(rows []fleet.Row) []Row {
	out := make([]Row, 0, len(rows))
	for _, f := range rows {
		out = append(out, FromFleet(f))
	}
	SortRows(out)
	return out
}
