package top

import (
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/commands/topview"
)

// TestKeysOnExternalRow: a session lifeloop does not supervise (listed
// by its harness) takes no action: enter, r, a, p and o say where it was
// listed from and how to open it, and nothing is sent.
func TestKeysOnExternalRow(t *testing.T) {
	acts := &fakeActions{}
	ext := topview.FromExternal("h", adapters.ExternalSession{ID: "x1", SessionID: "s1", Pid: 42, State: "working", Source: "h list", Attach: "h attach x1", Name: "fix it"})
	m := NewModel(Config{Root: "/state", Now: func() time.Time { return fixedNow }, Actions: acts}, topview.MergeExternal(fixtureRows(), []Row{ext}))
	for i, r := range m.rows {
		if r.ID == "x1" {
			m.cursor, m.selected = i, r.ID
		}
	}
	for _, k := range []string{"enter", "r", "a", "p", "o"} {
		m.message = ""
		press(m, k)
		if m.mode != modeTable || !strings.Contains(m.message, "x1 is not supervised by lifeloop (listed by h list)") || !strings.Contains(m.message, "h attach x1") {
			t.Errorf("key %s: mode %d, message %q", k, m.mode, m.message)
		}
	}
	if len(acts.calls) != 0 {
		t.Errorf("actions sent for an external row: %v", acts.calls)
	}
	m.filter = "fix it"
	m.applyFilter()
	if len(m.rows) != 1 || m.rows[0].ID != "x1" {
		t.Errorf("filter on the session's name: %v", m.rows)
	}
}
