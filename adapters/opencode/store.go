package opencode

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/lifeloop/lifeloop/telemetry"

	_ "modernc.org/sqlite" // pure-Go SQLite driver ("sqlite"): lifeloop stays cgo-free
)

// OpenCode's database, read-only.
//
// The database is SQLite in WAL mode, shared by every OpenCode process
// and project of the user. lifeloop opens it with mode=ro and
// query_only: it never writes, never checkpoints (a read-only connection
// that closes last leaves the -wal in place) and runs only short
// autocommit reads, so the harness's writers are never locked out (WAL
// readers do not block writers). A busy timeout covers the moments the
// WAL is being reset.

// sessionSep separates the database path from the session id in a
// candidate's path: "<db>#<session id>".
const sessionSep = "#"

// pageSize is how many event rows one query reads: memory stays flat
// however long the session is.
const pageSize = 256

// settle are the delays, after the last change notification, at which
// the store is read again: a writer's last write to the WAL comes before
// the WAL index (a shared mapping, which makes no notification) says the
// transaction committed — and, for a writer that syncs at each commit,
// before that sync — so the read the notification itself triggers can
// miss the commit. (OpenCode writes with synchronous=NORMAL: no sync at
// commit in WAL mode.)
var settle = []time.Duration{2 * time.Millisecond, 8 * time.Millisecond, 40 * time.Millisecond}

// openDB opens the database at path read-only. The file must exist (it is
// never created) and be in WAL mode: while OpenCode creates its database
// and runs its migrations the file is still in rollback-journal mode,
// where a reader's shared lock makes OpenCode's own writes fail
// ("database is locked"); until the header says WAL the database counts
// as not there yet (fs.ErrNotExist), and the next change notification
// tries again.
func openDB(path string) (*sql.DB, error) {
	if err := walReady(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "busy_timeout(2000)")
	q.Add("_pragma", "query_only(1)")
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return db, nil
}

// walReady reports fs.ErrNotExist unless the database file's header says
// WAL mode (bytes 18 and 19, the file format's write and read versions,
// are 2), read without taking any SQLite lock.
func walReady(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var hdr [20]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || hdr[18] != 2 || hdr[19] != 2 {
		return fmt.Errorf("%s is not in WAL mode yet: %w", path, fs.ErrNotExist)
	}
	return nil
}

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

// Row is one row of a session's log in a SQLite database, as the line
// its parser reads.
type Row struct {
	Seq  int64
	Line []byte
}

// RowReader appends to dst up to limit rows of session id with seq >
// after, in seq order.
type RowReader func(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []Row) ([]Row, error)

// OpenReadOnly opens the SQLite database at path the way lifeloop reads
// a harness's store: read-only, never created, and only once it is in
// WAL mode (fs.ErrNotExist until then).
func OpenReadOnly(path string) (*sql.DB, error) { return openDB(path) }

// Signature is the size and modification time of the database at path
// and of its WAL: equal signatures mean nothing was written in between.
func Signature(path string) [4]int64 { return signature(path) }

// readEventRows is the RowReader of OpenCode's event table.
func readEventRows(ctx context.Context, db *sql.DB, id string, after int64, limit int, dst []Row) ([]Row, error) {
	evs, err := readEvents(ctx, db, id, after, limit, nil)
	for _, r := range evs {
		dst = append(dst, Row{Seq: r.Seq, Line: record(r)})
	}
	return dst, err
}

// follower follows one session's rows.
type follower struct {
	dbPath, id string
	cfg        telemetry.TailConfig
	sink       func(telemetry.TailEvent)
	readRows   RowReader

	db      *sql.DB
	last    int64 // seq of the last row delivered; -1 before the first
	missing bool  // the database was gone at the last look
	page    []Row
}

// follow implements telemetry.RecordSource.Follow for a session path.
func follow(ctx context.Context, cfg telemetry.TailConfig, sink func(telemetry.TailEvent)) error {
	dbPath, id, err := splitSessionPath(cfg.Path)
	if err != nil {
		return err
	}
	return FollowSession(ctx, cfg, sink, dbPath, id, readEventRows)
}

// FollowSession delivers the rows of session id in the SQLite database
// at dbPath (WAL mode, opened read-only), from the first, then as the
// harness writes them: it reads again when fsnotify reports a write to
// the database or its WAL (and at the settle delays after it), else
// every cfg.Poll. Each row is a line event whose offset is its seq.
func FollowSession(ctx context.Context, cfg telemetry.TailConfig, sink func(telemetry.TailEvent), dbPath, id string, read RowReader) error {
	if cfg.Poll <= 0 {
		cfg.Poll = telemetry.DefaultPoll
	}
	if cfg.SafetyPoll <= 0 {
		cfg.SafetyPoll = telemetry.DefaultSafetyPoll
	}
	f := &follower{dbPath: dbPath, id: id, cfg: cfg, sink: sink, readRows: read, last: -1}
	defer f.close()

	var events <-chan fsnotify.Event
	var errs <-chan error
	interval := cfg.Poll
	mode := telemetry.ModePoll
	var modeErr error
	if !cfg.ForcePoll {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			if err = w.Add(filepath.Dir(dbPath)); err != nil {
				_ = w.Close()
			}
		}
		if err == nil {
			defer func() { _ = w.Close() }()
			events, errs = w.Events, w.Errors
			interval = cfg.SafetyPoll
			mode = telemetry.ModeNotify
		} else {
			modeErr = fmt.Errorf("cannot watch %s, polling every %s: %w", filepath.Dir(dbPath), cfg.Poll, err)
		}
	}
	sink(telemetry.TailEvent{Kind: telemetry.EventMode, Mode: mode, Err: modeErr})

	f.read(ctx)
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	again := time.NewTimer(time.Hour)
	again.Stop()
	defer again.Stop()
	step := 0
	base := filepath.Base(dbPath)
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if n := filepath.Base(ev.Name); n != base && n != base+"-wal" {
				continue
			}
			f.read(ctx)
			step = 0
			again.Reset(settle[0])
		case _, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			f.read(ctx) // the kernel dropped events: look now
		case <-again.C:
			f.read(ctx)
			if step++; step < len(settle) {
				again.Reset(settle[step] - settle[step-1])
			}
		case <-ticker.C:
			f.read(ctx)
		case done := <-cfg.Syncs:
			f.read(ctx)
			done()
		}
	}
}

func (f *follower) close() {
	if f.db != nil {
		_ = f.db.Close()
		f.db = nil
	}
}

// read delivers every row newer than the last one delivered, a page at
// a time.
func (f *follower) read(ctx context.Context) {
	if f.db == nil {
		db, err := openDB(f.dbPath)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				if !f.missing && f.last >= 0 {
					f.sink(telemetry.TailEvent{Kind: telemetry.EventDeleted, Offset: f.last})
				}
				f.missing = true
				return
			}
			f.sink(telemetry.TailEvent{Kind: telemetry.EventError, Err: err, Offset: f.last})
			return
		}
		f.db = db
		if f.missing {
			f.missing = false
			f.sink(telemetry.TailEvent{Kind: telemetry.EventAppeared, Offset: f.last})
		}
	} else if _, err := os.Stat(f.dbPath); errors.Is(err, fs.ErrNotExist) {
		f.close()
		if !f.missing {
			f.missing = true
			f.sink(telemetry.TailEvent{Kind: telemetry.EventDeleted, Offset: f.last})
		}
		return
	}
	for ctx.Err() == nil {
		var err error
		f.page, err = f.readRows(ctx, f.db, f.id, f.last, pageSize, f.page[:0])
		if err != nil {
			if ctx.Err() == nil {
				f.sink(telemetry.TailEvent{Kind: telemetry.EventError, Err: fmt.Errorf("reading session %s of %s: %w", f.id, f.dbPath, err), Offset: f.last})
			}
			return
		}
		for _, r := range f.page {
			f.sink(telemetry.TailEvent{Kind: telemetry.EventLine, Line: r.Line, Offset: r.Seq, LineNo: r.Seq + 1, Size: int64(len(r.Line))})
			f.last = r.Seq
		}
		if len(f.page) < pageSize {
			return
		}
	}
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
