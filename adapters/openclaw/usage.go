package openclaw

import (
	"context"
	"database/sql"
	"path/filepath"
	"slices"
	"strings"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/adapters/kit"
)

var _ adapters.UsageStreamer = Harness{}

// UsageDatabases implements adapters.UsageStore: every agent's database,
// <state>/agents/<agent>/agent/openclaw-agent.sqlite ($OPENCLAW_STATE_DIR,
// else ~/.openclaw).
func (Harness) UsageDatabases(getenv func(string) string) ([]string, error) {
	var env []string
	for _, k := range []string{stateDirVar, "HOME"} {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	state := StateDir(env)
	if state == "" {
		return nil, nil
	}
	m, err := filepath.Glob(filepath.Join(state, "agents", "*", "agent", dbName))
	slices.Sort(m)
	return m, err
}

// UsageSince implements adapters.UsageStore over the transcript_events
// table: each row is a session entry (event_json, or event_zstd
// decompressed), read by the line parser of usage entries
// (NewUsageParser), a session's header row first so that its calls name
// its folder. For a database the mark is the row's rowid; for a session
// ("<database>#<session id>") its seq.
func (h Harness) UsageSince(ctx context.Context, source string, mark int64, dst []adapters.UsageEntry) ([]adapters.UsageEntry, int64, error) {
	next, err := h.EachUsageSince(ctx, source, mark, func(e *adapters.UsageEntry) { dst = append(dst, *e) })
	return dst, next, err
}

// EachUsageSince implements adapters.UsageStreamer: UsageSince's calls,
// one at a time.
func (Harness) EachUsageSince(ctx context.Context, source string, mark int64, each func(*adapters.UsageEntry)) (int64, error) {
	dbPath, id := source, ""
	if i := strings.LastIndex(source, sessionSep); i > 0 && i < len(source)-1 {
		dbPath, id = source[:i], source[i+1:]
	}
	db, err := kit.OpenReadOnly(dbPath)
	if err != nil {
		return mark, err
	}
	defer func() { _ = db.Close() }()
	col, where, args := "rowid", "", []any(nil)
	if id != "" {
		col, where, args = "seq", " AND session_id = ?", []any{id}
	}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT max("+col+") FROM transcript_events WHERE 1"+where, args...).Scan(&last); err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return mark, nil
		}
		return mark, err
	}
	if !last.Valid {
		return 0, nil
	}
	if last.Int64+1 < mark {
		mark = 0 // the database was made anew
	}
	next := max(mark, last.Int64+1)
	// The headers of the sessions with rows from the mark on, read first:
	// the database has one connection, held by the rows while they are
	// read one at a time.
	heads, err := headers(ctx, db, col, where, mark, args)
	if err != nil {
		return mark, err
	}
	rows, err := db.QueryContext(ctx, "SELECT "+col+", session_id, seq, event_json, event_zstd FROM transcript_events WHERE "+col+" >= ?"+where+" ORDER BY "+col,
		append([]any{mark}, args...)...)
	if err != nil {
		return mark, err
	}
	defer func() { _ = rows.Close() }()
	parsers := map[string]adapters.UsageParser{}
	// A row's calls, handed over before the next row is read.
	var buf []adapters.UsageEntry
	for rows.Next() {
		var at, seq int64
		var session string
		var js sql.NullString
		var z []byte
		if err := rows.Scan(&at, &session, &seq, &js, &z); err != nil {
			return mark, err
		}
		next = max(next, at+1)
		line := []byte(js.String)
		if !js.Valid {
			if line, err = decompress(z); err != nil {
				line = nil // unreadable: counts nothing
			}
		}
		p := parsers[session]
		if p == nil {
			p = NewUsageParser()
			parsers[session] = p
			if head := heads[session]; seq > 0 && head != "" {
				buf, _ = p.Parse(buf[:0], []byte(head))
				for i := range buf {
					each(&buf[i])
				}
			}
		}
		if len(line) > 0 {
			buf, _ = p.Parse(buf[:0], line) // a row it cannot read counts nothing
			for i := range buf {
				each(&buf[i])
			}
		}
	}
	if err := rows.Err(); err != nil {
		return mark, err
	}
	return next, nil
}

// headers returns the first entry (its header: id and folder) of each
// session with rows from mark on.
func headers(ctx context.Context, db *sql.DB, col, where string, mark int64, args []any) (map[string]string, error) {
	rows, err := db.QueryContext(ctx, `SELECT session_id, event_json FROM transcript_events WHERE seq = 0 AND session_id IN
		(SELECT DISTINCT session_id FROM transcript_events WHERE `+col+` >= ?`+where+`)`, append([]any{mark}, args...)...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	out := map[string]string{}
	for rows.Next() {
		var id string
		var js sql.NullString
		if err := rows.Scan(&id, &js); err != nil {
			return nil, err
		}
		out[id] = js.String
	}
	return out, rows.Err()
}

// NewUsageParser returns the parser of one session's entries (a line
// each, OpenClaw's transcript rows): the usage parser of session entries
// (kit.NewEntryUsageParser), its cost native — OpenClaw prices each call
// from its model configuration.
func NewUsageParser() adapters.UsageParser {
	return kit.NewEntryUsageParser(SourceDatabase, nil)
}
