package usage

import (
	"context"
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

// database reads the calls a database recorded since old's mark (nil:
// never read) and returns its new record, leaving old as it was. A
// database made anew since (the store says so with a mark below the one
// given) is read from its start and its old identities forgotten. A
// store that hands its calls over one at a time (adapters.UsageStreamer)
// is read so: a database's calls are never all held at once.
func (r *reader) database(old *fileRecord, path, harness string, us adapters.UsageStore, st fileStat) (*fileRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var mark int64
	if old != nil && old.Harness == harness {
		mark = old.Offset
	}
	sm, ok := us.(adapters.UsageStreamer)
	if !ok {
		entries, next, err := us.UsageSince(ctx, path, mark, r.entries[:0])
		r.entries = entries
		if err != nil {
			return nil, err
		}
		rec := r.storeRecord(old, path, harness, mark, next)
		for i := range entries {
			r.add(rec, &entries[i])
		}
		rec.Size, rec.ModTime, rec.Offset = st.size, st.modTime, next
		return rec, nil
	}
	// Read as a continuation of old; a database made anew (known only
	// at the end) is read again from its start.
	rec := r.storeRecord(old, path, harness, mark, mark)
	kept := len(rec.Keys)
	next, err := sm.EachUsageSince(ctx, path, mark, func(e *adapters.UsageEntry) { r.add(rec, e) })
	if err == nil && mark != 0 && next < mark {
		for _, k := range rec.Keys[kept:] {
			r.seen.remove(k)
		}
		rec = r.storeRecord(old, path, harness, 0, 0)
		kept = 0
		next, err = sm.EachUsageSince(ctx, path, 0, func(e *adapters.UsageEntry) { r.add(rec, e) })
	}
	if err != nil {
		// Nothing of this reading counts: the next run reads it again,
		// and old's identities stay counted.
		for _, k := range rec.Keys[kept:] {
			r.seen.remove(k)
		}
		if kept == 0 && old != nil {
			for _, k := range old.Keys {
				r.seen.add(k)
			}
		}
		return nil, err
	}
	rec.Size, rec.ModTime, rec.Offset = st.size, st.modTime, next
	return rec, nil
}

// storeRecord is the record a database's reading from mark adds to: a
// copy of old when it continues old's (next at or past mark), else a new
// one, old's identities forgotten.
func (r *reader) storeRecord(old *fileRecord, path, harness string, mark, next int64) *fileRecord {
	if mark == 0 || next < mark {
		if old != nil {
			for _, k := range old.Keys {
				r.seen.remove(k)
			}
		}
		return &fileRecord{Path: path, Harness: harness}
	}
	c := *old
	c.at = nil
	c.Buckets = append([]bucket(nil), old.Buckets...)
	c.Keys = append([]uint64(nil), old.Keys...)
	return &c
}
