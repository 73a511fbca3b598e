package ptyio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// Bounds on draining a child's PTY after its process has exited (see the
// package doc): stop after two DrainQuiet windows without output, or
// DrainMax after the exit, whichever comes first. Normally the PTY reports EIO long
// before either, as soon as the last descriptor of its slave is closed.
const (
	DrainQuiet = 100 * time.Millisecond
	DrainMax   = 2 * time.Second
)

// Errors of Start. Test with errors.Is.
var (
	// ErrNotFound: the command does not exist (exit 127 by convention).
	ErrNotFound = errors.New("command not found")
	// ErrNotExecutable: the command exists but cannot be executed
	// (exit 126 by convention).
	ErrNotExecutable = errors.New("command not executable")
	// ErrBusy: a child is still attached to the Terminal.
	ErrBusy = errors.New("ptyio: a child is still attached to this terminal")
	// ErrClosed: the Terminal was closed.
	ErrClosed = errors.New("ptyio: terminal is closed")
)

// ChildSpec describes the process to start.
type ChildSpec struct {
	// Path is the program, resolved like exec.LookPath but against the
	// PATH found in Env (a name with a slash is used as is, relative to
	// Dir when Dir is set). It is also the child's argv[0].
	Path string
	// Args are the arguments after argv[0].
	Args []string
	// Env is the child's complete environment ("KEY=value"); nil means an
	// empty environment. ptyio never reads its own process's environment.
	Env []string
	// Dir is the working directory; empty means the current one.
	Dir string
	// ReadyText, when set, is what the program draws once it takes
	// input (see Child.TakesKeys).
	ReadyText string
	// Screen, when set, is told when the program draws one of its texts
	// (a dialog's question): see ScreenWatch.
	Screen *ScreenWatch
}

// ExitStatus is how a child ended.
type ExitStatus struct {
	// Code is the exit code when the process exited normally, -1 when it
	// died of a signal.
	Code int
	// Signaled is true when the process died of Signal.
	Signaled bool
	// Signal is the signal that killed the process (0 unless Signaled).
	Signal syscall.Signal
	// CoreDumped is true when the signal also dumped core.
	CoreDumped bool
	// Raw is the wait status as the kernel reported it.
	Raw syscall.WaitStatus
}

// ExitCode returns the shell convention: Code, or 128+N for death by
// signal N.
func (s ExitStatus) ExitCode() int {
	if s.Signaled {
		return 128 + int(s.Signal)
	}
	return s.Code
}

// String renders the status for logs: "exit 3" or "signal killed".
func (s ExitStatus) String() string {
	if s.Signaled {
		return "signal " + s.Signal.String()
	}
	return fmt.Sprintf("exit %d", s.Code)
}

// Activity is a snapshot of a child's output activity.
type Activity struct {
	// Metered is false when the child's standard output is not on its
	// PTY (TerminalConfig.PassThrough): its output is not seen, and the
	// counters below stay at zero.
	Metered bool
	// BytesOut counts bytes read from the child's PTY so far.
	BytesOut uint64
	// LastOutput is when output was last read; zero before any output.
	LastOutput time.Time
}

// Child is one process running under its own PTY, attached to a Terminal
// until it is done. With TerminalConfig.PassThrough and no terminal at
// all it has no PTY (master is nil).
type Child struct {
	t      *Terminal
	pid    int
	master *os.File // nil without a PTY

	exited   atomic.Bool  // the process has been reaped
	exitedAt atomic.Int64 // unix nanos of the reap
	eofSent  atomic.Bool
	lastIn   atomic.Uint32 // last stdin byte relayed, or noInput
	status   ExitStatus

	bytesOut atomic.Uint64
	lastOut  atomic.Int64 // unix nanos, 0 = never

	ready     *readyText  // ChildSpec.ReadyText; used by copyOutput only
	readySeen atomic.Bool // the ready text was drawn (or none was named)

	screen     *screenText // ChildSpec.Screen's texts; used by copyOutput only
	screenSeen func(i int, at time.Time)

	waitDone chan struct{} // closed by the wait goroutine after the reap
	done     chan struct{} // closed after the reap and the drain
	doneOnce sync.Once
}

// Start runs spec under a new PTY in its own session and process group,
// with the PTY as its controlling terminal, and attaches it to t: stdin
// goes to its PTY, its output goes to Out. The PTY gets t's current size.
// The wait goroutine starts at once; then stdin enters raw mode if it is a
// terminal and not raw already. Only one child is attached at a
// time: Start fails with ErrBusy until the previous child's Done is
// closed. A failure to find or execute the program wraps ErrNotFound or
// ErrNotExecutable.
func (t *Terminal) Start(spec ChildSpec) (*Child, error) {
	path, err := resolve(spec)
	if err != nil {
		return nil, err
	}
	if err := t.reserve(); err != nil {
		return nil, err
	}
	c, err := t.spawn(path, spec)
	if err != nil {
		t.release()
		return nil, err
	}
	if err := t.makeRaw(); err != nil {
		// The child runs and is reaped by its wait goroutine; the caller
		// decides whether a cooked terminal is acceptable.
		t.log.Warn("raw mode unavailable, relaying in cooked mode", "err", err)
	}
	eof := t.attach(c) // also applies the current size, see attach

	if c.master != nil {
		go c.copyOutput()
	} else {
		go c.finish() // nothing to drain: done at the reap
	}
	if eof {
		c.sendEOF()
	}
	return c, nil
}

// spawn opens the PTY, when the child gets one, and starts the process.
func (t *Terminal) spawn(path string, spec ChildSpec) (*Child, error) {
	var master, slave *os.File
	if t.usesPTY() {
		var err error
		if master, slave, err = t.openSizedPTY(); err != nil {
			return nil, err
		}
	}
	// Each descriptor is the PTY's slave, or this process's own one
	// passed through; the first on the slave makes it the controlling
	// terminal.
	files, ctty := make([]uintptr, 3), -1
	for i := range files {
		if t.pass[i] != nil {
			files[i] = t.pass[i].Fd()
			continue
		}
		files[i] = slave.Fd()
		if ctty < 0 {
			ctty = i
		}
	}
	env := spec.Env
	if env == nil {
		env = []string{}
	}
	// syscall.ForkExec rather than os/exec: the first os.StartProcess of a
	// process probes pidfd support by starting a throwaway child, which
	// cost every `lifeloop run` a second fork. The harness is reaped with
	// wait4 (waitProcess); nothing else waits for it.
	sys := &syscall.SysProcAttr{
		Setsid:  true,
		Setctty: ctty >= 0,
		Ctty:    max(ctty, 0), // a descriptor of the child's on the slave
	}
	if ctty < 0 {
		hangUpWithParent(sys) // no terminal to hang up when this process dies
	}
	reaper := make(chan *Child, 1)
	pid, err := forkAndReap(path, append([]string{spec.Path}, spec.Args...), &syscall.ProcAttr{
		Dir: spec.Dir, Env: env, Files: files, Sys: sys,
	}, reaper)
	if slave != nil {
		_ = slave.Close() // the child holds its own copies
	}
	if err != nil {
		if master != nil {
			_ = master.Close()
		}
		return nil, classifyStartError(spec.Path, err)
	}
	c := &Child{
		t:        t,
		pid:      pid,
		master:   master,
		waitDone: make(chan struct{}),
		done:     make(chan struct{}),
	}
	c.lastIn.Store(noInput)
	c.ready = newReadyText(spec.ReadyText)
	c.readySeen.Store(c.ready == nil)
	if c.screen = newScreenText(spec.Screen); c.screen != nil {
		c.screenSeen = spec.Screen.Seen
	}
	reaper <- c // its wait starts now
	return c, nil
}

// forkAndReap starts the process from a goroutine locked to its OS thread,
// which then reaps it with the Child it is handed (waitProcess): Linux's
// parent-death signal (hangUpWithParent) follows the thread that forked,
// not the process, so that thread must not exit while the child lives,
// and a locked thread is never ended by the runtime while its goroutine
// runs.
func forkAndReap(path string, argv []string, attr *syscall.ProcAttr, reaper <-chan *Child) (int, error) {
	type started struct {
		pid int
		err error
	}
	done := make(chan started, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		pid, err := syscall.ForkExec(path, argv, attr)
		done <- started{pid, err}
		if err == nil {
			(<-reaper).waitProcess()
		}
	}()
	r := <-done
	return r.pid, r.err
}

// openSizedPTY opens a PTY pair sized to t's current size.
func (t *Terminal) openSizedPTY() (master, slave *os.File, err error) {
	master, slave, err = openPTY()
	if err != nil {
		return nil, nil, fmt.Errorf("ptyio: open a pseudo-terminal: %w (is /dev/pts mounted?)", err)
	}
	if !pollable(master) {
		t.log.Warn("the runtime poller refused the pseudo-terminal: output after the child's exit is drained until every holder closes it")
	}
	cols, rows := t.Size()
	if err := setSize(master, cols, rows); err != nil {
		_ = master.Close()
		_ = slave.Close()
		return nil, nil, fmt.Errorf("ptyio: size the pseudo-terminal: %w", err)
	}
	return master, slave, nil
}

// classifyStartError maps exec failures to ErrNotFound / ErrNotExecutable.
func classifyStartError(name string, err error) error {
	switch {
	case errors.Is(err, syscall.ENOENT), errors.Is(err, fs.ErrNotExist):
		// The program vanished, or its #! interpreter does not exist.
		return fmt.Errorf("%w: %s: %w", ErrNotFound, name, err)
	case errors.Is(err, syscall.EACCES), errors.Is(err, syscall.ENOEXEC),
		errors.Is(err, syscall.EISDIR), errors.Is(err, syscall.EPERM),
		errors.Is(err, syscall.ETXTBSY):
		return fmt.Errorf("%w: %s: %w", ErrNotExecutable, name, err)
	}
	return fmt.Errorf("ptyio: start %s: %w", name, err)
}

// waitProcess reaps the process. It exits after the reap and then kicks
// the output loop into its bounded drain.
func (c *Child) waitProcess() {
	var ws syscall.WaitStatus
	var err error
	for {
		_, err = syscall.Wait4(c.pid, &ws, 0, nil)
		if !errors.Is(err, syscall.EINTR) {
			break
		}
	}
	st := ExitStatus{Code: -1}
	if err == nil {
		st.Raw = ws
		switch {
		case ws.Exited():
			st.Code = ws.ExitStatus()
		case ws.Signaled():
			st.Signaled = true
			st.Signal = ws.Signal()
			st.CoreDumped = ws.CoreDump()
		}
	} else {
		c.t.log.Warn("wait for child failed", "pid", c.pid, "err", err)
	}
	c.status = st
	c.exitedAt.Store(time.Now().UnixNano())
	c.exited.Store(true)
	close(c.waitDone)
	if c.master == nil {
		c.hangUp()
		return
	}
	// Interrupt a read that may be blocked forever on a slave held open by
	// a grandchild; copyOutput sets its own deadlines from here on.
	_ = c.master.SetReadDeadline(time.Now().Add(DrainQuiet))
}

// hangUp does for a child without a PTY what the kernel does when the
// leader of a session with a terminal exits: SIGHUP, then SIGCONT, to its
// process group, so what it left running there ends as it would have
// with a terminal (unless it ignores the hangup).
func (c *Child) hangUp() {
	for _, sig := range []syscall.Signal{syscall.SIGHUP, syscall.SIGCONT} {
		if err := unix.Kill(-c.pid, sig); err != nil {
			return // ESRCH: nothing left in the group
		}
	}
}

// copyOutput relays the PTY's output to the Terminal's Out until EIO, or
// until the bounded drain after the exit ends. Then it detaches the child,
// closes the PTY and closes done.
func (c *Child) copyOutput() {
	defer c.finish()
	buf := make([]byte, bufSize)
	outOK := true
	// quiet counts the drain's read deadlines passed in a row without
	// output after the exit. The first may pass while output written just
	// before the exit is still on its way through the terminal layer, or
	// before this loop ran at all on a busy machine: only a second quiet
	// window ends the drain.
	quiet := 0
	for {
		if c.exited.Load() {
			deadline := time.Now().Add(DrainQuiet)
			if hard := time.Unix(0, c.exitedAt.Load()).Add(DrainMax); hard.Before(deadline) {
				deadline = hard
			}
			if !time.Now().Before(deadline) {
				return
			}
			_ = c.master.SetReadDeadline(deadline)
		}
		n, err := c.master.Read(buf)
		if n > 0 {
			quiet = 0
			c.bytesOut.Add(uint64(n))
			readAt := c.t.now()
			c.lastOut.Store(readAt.UnixNano())
			if !c.readySeen.Load() && c.ready.feed(buf[:n]) {
				c.readySeen.Store(true)
			}
			if outOK {
				if _, werr := c.t.out.Write(buf[:n]); werr != nil {
					outOK = false
					c.t.log.Warn("writing child output failed; discarding the rest", "pid", c.pid, "err", werr)
				}
			}
			if c.screen != nil {
				for _, i := range c.screen.feed(buf[:n], c.t.lastKey.Load()) {
					c.screenSeen(i, readAt)
				}
			}
		}
		if err != nil {
			if errors.Is(err, os.ErrDeadlineExceeded) {
				if c.exited.Load() && quiet == 0 {
					quiet++
					continue
				}
				if c.exited.Load() {
					// Two DrainQuiet windows without output after the
					// exit (or DrainMax reached): whatever still holds
					// the PTY open is not the child.
					c.t.log.Debug("stopped draining a PTY held open after exit", "pid", c.pid)
					return
				}
				_ = c.master.SetReadDeadline(time.Time{})
				continue
			}
			// EIO: every slave descriptor is closed; all output is read.
			if !errors.Is(err, syscall.EIO) {
				c.t.log.Debug("child pty read ended", "pid", c.pid, "err", err)
			}
			// Output ends before the reap when the child closes its
			// terminal early; Done still waits for the reap.
			<-c.waitDone
			return
		}
	}
}

// finish runs once output is drained and the process is reaped.
func (c *Child) finish() {
	<-c.waitDone
	c.t.detach(c)
	if c.master != nil {
		_ = c.master.Close()
	}
	c.doneOnce.Do(func() { close(c.done) })
}

// resize sets the PTY's window size; the kernel signals SIGWINCH to the
// child's foreground process group.
func (c *Child) resize(cols, rows uint16) error {
	if c.master == nil {
		return nil
	}
	return setSize(c.master, cols, rows)
}

// noInput marks a child that got no stdin bytes yet.
const noInput = 1 << 8

// sendEOF hands end of input to the child, once: the PTY's VEOF
// character, twice when the relayed input ended in the middle of a line
// (the first one only pushes the pending partial line to the reader).
func (c *Child) sendEOF() {
	if c.master == nil || !c.eofSent.CompareAndSwap(false, true) {
		return
	}
	eof := eofChar(c.master)
	seq := []byte{eof}
	if last := c.lastIn.Load(); last != noInput && last != '\n' && last != '\r' {
		seq = append(seq, eof)
	}
	if _, err := c.master.Write(seq); err != nil {
		c.t.log.Debug("end of input to child pty", "pid", c.pid, "err", err)
	}
}

// Pid returns the process id, which is also its process group and session
// id.
func (c *Child) Pid() int { return c.pid }

// Done is closed when the process has exited and its output is drained.
func (c *Child) Done() <-chan struct{} { return c.done }

// Wait blocks until Done and returns how the process ended.
func (c *Child) Wait() ExitStatus {
	<-c.done
	return c.status
}

// SignalGroup sends sig to the child's whole process group. A group with
// no process left (ESRCH) is not an error. It may be used after Done to
// reach members that outlived the child (the group id stays reserved while
// any member lives).
func (c *Child) SignalGroup(sig syscall.Signal) error {
	err := unix.Kill(-c.pid, sig)
	if err == nil || errors.Is(err, unix.ESRCH) {
		return nil
	}
	return fmt.Errorf("ptyio: signal %v to process group %d: %w", sig, c.pid, err)
}

// Write types p into the child's PTY, as if from the keyboard (for
// example "/exit\r"). It may block while the child does not read its
// input, and fails once the child is done.
func (c *Child) Write(p []byte) (int, error) {
	if c.master == nil {
		return 0, fmt.Errorf("ptyio: write to child %d: it has no terminal", c.pid)
	}
	n, err := c.master.Write(p)
	if err != nil {
		return n, fmt.Errorf("ptyio: write to child %d: %w", c.pid, err)
	}
	return n, nil
}

// TakesKeys reports whether the child takes typed keys: it reads its
// terminal key by key and draws them itself (canonical mode and echo are
// off: raw mode, as a TUI sets it once it reads its input) and has drawn
// its ChildSpec.ReadyText, when one was named. Keys written before are echoed by the terminal's line
// discipline, and a TUI that is not reading its input yet drops them.
// A child whose standard input is passed through (TerminalConfig.PassThrough)
// gets no typed keys at all: it reports true.
func (c *Child) TakesKeys() bool {
	if !c.t.relaysInput() {
		return true
	}
	return c.readySeen.Load() && keyByKey(c.master)
}

// RelaysInput reports whether the keys typed on the Terminal reach the
// child (false when its standard input is passed through: then nothing
// tells when it reads its input, and TakesKeys is true at once).
func (c *Child) RelaysInput() bool { return c.t.relaysInput() }

// Activity returns the output counters. It is cheap (two atomic loads).
func (c *Child) Activity() Activity {
	a := Activity{Metered: c.t.pass[1] == nil, BytesOut: c.bytesOut.Load()}
	if ns := c.lastOut.Load(); ns != 0 {
		a.LastOutput = time.Unix(0, ns)
	}
	return a
}
