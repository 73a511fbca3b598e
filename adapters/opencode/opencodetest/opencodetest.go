// Package opencodetest builds, for tests, OpenCode databases of the real
// samples: OpenCode 1.18.33's schema and the rows it wrote in three
// sessions (testdata: a plain turn, a bash tool turn, two automatic
// compactions with their continue turns; one {"table","row"} a line),
// stored in WAL mode as OpenCode keeps its database. Tests of every
// package that reads OpenCode's database build theirs here, so the
// schema and the samples have one copy.
package opencodetest

import (
	"bufio"
	"bytes"
	"database/sql"
	"embed"
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	_ "modernc.org/sqlite" // the driver "sqlite"
)

//go:embed testdata/opencode-schema.sql testdata/*.db-rows.jsonl
var files embed.FS

// The samples' names.
const (
	Turn     = "opencode-turn"      // one prompt, one reply
	ToolTurn = "opencode-tool-turn" // a bash tool call and its reply
	Compact  = "opencode-compact"   // two automatic compactions with their continue turns
)

// Usage are the tables OpenCode's usage and telemetry are read from;
// Handoff those of a session's handoff note.
var (
	Usage   = []string{"session", "message", "event_sequence", "event"}
	Handoff = []string{"session", "message", "part"}
)

// Schema is OpenCode 1.18.33's database schema.
func Schema() string {
	b, err := files.ReadFile("testdata/opencode-schema.sql")
	if err != nil {
		panic(err) // embedded above
	}
	return string(b)
}

// OpenWAL opens the SQLite database at path in WAL mode, creating it and
// its folder (0700); it is closed when the test ends.
func OpenWAL(t testing.TB, path string) *sql.DB {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

// NewDB creates the database at path with OpenCode's schema and stores
// the Usage tables' rows of the samples named.
func NewDB(t testing.TB, path string, samples ...string) *sql.DB {
	t.Helper()
	db := OpenWAL(t, path)
	if _, err := db.Exec(Schema()); err != nil {
		t.Fatalf("schema: %v", err)
	}
	for _, s := range samples {
		AddRows(t, db, s, Usage, nil)
	}
	return db
}

// AddRows stores the rows of sample that belong to tables (a row already
// there replaced), each row changed by edit first (nil: none), and
// returns the sample's session id.
func AddRows(t testing.TB, db *sql.DB, sample string, tables []string, edit func(table string, row map[string]any)) string {
	t.Helper()
	b, err := files.ReadFile("testdata/" + sample + ".db-rows.jsonl")
	if err != nil {
		t.Fatalf("no sample %q: %v", sample, err)
	}
	session := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r struct {
			Table string         `json:"table"`
			Row   map[string]any `json:"row"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		if r.Table == "session" {
			session, _ = r.Row["id"].(string)
		}
		if !slices.Contains(tables, r.Table) {
			continue
		}
		if edit != nil {
			edit(r.Table, r.Row)
		}
		InsertRow(t, db, r.Table, r.Row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return session
}

// InsertRow stores row (column → value; a map or list is stored as its
// JSON) in table, replacing a row with the same key.
func InsertRow(t testing.TB, db *sql.DB, table string, row map[string]any) {
	t.Helper()
	cols := make([]string, 0, len(row))
	for c := range row {
		cols = append(cols, c)
	}
	sort.Strings(cols)
	args := make([]any, len(cols))
	for i, c := range cols {
		switch v := row[c].(type) {
		case map[string]any, []any:
			j, _ := json.Marshal(v)
			args[i] = string(j)
		default:
			args[i] = v
		}
	}
	q := "INSERT OR REPLACE INTO `" + table + "` (`" + strings.Join(cols, "`, `") + "`) VALUES (" + strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
	if _, err := db.Exec(q, args...); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
}
