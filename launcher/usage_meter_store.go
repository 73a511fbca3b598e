package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// A harness whose usage lives in a database (adapters.UsageStore) is read
// off the loop: each end starts a reading of the session from where the
// last stopped and waits for it at most storeWait; a reading a locked or
// busy database holds up is taken by the next end (a session's end, the
// last, then counts without it), and ends after storeTimeout at most.
const (
	storeWait    = 500 * time.Millisecond
	storeTimeout = 10 * time.Second
)

// storeRead is a store's reading: the calls from a mark and the next.
type storeRead struct {
	entries []adapters.UsageEntry
	next    int64
	err     error
}

// readStore returns the calls the session at path recorded since the
// last reading (none while a reading is under way, or failed: the mark
// stays, so the next reading counts them).
func (u *usageMeter) readStore(path string, f *usageFile) []adapters.UsageEntry {
	if f.reading == nil {
		ch := make(chan storeRead, 1)
		f.reading = ch
		st, mark := u.store, f.offset
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
			defer cancel()
			es, next, err := st.UsageSince(ctx, path, mark, nil)
			ch <- storeRead{entries: es, next: next, err: err}
		}()
	}
	t := time.NewTimer(storeWait)
	defer t.Stop()
	select {
	case r := <-f.reading:
		f.reading = nil
		if r.err != nil {
			return nil
		}
		f.offset = r.next
		return r.entries
	case <-t.C:
		return nil
	}
}
