package topview

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/fleet"
)

// TestFromFleet: a fleet row is shown in top's words — seed 001's state
// lower-cased as lifeloop's, the creation as the start, a closed
// session ended at its last event, stale as the activity, the missing
// events and reason beside the last event, the usage's cost — and the
// table leads with the machine.
func TestFromFleet(t *testing.T) {
	created := time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)
	last := created.Add(90 * time.Second)
	rows := FromFleetRows([]fleet.Row{
		{Machine: "m1", Session: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", Harness: "claude", State: "ABORTED", Reason: "abort",
			CreatedAt: created, LastEvent: "session_closed", LastEventAt: last, Sequence: 7, Closed: true},
		{Machine: "m2", Session: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5G", Harness: "generic", State: "RUNNING", Reason: "started",
			CreatedAt: created, LastEvent: "state_changed", LastEventAt: last, Sequence: 3, Gaps: 2, Stale: true,
			Usage: map[string]any{"calls": 2.0, "cost": map[string]any{"usd": 0.25, "provenance": "estimated"}}},
	})
	if len(rows) != 2 {
		t.Fatalf("rows %+v", rows)
	}
	live, ended := rows[0], rows[1] // top's order: live first
	if live.Machine != "m2" || live.State != "running" || live.Ended() || live.Activity != "stale" || live.EndedAt != nil {
		t.Errorf("the running row: %+v", live)
	}
	if live.LastEvent != "state_changed (started) · 2 missing" {
		t.Errorf("the running row's last event %q", live.LastEvent)
	}
	if live.Usage == nil || CostText(live) == "-" {
		t.Errorf("the running row's usage %+v", live.Usage)
	}
	if ended.State != "aborted" || !ended.Ended() || ended.EndedAt == nil || !ended.EndedAt.Equal(last) || !ended.StartedAt.Equal(created) {
		t.Errorf("the aborted row: %+v", ended)
	}
	tbl := Table(rows, last.Add(time.Minute), 120, -1, Plain)
	if !strings.HasPrefix(tbl[0], "MACHINE") || !strings.HasPrefix(tbl[1], "m2") || !strings.Contains(tbl[1], "stale") {
		t.Errorf("table:\n%s", strings.Join(tbl, "\n"))
	}
	if local := Table([]Row{{ID: "ses_x", State: "running"}}, last, 120, -1, Plain); strings.Contains(local[0], "MACHINE") {
		t.Errorf("a state directory's table has a machine column: %s", local[0])
	}
}
