package kit

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
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/lifeloop/lifeloop/adapters"
	"github.com/lifeloop/lifeloop/telemetry"

	_ "modernc.org/sqlite" // pure-Go SQLite driver ("sqlite"): lifeloop stays cgo-free
)

// A harness's SQLite database, read-only.
//
// The database is in WAL mode, shared by every process of the harness.
// lifeloop opens it with mode=ro and query_only: it never writes, never
// checkpoints (a read-only connection that closes last leaves the -wal in
// place) and runs only short autocommit reads, so the harness's writers
// are never locked out (WAL readers do not block writers). A busy timeout
// covers the moments the WAL is being reset.

// pageSize is how many rows one query reads: memory stays flat however
// long the session is.
const pageSize = 256

// settle are the delays, after the last change notification, at which
// the store is read again: a writer's last write to the WAL comes before
// the WAL index (a shared mapping, which makes no notification) says the
// transaction committed — and, for a writer that syncs at each commit,
// before that sync — so the read the notification itself triggers can
// miss the commit.
var settle = []time.Duration{2 * time.Millisecond, 8 * time.Millisecond, 40 * time.Millisecond}

// OpenReadOnly opens the SQLite database at path the way lifeloop reads
// a harness's store: read-only, never created, and only once it is in
// WAL mode. While a harness creates its database and runs its migrations
// the file is still in rollback-journal mode, where a reader's shared
// lock makes the harness's own writes fail ("database is locked"); until
// the header says WAL the database counts as not there yet
// (fs.ErrNotExist), and the next change notification tries again.
func OpenReadOnly(path string) (*sql.DB, error) {
	if err := WALReady(path); err != nil {
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

// WALReady reports fs.ErrNotExist unless the database file's header says
// WAL mode (bytes 18 and 19, the file format's write and read versions,
// are 2), read without taking any SQLite lock.
func WALReady(path string) error {
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

// Signature is the size and modification time of the database at path
// and of its WAL (zero for a file that does not exist): equal signatures
// mean nothing was written in between.
func Signature(path string) (s [4]int64) {
	for i, p := range []string{path, path + "-wal"} {
		if fi, err := os.Stat(p); err == nil {
			s[2*i], s[2*i+1] = fi.Size(), fi.ModTime().UnixNano()
		}
	}
	return s
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
		db, err := OpenReadOnly(f.dbPath)
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

// ScanSessionRows calls each with every row of the session a candidate
// path ("<database>#<session id>", as receipts' provenance names it)
// names, in seq order, a page at a time (memory stays flat), and counts
// as skipped the rows each refuses. A path without a session, a database
// that cannot be opened, a session with no rows or a failed read is an error wrapping
// adapters.ErrHandoffUnreadable.
func ScanSessionRows(ctx context.Context, path string, read RowReader, each func(line []byte) bool) (skipped int, err error) {
	i := strings.LastIndex(path, "#")
	if i <= 0 || i == len(path)-1 {
		return 0, fmt.Errorf("%w: %s names no session (want <database>#<session id>)", adapters.ErrHandoffUnreadable, path)
	}
	dbPath, id := path[:i], path[i+1:]
	if _, err := os.Stat(dbPath); err != nil {
		return 0, fmt.Errorf("%w: %w", adapters.ErrHandoffUnreadable, err)
	}
	db, err := OpenReadOnly(dbPath)
	if err != nil {
		return 0, fmt.Errorf("%w: %s: %w", adapters.ErrHandoffUnreadable, dbPath, err)
	}
	defer func() { _ = db.Close() }()
	after := int64(-1)
	var page []Row
	for rows := 0; ; {
		page, err = read(ctx, db, id, after, pageSize, page[:0])
		if err != nil {
			return skipped, fmt.Errorf("%w: %s: %w", adapters.ErrHandoffUnreadable, path, err)
		}
		rows += len(page)
		for _, r := range page {
			if !each(r.Line) {
				skipped++
			}
			after = r.Seq
		}
		if rows == 0 {
			return 0, fmt.Errorf("%w: %s has no rows of session %s", adapters.ErrHandoffUnreadable, dbPath, id)
		}
		if len(page) < pageSize {
			return skipped, nil
		}
	}
}
