package ledger

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"golang.org/x/sys/unix"

	"github.com/lifeloop/lifeloop/contract"
)

// Entry is one receipt read from a ledger.
type Entry struct {
	Sequence uint64
	Offset   int64  // byte offset of the line in the ledger
	Raw      []byte // the line as stored, without its newline
	Receipt  contract.LifecycleReceipt
}

// decodeEntry decodes a complete line. Readers are lenient about fields
// they do not know (a newer writer may add optional ones); Verify is strict.
func decodeEntry(ln rawLine) (Entry, error) {
	if ln.TooLong {
		return Entry{}, &LineError{Offset: ln.Offset, Err: fmt.Errorf("line of %d bytes exceeds %d", ln.Len, MaxLineBytes)}
	}
	h, err := parseHead(ln.Data)
	if err != nil {
		return Entry{}, &LineError{Offset: ln.Offset, Err: err}
	}
	e := Entry{Sequence: *h.Sequence, Offset: ln.Offset, Raw: bytes.Clone(ln.Data)}
	if err := json.Unmarshal(ln.Data, &e.Receipt); err != nil {
		return Entry{}, &LineError{Offset: ln.Offset, Err: err}
	}
	return e, nil
}

// ReadSince yields the receipts of the ledger at path whose sequence is
// greater than since, in file order, stopping at the last complete line.
// A line that is not a receipt yields a *LineError and reading goes on.
// A missing ledger yields nothing.
//
// ReadSince does not read the whole file: sequences increase with file
// position, so it binary-searches byte offsets, parsing the first complete
// line at or after each probe, to find the first line with a sequence
// above since (O(log size) small reads), then scans forward from there.
// This needs no index file that could go stale; its one assumption, that
// sequences grow along the file, is what Verify checks.
func ReadSince(path string, since uint64) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		f, err := os.Open(path)
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				yield(Entry{}, err)
			}
			return
		}
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			yield(Entry{}, err)
			return
		}
		start, err := seekSequence(f, fi.Size(), since)
		if err != nil {
			yield(Entry{}, err)
			return
		}
		readLines(f, start, fi.Size(), since, func(e Entry, err error) bool { return yield(e, err) })
	}
}

// readLines reads complete lines in [from, size) and hands receipts with a
// sequence above since to fn until fn returns false. It returns the offset
// after the last complete line read.
func readLines(f *os.File, from, size int64, since uint64, fn func(Entry, error) bool) int64 {
	sc := newLineScanner(io.NewSectionReader(f, from, size-from), from)
	for {
		ln, ok := sc.Next()
		if !ok {
			break
		}
		e, err := decodeEntry(ln)
		if err != nil {
			if !fn(Entry{}, err) {
				return sc.Offset()
			}
			continue
		}
		if e.Sequence <= since {
			continue
		}
		if !fn(e, nil) {
			return sc.Offset()
		}
	}
	if err := sc.Err(); err != nil {
		fn(Entry{}, err)
	}
	return sc.Offset()
}

// seekSequence returns the offset of the first complete line whose
// sequence is greater than since (size when there is none), by binary
// search over byte offsets.
func seekSequence(f *os.File, size int64, since uint64) (int64, error) {
	if since == 0 {
		return 0, nil
	}
	// g(p) is the sequence of the first parsable line starting at or after
	// p; it never decreases as p grows. Find the smallest p with
	// g(p) > since to within a small window: every parsable line starting
	// before lo has a sequence <= since.
	lo, hi := int64(0), size
	for hi-lo > 4096 {
		mid := lo + (hi-lo)/2
		_, seq, found, err := probe(f, mid, size)
		if err != nil {
			return 0, err
		}
		if !found || seq > since {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	// Scan the remaining window for the first line after since.
	from, err := lineStartAtOrAfter(f, lo, size)
	if err != nil {
		return 0, err
	}
	sc := newLineScanner(io.NewSectionReader(f, from, size-from), from)
	for {
		ln, ok := sc.Next()
		if !ok {
			return sc.Offset(), sc.Err()
		}
		if ln.TooLong {
			continue
		}
		h, err := parseHead(ln.Data)
		if err != nil {
			continue
		}
		if *h.Sequence > since {
			return ln.Offset, nil
		}
	}
}

// lineStartAtOrAfter returns the offset of the first line starting at or
// after p (size when none).
func lineStartAtOrAfter(f *os.File, p, size int64) (int64, error) {
	if p <= 0 {
		return 0, nil
	}
	// The line starts at p when the byte before p is a newline.
	buf := make([]byte, 4096)
	pos := p - 1
	for pos < size {
		n, err := f.ReadAt(buf, pos)
		if i := bytes.IndexByte(buf[:n], '\n'); i >= 0 {
			return pos + int64(i) + 1, nil
		}
		pos += int64(n)
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return 0, err
		}
	}
	return size, nil
}

// probe parses the first parsable complete line starting at or after p.
func probe(f *os.File, p, size int64) (start int64, seq uint64, found bool, err error) {
	from, err := lineStartAtOrAfter(f, p, size)
	if err != nil || from >= size {
		return 0, 0, false, err
	}
	sc := newLineScannerSize(io.NewSectionReader(f, from, size-from), from, 4096)
	for {
		ln, ok := sc.Next()
		if !ok {
			return 0, 0, false, sc.Err()
		}
		if ln.TooLong {
			continue
		}
		if h, err := parseHead(ln.Data); err == nil {
			return ln.Offset, *h.Sequence, true, nil
		}
	}
}

// Follow calls fn for every receipt of the ledger at path with a sequence
// greater than since, first those already there, then each new one as it
// is appended, until ctx is cancelled (Follow then returns nil) or fn
// returns an error (returned). A ledger that does not exist yet is waited
// for. Lines that are not receipts are skipped.
//
// Follow watches the session folder with fsnotify, so it sleeps until the
// file changes; only when a watch cannot be set up does it fall back to
// checking every pollInterval.
func Follow(ctx context.Context, path string, since uint64, fn func(Entry) error) error {
	return follow(ctx, path, since, fn, time.Second, false)
}

func follow(ctx context.Context, path string, since uint64, fn func(Entry) error, pollInterval time.Duration, noWatch bool) error {
	var events <-chan fsnotify.Event
	var errs <-chan error
	var tick <-chan time.Time
	if noWatch {
		// Polling requested (tests of the fallback).
	} else if w, err := fsnotify.NewWatcher(); err == nil {
		defer func() { _ = w.Close() }()
		if err := w.Add(filepath.Dir(path)); err == nil {
			events, errs = w.Events, w.Errors
		}
	}
	if events == nil {
		t := time.NewTicker(pollInterval)
		defer t.Stop()
		tick = t.C
	}
	last := since
	var offset int64 = -1 // unknown until the file is first read
	base := filepath.Base(path)
	for {
		if err := ctx.Err(); err != nil {
			return nil
		}
		var ferr error
		offset, ferr = followRead(path, offset, &last, fn)
		if ferr != nil {
			return ferr
		}
		// Wait for a change to our file (or anything, when polling).
	wait:
		for {
			select {
			case <-ctx.Done():
				return nil
			case <-tick:
				break wait
			case ev, ok := <-events:
				if !ok {
					return errors.New("follow: file watcher closed")
				}
				if filepath.Base(ev.Name) == base {
					break wait
				}
			case err, ok := <-errs:
				if !ok {
					return errors.New("follow: file watcher closed")
				}
				if errors.Is(err, fsnotify.ErrEventOverflow) {
					break wait // events were dropped: just read again
				}
				return fmt.Errorf("follow %s: %w", path, err)
			}
		}
	}
}

// followRead reads new complete lines from offset (-1: seek to the first
// receipt after *last) and returns the new offset.
func followRead(path string, offset int64, last *uint64, fn func(Entry) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return -1, nil
		}
		return offset, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return offset, err
	}
	size := fi.Size()
	if offset < 0 || size < offset {
		if offset, err = seekSequence(f, size, *last); err != nil {
			return -1, err
		}
	}
	var cbErr error
	end := readLines(f, offset, size, 0, func(e Entry, err error) bool {
		if err != nil {
			return true // not a receipt: skip
		}
		if e.Sequence <= *last {
			return true
		}
		if cbErr = fn(e); cbErr != nil {
			return false
		}
		*last = e.Sequence
		return true
	})
	return end, cbErr
}

// followPolling is Follow without fsnotify, for tests of the fallback.
func followPolling(ctx context.Context, path string, since uint64, fn func(Entry) error) error {
	return follow(ctx, path, since, fn, 10*time.Millisecond, true)
}

// ErrAppending is TornTail's answer when a writer held the ledger's lock
// for all of its wait: the last line may be an append under way.
var ErrAppending = errors.New("the ledger is being appended to")

// TornTail returns where the bytes after the ledger's last complete line
// start (the ledger's size when there are none) and how many there are
// (n is 0 when the ledger ends with a newline, is empty or is missing):
// the torn last write of a writer that crashed, which readers never yield
// and the next append moves aside (TornSuffix).
//
// A writer holds the ledger's exclusive lock for the whole of an append,
// so TornTail looks under the shared lock: a partial line it sees then is
// no append under way. It tries for the lock for up to wait and returns
// ErrAppending when a writer held it all along.
func TornTail(path string, wait time.Duration) (offset, n int64, err error) {
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, 0, nil
		}
		return 0, 0, err
	}
	defer f.Close()
	if err := sharedLock(f, wait); err != nil {
		return 0, 0, err
	}
	defer flock(f, unix.LOCK_UN) //nolint:errcheck // closing releases it anyway
	fi, err := f.Stat()
	if err != nil {
		return 0, 0, err
	}
	size := fi.Size()
	buf := make([]byte, 4096)
	for end := size; end > 0; {
		start := max(end-int64(len(buf)), 0)
		chunk := buf[:end-start]
		if _, err := f.ReadAt(chunk, start); err != nil && !errors.Is(err, io.EOF) {
			return 0, 0, err
		}
		if i := bytes.LastIndexByte(chunk, '\n'); i >= 0 {
			offset = start + int64(i) + 1
			return offset, size - offset, nil
		}
		end = start
	}
	return 0, size, nil
}

// sharedLock takes f's shared lock, trying for up to wait.
func sharedLock(f *os.File, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for {
		err := flock(f, unix.LOCK_SH|unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return err
		}
		if time.Now().After(deadline) {
			return ErrAppending
		}
		time.Sleep(10 * time.Millisecond)
	}
}
