// Package ledger is lifeloop's durable per-session receipt ledger: the
// file receipts.jsonl in a session folder, one contract.LifecycleReceipt
// per line, append-only.
//
// # Writing
//
// The ledger assigns each appended receipt the next sequence number of the
// session (1-based, strictly increasing, no gaps). Several processes may
// append to one ledger at once: every append takes an exclusive flock(2) on
// the ledger file, first reads whatever other processes appended since this
// process last looked (only the new bytes, from the remembered end offset),
// then writes its line(s) with one write(2) on an O_APPEND descriptor. A
// receipt returned by Append is therefore in the kernel and visible to
// every reader: a crash of lifeloop itself (SIGKILL) loses nothing. When
// it also reaches the disk is the SyncMode's promise (see SyncGroup, the
// default, and SyncEach).
//
// # Write failures
//
// A write the storage refuses (no space, quota, I/O error, read-only
// file system) does not fail the append: the receipt waits, sequence not
// yet assigned, in a bounded in-memory spool (SpoolReceipts receipts,
// SpoolBytes bytes) and Append reports Outcome Spooled. Every later
// Append, Flush and a retry timer of the ledger's own write the spool in
// order first, so once space returns the ledger goes on gapless. When the
// spool is full, ticks go first (a spooled tick is replaced by the next
// one in any case), then other receipts, and session (a renewal's steps
// among them), frame and context receipts last. After an outage the ledger appends one
// capability.degraded receipt (capability receipts.receipt_ledger) saying what was
// delayed, what was lost and when. Unrecorded reports what is still
// waiting.
//
// # Idempotency
//
// Receipts with an idempotency_key are indexed by (client_id, adapter_id,
// idempotency_key); receipts without one by receipt_id, which the contract
// makes the replay boundary in that case. The first receipt recorded under
// a key or id is the original. Appending a receipt under a recorded key
// (or, without a key, a recorded receipt_id) compares contents:
//
//   - identical content is a replay: nothing is appended and the original
//     receipt (with its original receipt_id and sequence) is returned;
//   - different content is a duplicate_id_conflict: the ledger appends a
//     failed receipt instead (a new receipt_id, failure_class
//     state_conflict, retry_class from the contract's default mapping, a
//     warning with code duplicate_id_conflict naming the original
//     sequence) and returns it.
//
// "Content" is the receipt's JSON encoding with receipt_id, sequence,
// at_epoch_s and invocation_id cleared and without the warnings the ledger
// adds itself (codes listed in ledgerWarningCodes): those fields are
// assigned per delivery attempt, everything else (event, event_id, status,
// payload receipts, failure and retry classes, harness ids, telemetry,
// caller warnings, parent_receipt_id) is the content being recorded.
// The index holds only positions; the original is read back from the file
// when a new receipt collides with it, so opening a ledger stays one
// sequential read.
//
// # External sequences and gaps
//
// A caller that knows an external sequence (a harness's own event counter,
// a client's delivery counter) passes it in AppendOptions. When it skips
// numbers within its scope, the ledger appends a receipt.gap_detected
// receipt naming the missing range before the receipt. The last external
// sequence per scope is kept in receipts.ext.jsonl beside the ledger,
// written before the receipt it belongs to; entries that point past the
// ledger's last sequence (their receipt never got written) are dropped.
//
// # Crashes
//
// A crash mid-write leaves a torn last line. The next process to open or
// lock the ledger moves those bytes into receipts.jsonl.torn (appended,
// 0600), truncates the ledger to its last complete line and puts a warning
// with code ledger_torn_tail_recovered on the next appended receipt.
// Complete earlier lines are never touched. Verify reports the same.
//
// # Reading
//
// ReadSince, Follow and Verify read the file directly; see their docs.
package ledger

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
	"github.com/lifeloop/lifeloop/internal/ids"
)

// Warning codes the ledger puts on receipts.
const (
	// WarnTornTailRecovered: a torn last line was moved aside.
	WarnTornTailRecovered = "ledger_torn_tail_recovered"
	// WarnDuplicateIDConflict: an idempotency key was reused with
	// different content.
	WarnDuplicateIDConflict = "duplicate_id_conflict"
	// WarnReceiptGap: an external sequence skipped numbers.
	WarnReceiptGap = "receipt_gap"
)

// ledgerWarningCodes are warnings the ledger adds to receipts on its own;
// they are not part of a receipt's content for idempotency.
var ledgerWarningCodes = map[string]bool{WarnTornTailRecovered: true}

// Suffixes of the files kept beside the ledger.
const (
	TornSuffix = ".torn"      // torn tails moved aside
	ExtSuffix  = ".ext.jsonl" // last external sequence per scope
)

// SyncMode says when appended receipts are flushed to disk. In every mode
// a receipt is written (in the kernel, visible to readers, safe from a
// crash of lifeloop) before Append returns.
type SyncMode int

const (
	// SyncGroup (the default) is a group commit: one fdatasync at most
	// GroupWindow after a receipt is written, covering every receipt
	// written meanwhile; started at once (without Append waiting for it)
	// for session.started and session.ended, the session's state
	// changes; and before Close returns. Ticks never cause a sync of
	// their own. A power loss can cost the last GroupWindow of receipts,
	// a state change only while its sync runs, and nothing once the
	// ledger is closed.
	SyncGroup SyncMode = iota
	// SyncEach fdatasyncs every receipt before Append returns.
	SyncEach
	// SyncNone never fsyncs (benchmarks and tests).
	SyncNone
)

// GroupWindow bounds how long SyncGroup leaves a written receipt unsynced.
const GroupWindow = 50 * time.Millisecond

// DurabilityEnv names the environment variable that chooses the SyncMode
// of every ledger a lifeloop process opens ("group" or "sync").
const DurabilityEnv = "LIFELOOP_DURABILITY"

// ParseDurability reads a --durability value: "group" (or empty) or
// "sync".
func ParseDurability(s string) (SyncMode, error) {
	switch s {
	case "", "group":
		return SyncGroup, nil
	case "sync":
		return SyncEach, nil
	}
	return SyncGroup, fmt.Errorf("durability %q: want group (sync to disk within %v, the default) or sync (one fdatasync per receipt)", s, GroupWindow)
}

// String is the mode's --durability name.
func (m SyncMode) String() string {
	switch m {
	case SyncEach:
		return "sync"
	case SyncNone:
		return "none"
	}
	return "group"
}

// Options configure a Ledger. The zero value is usable.
type Options struct {
	// Sync defaults to SyncGroup.
	Sync SyncMode
	// Logger is told, once per outage, when writes start failing and when
	// they resume (never receipt contents); nil discards.
	Logger *slog.Logger
	// Now stamps at_epoch_s on receipts that have none; default time.Now.
	Now func() time.Time
	// IDs mints receipt_id and event_id values the ledger needs;
	// default a ULID source of the ledger's own on Now.
	IDs ids.Source
}

// AppendOptions carry facts about a receipt that are not part of it.
type AppendOptions struct {
	// ExternalSequence is a sequence number the receipt had in an external
	// scope (e.g. a harness event counter); nil when there is none.
	ExternalSequence *uint64
	// ExternalScope names that scope (e.g. "<adapter>:<harness session id>").
	ExternalScope string
}

// Outcome says what Append did.
type Outcome string

// Append outcomes.
const (
	Appended Outcome = "appended" // the receipt was appended
	Replayed Outcome = "replayed" // identical redelivery; the original was returned
	Conflict Outcome = "conflict" // key reused with different content; a failed receipt was appended
	Spooled  Outcome = "spooled"  // the storage refused the write; the receipt waits in memory, sequence unassigned
)

// Gap is a missing range of external sequence numbers, inclusive.
type Gap struct {
	Scope    string
	From, To uint64
}

// AppendResult describes one Append.
type AppendResult struct {
	Outcome Outcome
	// OriginalSequence is the sequence of the original receipt for
	// Replayed and Conflict.
	OriginalSequence uint64
	// Gap is set when a receipt.gap_detected receipt was appended.
	Gap *Gap
	// Extra holds receipts the ledger appended on its own before the
	// returned one (the capability.degraded receipt that ends an outage,
	// the receipt.gap_detected receipt), in ledger order.
	Extra []contract.LifecycleReceipt
	// Fault is the storage error that spooled the receipt (Spooled), or
	// nil when it waits behind earlier spooled receipts.
	Fault error
}

type idemKey struct{ client, adapter, key string }

// idemEntry locates a recorded receipt; its content is read back from the
// file only when a new receipt collides with it.
type idemEntry struct {
	seq    uint64
	offset int64
	length int64
}

// Ledger appends receipts to one receipts.jsonl. It is safe for concurrent
// use by several goroutines, and by several processes each with its own
// Ledger.
type Ledger struct {
	mu   sync.Mutex
	path string
	opts Options
	f    *os.File // O_RDWR|O_APPEND

	end  int64  // offset after the last complete line processed
	last uint64 // highest sequence seen
	idem map[idemKey]idemEntry
	// ids maps a hash of each receipt_id to its first receipt. Keeping a
	// 64-bit hash instead of the id keeps memory small; a hit is confirmed
	// against the id in the file.
	ids  map[uint64]idemEntry
	seed maphash.Seed
	ext  *extStore

	pending []contract.Warning // ledger warnings for the next appended receipt

	spool spool // receipts the storage refused, waiting in order

	// Group commit: dirty is set by a written receipt not yet synced;
	// syncTimer fires window (GroupWindow) later; a state change starts
	// a sync on a goroutine of its own at once. dirUnsynced marks a new ledger whose folder entry the next
	// sync flushes too. fdMu keeps Close from closing the files under a
	// sync running outside mu.
	dirty       bool
	dirUnsynced bool
	window      time.Duration
	syncTimer   *time.Timer
	fdMu        sync.RWMutex
	syncs       atomic.Int64 // fdatasyncs of the ledger file, for tests

	fault func() error // when set, consulted before every write (fault injection in tests)
}

// Open opens (creating with mode 0600 if needed) the ledger at path, the
// receipts.jsonl of a session folder that must already exist. It reads the
// whole ledger once to learn the last sequence and the idempotency index,
// and repairs a torn tail.
func Open(path string, opts Options) (*Ledger, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.IDs == nil {
		opts.IDs = ids.NewULIDSource(opts.Now, nil)
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	_, statErr := os.Lstat(path)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open ledger: %w", err)
	}
	if err := tightenFile(f); err != nil {
		f.Close()
		return nil, err
	}
	ext, err := openExt(path + ExtSuffix)
	if err != nil {
		f.Close()
		return nil, err
	}
	l := &Ledger{path: path, opts: opts, f: f, ext: ext, seed: maphash.MakeSeed(), window: GroupWindow}
	// A new ledger's folder entry is made durable with its first sync.
	l.dirUnsynced = errors.Is(statErr, fs.ErrNotExist)
	l.reset()
	if err := l.lock(); err != nil {
		_ = l.closeFiles()
		return nil, err
	}
	l.unlock()
	return l, nil
}

func tightenFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return fmt.Errorf("open ledger: %w", err)
	}
	if fi.Mode().Perm()&^0o600 != 0 {
		if err := f.Chmod(0o600); err != nil {
			return fmt.Errorf("tighten permissions of %s to 0600: %w", f.Name(), err)
		}
	}
	return nil
}

// Path returns the ledger file's path.
func (l *Ledger) Path() string { return l.path }

// LastSequence returns the highest sequence this Ledger has seen (other
// processes may have appended since).
func (l *Ledger) LastSequence() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.last
}

// Close tries the spool one last time, syncs what is not yet on disk and
// releases the ledger's files; Unrecorded then tells what never made it.
// Close is idempotent.
func (l *Ledger) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f != nil && !l.spool.since.IsZero() {
		if err := l.lock(); err == nil {
			_, _ = l.drain()
			l.unlock()
		}
	}
	l.spool.stopRetry()
	if l.syncTimer != nil {
		l.syncTimer.Stop()
	}
	var serr error
	if l.f != nil && (l.dirty || l.dirUnsynced) && l.opts.Sync != SyncNone {
		serr = l.syncFiles(l.f, l.ext.f, l.dirUnsynced)
		l.dirty, l.dirUnsynced = false, false
	}
	return errors.Join(serr, l.closeFiles())
}

func (l *Ledger) closeFiles() error {
	if l.f == nil {
		return nil
	}
	l.fdMu.Lock()
	defer l.fdMu.Unlock()
	err := l.f.Close()
	l.f = nil
	if l.ext != nil {
		err = errors.Join(err, l.ext.close())
	}
	return err
}

// lock takes the exclusive file lock and catches up with what other
// processes appended.
func (l *Ledger) lock() error {
	if err := flock(l.f, unix.LOCK_EX); err != nil {
		return fmt.Errorf("lock ledger %s: %w", l.path, err)
	}
	if err := l.refresh(); err != nil {
		l.unlock()
		return err
	}
	return nil
}

func (l *Ledger) unlock() { _ = flock(l.f, unix.LOCK_UN) }

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// refresh reads complete lines appended after l.end, repairs a torn tail
// and loads new external-sequence entries. The caller holds the lock.
func (l *Ledger) refresh() error {
	fi, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("stat ledger: %w", err)
	}
	size := fi.Size()
	if size < l.end {
		// Shrunk below what we already read: not something a ledger writer
		// does (repairs only drop bytes after the last complete line).
		// Start over so our view matches the file.
		l.reset()
	}
	if size > l.end {
		sc := newLineScanner(io.NewSectionReader(l.f, l.end, size-l.end), l.end)
		for {
			ln, ok := sc.Next()
			if !ok {
				break
			}
			l.index(ln)
		}
		if err := sc.Err(); err != nil {
			return fmt.Errorf("read ledger %s: %w", l.path, err)
		}
		l.end = sc.Offset()
		if sc.Tail() > 0 {
			if err := l.repairTail(size); err != nil {
				return err
			}
		}
	}
	return l.ext.refresh(l.last, l.opts.Sync == SyncEach)
}

func (l *Ledger) reset() {
	l.end, l.last = 0, 0
	l.idem = make(map[idemKey]idemEntry)
	l.ids = make(map[uint64]idemEntry)
}

// index records one complete line in the in-memory state. Lines that are
// not receipts are skipped here; Verify reports them.
func (l *Ledger) index(ln rawLine) {
	if ln.TooLong {
		return
	}
	h, err := parseHead(ln.Data)
	if err != nil {
		return
	}
	seq := *h.Sequence
	if seq > l.last {
		l.last = seq
	}
	e := idemEntry{seq: seq, offset: ln.Offset, length: ln.Len - 1}
	l.remember(h.ReceiptID, h.IdempotencyKey, h.ClientID, h.AdapterID, e)
}

// remember indexes a recorded receipt by receipt_id and idempotency key.
// The first receipt wins: later ones under the same id or key are
// conflicts.
func (l *Ledger) remember(receiptID string, key *string, client, adapter string, e idemEntry) {
	if receiptID != "" {
		h := maphash.String(l.seed, receiptID)
		if _, dup := l.ids[h]; !dup {
			l.ids[h] = e
		}
	}
	if key != nil {
		k := idemKey{client, adapter, *key}
		if _, dup := l.idem[k]; !dup {
			l.idem[k] = e
		}
	}
}

// recorded returns the receipt recorded under receiptID, if any.
func (l *Ledger) recorded(receiptID string) (contract.LifecycleReceipt, idemEntry, bool, error) {
	e, ok := l.ids[maphash.String(l.seed, receiptID)]
	if !ok {
		return contract.LifecycleReceipt{}, e, false, nil
	}
	orig, err := l.readAt(e)
	if err != nil || orig.ReceiptID != receiptID {
		// A hash collision with another id: not recorded.
		return contract.LifecycleReceipt{}, e, false, err
	}
	return orig, e, true, nil
}

// repairTail moves bytes [l.end, size) aside and truncates the ledger.
func (l *Ledger) repairTail(size int64) error {
	torn := make([]byte, size-l.end)
	if _, err := l.f.ReadAt(torn, l.end); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("read torn tail of %s: %w", l.path, err)
	}
	tf, err := os.OpenFile(l.path+TornSuffix, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("keep torn tail of %s: %w", l.path, err)
	}
	_, werr := tf.Write(append(torn, '\n'))
	serr := tf.Sync()
	cerr := tf.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("keep torn tail of %s: %w", l.path, err)
	}
	if err := l.f.Truncate(l.end); err != nil {
		return fmt.Errorf("truncate torn tail of %s: %w", l.path, err)
	}
	if err := l.f.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", l.path, err)
	}
	l.pending = append(l.pending, contract.Warning{
		Code: WarnTornTailRecovered,
		Message: fmt.Sprintf("a torn last line of %d bytes (an interrupted write) was moved to %s; no complete receipt was lost",
			len(torn), filepath.Base(l.path+TornSuffix)),
	})
	return nil
}

// contentHash is the idempotency identity of a receipt; see the package
// documentation for what is compared.
//
// The receipt is first encoded and decoded once, so a receipt being
// appended and the same receipt read back from the file hash alike (e.g.
// telemetry numbers become float64 either way), and a missing
// schema_version counts as the one the ledger would fill in.
func contentHash(r contract.LifecycleReceipt) [32]byte {
	if b, err := json.Marshal(r); err == nil {
		var back contract.LifecycleReceipt
		if json.Unmarshal(b, &back) == nil {
			r = back
		}
	}
	if r.SchemaVersion == "" {
		r.SchemaVersion = contract.ReceiptSchemaVersion
	}
	r.ReceiptID, r.Sequence, r.AtEpochS, r.InvocationID = "", nil, 0, ""
	if len(r.Warnings) > 0 {
		ws := make([]contract.Warning, 0, len(r.Warnings))
		for _, w := range r.Warnings {
			if !ledgerWarningCodes[w.Code] {
				ws = append(ws, w)
			}
		}
		r.Warnings = ws
		if len(ws) == 0 {
			r.Warnings = nil
		}
	}
	b, err := json.Marshal(r)
	if err != nil {
		// Receipts are plain data; a marshal failure means an unencodable
		// telemetry value, which also fails the append itself.
		return sha256.Sum256([]byte(err.Error()))
	}
	return sha256.Sum256(b)
}

// Append records r and returns the receipt as recorded. The ledger sets
// sequence (always), receipt_id (when empty, a new lfr_ id), at_epoch_s
// (when zero) and schema_version (when zero). See the package
// documentation for idempotent replays, conflicts and torn-tail warnings.
func (l *Ledger) Append(r contract.LifecycleReceipt) (contract.LifecycleReceipt, AppendResult, error) {
	return l.AppendWith(r, AppendOptions{})
}

// AppendWith is Append with facts about the receipt that are not part of
// it, such as an external sequence number for gap detection.
func (l *Ledger) AppendWith(r contract.LifecycleReceipt, o AppendOptions) (contract.LifecycleReceipt, AppendResult, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return contract.LifecycleReceipt{}, AppendResult{}, errors.New("ledger is closed")
	}
	if o.ExternalSequence != nil && o.ExternalScope == "" {
		return contract.LifecycleReceipt{}, AppendResult{}, errors.New("append: ExternalSequence needs an ExternalScope")
	}
	if r.ReceiptID == "" {
		r.ReceiptID = l.opts.IDs.New(ids.PrefixReceipt)
	}
	if r.AtEpochS == 0 {
		r.AtEpochS = l.opts.Now().Unix()
	}
	if err := l.lock(); err != nil {
		if storageFault(err) {
			return l.hold(r, o, err)
		}
		return contract.LifecycleReceipt{}, AppendResult{}, err
	}
	defer l.unlock()
	// Receipts held from an outage go first, then the receipt that says
	// what the outage cost.
	report, err := l.drain()
	if l.spool.len() > 0 {
		return l.hold(r, o, nil)
	}
	if err != nil && storageFault(err) {
		return l.hold(r, o, err)
	}
	out, res, err := l.appendLocked(r, o)
	if err != nil && storageFault(err) {
		return l.hold(r, o, err)
	}
	res.Extra = append(report, res.Extra...)
	return out, res, err
}

// appendLocked is one append under the lock: idempotency, gap detection,
// the write and its sync.
func (l *Ledger) appendLocked(r contract.LifecycleReceipt, o AppendOptions) (contract.LifecycleReceipt, AppendResult, error) {
	res := AppendResult{Outcome: Appended}
	if r.IdempotencyKey != nil {
		if e, ok := l.idem[idemKey{r.ClientID, r.AdapterID, *r.IdempotencyKey}]; ok {
			orig, err := l.readAt(e)
			if err != nil {
				return contract.LifecycleReceipt{}, AppendResult{}, err
			}
			res.OriginalSequence = e.seq
			if contentHash(orig) == contentHash(r) {
				res.Outcome = Replayed
				return orig, res, nil
			}
			res.Outcome = Conflict
			r = conflictReceipt(r, fmt.Sprintf("idempotency key %q of client %q and adapter %q", *r.IdempotencyKey, r.ClientID, r.AdapterID), e.seq)
		}
	}
	if res.Outcome == Appended && r.ReceiptID != "" {
		// Without an idempotency key, receipt_id is the replay boundary.
		orig, e, ok, err := l.recorded(r.ReceiptID)
		if err != nil {
			return contract.LifecycleReceipt{}, AppendResult{}, err
		}
		if ok {
			res.OriginalSequence = e.seq
			if contentHash(orig) == contentHash(r) {
				res.Outcome = Replayed
				return orig, res, nil
			}
			res.Outcome = Conflict
			r = conflictReceipt(r, fmt.Sprintf("receipt_id %q", r.ReceiptID), e.seq)
		}
	}

	now := l.opts.Now()
	var buf bytes.Buffer
	seq := l.last
	if o.ExternalSequence != nil {
		if prev, ok := l.ext.last[o.ExternalScope]; ok && *o.ExternalSequence > prev+1 {
			gap := &Gap{Scope: o.ExternalScope, From: prev + 1, To: *o.ExternalSequence - 1}
			seq++
			g := gapReceipt(r, gap, seq, now, l.opts.IDs)
			if err := g.Validate(); err != nil {
				return contract.LifecycleReceipt{}, AppendResult{}, fmt.Errorf("append: gap receipt: %w", err)
			}
			if err := encodeLine(&buf, g); err != nil {
				return contract.LifecycleReceipt{}, AppendResult{}, err
			}
			res.Gap = gap
			res.Extra = append(res.Extra, g)
		}
	}
	seq++
	r.Sequence = &seq
	if r.SchemaVersion == "" {
		r.SchemaVersion = contract.ReceiptSchemaVersion
	}
	if r.ReceiptID == "" {
		r.ReceiptID = l.opts.IDs.New(ids.PrefixReceipt)
	}
	if r.AtEpochS == 0 {
		r.AtEpochS = now.Unix()
	}
	if len(l.pending) > 0 {
		r.Warnings = append(append([]contract.Warning(nil), r.Warnings...), l.pending...)
	}
	if err := r.Validate(); err != nil {
		return contract.LifecycleReceipt{}, AppendResult{}, fmt.Errorf("append: receipt not recorded: %w", err)
	}
	lineStart := int64(buf.Len())
	if err := encodeLine(&buf, r); err != nil {
		return contract.LifecycleReceipt{}, AppendResult{}, err
	}

	if o.ExternalSequence != nil {
		if err := l.ext.record(o.ExternalScope, *o.ExternalSequence, seq); err != nil {
			l.ext.end, l.ext.last = 0, make(map[string]uint64)
			return contract.LifecycleReceipt{}, AppendResult{}, err
		}
	}
	base := l.end
	if err := l.write(buf.Bytes()); err != nil {
		// A short write leaves a torn tail: cut it now (ftruncate works on
		// a full disk), else the next lock repairs it. The
		// external-sequence entry written above now dangles, so make the
		// next refresh re-read (and cut) that file from the start.
		_ = l.f.Truncate(base)
		l.ext.end, l.ext.last = 0, make(map[string]uint64)
		return contract.LifecycleReceipt{}, AppendResult{}, fmt.Errorf("append to %s: %w", l.path, err)
	}
	if err := l.synced(r.Event); err != nil {
		return contract.LifecycleReceipt{}, AppendResult{}, err
	}
	l.end = base + int64(buf.Len())
	l.last = seq
	l.pending = nil
	e := idemEntry{seq: seq, offset: base + lineStart, length: int64(buf.Len()) - lineStart - 1}
	l.remember(r.ReceiptID, r.IdempotencyKey, r.ClientID, r.AdapterID, e)
	if len(res.Extra) == 1 { // the gap receipt, first in buf
		g := res.Extra[0]
		l.remember(g.ReceiptID, nil, "", "", idemEntry{seq: *g.Sequence, offset: base, length: lineStart - 1})
	}
	return r, res, nil
}

func (l *Ledger) write(b []byte) error {
	if l.fault != nil {
		if err := l.fault(); err != nil {
			return err
		}
	}
	_, err := l.f.Write(b)
	return err
}

func encodeLine(buf *bytes.Buffer, r contract.LifecycleReceipt) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode receipt %s: %w", r.ReceiptID, err)
	}
	if len(b)+1 > MaxLineBytes {
		return fmt.Errorf("receipt %s encodes to %d bytes, more than the ledger's %d-byte line limit; shrink telemetry or warnings",
			r.ReceiptID, len(b), MaxLineBytes-1)
	}
	buf.Write(b)
	buf.WriteByte('\n')
	return nil
}

func (l *Ledger) readAt(e idemEntry) (contract.LifecycleReceipt, error) {
	b := make([]byte, e.length)
	if _, err := l.f.ReadAt(b, e.offset); err != nil {
		return contract.LifecycleReceipt{}, fmt.Errorf("read original receipt at sequence %d: %w", e.seq, err)
	}
	var r contract.LifecycleReceipt
	if err := json.Unmarshal(b, &r); err != nil {
		return contract.LifecycleReceipt{}, fmt.Errorf("read original receipt at sequence %d: %w", e.seq, err)
	}
	return r, nil
}

// conflictReceipt turns a receipt that reused an idempotency key with
// different content into the failed receipt that records the conflict.
func conflictReceipt(r contract.LifecycleReceipt, what string, origSeq uint64) contract.LifecycleReceipt {
	fc := contract.FailureStateConflict
	rc := fc.DefaultRetry()
	r.Status = contract.StatusFailed
	r.FailureClass = &fc
	r.RetryClass = &rc
	r.ReceiptID = "" // a new receipt, not the caller's
	r.Warnings = append(append([]contract.Warning(nil), r.Warnings...), contract.Warning{
		Code:    WarnDuplicateIDConflict,
		Message: fmt.Sprintf("%s was already recorded at sequence %d with different content", what, origSeq),
	})
	return r
}

// gapReceipt is the receipt.gap_detected receipt for gap, appended before
// the receipt r that revealed it. The range is in the warning message and,
// machine-readable, in telemetry_summary (gap_scope, gap_from, gap_to).
func gapReceipt(r contract.LifecycleReceipt, gap *Gap, seq uint64, now time.Time, src ids.Source) contract.LifecycleReceipt {
	s := seq
	inv := r.InvocationID
	if inv == "" {
		inv = src.New(ids.PrefixInvocation)
	}
	g := contract.DerivedReceipt(r)
	g.InvocationID = inv
	g.ReceiptID, g.Event, g.EventID = src.New(ids.PrefixReceipt), contract.EventReceiptGapDetected, src.New(ids.PrefixEvent)
	g.Sequence, g.Status, g.AtEpochS = &s, contract.StatusObserved, now.Unix()
	g.TelemetrySummary = map[string]any{"gap_scope": gap.Scope, "gap_from": gap.From, "gap_to": gap.To}
	g.Warnings = []contract.Warning{{
		Code:    WarnReceiptGap,
		Message: fmt.Sprintf("external sequence %q skipped %d..%d; those receipts were never delivered to the ledger", gap.Scope, gap.From, gap.To),
	}}
	return g
}
