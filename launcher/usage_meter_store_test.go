package launcher

import (
	"bufio"
	"database/sql"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// sampleOpenCodeDB stores the session, message and event rows of the
// OpenCode sample name (its adapter's testdata: rows the pinned binary
// wrote) in a database of its schema in WAL mode; it returns the
// database's path and the session's id.
func sampleOpenCodeDB(t *testing.T, name string) (string, string) {
	t.Helper()
	dir := filepath.Join("..", "adapters", "opencode", "testdata")
	path := filepath.Join(t.TempDir(), "opencode.db")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	schema, err := os.ReadFile(filepath.Join(dir, "opencode-schema.sql"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, name+".db-rows.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	session := ""
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Table string         `json:"table"`
			Row   map[string]any `json:"row"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		switch r.Table {
		case "session":
			session = r.Row["id"].(string)
		case "message", "event_sequence", "event":
		default:
			continue
		}
		cols := make([]string, 0, len(r.Row))
		for c := range r.Row {
			cols = append(cols, c)
		}
		sort.Strings(cols)
		args := make([]any, len(cols))
		for i, c := range cols {
			switch v := r.Row[c].(type) {
			case map[string]any, []any:
				b, _ := json.Marshal(v)
				args[i] = string(b)
			default:
				args[i] = v
			}
		}
		q := "INSERT INTO `" + r.Table + "` (`" + strings.Join(cols, "`, `") + "`) VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	return path, session
}

func storeMeter(t *testing.T) *usageMeter {
	t.Helper()
	p, err := pricing.New("")
	if err != nil {
		t.Fatal(err)
	}
	return &usageMeter{store: opencode.Harness{}, pricer: p, files: map[string]*usageFile{}, seen: map[string]struct{}{}, sessions: map[string]modelSums{}}
}

// firstUserMessage is the id of the session's first prompt: the frame id
// of its first turn.
func firstUserMessage(t *testing.T, path, session string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var id string
	if err := db.QueryRow("SELECT id FROM message WHERE session_id = ? AND json_extract(data, '$.role') = 'user' ORDER BY time_created LIMIT 1", session).Scan(&id); err != nil {
		t.Fatal(err)
	}
	return id
}

// TestMeterReadsADatabaseSession: the meter of a harness whose usage is
// in a database reads the session its telemetry follows (two turns of a
// call each): the first turn's end takes its own call, the session's end
// both, each once.
func TestMeterReadsADatabaseSession(t *testing.T) {
	path, session := sampleOpenCodeDB(t, "opencode-turn")
	u := storeMeter(t)
	u.noteFile(opencode.SessionPath(path, session), 0, nil)
	first := u.turnEnded(firstUserMessage(t, path, session))
	if first == nil {
		t.Fatal("the first turn's end has no usage")
	}
	wantTokens(t, "first turn", toJSONMap(t, first), 1, 12, 0, 0, 5)
	wantTokens(t, "session", toJSONMap(t, u.sessionEnded()), 2, 24, 0, 0, 10)
	if again := u.turnEnded("next"); again == nil {
		t.Fatal("the second turn's call was not left to the next end")
	}
	if none := u.turnEnded("after"); none != nil {
		t.Fatalf("a call counted twice: %v", none)
	}
}

// TestMeterLockedDatabaseDoesNotHoldTheEnd: while another process holds
// the database locked, a turn's end returns without its calls; once it
// is free, a later end counts them.
func TestMeterLockedDatabaseDoesNotHoldTheEnd(t *testing.T) {
	path, session := sampleOpenCodeDB(t, "opencode-turn")
	lock, err := sql.Open("sqlite", "file:"+path+"?_pragma=locking_mode(EXCLUSIVE)")
	if err != nil {
		t.Fatal(err)
	}
	lock.SetMaxOpenConns(1)
	if _, err := lock.Exec("UPDATE session SET title = title"); err != nil {
		t.Fatal(err)
	}
	u := storeMeter(t)
	u.noteFile(opencode.SessionPath(path, session), 0, nil)
	if b := u.turnEnded("x"); b != nil {
		t.Fatalf("usage read through a lock: %v", b)
	}
	lock.Close()
	var b map[string]any
	for range 40 { // a reading the lock held up ends within its busy timeout
		if b = u.turnEnded("x"); b != nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if b == nil {
		t.Fatal("no end counted the calls once the database was free")
	}
	wantTokens(t, "after the lock", toJSONMap(t, b), 2, 24, 0, 0, 10)
}

func toJSONMap(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}
