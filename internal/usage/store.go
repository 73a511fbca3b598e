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
// given) is read from its start and its old identities forgotten.
func (r *reader) database(old *fileRecord, path, harness string, us adapters.UsageStore, st fileStat) (*fileRecord, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	var mark int64
	if old != nil && old.Harness == harness {
		mark = old.Offset
	}
	entries, next, err := us.UsageSince(ctx, path, mark, r.entries[:0])
	r.entries = entries
	if err != nil {
		return nil, err
	}
	var rec *fileRecord
	if mark == 0 || next < mark {
		if old != nil {
			for _, k := range old.Keys {
				r.seen.remove(k)
			}
		}
		rec = &fileRecord{Path: path, Harness: harness}
	} else {
		c := *old
		c.Buckets = append([]bucket(nil), old.Buckets...)
		c.Keys = append([]uint64(nil), old.Keys...)
		rec = &c
	}
	rec.Size, rec.ModTime, rec.Offset = st.size, st.modTime, next
	for i := range entries {
		r.add(rec, &entries[i])
	}
	return rec, nil
}
