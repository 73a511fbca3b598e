package launcher

import (
	"sort"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// The meter's readings run off the supervisor loop. An end (a turn's, the
// session's, a status) asks for a reading and waits for one that started
// after it asked — so it covers every call written before — for
// readWait at most. One goroutine reads at a time: it starts when a
// reading is asked and none runs, reads again while more were asked
// meanwhile, and ends when none is left, so nothing outlives the last
// end by more than one reading (a store's: storeTimeout at most). An end
// that stops waiting leaves the reading to finish: its calls go to the
// next end.

// fileReadWait bounds how long an end waits for a reading of the
// harness's files (local reads of what was appended: normally
// milliseconds; the bound is for a stuck disk).
const fileReadWait = 5 * time.Second

// readWait is how long an end waits for a reading: storeWait for a
// database, fileReadWait for files.
func (u *usageMeter) readWait() time.Duration {
	if u.store != nil {
		return storeWait
	}
	return fileReadWait
}

// readLocked asks for a reading and waits, at most d, for one that
// started after it asked to finish; it reports whether one did. u.mu is
// held on entry and on return, let go while it waits.
func (u *usageMeter) readLocked(d time.Duration) bool {
	u.asked++
	want := u.asked
	if !u.reading {
		u.reading = true
		go u.readAll()
	}
	if u.changed == nil {
		u.changed = make(chan struct{})
	}
	t := time.NewTimer(d)
	defer t.Stop()
	for u.done < want {
		ch := u.changed
		u.mu.Unlock()
		select {
		case <-ch:
			u.mu.Lock()
		case <-t.C:
			u.mu.Lock()
			return u.done >= want
		}
	}
	return true
}

// readAll is the reading goroutine: it reads every noted file's new
// calls (without the lock: only this goroutine reads the files) and
// counts them (with it), again while readings were asked meanwhile, and
// every turnUsagePoll while a turn's end waits for a call (callBy). It
// returns when every reading asked is done.
func (u *usageMeter) readAll() {
	var entries []adapters.UsageEntry
	var reads []fileRead
	for {
		u.mu.Lock()
		if u.done == u.asked {
			u.reading = false
			u.mu.Unlock()
			return
		}
		covers := u.asked
		paths := make([]string, 0, len(u.files))
		for p := range u.files {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		files := make([]*usageFile, len(paths))
		for i, p := range paths {
			files[i] = u.files[p]
		}
		u.mu.Unlock()

		reads, entries = reads[:0], entries[:0]
		for i, f := range files {
			n := len(entries)
			if u.store != nil {
				entries = u.readStore(paths[i], f, entries)
			} else {
				entries = f.read(paths[i], entries)
			}
			reads = append(reads, fileRead{since: f.since, n: len(entries) - n})
		}

		u.mu.Lock()
		at := 0
		for _, r := range reads {
			for _, e := range entries[at : at+r.n] {
				if e.At.IsZero() || !e.At.Before(r.since) {
					u.count(e)
				}
			}
			at += r.n
		}
		if left := time.Until(u.callBy); len(u.pending) == 0 && left > 0 {
			u.mu.Unlock()
			time.Sleep(min(turnUsagePoll, left))
			continue
		}
		u.done = covers
		if u.changed != nil {
			close(u.changed)
		}
		u.changed = make(chan struct{})
		u.mu.Unlock()
	}
}

// fileRead is how many of a reading's calls one file gave, and the time
// before which they are dropped.
type fileRead struct {
	since time.Time
	n     int
}
