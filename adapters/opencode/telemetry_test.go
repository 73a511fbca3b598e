package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
	"github.com/lifeloop/lifeloop/telemetry/telemetrytest"
)

func window10k(provider, model string) int64 {
	if provider == "mock" && model == "mock-model" {
		return 10000
	}
	return 0
}

// userTurns returns the user message ids of session id whose first part
// is not a compaction request, read with a query of the test's own.
func userTurns(t *testing.T, db, id string) []string {
	t.Helper()
	h, err := kit.OpenReadOnly(db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	rows, err := h.QueryContext(context.Background(), `SELECT m.id, (SELECT json_extract(p.data,'$.type') FROM part p WHERE p.message_id = m.id ORDER BY p.id LIMIT 1)
		FROM message m WHERE m.session_id = ? AND json_extract(m.data,'$.role') = 'user' ORDER BY m.id`, id)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var mid string
		var first sql.NullString
		if err := rows.Scan(&mid, &first); err != nil {
			t.Fatal(err)
		}
		if first.String != "compaction" {
			out = append(out, mid)
		}
	}
	return out
}

// TestParseRealTurn parses the events OpenCode wrote for one `opencode
// run` turn: the session, the turn's frames and the exact usage of the
// mock (100 input + 2000 cache write + 3000 cache read + 7 output).
func TestParseRealTurn(t *testing.T) {
	r := realDatabase(t)
	turns := userTurns(t, r.DB, r.Turn)
	if len(turns) != 1 {
		t.Fatalf("turns %v", turns)
	}
	got, errs := telemetrytest.ParseAll(t, NewParser(window10k), records(t, r.DB, r.Turn))
	if errs != 0 {
		t.Errorf("%d records rejected", errs)
	}
	f := turns[0]
	want := []string{
		"harness_session id=" + r.Turn + " cwd=" + r.Cwd,
		"frame_opening frame=" + f,
		"frame_opened frame=" + f,
		"usage frame=" + f + " tokens=5107 window=10000",
		"frame_ended frame=" + f + " trigger=stop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("observations\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestParseRealCompaction parses the session OpenCode compacted
// automatically: the overflowing turn, the compaction (pre 9050; the
// summary request's own usage is not the context), then the synthetic
// continue turn.
func TestParseRealCompaction(t *testing.T) {
	r := realDatabase(t)
	turns := userTurns(t, r.DB, r.Compact)
	if len(turns) != 2 {
		t.Fatalf("turns %v, want the prompt and the continue turn", turns)
	}
	got, errs := telemetrytest.ParseAll(t, NewParser(window10k), records(t, r.DB, r.Compact))
	if errs != 0 {
		t.Errorf("%d records rejected", errs)
	}
	a, b := turns[0], turns[1]
	want := []string{
		"harness_session id=" + r.Compact + " cwd=" + r.Cwd,
		"frame_opening frame=" + a,
		"frame_opened frame=" + a,
		"usage frame=" + a + " tokens=9050 window=10000",
		"frame_ended frame=" + a + " trigger=stop",
		"compacted window=10000 trigger=auto pre=9050 post=0",
		"frame_opening frame=" + b,
		"frame_opened frame=" + b,
		"usage frame=" + b + " tokens=17 window=10000",
		"frame_ended frame=" + b + " trigger=stop",
	}
	if !slices.Equal(got, want) {
		t.Errorf("observations\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestDiscoverRealSessions: the discoverer lists the sessions of the
// launch's folder born after the launch, oldest first, or exactly the
// session named; nothing for another folder or a later launch; nothing
// (and no database created) when OpenCode never ran.
func TestDiscoverRealSessions(t *testing.T) {
	r := realDatabase(t)
	cands := func(d *Discoverer) []string {
		t.Helper()
		cs, err := d.Candidates()
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, c := range cs {
			if c.Path != SessionPath(r.DB, c.SessionID) || c.Born.IsZero() {
				t.Errorf("candidate %+v", c)
			}
			ids = append(ids, c.SessionID)
		}
		return ids
	}
	if got := cands(&Discoverer{Database: r.DB, Cwd: r.Cwd, Launch: r.Launch}); !slices.Equal(got, []string{r.Turn, r.Compact}) {
		t.Errorf("launch folder: %v", got)
	}
	if got := cands(&Discoverer{Database: r.DB, Cwd: r.Cwd, Launch: time.Now().Add(time.Hour), SessionID: r.Turn}); !slices.Equal(got, []string{r.Turn}) {
		t.Errorf("named session: %v", got)
	}
	if got := cands(&Discoverer{Database: r.DB, Cwd: r.Cwd, Launch: time.Now().Add(time.Hour)}); len(got) != 0 {
		t.Errorf("later launch: %v", got)
	}
	if got := cands(&Discoverer{Database: r.DB, Cwd: filepath.Dir(r.Cwd), Launch: r.Launch}); len(got) != 0 {
		t.Errorf("other folder: %v", got)
	}
	missing := filepath.Join(t.TempDir(), "opencode.db")
	if got := cands(&Discoverer{Database: missing, Cwd: r.Cwd}); len(got) != 0 {
		t.Errorf("no database: %v", got)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("discovery created the database")
	}
}

// TestReaderNeverWrites: discovering and following sessions leaves the
// database and its WAL byte for byte as they were (read-only, no
// checkpoint on close: OpenCode's -wal stays in place).
func TestReaderNeverWrites(t *testing.T) {
	r := realDatabase(t)
	db := copyDB(t, r)
	before := digest(t, db)
	if _, ok := before["-wal"]; !ok {
		t.Fatal("the fixture has no WAL; OpenCode leaves one after exit")
	}
	d := &Discoverer{Database: db, Cwd: r.Cwd, Launch: r.Launch}
	w := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: d, NewParser: func() telemetry.Parser { return NewParser(window10k) }})
	w.Kind(telemetry.ObsFrameEnded)
	_ = records(t, db, r.Compact)
	if after := digest(t, db); !maps2Equal(before, after) {
		t.Errorf("the database changed while lifeloop read it")
	}
}

func maps2Equal(a, b map[string][32]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// writer opens db for writing as OpenCode does (WAL, synchronous
// NORMAL), with no busy timeout: any lock the reader held would fail its
// writes at once.
func writer(t testing.TB, db string) *sql.DB {
	t.Helper()
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(0)")
	q.Add("_pragma", "journal_mode(wal)")
	q.Add("_pragma", "synchronous(normal)")
	h, err := sql.Open("sqlite", "file:"+(&url.URL{Path: db}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	h.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = h.Close() })
	return h
}

// appendUserTurn appends the events of one user prompt to session id, as
// OpenCode writes them (message.updated.1 then the text part), in one
// transaction; it returns the user message id.
func appendUserTurn(ctx context.Context, h *sql.DB, id string, n int, at time.Time) (string, error) {
	// OpenCode's ids: the low 48 bits of ms*4096 + a counter in hex, then 14
	// random characters; they sort by time.
	mid := fmt.Sprintf("msg_%012x%014d", (at.UnixMilli()*4096+int64(n%4096))&0xffffffffffff, n)
	tx, err := h.BeginTx(ctx, nil)
	if err != nil {
		return "", err
	}
	defer func() { _ = tx.Rollback() }()
	var seq int64
	if err := tx.QueryRowContext(ctx, "SELECT seq FROM event_sequence WHERE aggregate_id = ?", id).Scan(&seq); err != nil {
		return "", err
	}
	ms := at.UnixMilli()
	evs := []struct{ typ, data string }{
		{"message.updated.1", fmt.Sprintf(`{"sessionID":%q,"info":{"id":%q,"sessionID":%q,"role":"user","time":{"created":%d},"agent":"build","model":{"providerID":"mock","modelID":"mock-model"}}}`, id, mid, id, ms)},
		{"message.part.updated.1", fmt.Sprintf(`{"sessionID":%q,"part":{"id":"prt_%s","sessionID":%q,"messageID":%q,"type":"text","text":"prompt %d"},"time":%d}`, id, mid[4:], id, mid, n, ms)},
	}
	for _, e := range evs {
		seq++
		if _, err := tx.ExecContext(ctx, "INSERT INTO event (id, aggregate_id, seq, type, data) VALUES (?, ?, ?, ?, ?)", fmt.Sprintf("evt_%s_%d", mid, seq), id, seq, e.typ, e.data); err != nil {
			return "", err
		}
	}
	if _, err := tx.ExecContext(ctx, "UPDATE event_sequence SET seq = ? WHERE aggregate_id = ?", seq, id); err != nil {
		return "", err
	}
	return mid, tx.Commit()
}

// TestReaderDoesNotBlockWriter: while lifeloop follows a session (in
// fsnotify and in poll mode), a writer with no busy timeout appends 200
// prompts; none of its transactions fails, and every prompt reaches the
// parser once, in order.
func TestReaderDoesNotBlockWriter(t *testing.T) {
	r := realDatabase(t)
	for _, m := range telemetrytest.TailModes {
		t.Run(m.Name, func(t *testing.T) {
			db := copyDB(t, r)
			h := writer(t, db)
			d := &Discoverer{Database: db, Cwd: r.Cwd, SessionID: r.Turn}
			w := telemetrytest.StartWatch(t, telemetry.WatchConfig{Discoverer: d, Tail: m.Cfg, NewParser: func() telemetry.Parser { return NewParser(window10k) }})
			if mode := w.Kind(telemetry.ObsSourceMode); mode.Trigger != string(m.Mode) {
				t.Errorf("mode %s, want %s", mode.Trigger, m.Mode)
			}
			w.Kind(telemetry.ObsFrameEnded) // the turn already there
			var want []string
			for i := range 200 {
				mid, err := appendUserTurn(context.Background(), h, r.Turn, i, time.Now())
				if err != nil {
					t.Fatalf("write %d failed while lifeloop read: %v", i, err)
				}
				want = append(want, mid)
			}
			var got []string
			for len(got) < len(want) {
				o := w.Until("a prompt", func(o telemetry.Observation) bool {
					return o.Kind == telemetry.ObsFrameOpening || o.Kind == telemetry.ObsUserMessage
				})
				got = append(got, o.FrameID)
				if o.Kind == telemetry.ObsUserMessage {
					got[len(got)-1] = "in:" + o.FrameID
				}
			}
			// The first appended prompt opens a turn; the others queue in it
			// (no assistant answers them).
			if got[0] != want[0] {
				t.Errorf("first prompt %s, want %s", got[0], want[0])
			}
			for i := 1; i < len(got); i++ {
				if got[i] != "in:"+want[0] {
					t.Fatalf("prompt %d: %s", i, got[i])
				}
			}
		})
	}
}

// TestTelemetrySourcePaths: the database is found where OpenCode puts it.
func TestTelemetrySourcePaths(t *testing.T) {
	tests := []struct {
		env  []string
		want string
	}{
		{[]string{"HOME=/h"}, "/h/.local/share/opencode/opencode.db"},
		{[]string{"HOME=/h", "XDG_DATA_HOME=/x"}, "/x/opencode/opencode.db"},
		{[]string{"HOME=/h", "OPENCODE_DB=/abs/o.db"}, "/abs/o.db"},
		{[]string{"HOME=/h", "OPENCODE_DB=rel.db"}, "/h/.local/share/opencode/rel.db"},
		{nil, ""},
	}
	for _, tc := range tests {
		if got := DatabasePath(tc.env); got != tc.want {
			t.Errorf("DatabasePath(%v) = %q, want %q", tc.env, got, tc.want)
		}
	}
	if _, err := (Harness{}).TelemetrySource(adapters.TelemetryTarget{}); err == nil {
		t.Error("TelemetrySource without HOME succeeded")
	}
	src, err := Harness{}.TelemetrySource(adapters.TelemetryTarget{Env: []string{"HOME=/h"}, Cwd: "/p"})
	if err != nil || src.Kind != SourceDatabase || src.Discoverer.Roots()[0] != "/h/.local/share/opencode" {
		t.Errorf("source %+v, %v", src, err)
	}
}

// TestResolveAndEnd: `lifeloop watch` names a session by
// "<database>#<id>" or by the database (its newest session of the
// folder); a session ends one past its last event's seq.
func TestResolveAndEnd(t *testing.T) {
	r := realDatabase(t)
	d := &Discoverer{Database: r.DB, Cwd: r.Cwd}
	for _, c := range []struct{ in, want string }{
		{r.DB, SessionPath(r.DB, r.Compact)},
		{SessionPath(r.DB, r.Turn), SessionPath(r.DB, r.Turn)},
	} {
		got, err := d.Resolve(c.in)
		if err != nil || got != c.want {
			t.Errorf("Resolve(%s) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := (&Discoverer{Database: r.DB, Cwd: filepath.Dir(r.Cwd)}).Resolve(r.DB); err == nil || !strings.Contains(err.Error(), "holds no session of") {
		t.Errorf("other folder: %v", err)
	}
	if _, err := d.Resolve(filepath.Join(t.TempDir(), "opencode.db")); err == nil || !strings.Contains(err.Error(), "not an OpenCode database") {
		t.Errorf("missing database: %v", err)
	}
	recs := records(t, r.DB, r.Turn)
	var last struct{ Seq int64 }
	if err := json.Unmarshal([]byte(recs[len(recs)-1]), &last); err != nil {
		t.Fatal(err)
	}
	end, err := d.End(SessionPath(r.DB, r.Turn))
	if err != nil || end != last.Seq+1 {
		t.Errorf("End = %d, %v; want %d", end, err, last.Seq+1)
	}
	if _, err := d.End(SessionPath(r.DB, "ses_nothere")); err == nil || !strings.Contains(err.Error(), "no session ses_nothere") {
		t.Errorf("unknown session: %v", err)
	}
}
