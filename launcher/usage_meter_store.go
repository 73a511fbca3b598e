package launcher

import (
	"context"
	"time"

	"github.com/lifeloop/lifeloop/adapters"
)

// A harness whose usage lives in a database (adapters.UsageStore) is read
// like files, off the loop (usage_meter_read.go), but an end waits for
// the reading storeWait at most: a reading a locked or busy database
// holds up is taken by the next end (a session's end, the last, then
// counts without it), and ends after storeTimeout at most.
const (
	storeWait    = 500 * time.Millisecond
	storeTimeout = 10 * time.Second
)

// readStore appends the calls the session at path recorded since the
// last reading to dst; a failed reading appends none and keeps the mark,
// so the next reading counts them.
func (u *usageMeter) readStore(path string, f *usageFile, dst []adapters.UsageEntry) []adapters.UsageEntry {
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	n := len(dst)
	es, next, err := u.store.UsageSince(ctx, path, f.offset, dst)
	if err != nil {
		return dst[:n]
	}
	f.offset = next
	return es
}
