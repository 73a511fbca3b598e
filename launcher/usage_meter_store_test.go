package launcher

import (
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/lifeloop/lifeloop/adapters/opencode"
	"github.com/lifeloop/lifeloop/adapters/opencode/opencodetest"
	"github.com/lifeloop/lifeloop/internal/pricing"
)

// sampleOpenCodeDB stores the session, message and event rows of the
// OpenCode sample name (opencodetest) in a database of its schema in WAL
// mode; it returns the database's path and the session's id.
func sampleOpenCodeDB(t *testing.T, name string) (string, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "opencode.db")
	db := opencodetest.NewDB(t, path)
	session := opencodetest.AddRows(t, db, name, opencodetest.Usage, nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
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
	path, session := sampleOpenCodeDB(t, opencodetest.Turn)
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
	path, session := sampleOpenCodeDB(t, opencodetest.Turn)
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
