package ptyio

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// Default window size when neither stdin nor stdout is a terminal and
// TerminalConfig leaves Cols/Rows at zero.
const (
	DefaultCols = 120
	DefaultRows = 40
)

// bufSize is the size of every copy buffer.
const bufSize = 32 << 10

// TerminalConfig configures [OpenTerminal].
type TerminalConfig struct {
	// In is the user's input, usually os.Stdin. When it is an *os.File the
	// stdin reader can be interrupted by Close; when it is also a terminal,
	// raw mode is used. Nil means no input (as if at EOF).
	In io.Reader
	// Out receives the child's output, usually os.Stdout. Nil discards it.
	Out io.Writer
	// Err is this process's standard error, usually os.Stderr: a
	// terminal there gives the window size when In and Out are not
	// terminals, and it is passed through like the others. Children never
	// write to it otherwise (their standard error is on the PTY).
	Err io.Writer
	// PassThrough gives every child, in place of the PTY, each of In,
	// Out and Err that is an *os.File but not a terminal, as it is: a
	// child sees a terminal exactly where this process has one, and the
	// bytes of a pipe or a file reach it, or leave it, untouched. When
	// none of the three is a terminal a child gets no PTY at all. Input
	// passed through is not relayed (there is nothing to hold or to end
	// with VEOF); output passed through is not metered
	// ([Activity].Metered). Without PassThrough a child always gets the
	// PTY on all three descriptors.
	PassThrough bool
	// Cols and Rows give the PTY size when none of In, Out and Err is a
	// terminal. Zero means DefaultCols / DefaultRows.
	Cols, Rows uint16
	// Logger receives diagnostics (never payload bytes). Nil discards them.
	Logger *slog.Logger
	// Now is the clock used for activity timestamps. Nil means time.Now.
	Now func() time.Time
}

// Terminal is the user's side of the relay. It is safe for concurrent use.
type Terminal struct {
	in     io.Reader
	inFile *os.File // In as a file, or nil
	out    io.Writer
	log    *slog.Logger
	now    func() time.Time

	isTTY  bool // In is a terminal: raw mode applies
	sizeFd int  // descriptor the window size is read from, or -1

	// pass holds the descriptors children get as they are (PassThrough),
	// by number: stdin, stdout, stderr; nil where a child gets the PTY.
	pass [3]*os.File

	size atomic.Uint32 // cols<<16 | rows

	// lastKey is when a key was last typed (UnixNano), 0 for never.
	lastKey atomic.Int64

	// rawMu guards the raw-mode state.
	rawMu    sync.Mutex
	rawState *term.State // saved cooked state while raw, else nil

	// mu guards the attachment and lifecycle fields below.
	mu       sync.Mutex
	cur      *Child        // attached child, or nil
	changed  chan struct{} // closed and replaced whenever cur or closed changes
	closed   bool
	reserved bool   // a Start is between reserve and attach
	inEOF    bool   // stdin reached EOF (only acted on without a TTY)
	held     bool   // HoldInput: typed bytes wait for ReleaseInput
	backlog  []byte // keys held, or released and not yet written

	wakeR, wakeW *os.File // self-pipe that interrupts the stdin poll
	inFd, wakeFd int      // descriptors polled by the stdin reader
	// uninterruptible is set when In cannot be polled; Close then does not
	// wait for the reader.
	uninterruptible atomic.Bool

	winch      chan os.Signal // nil when no descriptor is a terminal
	stop       chan struct{}  // closed by Close
	readerDone chan struct{}  // closed when the stdin reader returns
	winchDone  chan struct{}  // closed when the SIGWINCH watcher returns
	closeOnce  sync.Once

	// writeMu orders writes to the child: the backlog of held keys before
	// anything typed after it.
	writeMu sync.Mutex
	flushes sync.WaitGroup
}

// OpenTerminal takes over the user's side of the relay. It starts the
// single stdin reader goroutine and, when stdin or stdout is a terminal,
// the SIGWINCH watcher. Raw mode is entered by a successful
// [Terminal.Start], not here (see the package doc for the order). Callers
// defer [Terminal.Restore] (or [Terminal.Close]) right after this returns.
func OpenTerminal(cfg TerminalConfig) (*Terminal, error) {
	t := &Terminal{
		in:         cfg.In,
		out:        cfg.Out,
		log:        cfg.Logger,
		now:        cfg.Now,
		sizeFd:     -1,
		changed:    make(chan struct{}),
		stop:       make(chan struct{}),
		readerDone: make(chan struct{}),
		winchDone:  make(chan struct{}),
	}
	if t.out == nil {
		t.out = io.Discard
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	if t.now == nil {
		t.now = time.Now
	}
	cols, rows := cfg.Cols, cfg.Rows
	if cols == 0 {
		cols = DefaultCols
	}
	if rows == 0 {
		rows = DefaultRows
	}
	t.storeSize(cols, rows)

	// This process's descriptors, by number, and which are terminals:
	// each is asked once.
	std := [3]*os.File{osFile(cfg.In), osFile(cfg.Out), osFile(cfg.Err)}
	var tty [3]bool
	for i, f := range std {
		tty[i] = f != nil && term.IsTerminal(int(f.Fd()))
		if tty[i] && t.sizeFd < 0 {
			t.sizeFd = int(f.Fd())
		}
	}
	if cfg.PassThrough {
		t.passThrough(std, tty)
	}
	if t.pass[0] == nil {
		t.inFile, t.isTTY = std[0], tty[0]
	}
	if t.sizeFd >= 0 {
		if c, r, err := term.GetSize(t.sizeFd); err == nil && c > 0 && r > 0 {
			t.storeSize(clamp16(c), clamp16(r))
		}
	}

	if !t.relaysInput() {
		close(t.readerDone) // the children read In themselves
	} else if t.inFile != nil {
		r, w, err := os.Pipe()
		if err != nil {
			return nil, fmt.Errorf("ptyio: create wake pipe: %w (too many open files?)", err)
		}
		t.wakeR, t.wakeW = r, w
		t.inFd, t.wakeFd = int(t.inFile.Fd()), int(r.Fd())
	}

	if t.sizeFd >= 0 {
		t.winch = make(chan os.Signal, 1)
		signal.Notify(t.winch, syscall.SIGWINCH)
		go t.watchWinch()
	} else {
		close(t.winchDone)
	}
	if t.relaysInput() {
		go t.readStdin()
	}
	return t, nil
}

// passThrough picks the descriptors children get as they are (std's
// that are not terminals), and where a child's PTY output goes when its
// standard output is not on the PTY: to this process's standard error, or
// else its standard input, when that one is a terminal (what the harness
// draws on its terminal, or the terminal echoes, shows where the person
// looks); else nowhere.
func (t *Terminal) passThrough(std [3]*os.File, tty [3]bool) {
	for i, f := range std {
		if f != nil && !tty[i] {
			t.pass[i] = f
		}
	}
	if t.pass[1] == nil {
		return
	}
	t.out = io.Discard
	for _, i := range []int{2, 0} {
		if tty[i] {
			t.out = std[i]
			return
		}
	}
}

// osFile returns v as a non-nil *os.File, or nil.
func osFile(v any) *os.File {
	if f, ok := v.(*os.File); ok && f != nil {
		return f
	}
	return nil
}

// relaysInput reports whether In is relayed to the children's PTY
// rather than passed to them as it is.
func (t *Terminal) relaysInput() bool { return t.pass[0] == nil }

// usesPTY reports whether children get a PTY on any descriptor.
func (t *Terminal) usesPTY() bool { return t.pass[0] == nil || t.pass[1] == nil || t.pass[2] == nil }

// passesThrough reports, by descriptor number (stdin, stdout, stderr),
// which of this process's descriptors children get as they are.
func (t *Terminal) passesThrough() [3]bool {
	return [3]bool{t.pass[0] != nil, t.pass[1] != nil, t.pass[2] != nil}
}

// IsTTY reports whether stdin is a terminal (and so raw mode is used).
func (t *Terminal) IsTTY() bool { return t.isTTY }

// Size returns the current window size given to children.
func (t *Terminal) Size() (cols, rows uint16) {
	v := t.size.Load()
	return uint16(v >> 16), uint16(v)
}

func (t *Terminal) storeSize(cols, rows uint16) {
	t.size.Store(uint32(cols)<<16 | uint32(rows))
}

func clamp16(v int) uint16 {
	if v > 0xffff {
		return 0xffff
	}
	return uint16(v)
}

// makeRaw puts stdin into raw mode if it is a terminal and not raw yet.
func (t *Terminal) makeRaw() error {
	if !t.isTTY {
		return nil
	}
	t.rawMu.Lock()
	defer t.rawMu.Unlock()
	if t.rawState != nil {
		return nil
	}
	st, err := term.MakeRaw(int(t.inFile.Fd()))
	if err != nil {
		return fmt.Errorf("ptyio: put the terminal in raw mode: %w", err)
	}
	t.rawState = st
	return nil
}

// Restore puts stdin back into the mode it had before raw mode was entered.
// It is idempotent, does nothing when stdin is not a terminal or not raw,
// and is safe to call from defer, panic recovery and signal handling
// goroutines. A later Start enters raw mode again.
func (t *Terminal) Restore() error {
	if !t.isTTY {
		return nil
	}
	t.rawMu.Lock()
	defer t.rawMu.Unlock()
	if t.rawState == nil {
		return nil
	}
	st := t.rawState
	t.rawState = nil
	if err := term.Restore(int(t.inFile.Fd()), st); err != nil {
		return fmt.Errorf("ptyio: restore the terminal (run `stty sane` to repair it): %w", err)
	}
	return nil
}

// Close stops the SIGWINCH watcher and the stdin reader and restores the
// terminal. It is idempotent. It does not stop an attached child: stop the
// child and wait for [Child.Done] first. When In is not an *os.File the
// reader cannot be interrupted; Close then does not wait for it, and it
// returns at In's next Read.
func (t *Terminal) Close() error {
	t.closeOnce.Do(func() {
		t.mu.Lock()
		t.closed = true
		t.notifyLocked()
		t.mu.Unlock()
		close(t.stop)
		if t.winch != nil {
			signal.Stop(t.winch)
		}
		<-t.winchDone
		t.flushes.Wait() // a backlog flush ends at t.stop
		if t.wakeW != nil {
			_, _ = t.wakeW.Write([]byte{0})
			if !t.uninterruptible.Load() {
				<-t.readerDone
				// Closed only once the reader no longer polls them.
				_ = t.wakeW.Close()
				_ = t.wakeR.Close()
			}
		}
	})
	return t.Restore()
}

// notifyLocked wakes everyone waiting for an attachment change. t.mu held.
func (t *Terminal) notifyLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// watchWinch resizes the attached child on every SIGWINCH. It exits when
// Close closes t.stop.
func (t *Terminal) watchWinch() {
	defer close(t.winchDone)
	for {
		select {
		case <-t.stop:
			return
		case <-t.winch:
		}
		c, r, err := term.GetSize(t.sizeFd)
		if err != nil || c <= 0 || r <= 0 {
			t.log.Debug("window size unavailable", "err", err)
			continue
		}
		cols, rows := clamp16(c), clamp16(r)
		t.mu.Lock()
		if t.cur != nil {
			if err := t.cur.resize(cols, rows); err != nil {
				t.log.Debug("resize child pty", "pid", t.cur.Pid(), "err", err)
			}
		}
		// Published after the child is resized, so a reader of Size never
		// sees a size the attached child does not have yet.
		t.storeSize(cols, rows)
		t.mu.Unlock()
	}
}

// readStdin is the single stdin reader. It exits at EOF or a read error
// (after handing EOF to children, see the package doc), or when Close
// interrupts it.
func (t *Terminal) readStdin() {
	defer close(t.readerDone)
	if t.in == nil {
		t.stdinEOF()
		return
	}
	buf := make([]byte, bufSize)
	for {
		if t.inFile != nil && !t.waitReadable() {
			return
		}
		n, err := t.in.Read(buf)
		if n > 0 && !t.deliver(buf[:n]) {
			return
		}
		if err != nil {
			if errors.Is(err, syscall.EAGAIN) {
				continue
			}
			if !errors.Is(err, io.EOF) {
				t.log.Debug("stdin read ended", "err", err)
			}
			if !t.isTTY {
				t.stdinEOF()
			}
			return
		}
	}
}

// waitReadable polls In and the wake pipe; false means Close was called.
func (t *Terminal) waitReadable() bool {
	if t.uninterruptible.Load() {
		return true
	}
	fds := []unix.PollFd{
		{Fd: int32(t.inFd), Events: unix.POLLIN},
		{Fd: int32(t.wakeFd), Events: unix.POLLIN},
	}
	for {
		fds[0].Revents, fds[1].Revents = 0, 0
		_, err := unix.Poll(fds, -1)
		if err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			// Polling is not possible (unusual descriptor): fall back to
			// plain blocking reads, which Close cannot interrupt.
			t.log.Debug("stdin cannot be polled; Close will not wait for the reader", "err", err)
			t.uninterruptible.Store(true)
			return true
		}
		if fds[1].Revents != 0 {
			return false
		}
		if fds[0].Revents != 0 {
			return true
		}
	}
}

// deliver hands typed bytes to the attached child. While input is held
// (HoldInput), the terminal's own replies to the harness's queries pass
// (a starting harness waits for them) and everything else is kept for
// ReleaseInput. It returns false when the Terminal is closed.
func (t *Terminal) deliver(p []byte) bool {
	if hasKey(p) {
		t.lastKey.Store(t.now().UnixNano())
	}
	t.mu.Lock()
	if t.held {
		pass, keep := splitReports(p)
		if room := maxBacklog - len(t.backlog); len(keep) > room {
			t.log.Warn("typed input held too long; the oldest keys beyond the bound are dropped", "dropped", len(keep)-max(room, 0))
			keep = keep[len(keep)-max(room, 0):]
		}
		t.backlog = append(t.backlog, keep...)
		t.mu.Unlock()
		if len(pass) == 0 {
			return true
		}
		return t.write(pass, false)
	}
	t.mu.Unlock()
	return t.write(p, true)
}

// maxBacklog bounds the keys held while input is held.
const maxBacklog = 64 << 10

// write writes p to the attached child, waiting for one to be attached,
// after the released backlog when withBacklog. Bytes a dying child could
// not take go to the next child. It returns false when the Terminal is
// closed.
func (t *Terminal) write(p []byte, withBacklog bool) bool {
	t.writeMu.Lock()
	defer t.writeMu.Unlock()
	if withBacklog {
		t.mu.Lock()
		if !t.held && len(t.backlog) > 0 {
			p = append(t.backlog, p...)
			t.backlog = nil
		}
		t.mu.Unlock()
	}
	for len(p) > 0 {
		t.mu.Lock()
		c, closed, changed := t.cur, t.closed, t.changed
		t.mu.Unlock()
		if closed {
			return false
		}
		if c == nil || c.exited.Load() {
			select {
			case <-changed:
			case <-t.stop:
				return false
			}
			continue
		}
		n, err := c.master.Write(p)
		if n > 0 {
			c.lastIn.Store(uint32(p[n-1]))
		}
		p = p[n:]
		if err != nil {
			t.log.Debug("stdin to child pty", "pid", c.Pid(), "err", err)
			select {
			case <-changed:
			case <-t.stop:
				return false
			}
		}
	}
	return true
}

// splitReports separates the terminal's replies to queries (device
// attributes, cursor position, mode and keyboard-protocol reports: CSI
// sequences ending in c, R, n, u, t or $y; OSC and DCS strings) from the
// rest of p, keeping each part's order.
func splitReports(p []byte) (reports, rest []byte) {
	for i := 0; i < len(p); {
		if n := reportLen(p[i:]); n > 0 {
			reports = append(reports, p[i:i+n]...)
			i += n
			continue
		}
		rest = append(rest, p[i])
		i++
	}
	return reports, rest
}

// hasKey reports whether p holds a byte that is not part of a terminal
// report (see splitReports): something the person typed.
func hasKey(p []byte) bool {
	for i := 0; i < len(p); {
		n := reportLen(p[i:])
		if n == 0 {
			return true
		}
		i += n
	}
	return false
}

// LastKey is when a key was last typed at the person's terminal (bytes
// read from stdin that are not the terminal's replies to queries), held
// or not; zero when none was.
func (t *Terminal) LastKey() time.Time {
	if ns := t.lastKey.Load(); ns != 0 {
		return time.Unix(0, ns)
	}
	return time.Time{}
}

// reportLen is the length of the terminal report p starts with, or 0.
func reportLen(p []byte) int {
	if len(p) < 3 || p[0] != 0x1b {
		return 0
	}
	switch p[1] {
	case '[':
		for i := 2; i < len(p); i++ {
			b := p[i]
			switch {
			case b >= '0' && b <= '9', b == ';', b == '?', b == '>', b == '=', b == ':':
				continue
			case b == '$' && i+1 < len(p) && p[i+1] == 'y':
				return i + 2
			case b == 'c' || b == 'R' || b == 'n' || b == 'u' || b == 't':
				if i == 2 && b != 'c' {
					return 0 // no parameters: a key, not a report
				}
				return i + 1
			default:
				return 0
			}
		}
	case ']', 'P':
		for i := 2; i < len(p); i++ {
			if p[i] == 0x07 {
				return i + 1
			}
			if p[i] == 0x1b && i+1 < len(p) && p[i+1] == '\\' {
				return i + 2
			}
		}
	}
	return 0
}

// HoldInput keeps what the person types from the harness until
// ReleaseInput: while one harness is stopped and the next one starts,
// keys wait (up to maxBacklog) for the harness that will read them
// instead of reaching one that exits or one that drops typeahead while it
// starts. The terminal's replies to the harness's queries still pass.
func (t *Terminal) HoldInput() {
	t.mu.Lock()
	t.held = true
	t.mu.Unlock()
}

// ReleaseInput hands the held keys, and all that follow, to the attached
// harness. It does not wait for the harness to take them.
func (t *Terminal) ReleaseInput() {
	t.mu.Lock()
	t.held = false
	pending := len(t.backlog) > 0
	t.mu.Unlock()
	if pending {
		t.flushes.Add(1)
		go func() { // ends once the backlog is written or the Terminal closes
			defer t.flushes.Done()
			t.write(nil, true)
		}()
	}
}

// stdinEOF records EOF and hands it to the attached child.
func (t *Terminal) stdinEOF() {
	t.mu.Lock()
	t.inEOF = true
	c := t.cur
	t.mu.Unlock()
	if c != nil {
		c.sendEOF()
	}
}

// reserve claims the Terminal for a child about to start. It fails if a
// child is attached (its Done not yet closed) or starting, or the Terminal
// is closed. A successful reserve is followed by attach or release.
func (t *Terminal) reserve() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return ErrClosed
	}
	if t.cur != nil {
		return fmt.Errorf("%w (pid %d): wait for its Done before starting another", ErrBusy, t.cur.Pid())
	}
	if t.reserved {
		return fmt.Errorf("%w: another Start is in progress", ErrBusy)
	}
	t.reserved = true
	return nil
}

// release gives up a reservation after a failed start.
func (t *Terminal) release() {
	t.mu.Lock()
	t.reserved = false
	t.mu.Unlock()
}

// attach makes c the attached child and reports whether stdin already
// reached EOF without a TTY (so c must get the end-of-file character). It
// resizes c's PTY to the current size under the same lock the SIGWINCH
// watcher holds, so no resize between spawn and attach is lost.
func (t *Terminal) attach(c *Child) (eof bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cols, rows := t.Size()
	if err := c.resize(cols, rows); err != nil {
		t.log.Debug("resize child pty", "pid", c.pid, "err", err)
	}
	t.reserved = false
	t.cur = c
	t.notifyLocked()
	return t.inEOF && !t.isTTY
}

// detach removes c if it is the attached child.
func (t *Terminal) detach(c *Child) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.cur == c {
		t.cur = nil
		t.notifyLocked()
	}
}
