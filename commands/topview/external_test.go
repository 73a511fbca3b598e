package topview

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// TestMergeExternal: a session a harness lists is shown beside
// lifeloop's own, marked external, in the harness's words — unless
// lifeloop records it already: the same harness session, or the pid of
// a lifeloop session still running (a pid of an ended one may be
// reused, and is not taken for it).
func TestMergeExternal(t *testing.T) {
	now := time.Date(2026, 12, 3, 8, 0, 0, 0, time.UTC)
	started := now.Add(-3 * time.Minute)
	ended := now.Add(-time.Minute)
	own := []Row{
		{ID: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", Harness: "h", State: "running", Pid: 10, HarnessSessionID: "s1", StartedAt: &started},
		{ID: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5G", Harness: "h", State: "completed", Pid: 20, HarnessSessionID: "s9", StartedAt: &started, EndedAt: &ended},
	}
	ext := []Row{
		FromExternal("h", adapters.ExternalSession{ID: "x1", SessionID: "s1", Pid: 11, Source: "h list"}),
		FromExternal("h", adapters.ExternalSession{ID: "x2", SessionID: "s2", Pid: 10, Source: "h list"}),
		FromExternal("h", adapters.ExternalSession{ID: "x3", SessionID: "s3", Pid: 20, Source: "h list", State: "working", Status: "idle", StartedAt: started.Add(time.Minute)}),
		FromExternal("h", adapters.ExternalSession{ID: "x4", SessionID: "s4", Source: "h list", Status: "waiting", WaitingFor: "permission", Attach: "h attach x4", Name: "fix it"}),
	}
	rows := MergeExternal(own, ext)
	var ids []string
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	if got := strings.Join(ids, " "); got != "x3 ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F x4 ses_01JD3V7W9Q6Z8X0A1B2C3D4E5G" {
		t.Errorf("rows %s", got)
	}
	x3, x4 := rows[0], rows[2]
	if x3.External == nil || x3.External.Source != "h list" || x3.State != "working" || x3.Activity != "idle" || x3.Pid != 20 ||
		x3.HarnessSessionID != "s3" || x3.StartedAt == nil || x3.LastEvent != "unsupervised (h list)" {
		t.Errorf("x3: %+v", x3)
	}
	if x4.State != "running" || x4.External.WaitingFor != "permission" || x4.External.Attach != "h attach x4" || x4.External.Name != "fix it" ||
		x4.LastEvent != "unsupervised (h list) · waits for permission" || x4.Ended() {
		t.Errorf("x4: %+v %+v", x4, x4.External)
	}
	if MergeExternal(own, nil)[0].ID != own[0].ID {
		t.Error("no external rows changed the rows")
	}
	line := strings.Join(Table(rows, now, 200, -1, Plain), "\n")
	if !strings.Contains(line, "x4") || !strings.Contains(line, "unsupervised (h list)") {
		t.Errorf("table:\n%s", line)
	}
}

// fixedRows is a Watcher whose rows never change.
type fixedRows []Row

func (f fixedRows) Rows() []Row { return f }
func (f fixedRows) Watch(ctx context.Context, _ time.Duration, changed func()) error {
	changed()
	<-ctx.Done()
	return nil
}

// fakeLister lists x1 until it has been asked twice, then nothing; its
// stamp is what the test sets.
type fakeLister struct {
	calls atomic.Int32
	stamp atomic.Value
}

func (f *fakeLister) Stamp() string { s, _ := f.stamp.Load().(string); return s }
func (f *fakeLister) List(context.Context) ([]Row, []error) {
	if f.calls.Add(1) <= 2 {
		return []Row{FromExternal("h", adapters.ExternalSession{ID: "x1", SessionID: "s1", Source: "h list", State: "working"})}, nil
	}
	return nil, nil
}

// TestExternalRows: the live view asks the lister when it starts, then
// only when its stamp changed (looked at every check) or the last
// listing is refresh old; it says a change when a listing differs, and
// shows the last listing merged with base's rows. Watch returns once
// ctx ends, the lister's goroutine with it.
func TestExternalRows(t *testing.T) {
	f := &fakeLister{}
	f.stamp.Store("a")
	x := WithExternal(fixedRows{{ID: "ses_01JD3V7W9Q6Z8X0A1B2C3D4E5F", State: "running"}}, f, time.Millisecond, time.Hour)
	if got := len(x.Rows()); got != 1 {
		t.Fatalf("before Watch: %d rows, want base's only", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []int
	done := make(chan error, 1)
	go func() {
		done <- x.Watch(ctx, time.Millisecond, func() {
			mu.Lock()
			seen = append(seen, len(x.Rows()))
			mu.Unlock()
		})
	}()
	wait := func(what string, ok func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: changes seen %v, %d listings, rows %v", what, seen, f.calls.Load(), x.Rows())
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	wait("the first listing shown", func() bool { return len(x.Rows()) == 2 })
	time.Sleep(50 * time.Millisecond) // fifty checks under the same stamp
	if n := f.calls.Load(); n != 1 {
		t.Errorf("%d listings under one stamp, want 1", n)
	}
	f.stamp.Store("b")
	wait("a second listing", func() bool { return f.calls.Load() == 2 })
	f.stamp.Store("c")
	wait("the session gone", func() bool { return len(x.Rows()) == 1 && f.calls.Load() == 3 })
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if x.Problems() != nil {
		t.Errorf("problems of rows that have none: %v", x.Problems())
	}

	// refresh: asked again under the same stamp once the last listing is
	// that old.
	g := &fakeLister{}
	y := WithExternal(fixedRows{}, g, time.Millisecond, 5*time.Millisecond)
	ctx, cancel = context.WithCancel(context.Background())
	go func() { done <- y.Watch(ctx, time.Millisecond, func() {}) }()
	deadline := time.Now().Add(30 * time.Second)
	for g.calls.Load() < 3 && time.Now().Before(deadline) {
		time.Sleep(2 * time.Millisecond)
	}
	cancel()
	<-done
	if g.calls.Load() < 3 {
		t.Errorf("%d listings under one stamp with a 5 ms refresh", g.calls.Load())
	}
}
