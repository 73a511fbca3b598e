package fleet

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/internal/amqpsink"
	"github.com/lifeloop/lifeloop/internal/amqpsink/rabbittest"
)

// TestHeartbeatKeepsAMachineFresh: a heartbeat keeps its machine's open
// sessions from turning stale, creates no row for a machine without
// sessions, and an older heartbeat than the newest event changes nothing.
func TestHeartbeatKeepsAMachineFresh(t *testing.T) {
	v := NewView()
	b := events(t, "ses_b", "m2", 1_800_000_100)
	for _, e := range b[:2] {
		v.Apply(e) // created, running
	}
	now := time.Unix(1_800_000_200, 0)
	if rows := v.Rows(now, time.Minute); len(rows) != 1 || !rows[0].Stale {
		t.Fatalf("before a heartbeat: %+v, want m2's session stale", rows)
	}
	v.Heartbeat(Heartbeat{Schema: HeartbeatSchema, Machine: "m2", At: now.Add(-10 * time.Second)})
	v.Heartbeat(Heartbeat{Schema: HeartbeatSchema, Machine: "m9", At: now})
	rows := v.Rows(now, time.Minute)
	if len(rows) != 1 || rows[0].Stale || rows[0].Machine != "m2" {
		t.Fatalf("after heartbeats: %+v, want m2's one session fresh and no row for m9", rows)
	}
	if !v.MachineSeen("m9").Equal(now) {
		t.Errorf("m9 seen %v, want %v", v.MachineSeen("m9"), now)
	}
	v.Heartbeat(Heartbeat{Schema: HeartbeatSchema, Machine: "m2", At: now.Add(-time.Hour)})
	if rows := v.Rows(now, time.Minute); rows[0].Stale {
		t.Error("an older heartbeat took a machine's newer time back")
	}
	if rows := v.Rows(now.Add(2*time.Minute), time.Minute); !rows[0].Stale {
		t.Error("a machine silent past the bound after its heartbeat is not stale")
	}
}

// TestDecodeHeartbeat: the message's shape, and what is refused.
func TestDecodeHeartbeat(t *testing.T) {
	at := time.Date(2026, 12, 3, 2, 0, 0, 0, time.UTC)
	body, _ := json.Marshal(Heartbeat{Schema: HeartbeatSchema, Machine: "build-7", At: at, EverySeconds: 30})
	var fields map[string]any
	_ = json.Unmarshal(body, &fields)
	for _, k := range []string{"schema", "machine", "at", "every_seconds"} {
		if _, ok := fields[k]; !ok {
			t.Errorf("heartbeat JSON has no %q: %s", k, body)
		}
	}
	h, err := DecodeHeartbeat(body)
	if err != nil || h.Machine != "build-7" || !h.At.Equal(at) || h.EverySeconds != 30 {
		t.Fatalf("DecodeHeartbeat: %+v, %v", h, err)
	}
	for _, bad := range []string{`{`, `{"schema":"other","machine":"m","at":"2026-12-03T02:00:00Z"}`,
		`{"schema":"lifeloop.fleet-heartbeat.v1","at":"2026-12-03T02:00:00Z"}`, `{"schema":"lifeloop.fleet-heartbeat.v1","machine":"m"}`} {
		if _, err := DecodeHeartbeat([]byte(bad)); err == nil || !strings.Contains(err.Error(), "not a fleet heartbeat") {
			t.Errorf("DecodeHeartbeat(%s): %v, want not a fleet heartbeat", bad, err)
		}
	}
}

// TestHeartbeatsNeverWaitOnABrokerAway: with nothing listening,
// StartHeartbeats returns at once and its goroutine ends with its
// context, each beat given up at its timeout.
func TestHeartbeatsNeverWaitOnABrokerAway(t *testing.T) {
	tg, err := amqpsink.ParseURL("amqp://guest:guest@127.0.0.1:1/?exchange=x")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	done := StartHeartbeats(ctx, HeartbeatConfig{Target: tg, Machine: "m1", Every: 10 * time.Millisecond, Timeout: 100 * time.Millisecond})
	if d := time.Since(start); d > time.Second {
		t.Errorf("StartHeartbeats took %v to return", d)
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the heartbeat goroutine did not end with its context")
	}
}

// TestHeartbeatThroughTheBroker: a machine's heartbeats, on its events
// exchange, reach a fleet view's queue through a real RabbitMQ; the view
// takes them aside (no event written, nothing dead-lettered) and keeps
// the machine fresh; the queue is then reported read. The listener a
// session starts (ListenWhenFree) beats only once it holds the
// machine's listener lock.
func TestHeartbeatThroughTheBroker(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a RabbitMQ broker")
	}
	b := rabbittest.Start(t)
	tg, err := amqpsink.ParseURL(b.URL + "?exchange=ex.hb")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f, err := Open(Config{Target: tg, Queue: "q.hb", Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	run := make(chan error, 1)
	go func() { run <- f.Run(ctx) }()
	// The view's queue is declared and bound before the beats go.
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if bl, err := f.Backlog(ctx); err == nil && bl.Consumers == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the view's consumer never attached")
		}
	}
	hctx, stop := context.WithCancel(ctx)
	done := StartHeartbeats(hctx, HeartbeatConfig{Target: tg, Machine: "m1", Every: 200 * time.Millisecond})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		f.mu.Lock()
		seen := f.view.MachineSeen("m1")
		f.mu.Unlock()
		if !seen.IsZero() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat of m1 reached the view")
		}
	}
	stop()
	<-done

	// The machine's listener beats only while it holds the listener
	// lock: a second process waiting for the lock sends nothing, and
	// beats once it has taken the lock over.
	seen := func(m string) bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return !f.view.MachineSeen(m).IsZero()
	}
	lockDir := t.TempDir()
	holder, held, err := TryListenerLock(lockDir)
	if err != nil || !held {
		t.Fatalf("listener lock: held %v, err %v", held, err)
	}
	lctx, stopListener := context.WithCancel(ctx)
	listened := make(chan error, 1)
	go func() {
		listened <- ListenWhenFree(lctx, ListenerConfig{Target: tg, Machine: "m2", Dir: lockDir, Heartbeats: tg}, 50*time.Millisecond)
	}()
	time.Sleep(time.Second)
	if seen("m2") {
		t.Error("a listener waiting for the lock sent a heartbeat")
	}
	_ = holder.Close()
	for deadline := time.Now().Add(60 * time.Second); !seen("m2"); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no heartbeat of m2 after its listener took the lock")
		}
	}
	stopListener()
	if err := <-listened; err != nil {
		t.Errorf("ListenWhenFree: %v", err)
	}

	if rows := f.Rows(time.Now(), time.Minute); len(rows) != 0 {
		t.Errorf("heartbeats made rows: %+v", rows)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		bl, err := f.Backlog(ctx)
		if err == nil && bl.Ready == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the queue is not read: %+v %v", bl, err)
		}
	}
	cancel()
	if err := <-run; err != nil {
		t.Fatal(err)
	}
	if n := countLines(t, filepath.Join(dir, EventsName)); n != 0 {
		t.Errorf("heartbeats were written as events: %d lines", n)
	}
	st := f.cons.State()
	if st.DeadLetters != 0 || st.Processed != 0 {
		t.Errorf("consumer state %+v: want nothing processed or dead-lettered", st)
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}
