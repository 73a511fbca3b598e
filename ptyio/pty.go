package ptyio

import (
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal pair through creack/pty. The master
// it returns is non-blocking and registered with the runtime poller, so
// read deadlines and Close interrupt a blocked Read; every later ioctl on
// it goes through SyscallConn, because os.File.Fd would switch it back to
// blocking mode. The slave is for the child: spawn takes its Fd, which
// leaves it in blocking mode.
//
// creack/pty hands back a blocking master (its ioctls call Fd), so the
// master is duplicated, set non-blocking and wrapped anew: os.NewFile
// registers a non-blocking descriptor with the poller (epoll on Linux,
// kqueue on macOS; the macOS path is compiled and vetted, never run here).
//
// Where the poller will not take the master (kqueue has refused pty
// masters on some macOS releases), it stays a blocking descriptor: the
// relay works, but read deadlines do not (see pollable) and Close does
// not interrupt a Read.
func openPTY() (master, slave *os.File, err error) {
	pm, ps, err := pty.Open()
	if err != nil {
		return nil, nil, err
	}
	mfd, err := dupMaster(pm)
	_ = pm.Close()
	if err != nil {
		_ = ps.Close()
		return nil, nil, fmt.Errorf("duplicate the master: %w", err)
	}
	master = os.NewFile(uintptr(mfd), "/dev/ptmx")
	if !pollable(master) {
		// The poller refused it: the descriptor must block again, or
		// every Read would fail with EAGAIN.
		if err := control(master, func(fd int) error { return unix.SetNonblock(fd, false) }); err != nil {
			_ = master.Close()
			_ = ps.Close()
			return nil, nil, fmt.Errorf("set the master blocking: %w", err)
		}
	}
	return master, ps, nil
}

// pollable reports whether f is served by the runtime poller, that is
// whether read deadlines work on it.
func pollable(f *os.File) bool {
	return !errors.Is(f.SetReadDeadline(time.Time{}), os.ErrNoDeadline)
}

// dupMaster returns a close-on-exec duplicate of f's descriptor, set
// non-blocking where the system allows it.
func dupMaster(f *os.File) (int, error) {
	var fd int
	err := control(f, func(old int) error {
		var err error
		fd, err = unix.FcntlInt(uintptr(old), unix.F_DUPFD_CLOEXEC, 0)
		return err
	})
	if err != nil {
		return -1, err
	}
	_ = unix.SetNonblock(fd, true) // else a blocking master, see openPTY
	return fd, nil
}

// control runs fn on f's descriptor without changing its blocking mode.
func control(f *os.File, fn func(fd int) error) error {
	sc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := sc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// setSize sets the window size of the pseudo-terminal behind f.
func setSize(f *os.File, cols, rows uint16) error {
	return control(f, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Col: cols, Row: rows})
	})
}

// eofChar returns the VEOF character of the pseudo-terminal behind f, or
// ^D when it cannot be read.
func eofChar(f *os.File) byte {
	c := byte(4)
	_ = control(f, func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err == nil && tio.Cc[unix.VEOF] != 0 {
			c = tio.Cc[unix.VEOF]
		}
		return err
	})
	return c
}

// keyByKey reports whether the program on the pseudo-terminal behind f
// reads it key by key and draws the keys itself: canonical mode (ICANON)
// and the terminal's echo (ECHO) are both off, as a TUI sets them once it
// reads its input (raw mode). Canonical mode off alone is not enough: a
// TUI may leave it early, draw its prompt, and enter raw mode later with
// TCSAFLUSH, which discards the keys written before (ptyio's
// TestHeldKeysWaitForRawMode).
func keyByKey(f *os.File) bool {
	raw := false
	_ = control(f, func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, ioctlGetTermios)
		if err == nil {
			raw = tio.Lflag&(unix.ICANON|unix.ECHO) == 0
		}
		return err
	})
	return raw
}
