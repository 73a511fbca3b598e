package topview

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/statedir"
	"github.com/lifeloop/lifeloop/internal/testutil"
	"github.com/lifeloop/lifeloop/renewal"
)

// fixedNow is the clock of the fixtures.
var fixedNow = time.Date(2026, 11, 23, 18, 0, 0, 0, time.UTC)

// appendReceipt appends one receipt line (the fields top reads) to the
// ledger of session id.
func appendReceipt(t *testing.T, root, id string, seq int, event string, summary map[string]any) {
	t.Helper()
	testutil.AppendReceipt(t, statedir.ReceiptsPath(root, id), "claude", seq, event, fixedNow, summary)
}

// waitRow waits (on the watcher's change notifications, not a timer) until
// the row of id satisfies ok.
func waitRow(t *testing.T, src *Source, changed <-chan struct{}, id string, what string, ok func(Row) bool) Row {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		for _, r := range src.Rows() {
			if r.ID == id && ok(r) {
				return r
			}
		}
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("timed out waiting for %s; rows: %+v", what, src.Rows())
		}
	}
}

func TestSourceFollowsTheStateDirectory(t *testing.T) {
	root := t.TempDir()
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	changed := make(chan struct{}, 100)
	done := make(chan error, 1)
	go func() { done <- src.Watch(ctx, 10*time.Millisecond, func() { changed <- struct{}{} }) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	<-changed // the first notification follows the initial scan

	const id = "ses_01TESTTOP0000000000000001"
	started := fixedNow
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "claude", Cwd: "/work/a", Pid: 42, StartedAt: &started}); err != nil {
		t.Fatal(err)
	}
	waitRow(t, src, changed, id, "the new session", func(r Row) bool { return r.State == "running" && r.Harness == "claude" })

	appendReceipt(t, root, id, 1, "session.started", map[string]any{"pid": 42})
	appendReceipt(t, root, id, 2, "frame.opened", map[string]any{"frame_id": "f1"})
	appendReceipt(t, root, id, 3, "frame.opened", map[string]any{"frame_id": "f2"})
	appendReceipt(t, root, id, 4, "context.pressure_observed", map[string]any{"level": "high", "tokens": 150000, "window": 200000, "percent": 75.0})
	appendReceipt(t, root, id, 5, "supervisor.tick", map[string]any{"activity": "idle", "idle_seconds": 30.0})
	r := waitRow(t, src, changed, id, "frames and pressure", func(r Row) bool { return r.Sequence == 5 })
	if r.Frames != 2 || r.Pressure == nil || r.Pressure.Level != "high" || r.Pressure.Tokens != 150000 || r.Pressure.Window != 200000 {
		t.Fatalf("row after 5 receipts: %+v pressure %+v", r, r.Pressure)
	}
	if r.LastEvent != "context.pressure_observed" || r.Activity != "idle" {
		t.Errorf("last event %q (ticks are not events), activity %q", r.LastEvent, r.Activity)
	}
	if want := time.Unix(fixedNow.Unix()+5-30, 0).UTC(); r.OutputAt == nil || !r.OutputAt.Equal(want) {
		t.Errorf("last output at %v, want %v", r.OutputAt, want)
	}

	// A renewal in progress shows as renewing.
	if err := renewal.WriteStatus(renewal.StatusPath(statedir.SessionDir(root, id)), renewal.Status{State: renewal.StateStopping, Attempt: 1, PayloadPending: true}); err != nil {
		t.Fatal(err)
	}
	waitRow(t, src, changed, id, "renewing", func(r Row) bool { return r.DisplayState() == "renewing" })

	// Nothing changes: nothing is read, no redraw.
	drain(changed)
	select {
	case <-changed:
		t.Fatal("a change was reported while nothing changed")
	case <-time.After(300 * time.Millisecond):
	}

	// The session ends; a second one appears.
	ended := fixedNow.Add(time.Minute)
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateCompleted, AdapterID: "claude", Cwd: "/work/a", StartedAt: &started, EndedAt: &ended}); err != nil {
		t.Fatal(err)
	}
	waitRow(t, src, changed, id, "the end", func(r Row) bool { return r.Ended() })
	const id2 = "ses_01TESTTOP0000000000000002"
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id2, State: statedir.StateRunning, AdapterID: "codex", StartedAt: &ended}); err != nil {
		t.Fatal(err)
	}
	waitRow(t, src, changed, id2, "the second session", func(r Row) bool { return r.Harness == "codex" })
	rows := src.Rows()
	if len(rows) != 2 || rows[0].ID != id2 {
		t.Fatalf("live sessions first: %+v", rows)
	}

	// A removed session folder drops its row.
	if err := os.RemoveAll(statedir.SessionDir(root, id)); err != nil {
		t.Fatal(err)
	}
	deadline := time.After(10 * time.Second)
	for len(src.Rows()) != 1 {
		select {
		case <-changed:
		case <-deadline:
			t.Fatalf("the removed session is still listed: %+v", src.Rows())
		}
	}
}

func drain(c <-chan struct{}) {
	for {
		select {
		case <-c:
		case <-time.After(100 * time.Millisecond):
			return
		}
	}
}

func TestOpenReadsExistingSessions(t *testing.T) {
	root := t.TempDir()
	const id = "ses_01TESTTOP0000000000000003"
	started := fixedNow
	if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "gemini", StartedAt: &started}); err != nil {
		t.Fatal(err)
	}
	appendReceipt(t, root, id, 1, "frame.opened", nil)
	if err := os.WriteFile(statedir.ReceiptsPath(root, id)+".x", nil, 0o600); err != nil {
		t.Fatal(err)
	}
	// A line that is not a receipt is skipped, the rest read.
	f, _ := os.OpenFile(statedir.ReceiptsPath(root, id), os.O_APPEND|os.O_WRONLY, 0o600)
	_, _ = f.WriteString("not json\n")
	_ = f.Close()
	appendReceipt(t, root, id, 2, "frame.opened", nil)
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	rows := src.Rows()
	if len(rows) != 1 || rows[0].Frames != 2 || rows[0].Harness != "gemini" {
		t.Fatalf("rows: %+v", rows)
	}
	fi, err := os.Stat(statedir.SessionsDir(root))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("sessions folder: %v %v", fi.Mode(), err)
	}
}

// TestRescanDropsProblemsOfRemovedSessions: a session whose record cannot
// be read is a problem until it is read, or until its folder is gone.
func TestRescanDropsProblemsOfRemovedSessions(t *testing.T) {
	root := t.TempDir()
	const id = "ses_01TESTTOP0000000000000009"
	if err := os.MkdirAll(statedir.SessionDir(root, id), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(statedir.SessionDir(root, id), statedir.SessionFile), []byte("not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	if p := src.Problems(); p[id] == "" {
		t.Fatalf("an unreadable record is not a problem: %v", p)
	}
	if err := os.RemoveAll(statedir.SessionDir(root, id)); err != nil {
		t.Fatal(err)
	}
	src.rescan()
	if p := src.Problems(); len(p) != 0 {
		t.Fatalf("problems of a removed session kept: %v", p)
	}
}

// TestOpenSinceLeavesOutOldSessions reads only the record of a session
// that ended before the window: its ledger is not read, and it is not
// listed.
func TestOpenSinceLeavesOutOldSessions(t *testing.T) {
	root := t.TempDir()
	started, ended := fixedNow.Add(-3*time.Hour), fixedNow.Add(-2*time.Hour)
	const old, recent = "ses_01TESTTOP0000000000000005", "ses_01TESTTOP0000000000000006"
	for _, id := range []string{old, recent} {
		end := ended
		if id == recent {
			end = fixedNow.Add(-time.Minute)
		}
		if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateCompleted, StartedAt: &started, EndedAt: &end}); err != nil {
			t.Fatal(err)
		}
		appendReceipt(t, root, id, 1, "frame.opened", nil)
	}
	src, err := OpenSince(root, fixedNow.Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	rows := src.Rows()
	if len(rows) != 1 || rows[0].ID != recent || rows[0].Frames != 1 {
		t.Fatalf("rows: %+v", rows)
	}
	if n := src.sessions[old].s.sum.Receipts; n != 0 {
		t.Errorf("the old session's ledger was read (%d receipts)", n)
	}
}

// TestALostWrapperIsSealedAtOpenAndWhileWatching: a session whose wrapper
// lock is free is handed to the sealer when top opens, and one whose
// wrapper dies while top watches is noticed by the liveness sweep (a
// death changes no file).
func TestALostWrapperIsSealedAtOpenAndWhileWatching(t *testing.T) {
	root := t.TempDir()
	const dead, alive = "ses_01TESTTOP00000000000000L1", "ses_01TESTTOP00000000000000L2"
	started := fixedNow
	locks := map[string]*os.File{}
	for _, id := range []string{dead, alive} {
		if err := statedir.WriteSession(root, statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "claude", StartedAt: &started}); err != nil {
			t.Fatal(err)
		}
		l, err := statedir.HoldWrapper(root, id)
		if err != nil {
			t.Fatal(err)
		}
		locks[id] = l
	}
	_ = locks[dead].Close()
	defer locks[alive].Close()
	sealer := func(rec statedir.SessionRecord) statedir.SessionRecord {
		rec.State = statedir.StateLost
		_ = statedir.WriteSession(root, rec)
		return rec
	}
	src, err := OpenWith(root, time.Time{}, sealer)
	if err != nil {
		t.Fatal(err)
	}
	state := func(id string) string {
		for _, r := range src.Rows() {
			if r.ID == id {
				return r.State
			}
		}
		return ""
	}
	if state(dead) != "lost" || state(alive) != "running" {
		t.Fatalf("at open: dead %s, alive %s", state(dead), state(alive))
	}
	ctx, cancel := context.WithCancel(t.Context())
	changed := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() { done <- src.Watch(ctx, 10*time.Millisecond, func() { changed <- struct{}{} }) }()
	defer func() { cancel(); <-done }()
	_ = locks[alive].Close()
	waitRow(t, src, changed, alive, "the second wrapper's death", func(r Row) bool { return r.State == "lost" })
}
