package usage

import (
	"context"
	"errors"
	"os"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// A harness whose usage lives in a database (adapters.UsageStore) has a
// record per database in the index, like a file's: its Offset is the
// mark its next reading starts from (a row of the database, not a byte),
// its Size and ModTime those of the database and its write-ahead log
// together, so a run with nothing new reads no database.

// storeTimeout bounds one database's reading: a locked or busy database
// is reported and read again on the next run, never waited for.
const storeTimeout = 10 * time.Second

// storeStat is what a run compares with a database's record: the sizes
// of the database and its write-ahead log added, the later of their
// times (SQLite in WAL mode writes the log, and the database only when it
// checkpoints).
func storeStat(path string) fileStat {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStat{err: err}
	}
	st := fileStat{size: fi.Size(), modTime: fi.ModTime().UnixNano()}
	if wal, err := os.Stat(path + "-wal"); err == nil {
		st.size += wal.Size()
		st.modTime = max(st.modTime, wal.ModTime().UnixNano())
	}
	return st
}

// database reads the calls a database recorded since res.old's mark
// (nil: never read) and returns its new record, leaving the old one as
// it was; res gets where the reading that counted began. A database
// made anew since (the store says so with a mark below the one given)
// is read from its start and its old identities forgotten. A store that
// hands its calls over one at a time (adapters.UsageStreamer) is read
// so: a database's calls are never all held at once.
func (r *reader) database(res *readResult, path, harness string, us adapters.UsageStore, st fileStat) (*fileRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	old := res.old
	var mark int64
	if old != nil && old.Harness == harness {
		mark = old.Offset
	}
	res.mark = mark
	sm, ok := us.(adapters.UsageStreamer)
	if !ok {
		entries, next, err := us.UsageSince(ctx, path, mark, r.entries[:0])
		r.entries = entries
		if err != nil {
			return nil, err
		}
		rec := r.storeRecord(res, path, harness, mark, next)
		for i := range entries {
			r.add(rec, &entries[i])
		}
		res.entries = len(entries)
		rec.Size, rec.ModTime, rec.Offset = st.size, st.modTime, next
		return rec, nil
	}
	// Read as a continuation of old; a database made anew (known only
	// at the end) is read again from its start, the calls read so far
	// given up.
	rec := r.storeRecord(res, path, harness, mark, mark)
	count := func(e *adapters.UsageEntry) {
		res.entries++
		r.add(rec, e)
	}
	next, err := sm.EachUsageSince(ctx, path, mark, count)
	if err == nil && mark != 0 && next < mark {
		res.from, res.mark, res.entries = r.calls, 0, 0
		r.ids.giveUp(r.fileNo, r.calls)
		clear(r.recent[:])
		rec = r.storeRecord(res, path, harness, 0, 0)
		next, err = sm.EachUsageSince(ctx, path, 0, count)
	}
	if err != nil {
		// Nothing of this reading counts: the next run reads it again.
		return nil, err
	}
	rec.Size, rec.ModTime, rec.Offset = st.size, st.modTime, next
	return rec, nil
}

// databaseAgain reads a database as res's reading did, its first
// res.entries entries only, without the calls that lost.
func (r *reader) databaseAgain(res *readResult, path, harness string, us adapters.UsageStore) (*fileRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	rec := &fileRecord{Path: path, Harness: harness}
	if res.continued {
		rec = copyRecord(res.old)
	}
	n := 0
	add := func(e *adapters.UsageEntry) {
		if n < res.entries {
			n++
			r.add(rec, e)
		}
	}
	var err error
	if sm, ok := us.(adapters.UsageStreamer); ok {
		_, err = sm.EachUsageSince(ctx, path, res.mark, add)
	} else {
		var entries []adapters.UsageEntry
		entries, _, err = us.UsageSince(ctx, path, res.mark, r.entries[:0])
		r.entries = entries
		for i := range entries {
			add(&entries[i])
		}
	}
	if err == nil && n < res.entries {
		err = errors.New("the database changed while it was read")
	}
	if err != nil {
		return nil, err
	}
	rec.Size, rec.ModTime, rec.Offset = res.rec.Size, res.rec.ModTime, res.rec.Offset
	return rec, nil
}

// storeRecord is the record a database's reading from mark adds to: a
// copy of res.old when it continues it (next at or past mark), else a
// new one.
func (r *reader) storeRecord(res *readResult, path, harness string, mark, next int64) *fileRecord {
	if mark == 0 || next < mark {
		res.continued = false
		return &fileRecord{Path: path, Harness: harness}
	}
	res.continued = true
	return copyRecord(res.old)
}

// copyRecord is a copy of rec to add to, rec left as it was.
func copyRecord(rec *fileRecord) *fileRecord {
	c := *rec
	c.at = nil
	c.Buckets = append([]bucket(nil), rec.Buckets...)
	return &c
}
