package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
	"github.com/lifeloop/lifeloop/internal/statedir"
)

// The spool's bounds: receipts the storage refused wait in memory until
// one of these is reached, then the least important go first.
const (
	SpoolReceipts = 4096
	SpoolBytes    = 8 << 20
)

// Retry delays of the spool's own timer (doubling), for when nothing else
// appends.
const (
	retryFirst = 100 * time.Millisecond
	retryMax   = 2 * time.Second
)

// CapabilityLedger is the capability named by the capability.degraded
// receipt that reports an outage of the ledger's storage.
const CapabilityLedger = "receipts.receipt_ledger"

// storageFault reports whether err is the storage refusing a write (so
// the receipt can wait and be retried), not a bad receipt.
func storageFault(err error) bool {
	for _, e := range []syscall.Errno{unix.ENOSPC, unix.EDQUOT, unix.EIO, unix.EROFS, unix.EFBIG} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

type spooled struct {
	r    contract.LifecycleReceipt
	o    AppendOptions
	size int
}

// spool holds refused receipts in order and what an outage cost.
type spool struct {
	items []spooled
	bytes int

	// The current outage (since is zero when there is none).
	since     time.Time
	cause     error
	delayed   int                       // receipts that waited
	coalesced int                       // waiting ticks replaced by a newer one
	lost      map[contract.Event]int    // receipts dropped from a full spool
	ref       contract.LifecycleReceipt // the first held receipt: whose session the outage report is in
	retry     *time.Timer
	delay     time.Duration
}

func (s *spool) len() int { return len(s.items) }

// priority orders what a full spool drops first: ticks (0), then
// receipts a reader can do without (1), then the session's own story (2):
// session receipts (a renewal's steps among them), frames, context
// pressure and compaction.
func priority(ev contract.Event) int {
	switch {
	case ev == contract.EventSupervisorTick:
		return 0
	case ev.IsFrame(), strings.HasPrefix(string(ev), "session."), strings.HasPrefix(string(ev), "context."):
		return 2
	}
	return 1
}

// add queues it, replacing a spooled tick with a newer one and making
// room by priority when full.
func (s *spool) add(it spooled) {
	if it.r.Event == contract.EventSupervisorTick {
		for i := len(s.items) - 1; i >= 0; i-- {
			if s.items[i].r.Event == contract.EventSupervisorTick {
				s.remove(i)
				s.coalesced++
				break
			}
		}
	}
	for len(s.items) >= SpoolReceipts || s.bytes+it.size > SpoolBytes {
		// The oldest of the lowest rank goes, unless everything waiting
		// matters more than it.
		victim, vp := -1, 3
		for i, x := range s.items {
			if p := priority(x.r.Event); p < vp {
				victim, vp = i, p
			}
		}
		if victim < 0 || vp > priority(it.r.Event) {
			s.count(it.r.Event)
			return
		}
		s.drop(victim)
	}
	s.items = append(s.items, it)
	s.bytes += it.size
	s.delayed++
}

// drop removes item i and counts it lost.
func (s *spool) drop(i int) {
	s.count(s.items[i].r.Event)
	s.remove(i)
}

func (s *spool) remove(i int) {
	s.bytes -= s.items[i].size
	s.delayed--
	s.items = append(s.items[:i], s.items[i+1:]...)
}

func (s *spool) count(ev contract.Event) {
	if s.lost == nil {
		s.lost = make(map[contract.Event]int)
	}
	s.lost[ev]++
}

func (s *spool) stopRetry() {
	if s.retry != nil {
		s.retry.Stop()
		s.retry = nil
	}
}

// outage is what one storage outage cost, for the capability.degraded
// receipt that ends it.
type outage struct {
	ref          contract.LifecycleReceipt
	since, until time.Time
	cause        error
	delayed      int
	coalesced    int
	lost         map[contract.Event]int
}

// takeReport ends the current outage once the spool is empty.
func (s *spool) takeReport(now time.Time) (outage, bool) {
	if s.since.IsZero() || len(s.items) > 0 {
		return outage{}, false
	}
	o := outage{ref: s.ref, since: s.since, until: now, cause: s.cause, delayed: s.delayed, coalesced: s.coalesced, lost: s.lost}
	s.since, s.cause, s.delayed, s.coalesced, s.lost, s.delay, s.ref = time.Time{}, nil, 0, 0, nil, 0, contract.LifecycleReceipt{}
	s.stopRetry()
	return o, true
}

func (o outage) lostTotal() int {
	n := 0
	for _, c := range o.lost {
		n += c
	}
	return n
}

func (o outage) describe() string {
	msg := fmt.Sprintf("the ledger could not be written from %s to %s (%v): %d receipts were held in memory and recorded late",
		o.since.UTC().Format(time.RFC3339), o.until.UTC().Format(time.RFC3339), CauseText(o.cause), o.delayed)
	if o.coalesced > 0 {
		msg += fmt.Sprintf(" (%d waiting ticks were replaced by newer ones)", o.coalesced)
	}
	if n := o.lostTotal(); n > 0 {
		evs := make([]string, 0, len(o.lost))
		for ev, c := range o.lost {
			evs = append(evs, fmt.Sprintf("%s×%d", ev, c))
		}
		sort.Strings(evs)
		msg += fmt.Sprintf("; %d were lost when the %d-receipt spool was full (%s)", n, SpoolReceipts, strings.Join(evs, ", "))
	}
	return msg
}

// CauseText is a storage error's cause ("no space left on device"),
// short and without paths.
func CauseText(err error) string {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	if err == nil {
		return "unknown error"
	}
	return err.Error()
}

// hold spools r after the storage refused a write (cause), or behind
// receipts already waiting (cause nil).
func (l *Ledger) hold(r contract.LifecycleReceipt, o AppendOptions, cause error) (contract.LifecycleReceipt, AppendResult, error) {
	if r.SchemaVersion == "" {
		r.SchemaVersion = contract.ReceiptSchemaVersion
	}
	if err := r.Validate(); err != nil {
		// A receipt that would never be recorded is refused now, as
		// without an outage.
		return contract.LifecycleReceipt{}, AppendResult{}, fmt.Errorf("append: receipt not recorded: %w", err)
	}
	if l.spool.since.IsZero() {
		l.spool.since, l.spool.cause, l.spool.ref = l.opts.Now(), cause, r
		l.opts.Logger.Error("ledger writes failing; receipts are held in memory and retried",
			"ledger", l.path, "cause", CauseText(cause), "spool_receipts", SpoolReceipts)
	}
	size := 512
	if b, err := json.Marshal(r); err == nil {
		size = len(b)
	}
	r.Sequence = nil
	l.spool.add(spooled{r: r, o: o, size: size})
	l.armRetry()
	return r, AppendResult{Outcome: Spooled, Fault: cause}, nil
}

// flushSpool writes spooled receipts in order until the storage refuses
// one. The caller holds the lock.
func (l *Ledger) flushSpool() {
	for l.spool.len() > 0 {
		it := l.spool.items[0]
		_, _, err := l.appendLocked(it.r, it.o)
		if err != nil && storageFault(err) {
			return
		}
		if err != nil {
			l.opts.Logger.Error("a held receipt could not be recorded", "event", string(it.r.Event), "err", err)
			l.spool.count(it.r.Event)
			l.spool.delayed--
		}
		l.spool.bytes -= it.size
		l.spool.items = l.spool.items[1:]
	}
	l.spool.items = nil
}

// armRetry makes sure a held spool is retried when nothing else appends.
func (l *Ledger) armRetry() {
	if l.spool.retry != nil {
		return
	}
	if l.spool.delay == 0 {
		l.spool.delay = retryFirst
	} else if l.spool.delay *= 2; l.spool.delay > retryMax {
		l.spool.delay = retryMax
	}
	l.spool.retry = time.AfterFunc(l.spool.delay, func() {
		l.mu.Lock()
		l.spool.retry = nil
		l.mu.Unlock()
		_ = l.Flush()
	})
}

// Flush writes the spool when receipts wait in it (see the package
// documentation); it is what the retry timer calls. It reports the
// storage error while receipts still wait.
func (l *Ledger) Flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil || l.spool.since.IsZero() {
		return nil
	}
	if err := l.lock(); err != nil {
		l.armRetry()
		return err
	}
	defer l.unlock()
	_, err := l.drain()
	return err
}

// drain writes the spool and, once it is empty, the capability.degraded
// receipt that ends the outage (returned). The caller holds mu and the
// lock.
func (l *Ledger) drain() ([]contract.LifecycleReceipt, error) {
	if l.spool.since.IsZero() {
		return nil, nil
	}
	l.flushSpool()
	if l.spool.len() > 0 {
		l.armRetry()
		return nil, fmt.Errorf("%d receipts still wait: %s", l.spool.len(), CauseText(l.spool.cause))
	}
	d, ok := l.spool.takeReport(l.opts.Now())
	if !ok {
		return nil, nil
	}
	l.opts.Logger.Info("ledger writes resumed", "ledger", l.path, "receipts_delayed", d.delayed, "receipts_lost", d.lostTotal())
	g, _, err := l.appendLocked(l.degradedReceipt(d.ref, d), AppendOptions{})
	if err != nil {
		return nil, err
	}
	return []contract.LifecycleReceipt{g}, nil
}

// Unrecorded is what the ledger could not record: receipts still waiting
// in the spool plus those dropped from it, and the storage error of the
// outage. After Close, this is what was lost.
func (l *Ledger) Unrecorded() (n int, cause error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = l.spool.len()
	for _, c := range l.spool.lost {
		n += c
	}
	return n, l.spool.cause
}

// degradedReceipt is the capability.degraded receipt that ends an outage,
// in the session and invocation of r.
func (l *Ledger) degradedReceipt(r contract.LifecycleReceipt, o outage) contract.LifecycleReceipt {
	src := l.opts.IDs
	at := o.since.Unix()
	ev := o.describe()
	rc := contract.RetryAfterReconfigure
	inv := r.InvocationID
	if inv == "" {
		inv = src.New(ids.PrefixInvocation)
	}
	current := contract.SupportPartial
	warn := contract.Warning{Code: "ledger_write_delayed", Message: ev}
	if o.lostTotal() > 0 {
		warn.Code = "ledger_receipts_lost"
	}
	d := contract.DerivedReceipt(r)
	d.InvocationID = inv
	d.ReceiptID, d.Event, d.EventID = src.New(ids.PrefixReceipt), contract.EventCapabilityDegraded, src.New(ids.PrefixEvent)
	d.Status, d.AtEpochS = contract.StatusDegraded, o.until.Unix()
	d.CapabilityDegradations = []contract.CapabilityDegradation{{
		Capability: CapabilityLedger, PreviousSupport: contract.SupportNative, CurrentSupport: current,
		ObservedAtEpochS: &at, Evidence: &ev, RetryClass: &rc,
	}}
	d.TelemetrySummary = map[string]any{
		"ledger_outage_from": o.since.Unix(), "ledger_outage_to": o.until.Unix(),
		"receipts_delayed": o.delayed, "receipts_lost": o.lostTotal(), "ticks_coalesced": o.coalesced,
	}
	d.Warnings = []contract.Warning{warn}
	return d
}

// synced applies the SyncMode after a receipt of event ev was written.
// The caller holds mu.
func (l *Ledger) synced(ev contract.Event) error {
	switch {
	case l.opts.Sync == SyncNone:
		return nil
	case l.opts.Sync == SyncEach:
		l.dirty = false
		dir := l.dirUnsynced
		l.dirUnsynced = false
		return l.syncFiles(l.f, l.ext.f, dir)
	case ev == contract.EventSupervisorTick:
		// Ticks ride along with the next sync; they never cause one.
		return nil
	}
	stateChange := ev == contract.EventSessionStarted || ev == contract.EventSessionEnded
	if l.dirty && !stateChange {
		return nil // the window is armed; this receipt rides along
	}
	// The first unsynced receipt arms the window. A state change starts
	// the sync at once, on a goroutine of its own: the recording path
	// (the harness's start, its exit code) never waits for the disk, and
	// Close waits for what is still unsynced.
	l.dirty = true
	if stateChange {
		// Its own goroutine rather than a timer due now: a timer waits
		// for a P to look at the timer heap.
		go l.groupSync()
		return nil
	}
	if l.syncTimer == nil {
		l.syncTimer = time.AfterFunc(l.window, l.groupSync)
	} else {
		l.syncTimer.Reset(l.window)
	}
	return nil
}

// groupSync is the group commit: one fdatasync for every receipt written
// since the last, outside mu so appends go on meanwhile.
func (l *Ledger) groupSync() {
	l.mu.Lock()
	if l.f == nil || !l.dirty {
		l.mu.Unlock()
		return
	}
	l.dirty = false
	dir := l.dirUnsynced
	l.dirUnsynced = false
	f, x := l.f, l.ext.f
	l.fdMu.RLock()
	l.mu.Unlock()
	defer l.fdMu.RUnlock()
	if err := l.syncFiles(f, x, dir); err != nil {
		l.opts.Logger.Error("ledger sync failed", "ledger", l.path, "cause", CauseText(err))
	}
}

// syncFiles flushes the ledger and its external-sequence file, and with
// dir the folder entry of a new ledger.
func (l *Ledger) syncFiles(f, ext *os.File, dir bool) error {
	l.syncs.Add(1)
	if err := datasync(f); err != nil {
		return fmt.Errorf("fsync %s: %w", l.path, err)
	}
	if dir {
		if err := statedir.SyncDir(filepath.Dir(l.path)); err != nil {
			return err
		}
	}
	if ext != nil {
		if err := datasync(ext); err != nil {
			return fmt.Errorf("fsync %s: %w", l.path+ExtSuffix, err)
		}
	}
	return nil
}
