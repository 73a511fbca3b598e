package top

import (
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/lifeloop/lifeloop/commands/topview"
	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
)

// appendReceipt appends one receipt line (the fields top reads) to the
// ledger of session id.
func appendReceipt(t *testing.T, root, id string, seq int, event string, summary map[string]any) {
	t.Helper()
	testutil.AppendReceipt(t, statedir.ReceiptsPath(root, id), "claude", seq, event, fixedNow, summary)
}

// TestReceiptsViewFollows opens the receipts of the selected session
// (enter) and shows receipts appended after, on the next change.
func TestReceiptsViewFollows(t *testing.T) {
	root := t.TempDir()
	const id = "ses_01TESTTOP0000000000000004"
	started := fixedNow
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "codex", StartedAt: &started}); err != nil {
		t.Fatal(err)
	}
	appendReceipt(t, root, id, 1, "session.started", nil)
	src, err := topview.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	m := NewModel(Config{Root: root, Now: func() time.Time { return fixedNow }}, src.Rows())
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(m, "enter")
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "receipts of "+id) || !strings.Contains(screen, "session.started") {
		t.Fatalf("receipts view:\n%s", screen)
	}
	appendReceipt(t, root, id, 2, "frame.opened", map[string]any{"frame_id": "f1"})
	m.Update(RowsMsg(src.Rows()))
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "frame.opened") {
		t.Fatalf("the view did not follow the ledger:\n%s", screen)
	}
	press(m, "esc")
	if screen := ansi.Strip(m.Render()); !strings.Contains(screen, "ID") || m.mode != modeTable {
		t.Fatalf("esc did not go back to the table:\n%s", screen)
	}
}
