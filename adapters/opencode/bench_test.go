package opencode

import (
	"context"
	"database/sql"
	"fmt"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

// A synthetic long session, written into a copy of the real database as
// OpenCode writes its events (the shapes of the fixture's rows): each
// turn is a user message with its text part and an assistant message
// with step-start, text and step-finish parts, then its completion —
// two messages and seven event rows per turn.

// msgID returns an OpenCode-shaped message id for turn i of kind k
// ('u' or 'a'), sorting by time like OpenCode's.
func msgID(base int64, i int, k byte) string {
	n := base + int64(2*i)
	if k == 'a' {
		n++
	}
	return fmt.Sprintf("msg_%012x%c%013d", (n*4096)&0xffffffffffff, k, i)
}

// newSession copies the fixture's turn session into a new empty session
// (its row, no events) created at created; it returns the id.
func newSession(t testing.TB, h *sql.DB, from string, created time.Time) string {
	t.Helper()
	id := fmt.Sprintf("ses_%026d", created.UnixNano())
	ms := created.UnixMilli()
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{"CREATE TEMP TABLE s AS SELECT * FROM session WHERE id = ?", []any{from}},
		{"UPDATE s SET id = ?, time_created = ?, time_updated = ?", []any{id, ms, ms}},
		{"INSERT INTO session SELECT * FROM s", nil},
		{"DROP TABLE s", nil},
		{"INSERT INTO event_sequence (aggregate_id, seq) VALUES (?, -1)", []any{id}},
	} {
		if _, err := h.ExecContext(context.Background(), q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	return id
}

// turnEvents returns the seven events of turn i of session id.
func turnEvents(id string, base int64, i int, at time.Time) []struct{ typ, data string } {
	u, a := msgID(base, i, 'u'), msgID(base, i, 'a')
	ms := at.UnixMilli()
	tok := 1000 + i%5000
	return []struct{ typ, data string }{
		{"message.updated.1", fmt.Sprintf(`{"sessionID":%q,"info":{"id":%q,"sessionID":%q,"role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"}}}`, id, u, id, ms)},
		{"message.part.updated.1", fmt.Sprintf(`{"sessionID":%q,"part":{"id":"prt_%su","sessionID":%q,"messageID":%q,"type":"text","text":"prompt number %d of a long session"},"time":%d}`, id, u[4:], id, u, i, ms)},
		{"message.updated.1", fmt.Sprintf(`{"sessionID":%q,"info":{"id":%q,"sessionID":%q,"role":"assistant","time":{"created":%d},"parentID":%q,"modelID":"mock-model","providerID":"mock","mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}}}}`, id, a, id, ms, u)},
		{"message.part.updated.1", fmt.Sprintf(`{"sessionID":%q,"part":{"id":"prt_%s1","sessionID":%q,"messageID":%q,"type":"step-start","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904"},"time":%d}`, id, a[4:], id, a, ms)},
		{"message.part.updated.1", fmt.Sprintf(`{"sessionID":%q,"part":{"id":"prt_%s2","sessionID":%q,"messageID":%q,"type":"text","text":"an answer from the model, a sentence or two long, as a real one would be","time":{"start":%d,"end":%d}},"time":%d}`, id, a[4:], id, a, ms, ms, ms)},
		{"message.part.updated.1", fmt.Sprintf(`{"sessionID":%q,"part":{"id":"prt_%s3","sessionID":%q,"messageID":%q,"type":"step-finish","reason":"stop","snapshot":"4b825dc642cb6eb9a060e54bf8d69288fbee4904","cost":0,"tokens":{"total":%d,"input":%d,"output":0,"reasoning":0,"cache":{"write":0,"read":0}}},"time":%d}`, id, a[4:], id, a, tok, tok, ms)},
		{"message.updated.1", fmt.Sprintf(`{"sessionID":%q,"info":{"id":%q,"sessionID":%q,"role":"assistant","time":{"created":%d,"completed":%d},"parentID":%q,"modelID":"mock-model","providerID":"mock","mode":"build","agent":"build","path":{"cwd":"/w","root":"/w"},"cost":0,"tokens":{"total":%d,"input":%d,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}}`, id, a, id, ms, ms, u, tok, tok)},
	}
}

// appendEvents appends events to session id in one transaction.
func appendEvents(ctx context.Context, h *sql.DB, id string, evs []struct{ typ, data string }) error {
	tx, err := h.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	var seq int64
	if err := tx.QueryRowContext(ctx, "SELECT seq FROM event_sequence WHERE aggregate_id = ?", id).Scan(&seq); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)")
	if err != nil {
		return err
	}
	defer st.Close()
	for _, e := range evs {
		seq++
		if _, err := st.ExecContext(ctx, fmt.Sprintf("evt_%s_%d", id[4:], seq), id, seq, e.typ, e.data); err != nil {
			return err
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE event_sequence SET seq = ? WHERE aggregate_id = ?", seq, id); err != nil {
		return err
	}
	return tx.Commit()
}

// longSession writes a session of turns turns (2*turns messages) into db
// and returns its id and the id of its last user message.
func longSession(t testing.TB, db, from string, turns int) (string, string) {
	t.Helper()
	h := writer(t, db)
	start := time.Now().Add(-time.Hour)
	id := newSession(t, h, from, start)
	base := start.UnixMilli()
	for lo := 0; lo < turns; lo += 500 {
		var evs []struct{ typ, data string }
		for i := lo; i < min(lo+500, turns); i++ {
			evs = append(evs, turnEvents(id, base, i, start.Add(time.Duration(i)*time.Millisecond))...)
		}
		if err := appendEvents(context.Background(), h, id, evs); err != nil {
			t.Fatal(err)
		}
	}
	return id, msgID(base, turns-1, 'u')
}

// catchUp follows session id of db from its start until the frame last
// ends; it returns how long that took and the peak heap in use above the
// heap before it started (sampled every millisecond).
func catchUp(t *testing.T, db, id, last string, turns int) (time.Duration, uint64) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var m runtime.MemStats
		tk := time.NewTicker(time.Millisecond)
		defer tk.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tk.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	frames := 0
	var first string
	begin := time.Now()
	d := &Discoverer{Database: db, SessionID: id}
	var took time.Duration
	go func() {
		defer close(done)
		_ = telemetry.Watch(ctx, telemetry.WatchConfig{Discoverer: d, NewParser: func() telemetry.Parser { return NewParser(window10k) }}, func(o telemetry.Observation) {
			if o.Kind != telemetry.ObsFrameEnded {
				return
			}
			if first == "" {
				first = o.FrameID
			}
			frames++
			if o.FrameID == last {
				took = time.Since(begin)
				cancel()
			}
		})
	}()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cancel()
		<-done
		t.Fatal("catch-up did not finish")
	}
	close(stop)
	wg.Wait()
	if frames != turns {
		t.Errorf("%d turns ended, want %d", frames, turns)
	}
	p := peak.Load()
	if p < base {
		p = base
	}
	return took, p - base
}

// TestCatchUpFlatMemory follows a session of 1,000 and one of 10,000
// messages from their start: every turn is read, and the peak heap in
// use while catching up does not grow with the session (the reader reads
// 256 rows at a time and the parser keeps bounded state).
func TestCatchUpFlatMemory(t *testing.T) {
	r := realDatabase(t)
	type run struct {
		messages int
		took     time.Duration
		peak     uint64
	}
	var runs []run
	for _, messages := range []int{1000, 10000} {
		db := copyDB(t, r)
		id, last := longSession(t, db, r.Turn, messages/2)
		took, peak := catchUp(t, db, id, last, messages/2)
		runs = append(runs, run{messages, took, peak})
		t.Logf("catch-up of %d messages (%d event rows): %v, %.0f rows/s, peak heap above baseline %.2f MiB",
			messages, messages/2*7, took.Round(time.Millisecond), float64(messages/2*7)/took.Seconds(), float64(peak)/(1<<20))
	}
	// Linear growth would make the second peak ten times the first; allow
	// noise (GC timing) up to twice.
	if small, big := runs[0].peak, runs[1].peak; big > 2*max(small, 4<<20) {
		t.Errorf("peak heap %d B for %d messages vs %d B for %d: memory grows with the session", big, runs[1].messages, small, runs[0].messages)
	}
}

// TestAppendLatency checks, with the reader following a live session
// (fsnotify), that every appended message is observed, and reports the
// time from each commit to its observation: a user prompt (frame opening)
// and the assistant's completion (frame ended), 200 of each. The figure
// is reported, not asserted: a shared machine's scheduling is not
// lifeloop's behaviour.
func TestAppendLatency(t *testing.T) {
	r := realDatabase(t)
	db := copyDB(t, r)
	h := writer(t, db)
	id := newSession(t, h, r.Turn, time.Now())
	d := &Discoverer{Database: db, SessionID: id}
	w := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: d, NewParser: func() telemetry.Parser { return NewParser(window10k) }})
	w.Kind(telemetry.ObsSourceMode)
	base := time.Now().UnixMilli()
	var lat []time.Duration
	for i := range 200 {
		evs := turnEvents(id, base, i, time.Now())
		for _, half := range [][]struct{ typ, data string }{evs[:2], evs[2:]} {
			if err := appendEvents(context.Background(), h, id, half); err != nil {
				t.Fatal(err)
			}
			committed := time.Now()
			want := telemetry.ObsFrameOpening
			if len(half) != 2 {
				want = telemetry.ObsFrameEnded
			}
			w.Kind(want)
			lat = append(lat, time.Since(committed))
		}
	}
	p50, p99, worst := percentiles(lat)
	t.Logf("commit → observation over %d appends: p50 %v, p99 %v, max %v", len(lat), p50, p99, worst)
}

func percentiles(d []time.Duration) (p50, p99, worst time.Duration) {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[len(s)*99/100], s[len(s)-1]
}

// BenchmarkDiscoveryScan is one rescan of the database for a launch's
// sessions: what the folder watcher costs per write to the database
// while lifeloop run follows newer sessions (a renewal, /new).
func BenchmarkDiscoveryScan(b *testing.B) {
	r := realDatabase(b)
	d := &Discoverer{Database: r.DB, Cwd: r.Cwd, Launch: r.Launch}
	for b.Loop() {
		if _, err := d.scan(); err != nil {
			b.Fatal(err)
		}
	}
}
