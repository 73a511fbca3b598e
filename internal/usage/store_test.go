package usage

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/openclaw"
	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/adapters/opencode/opencodetest"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// The real samples of the harnesses whose sessions are database rows
// (testdata/db: rows the pinned binaries wrote), stored in databases of
// their schema in WAL mode under a temporary HOME, as the harnesses keep
// them.
var storeSources = []Source{{Harness: "opencode", Store: opencode.Harness{}}, {Harness: "openclaw", Store: openclaw.Harness{}}}

func exec(t testing.TB, db *sql.DB, q string, args ...any) {
	t.Helper()
	if _, err := db.ExecContext(t.Context(), q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}

// openCodeDB stores the session, message and event rows of the OpenCode
// samples (opencodetest) in one database,
// ~/.local/share/opencode/opencode.db (OpenCode keeps every session of
// the user in one).
func openCodeDB(t testing.TB, h string, names ...string) *sql.DB {
	t.Helper()
	return opencodetest.NewDB(t, filepath.Join(h, ".local/share/opencode/opencode.db"), names...)
}

// openClawTranscripts are the OpenClaw samples: *.transcript.jsonl hold
// one entry a line (its row's event_json), *.transcript_events.jsonl
// whole rows.
var openClawTranscripts = []string{"openclaw-plain-turn.transcript.jsonl", "openclaw-compact.transcript.jsonl", "openclaw-sigint-aborted.transcript.jsonl",
	"openclaw-tool-turn.transcript_events.jsonl", "openclaw-tui-compact.transcript_events.jsonl"}

// openClawDB stores the transcripts' rows in the database of agent
// (~/.openclaw/agents/<agent>/agent/openclaw-agent.sqlite), in OpenClaw's
// transcript_events table.
func openClawDB(t *testing.T, h, agent string, files ...string) *sql.DB {
	t.Helper()
	db := opencodetest.OpenWAL(t, filepath.Join(h, ".openclaw/agents", agent, "agent/openclaw-agent.sqlite"))
	exec(t, db, `CREATE TABLE IF NOT EXISTS transcript_events (session_id TEXT NOT NULL, seq INTEGER NOT NULL, event_json TEXT,
		created_at INTEGER NOT NULL, event_zstd BLOB, event_utf8_bytes INTEGER, navigation_json TEXT, PRIMARY KEY (session_id, seq)) STRICT`)
	for _, f := range files {
		b, err := os.ReadFile("testdata/db/" + f)
		if err != nil {
			t.Fatal(err)
		}
		session := ""
		for i, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
			var r struct {
				SessionID string          `json:"session_id"`
				Seq       int64           `json:"seq"`
				CreatedAt int64           `json:"created_at"`
				Event     json.RawMessage `json:"event_json"`
			}
			if strings.HasSuffix(f, ".transcript.jsonl") {
				var head struct {
					Type, ID string
				}
				if json.Unmarshal(line, &head) == nil && head.Type == "session" {
					session = head.ID
				}
				r.SessionID, r.Seq, r.Event = session, int64(i), line
			} else if err := json.Unmarshal(line, &r); err != nil {
				t.Fatal(err)
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, r.Event); err != nil {
				t.Fatal(err)
			}
			exec(t, db, "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)", r.SessionID, r.Seq, compact.String(), r.CreatedAt)
		}
	}
	return db
}

// storeHome is a temporary HOME holding the samples of both harnesses.
func storeHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	openCodeDB(t, h, opencodetest.Turn, opencodetest.ToolTurn, opencodetest.Compact)
	for i, f := range openClawTranscripts {
		// One agent a sample: sessions of two samples share an id.
		openClawDB(t, h, "agent"+string(rune('a'+i)), f)
	}
	return h
}

// TestStoreGoldenPerHarness: the tokens and costs of the rows OpenCode's
// and OpenClaw's pinned binaries wrote, read from their databases, are
// those of the golden reports.
func TestStoreGoldenPerHarness(t *testing.T) {
	for _, src := range storeSources {
		t.Run(src.Harness, func(t *testing.T) {
			var warn bytes.Buffer
			sc, err := scanner(t, storeHome(t), nil, &warn, src).Run()
			if err != nil {
				t.Fatal(err)
			}
			if warn.Len() > 0 {
				t.Errorf("warnings on real samples: %s", warn.String())
			}
			got := report(t, sc, "harness", "project", "session", "model")
			golden := filepath.Join("testdata", "golden", src.Harness+".json")
			if *update {
				os.WriteFile(golden, []byte(got), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s (go test -update rewrites it):\n%s", golden, got)
			}
		})
	}
}

// TestTableGoldenPerHarness: the table a person reads of each harness's
// real samples, files and databases alike.
func TestTableGoldenPerHarness(t *testing.T) {
	for _, src := range append(append([]Source(nil), sources...), storeSources...) {
		t.Run(src.Harness, func(t *testing.T) {
			h := storeHome(t)
			if src.Store == nil {
				h = home(t)
			}
			sc, err := scanner(t, h, nil, nil, src).Run()
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := sc.Group([]string{"harness", "session", "model"}, Filter{}).WriteTable(&b); err != nil {
				t.Fatal(err)
			}
			golden := filepath.Join("testdata", "golden", src.Harness+".txt")
			if *update {
				os.WriteFile(golden, b.Bytes(), 0o644)
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if b.String() != string(want) {
				t.Errorf("table differs from %s (go test -update rewrites it):\n%s", golden, b.String())
			}
		})
	}
}

// countingStore counts the readings of a store.
type countingStore struct {
	opencode.Harness
	reads *int
}

func (c countingStore) UsageSince(ctx context.Context, source string, mark int64, dst []adapters.UsageEntry) ([]adapters.UsageEntry, int64, error) {
	*c.reads++
	return c.Harness.UsageSince(ctx, source, mark, dst)
}

func (c countingStore) EachUsageSince(ctx context.Context, source string, mark int64, each func(*adapters.UsageEntry)) (int64, error) {
	*c.reads++
	return c.Harness.EachUsageSince(ctx, source, mark, each)
}

// TestStoreReadsOnlyWhatChanged: a run with nothing new reads no
// database; rows added since are read from the mark the index kept, each
// call counted once; a damaged index is rebuilt with the same figures.
func TestStoreReadsOnlyWhatChanged(t *testing.T) {
	h := t.TempDir()
	db := openCodeDB(t, h, opencodetest.Turn)
	reads := 0
	src := Source{Harness: "opencode", Store: countingStore{reads: &reads}}
	calls := func() int64 {
		t.Helper()
		var warn bytes.Buffer
		sc, err := scanner(t, h, nil, &warn, src).Run()
		if err != nil || warn.Len() > 0 {
			t.Fatalf("run: %v %s", err, warn.String())
		}
		return sc.Group(nil, Filter{}).Total.Calls
	}
	if n := calls(); n != 2 || reads != 1 {
		t.Fatalf("first run: %d calls in %d readings, want 2 in 1", n, reads)
	}
	if n := calls(); n != 2 || reads != 1 {
		t.Fatalf("nothing new: %d calls in %d readings, want 2 and no reading", n, reads)
	}
	opencodetest.AddRows(t, db, opencodetest.ToolTurn, opencodetest.Usage, nil)
	if n := calls(); n != 4 || reads != 2 {
		t.Fatalf("a session added: %d calls in %d readings, want 4 in 2", n, reads)
	}
	var rec *fileRecord
	idx, _ := loadIndex(filepath.Join(h, "state", "usage", IndexFile), mustPricer(t).Fingerprint(), "UTC")
	for _, r := range idx.byPath() {
		rec = r
	}
	var last int64
	if err := db.QueryRow("SELECT max(rowid) FROM event").Scan(&last); err != nil || rec == nil || rec.Offset != last+1 {
		t.Fatalf("index record %+v; the event table's last rowid %d (%v)", rec, last, err)
	}
	if err := os.WriteFile(filepath.Join(h, "state", "usage", IndexFile), []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	sc, err := scanner(t, h, nil, &warn, src).Run()
	if err != nil || sc.Group(nil, Filter{}).Total.Calls != 4 || !strings.Contains(warn.String(), "rebuilt") {
		t.Fatalf("damaged index: %v, %s", err, warn.String())
	}
}

func mustPricer(t *testing.T) *pricing.Pricer {
	t.Helper()
	p, err := pricing.New("")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestStoreNativeCost: a cost OpenCode or OpenClaw recorded is native;
// one of 0 for a call with tokens (a model the harness has no price for)
// is left to the price table, here unknown.
func TestStoreNativeCost(t *testing.T) {
	h := t.TempDir()
	db := openCodeDB(t, h)
	opencodetest.AddRows(t, db, opencodetest.Turn, opencodetest.Usage, func(table string, row map[string]any) {
		if table != "event" {
			return
		}
		d, _ := row["data"].(map[string]any)
		if info, _ := d["info"].(map[string]any); info["role"] == "assistant" {
			info["cost"] = 0.25
		}
	})
	oc := openClawDB(t, h, "main", "openclaw-plain-turn.transcript.jsonl")
	exec(t, oc, `UPDATE transcript_events SET event_json = json_set(event_json, '$.message.usage.cost.total', 0.5) WHERE json_extract(event_json, '$.message.role') = 'assistant'`)
	openClawDB(t, h, "other", "openclaw-compact.transcript.jsonl")
	sc, err := scanner(t, h, nil, nil, storeSources...).Run()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sc.Group([]string{"harness", "session"}, Filter{}).Rows {
		s := r.Sums
		switch r.Keys["session"] {
		case "ses_df758ea71fferCPhavtaZizTdN":
			if s.NativeCalls != 2 || s.Native != 0.5 {
				t.Errorf("OpenCode session: %+v, want 2 native calls of $0.25", s)
			}
		case "inj-test-1":
			if s.NativeCalls != 1 || s.Native != 0.5 {
				t.Errorf("OpenClaw session: %+v, want 1 native call of $0.50", s)
			}
		case "comp-1":
			if s.NativeCalls != 0 || s.UnknownCalls != 3 {
				t.Errorf("OpenClaw session with cost 0: %+v, want 3 unknown calls", s)
			}
		default:
			t.Errorf("unexpected row %v", r.Keys)
		}
	}
}

// TestLockedDatabaseIsNotFatal: a database another process holds locked
// is reported and skipped, the others read; the next run reads it.
func TestLockedDatabaseIsNotFatal(t *testing.T) {
	h := t.TempDir()
	openCodeDB(t, h, opencodetest.Turn).Close()
	openClawDB(t, h, "main", "openclaw-plain-turn.transcript.jsonl")
	lock, err := sql.Open("sqlite", "file:"+filepath.Join(h, ".local/share/opencode/opencode.db")+"?_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		t.Fatal(err)
	}
	lock.SetMaxOpenConns(1)
	exec(t, lock, "UPDATE session SET title = title")
	var warn bytes.Buffer
	sc, err := scanner(t, h, nil, &warn, storeSources...).Run()
	if err != nil {
		t.Fatal(err)
	}
	if n := sc.Group(nil, Filter{}).Total.Calls; n != 1 || !strings.Contains(warn.String(), "opencode.db") {
		t.Fatalf("locked: %d calls (want OpenClaw's 1), warnings %q", n, warn.String())
	}
	lock.Close()
	sc, err = scanner(t, h, nil, nil, storeSources...).Run()
	if err != nil || sc.Group(nil, Filter{}).Total.Calls != 3 {
		t.Fatalf("unlocked: %v, %+v", err, sc.Group(nil, Filter{}).Total)
	}
}

// TestOpenClawRowsAddedToASession: rows a session gets after a run are
// read from the mark, under the session's header (its id and folder).
func TestOpenClawRowsAddedToASession(t *testing.T) {
	h := t.TempDir()
	db := openClawDB(t, h, "main", "openclaw-plain-turn.transcript.jsonl")
	var rest []struct {
		seq  int64
		line string
	}
	rows, err := db.Query("SELECT seq, event_json FROM transcript_events WHERE seq >= 5 ORDER BY seq")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var r struct {
			seq  int64
			line string
		}
		rows.Scan(&r.seq, &r.line)
		rest = append(rest, r)
	}
	rows.Close()
	exec(t, db, "DELETE FROM transcript_events WHERE seq >= 5")
	if len(rest) == 0 {
		t.Fatal("the sample has no rows past its prompt")
	}
	if sc, err := scanner(t, h, nil, nil, storeSources[1]).Run(); err != nil || sc.Group(nil, Filter{}).Total.Calls != 0 {
		t.Fatalf("before the reply: %v", err)
	}
	for _, r := range rest {
		exec(t, db, "INSERT INTO transcript_events (session_id, seq, event_json, created_at) VALUES ('inj-test-1', ?, ?, 0)", r.seq, r.line)
	}
	sc, err := scanner(t, h, nil, nil, storeSources[1]).Run()
	if err != nil {
		t.Fatal(err)
	}
	rep := sc.Group([]string{"session", "project"}, Filter{})
	if len(rep.Rows) != 1 || rep.Rows[0].Calls != 1 || rep.Rows[0].Keys["session"] != "inj-test-1" || rep.Rows[0].Keys["project"] != "/home/dev/.openclaw/workspace" {
		t.Fatalf("after the reply: %+v", rep.Rows)
	}
}

// collectingStore hides a store's EachUsageSince: it is read through
// UsageSince, all its calls at once.
type collectingStore struct{ adapters.UsageStore }

// TestStoreStreamedAsCollected: a store read one call at a time
// (adapters.UsageStreamer) gives the report of one read all at once and
// of a first reading, on the first run, after its database was made anew
// with fewer rows (read again from its start), and after rows were added.
func TestStoreStreamedAsCollected(t *testing.T) {
	for _, src := range storeSources {
		t.Run(src.Harness, func(t *testing.T) {
			t.Parallel()
			h := t.TempDir()
			if src.Harness == "opencode" {
				openCodeDB(t, h, "opencode-turn", "opencode-tool-turn", "opencode-compact")
			} else {
				for i, f := range openClawTranscripts {
					openClawDB(t, h, "agent"+string(rune('a'+i)), f)
				}
			}
			streamed := scanner(t, h, nil, nil, src)
			collected := scanner(t, h, nil, nil, Source{Harness: src.Harness, Store: collectingStore{src.Store}})
			collected.StateDir = filepath.Join(h, "state-collected")
			runs := 0
			same := func(when string) {
				t.Helper()
				runs++
				first := scanner(t, h, nil, nil, src)
				first.StateDir = filepath.Join(h, fmt.Sprintf("state-first-%d", runs))
				var out [3]string
				for i, s := range []*Scanner{streamed, collected, first} {
					var warn bytes.Buffer
					s.Warn = &warn
					sc, err := s.Run()
					if err != nil || warn.Len() > 0 {
						t.Fatalf("%s: %v %s", when, err, warn.String())
					}
					out[i] = report(t, sc, "harness", "project", "session", "model")
				}
				if out[0] != out[1] || out[0] != out[2] || !strings.Contains(out[0], `"calls"`) {
					t.Fatalf("%s: streamed\n%s\ncollected\n%s\nfirst reading\n%s", when, out[0], out[1], out[2])
				}
			}
			same("first run")
			if src.Harness != "opencode" {
				return
			}
			dbs, err := src.Store.UsageDatabases(streamed.Getenv)
			if err != nil || len(dbs) != 1 {
				t.Fatalf("databases %v, %v", dbs, err)
			}
			for _, p := range []string{dbs[0], dbs[0] + "-wal", dbs[0] + "-shm"} {
				os.Remove(p)
			}
			db := openCodeDB(t, h, "opencode-turn")
			same("made anew")
			opencodetest.AddRows(t, db, opencodetest.ToolTurn, opencodetest.Usage, nil)
			same("rows added")
		})
	}
}
