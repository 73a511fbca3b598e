package opencode

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lifeloop/lifeloop/adapters/kit"
	"github.com/lifeloop/lifeloop/telemetry"
)

// OpenCode's database is SQLite in WAL mode, shared by every OpenCode
// process and project of the user, read through the kit's read-only
// follower (kit.OpenReadOnly, kit.FollowSession). OpenCode writes with
// synchronous=NORMAL: no sync at commit in WAL mode.

// sessionSep separates the database path from the session id in a
// candidate's path: "<db>#<session id>".
const sessionSep = "#"

// SessionPath returns the candidate path naming session id in the
// database at db.
func SessionPath(db, id string) string { return db + sessionSep + id }

// splitSessionPath splits a candidate path into the database path and the
// session id.
func splitSessionPath(p string) (db, id string, err error) {
	i := strings.LastIndex(p, sessionSep)
	if i <= 0 || !strings.HasPrefix(p[i+1:], "ses_") {
		return "", "", fmt.Errorf("opencode: %q names no session (want <database>%s<session id>)", p, sessionSep)
	}
	return p[:i], p[i+1:], nil
}

// session is one row of the session table.
type session struct {
	ID        string
	Directory string
	Created   time.Time
	Updated   time.Time
}

// sessionsQuery lists top-level sessions (sub-agent sessions have a
// parent) of some folders created at or after a time, oldest first.
func listSessions(ctx context.Context, db *sql.DB, dirs []string, since time.Time, id string) ([]session, error) {
	var b strings.Builder
	b.WriteString("SELECT id, directory, time_created, time_updated FROM session WHERE parent_id IS NULL AND time_archived IS NULL")
	var args []any
	if id != "" {
		b.WriteString(" AND id = ?")
		args = append(args, id)
	} else {
		b.WriteString(" AND time_created >= ?")
		args = append(args, since.UnixMilli())
	}
	if len(dirs) > 0 {
		b.WriteString(" AND directory IN (?" + strings.Repeat(",?", len(dirs)-1) + ")")
		for _, d := range dirs {
			args = append(args, d)
		}
	}
	b.WriteString(" ORDER BY time_created, id")
	rows, err := db.QueryContext(ctx, b.String(), args...)
	if err != nil {
		return nil, err
	}
	defer func() { _ = rows.Close() }()
	var out []session
	for rows.Next() {
		var s session
		var created, updated int64
		if err := rows.Scan(&s.ID, &s.Directory, &created, &updated); err != nil {
			return nil, err
		}
		s.Created, s.Updated = time.UnixMilli(created), time.UnixMilli(updated)
		out = append(out, s)
	}
	return out, rows.Err()
}

// eventRow is one row of the event table: the event-sourced log of a
// session (session.created.1, message.updated.1, message.part.updated.1,
// ...), seq ascending per session.
type eventRow struct {
	Seq  int64
	Type string
	Data []byte
}

// readEvents returns up to limit events of session id with seq > after,
// in seq order (an indexed range scan: event_aggregate_seq_idx).
func readEvents(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []eventRow) ([]eventRow, error) {
	rows, err := db.QueryContext(ctx, "SELECT seq, type, data FROM event WHERE aggregate_id = ? AND seq > ? ORDER BY seq LIMIT ?", id, after, limit)
	if err != nil {
		return dst, err
	}
	defer func() { _ = rows.Close() }()
	for rows.Next() {
		var r eventRow
		if err := rows.Scan(&r.Seq, &r.Type, &r.Data); err != nil {
			return dst, err
		}
		dst = append(dst, r)
	}
	return dst, rows.Err()
}

// record is the line a store row becomes for the parser:
// {"seq":N,"type":"…","data":<the row's JSON>}.
func record(r eventRow) []byte {
	b := make([]byte, 0, len(r.Data)+len(r.Type)+40)
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, r.Seq, 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendQuote(b, r.Type)
	b = append(b, `,"data":`...)
	if len(r.Data) == 0 {
		b = append(b, "null"...)
	} else {
		b = append(b, r.Data...)
	}
	return append(b, '}')
}

// readEventRows is the kit.RowReader of OpenCode's event table.
func readEventRows(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []kit.Row) ([]kit.Row, error) {
	evs, err := readEvents(ctx, db, id, after, limit, nil)
	for _, r := range evs {
		dst = append(dst, kit.Row{Seq: r.Seq, Line: record(r)})
	}
	return dst, err
}

// follow implements telemetry.RecordSource.Follow for a session path.
func follow(ctx context.Context, cfg telemetry.TailConfig, sink func(telemetry.TailEvent)) error {
	dbPath, id, err := splitSessionPath(cfg.Path)
	if err != nil {
		return err
	}
	return kit.FollowSession(ctx, cfg, sink, dbPath, id, readEventRows)
}

// sessionEnd returns one past the seq of session id's last event (0 when
// it has none); an error when the database has no such session.
func sessionEnd(ctx context.Context, db *sql.DB, id string) (int64, error) {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM session WHERE id = ?", id).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("OpenCode's database has no session %s", id)
	}
	var last sql.NullInt64
	if err := db.QueryRowContext(ctx, "SELECT max(seq) FROM event WHERE aggregate_id = ?", id).Scan(&last); err != nil {
		return 0, err
	}
	if !last.Valid {
		return 0, nil
	}
	return last.Int64 + 1, nil
}
