package topview

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/attention"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// attentionSession writes a running session started at start whose
// ledger holds a session.started and, when blocks are given, one
// supervisor.tick per block (the last one is the current attention).
func attentionSession(t *testing.T, root, id string, start time.Time, blocks ...attention.Block) {
	t.Helper()
	rec := statedir.SessionRecord{ID: id, State: statedir.StateRunning, AdapterID: "claude", Cwd: "/w", Pid: 4100, StartedAt: &start}
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}
	appendReceipt(t, root, id, 1, "session.started", map[string]any{"pid": 4100})
	for i, b := range blocks {
		appendReceipt(t, root, id, 2+i, "supervisor.tick", map[string]any{"trigger": "attention_changed", attention.BlockKey: b.Map()})
	}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// TestSessionsNeedingAPersonComeFirst: needs_permission, needs_answer,
// stopped_on_error, then waiting_for_input, the longest waiting first
// within a kind; then the others (working, none) newest first; ended
// sessions last, whatever their ledger said.
func TestSessionsNeedingAPersonComeFirst(t *testing.T) {
	root := t.TempDir()
	now := fixedNow.Add(time.Hour)
	at := func(d time.Duration) time.Time { return now.Add(-d) }
	attentionSession(t, root, "ses_working", at(time.Minute),
		attention.Block{State: attention.Working, Since: ms(at(50 * time.Second)), Source: attention.SourceFrame, Turn: 1})
	attentionSession(t, root, "ses_none", at(2*time.Minute))
	attentionSession(t, root, "ses_input", at(50*time.Minute),
		attention.Block{State: attention.WaitingForInput, Since: ms(at(30 * time.Second)), Source: attention.SourceFrame, Turn: 3, Episode: 4})
	attentionSession(t, root, "ses_input_long", at(55*time.Minute),
		attention.Block{State: attention.WaitingForInput, Since: ms(at(20 * time.Minute)), Source: attention.SourceFrame, Turn: 3, Episode: 4})
	attentionSession(t, root, "ses_error", at(40*time.Minute),
		attention.Block{State: attention.StoppedOnError, Since: ms(at(2 * time.Minute)), Source: attention.SourceHook, Detail: "rate_limit", Turn: 2, Episode: 2})
	attentionSession(t, root, "ses_answer", at(30*time.Minute),
		attention.Block{State: attention.NeedsAnswer, Since: ms(at(10 * time.Second)), Source: attention.SourceHook, Detail: "which database?", Turn: 5, Episode: 6})
	attentionSession(t, root, "ses_perm_short", at(20*time.Minute),
		attention.Block{State: attention.NeedsPermission, Since: ms(at(5 * time.Second)), Source: attention.SourceHook, Detail: "Bash", Turn: 1, Episode: 1})
	attentionSession(t, root, "ses_perm_long", at(10*time.Minute),
		attention.Block{State: attention.Working, Since: ms(at(9 * time.Minute)), Source: attention.SourceFrame, Turn: 1},
		attention.Block{State: attention.NeedsPermission, Since: ms(at(4*time.Minute + 12*time.Second)), Source: attention.SourceHook,
			Evidence: "PermissionRequest", Detail: "Bash", Turn: 1, Episode: 1, WaitedMs: map[attention.State]int64{attention.NeedsPermission: 1000}})
	// An ended session's last block is not shown.
	attentionSession(t, root, "ses_ended", at(3*time.Hour),
		attention.Block{State: attention.NeedsPermission, Since: ms(at(2 * time.Hour)), Source: attention.SourceHook, Detail: "Edit", Turn: 1, Episode: 1})
	rec, err := statedir.ReadSession(root, "ses_ended")
	if err != nil {
		t.Fatal(err)
	}
	rec.State, rec.EndedAt = statedir.StateCompleted, ptr(at(time.Hour))
	if err := statedir.WriteSession(root, rec); err != nil {
		t.Fatal(err)
	}

	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	rows := src.Rows()
	var order []string
	for _, r := range rows {
		order = append(order, r.ID+" "+AttentionText(r, now))
	}
	want := []string{
		"ses_perm_long permission 4m12s · Bash",
		"ses_perm_short permission 5s · Bash",
		"ses_answer question 10s · which database?",
		"ses_error error 2m00s · rate_limit",
		"ses_input_long waiting 20m",
		"ses_input waiting 30s",
		"ses_working working",
		"ses_none -",
		"ses_ended -",
	}
	if strings.Join(order, "\n") != strings.Join(want, "\n") {
		t.Fatalf("rows:\n%s\nwant:\n%s", strings.Join(order, "\n"), strings.Join(want, "\n"))
	}
	if rows[len(rows)-1].Attention != nil {
		t.Errorf("an ended session shows attention: %+v", rows[len(rows)-1].Attention)
	}

	// The narrow layout says it in the activity column, the wide one in
	// its own column; the message line names the source and the total.
	narrow := strings.Join(Table(rows, now, 80, -1, Plain), "\n")
	for _, s := range []string{"permit 4m ", "answer 10s", "error 2m", "wait 20m"} {
		if !strings.Contains(narrow, s) {
			t.Errorf("the 80-column table has no %q:\n%s", s, narrow)
		}
	}
	wide := strings.Join(Table(rows, now, attentionAt, -1, Plain), "\n")
	if !strings.Contains(wide, "ATTENTION") || !strings.Contains(wide, "permission 4m12s · Bash ") {
		t.Errorf("the wide table has no attention column:\n%s", wide)
	}
	if got := AttentionLine(rows[0], now); got != "ses_perm_long: needs permission (Bash) for 4m12s, from hook; waited 1s in all" {
		t.Errorf("AttentionLine = %q", got)
	}
	if got := AttentionLine(rows[6], now); got != "" {
		t.Errorf("AttentionLine of a working session = %q", got)
	}
}

// TestAttentionJSON: --json carries the block's fields as recorded, the
// waiting per kind in seconds and how long the state has held at the
// printing clock.
func TestAttentionJSON(t *testing.T) {
	root := t.TempDir()
	now := fixedNow.Add(time.Hour)
	since := now.Add(-(4*time.Minute + 12*time.Second + 500*time.Millisecond))
	attentionSession(t, root, "ses_perm", now.Add(-10*time.Minute),
		attention.Block{State: attention.NeedsPermission, Since: ms(since), Source: attention.SourceHook, Evidence: "PermissionRequest",
			Detail: "Bash", Turn: 2, Episode: 3, WaitedMs: map[attention.State]int64{attention.NeedsPermission: 61_250, attention.WaitingForInput: 9_000},
			Closed: &attention.EpisodeBlock{ID: 2, Kind: attention.WaitingForInput, Source: attention.SourceFrame, Turn: 1, Start: 1, End: 9001, DurationMs: 9000}})
	src, err := Open(root)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(Stamp(src.Rows(), now))
	if err != nil {
		t.Fatal(err)
	}
	var got []struct {
		Attention map[string]any `json:"attention"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	a := got[0].Attention
	check := func(key string, want any) {
		t.Helper()
		b1, _ := json.Marshal(a[key])
		b2, _ := json.Marshal(want)
		if string(b1) != string(b2) {
			t.Errorf("attention.%s = %s, want %s", key, b1, b2)
		}
	}
	check("state", "needs_permission")
	check("since_epoch_ms", ms(since))
	check("source", "hook")
	check("evidence", "PermissionRequest")
	check("detail", "Bash")
	check("episode", 3)
	check("turn", 2)
	check("waited_ms", map[string]int64{"needs_permission": 61_250, "waiting_for_input": 9_000})
	check("waited_seconds", map[string]float64{"needs_permission": 61.25, "waiting_for_input": 9})
	check("for_seconds", 252.5)
	check("closed", map[string]any{"id": 2, "kind": "waiting_for_input", "source": "frame", "turn": 1, "start_epoch_ms": 1, "end_epoch_ms": 9001, "duration_ms": 9000})
}

func ptr[T any](v T) *T { return &v }

// TestAttentionFollowsTheLedger: a tick appended while top watches
// changes the row's attention, and the session moves ahead of one that
// waits for no one.
func TestAttentionFollowsTheLedger(t *testing.T) {
	root := t.TempDir()
	now := fixedNow.Add(time.Hour)
	attentionSession(t, root, "ses_old", now.Add(-time.Hour),
		attention.Block{State: attention.Working, Since: ms(now.Add(-time.Minute)), Source: attention.SourceFrame, Turn: 1})
	attentionSession(t, root, "ses_new", now.Add(-time.Minute))
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
	<-changed
	if rows := src.Rows(); rows[0].ID != "ses_new" {
		t.Fatalf("first row %s before the dialog, want the newest", rows[0].ID)
	}
	appendReceipt(t, root, "ses_old", 3, "supervisor.tick", map[string]any{"trigger": "attention_changed",
		attention.BlockKey: attention.Block{State: attention.NeedsAnswer, Since: ms(now), Source: attention.SourceHook, Detail: "which?", Turn: 1, Episode: 1}.Map()})
	waitRow(t, src, changed, "ses_old", "needs_answer", func(r Row) bool { return r.Attention != nil && r.Attention.State == attention.NeedsAnswer })
	if rows := src.Rows(); rows[0].ID != "ses_old" {
		t.Errorf("first row %s, want the session that asks a question", rows[0].ID)
	}
}
