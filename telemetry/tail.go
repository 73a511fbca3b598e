package telemetry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Defaults for [TailConfig].
const (
	DefaultMaxLine    = 1 << 20
	DefaultPoll       = 250 * time.Millisecond
	DefaultSafetyPoll = 2 * time.Second
	readChunk         = 128 << 10
)

// TailConfig configures [Tail]. Zero values take the documented defaults.
type TailConfig struct {
	// Path is the file to follow. It need not exist yet.
	Path string
	// MaxLine is the longest line kept, in bytes, without its newline
	// (default 1 MiB). Longer lines are skipped and reported as
	// [EventOverlong]; memory use stays bounded by MaxLine.
	MaxLine int
	// Poll is the polling interval used when fsnotify is unavailable
	// (default 250ms).
	Poll time.Duration
	// SafetyPoll is how often the file is checked even without an fsnotify
	// event, to cover events the kernel dropped (default 2s).
	SafetyPoll time.Duration
	// FromStart reads a file that already exists from offset 0. Otherwise
	// Tail starts at its current end (a partial last line there is skipped).
	// A file that appears later, is truncated or replaced is always read
	// from offset 0.
	FromStart bool
	// SkipValidate delivers every complete line as EventLine without the
	// JSON validity check, for callers whose parser rejects invalid lines
	// itself ([Watch] does, and counts them as evidence).
	SkipValidate bool
	// ForcePoll skips fsnotify and polls (used when the caller knows the
	// file system does not deliver inotify events, and by tests).
	ForcePoll bool
	// Syncs, when set, asks for a catch-up: on each value received the
	// follower reads everything written so far at once (no waiting for an
	// fsnotify event or a poll), hands it to the sink, and then calls the
	// value, from its own goroutine.
	Syncs <-chan func()
}

// TailEventKind says what a [TailEvent] reports.
type TailEventKind string

// Tail event kinds.
const (
	// EventLine carries one complete line that is valid JSON.
	EventLine TailEventKind = "line"
	// EventInvalid carries one complete line that is not valid JSON (binary
	// garbage, a torn write); it is evidence, not data.
	EventInvalid TailEventKind = "invalid"
	// EventOverlong reports a line longer than MaxLine; its bytes are skipped.
	EventOverlong TailEventKind = "overlong"
	// EventTruncated: the file became shorter than the read offset; reading
	// restarts at 0.
	EventTruncated TailEventKind = "truncated"
	// EventReplaced: the path now names another inode (rotation, atomic
	// rewrite); reading restarts at 0 in the new file.
	EventReplaced TailEventKind = "replaced"
	// EventDeleted: the path no longer exists.
	EventDeleted TailEventKind = "deleted"
	// EventAppeared: the file exists (again) after Tail started without it.
	EventAppeared TailEventKind = "appeared"
	// EventMode reports how changes are detected ([ModeNotify] or
	// [ModePoll]); it is the first event Tail emits.
	EventMode TailEventKind = "mode"
	// EventError reports a read error that Tail survived (it retries at the
	// next change or poll).
	EventError TailEventKind = "error"
)

// TailMode says how [Tail] learns that the file changed.
type TailMode string

// Tail modes.
const (
	ModeNotify TailMode = "fsnotify"
	ModePoll   TailMode = "poll"
)

// TailEvent is one thing [Tail] observed.
type TailEvent struct {
	Kind TailEventKind
	// Line is the line without its newline, for EventLine and EventInvalid.
	// The receiver owns it.
	Line []byte
	// Offset is the file offset of the line's first byte (line, invalid,
	// overlong events) or the read offset at the time of the event.
	Offset int64
	// LineNo is the 1-based line number in the current file generation
	// (it restarts at 1 after truncation or replacement).
	LineNo int64
	// Size is the line length for line/invalid events and the number of
	// bytes seen so far for overlong events.
	Size int64
	// Mode is set on EventMode.
	Mode TailMode
	// Err is set on EventError and on EventMode when fsnotify failed.
	Err error
}

// Tail follows cfg.Path and hands every event to sink, in order, from the
// calling goroutine. It returns nil when ctx is cancelled, or an error if
// the configuration is unusable. Tail starts no goroutine of its own beyond
// the fsnotify watcher's, which it closes before returning.
func Tail(ctx context.Context, cfg TailConfig, sink func(TailEvent)) error {
	return tail(ctx, cfg, sink, nil, nil)
}

// tail is Tail with two hooks for a batching receiver ([Watch]): keep
// copies a line the sink is handed (default: a new slice per line), and
// flush is called whenever the tailer has caught up with the file (after
// every check), so a batch never waits for more lines.
func tail(ctx context.Context, cfg TailConfig, sink func(TailEvent), keep func([]byte) []byte, flush func()) error {
	if cfg.Path == "" {
		return errors.New("telemetry: tail needs a file path")
	}
	if cfg.MaxLine <= 0 {
		cfg.MaxLine = DefaultMaxLine
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultPoll
	}
	if cfg.SafetyPoll <= 0 {
		cfg.SafetyPoll = DefaultSafetyPoll
	}
	if keep == nil {
		keep = func(line []byte) []byte { return append([]byte(nil), line...) }
	}
	if flush == nil {
		flush = func() {}
	}
	t := &tailer{cfg: cfg, sink: sink, keep: keep, sp: splitter{max: cfg.MaxLine}}
	defer t.close()

	var events <-chan fsnotify.Event
	var errs <-chan error
	interval := cfg.Poll
	mode := ModePoll
	var modeErr error
	if !cfg.ForcePoll {
		w, err := fsnotify.NewWatcher()
		if err == nil {
			err = w.Add(filepath.Dir(cfg.Path))
			if err != nil {
				_ = w.Close()
			}
		}
		if err == nil {
			defer func() { _ = w.Close() }()
			events, errs = w.Events, w.Errors
			interval = cfg.SafetyPoll
			mode = ModeNotify
		} else {
			modeErr = fmt.Errorf("telemetry: cannot watch %s, polling every %s: %w", filepath.Dir(cfg.Path), cfg.Poll, err)
		}
	}
	// Position on the file as it is now, before anything is reported, so
	// that bytes written after the mode event are never skipped.
	t.position()
	sink(TailEvent{Kind: EventMode, Mode: mode, Err: modeErr})
	t.check()
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	base := filepath.Clean(cfg.Path)
	for {
		flush()
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Clean(ev.Name) == base {
				t.check()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// An overflow or watcher error may have lost events: re-check.
			sink(TailEvent{Kind: EventError, Err: err, Offset: t.offset})
			t.check()
		case <-ticker.C:
			t.check()
		case done := <-cfg.Syncs:
			t.check()
			flush()
			done()
		}
	}
}

type tailer struct {
	cfg    TailConfig
	sink   func(TailEvent)
	keep   func([]byte) []byte
	sp     splitter
	f      *os.File
	ino    uint64
	dev    uint64
	offset int64
	lineNo int64
	buf    []byte
}

func (t *tailer) close() {
	if t.f != nil {
		_ = t.f.Close()
		t.f = nil
	}
}

func fileID(fi fs.FileInfo) (dev, ino uint64) {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Dev), st.Ino //nolint:unconvert // Dev is int32/uint64 depending on platform
	}
	return 0, 0
}

// position opens a file that exists when Tail starts, at offset 0 with
// FromStart, else at its end.
func (t *tailer) position() {
	fi, err := os.Stat(t.cfg.Path)
	if err != nil {
		return
	}
	dev, ino := fileID(fi)
	if t.open(fi, dev, ino) && !t.cfg.FromStart {
		if ofi, err := t.f.Stat(); err == nil {
			t.startAtEnd(ofi.Size())
		}
	}
}

// check compares the path with the open file and reads whatever is new.
func (t *tailer) check() {
	fi, err := os.Stat(t.cfg.Path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			if t.f != nil {
				t.drain()
				t.close()
				t.sink(TailEvent{Kind: EventDeleted, Offset: t.offset})
			}
			return
		}
		t.sink(TailEvent{Kind: EventError, Err: err, Offset: t.offset})
		return
	}
	dev, ino := fileID(fi)
	switch {
	case t.f == nil:
		if !t.open(fi, dev, ino) {
			return
		}
		t.sink(TailEvent{Kind: EventAppeared, Offset: 0})
	case ino != t.ino || dev != t.dev:
		t.drain()
		t.close()
		if !t.open(fi, dev, ino) {
			return
		}
		t.sink(TailEvent{Kind: EventReplaced, Offset: 0})
	case fi.Size() < t.offset:
		t.sink(TailEvent{Kind: EventTruncated, Offset: t.offset, Size: fi.Size()})
		t.restart()
	}
	t.drain()
}

func (t *tailer) open(fi fs.FileInfo, dev, ino uint64) bool {
	f, err := os.Open(t.cfg.Path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			t.sink(TailEvent{Kind: EventError, Err: err})
		}
		return false
	}
	// The path may have been replaced between Stat and Open: trust the fd.
	if ofi, err := f.Stat(); err == nil {
		dev, ino = fileID(ofi)
	}
	t.f, t.dev, t.ino = f, dev, ino
	t.restart()
	return true
}

func (t *tailer) restart() {
	t.offset = 0
	t.lineNo = 0
	t.sp.reset(0)
}

// startAtEnd positions the reader at the end of a file that existed before
// Tail started. If the file does not end in a newline, the partial line is
// skipped rather than reported as a line fragment.
func (t *tailer) startAtEnd(size int64) {
	t.offset = size
	t.sp.reset(size)
	if size == 0 {
		return
	}
	var b [1]byte
	if _, err := t.f.ReadAt(b[:], size-1); err == nil && b[0] != '\n' {
		t.sp.skipping = true
	}
}

// drain reads from the offset to the end of the open file.
func (t *tailer) drain() {
	if t.f == nil {
		return
	}
	if t.buf == nil {
		t.buf = make([]byte, readChunk)
	}
	for {
		n, err := t.f.ReadAt(t.buf, t.offset)
		if n > 0 {
			t.sp.feed(t.buf[:n], t.offset, t.emitLine)
			t.offset += int64(n)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				t.sink(TailEvent{Kind: EventError, Err: err, Offset: t.offset})
			}
			return
		}
	}
}

func (t *tailer) emitLine(line []byte, off int64, overlong bool, n int64) {
	t.lineNo++
	if overlong {
		t.sink(TailEvent{Kind: EventOverlong, Offset: off, LineNo: t.lineNo, Size: n})
		return
	}
	if len(line) == 0 {
		return
	}
	kind := EventLine
	if !t.cfg.SkipValidate && !json.Valid(line) {
		kind = EventInvalid
	}
	t.sink(TailEvent{Kind: kind, Line: t.keep(line), Offset: off, LineNo: t.lineNo, Size: n})
}
