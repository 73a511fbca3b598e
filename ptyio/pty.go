package ptyio

import (
	"fmt"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// openPTY opens a new pseudo-terminal pair. The master is non-blocking and
// registered with the runtime poller, so read deadlines and Close interrupt
// a blocked Read; every later ioctl on it goes through SyscallConn, because
// os.File.Fd would switch it back to blocking mode. The slave is a plain
// blocking descriptor for the child.
func openPTY() (master, slave *os.File, err error) {
	mfd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	n, err := unix.IoctlGetInt(mfd, unix.TIOCGPTN)
	if err != nil {
		_ = unix.Close(mfd)
		return nil, nil, fmt.Errorf("ptsname: %w", err)
	}
	if err := unix.IoctlSetPointerInt(mfd, unix.TIOCSPTLCK, 0); err != nil {
		_ = unix.Close(mfd)
		return nil, nil, fmt.Errorf("unlockpt: %w", err)
	}
	name := "/dev/pts/" + strconv.Itoa(n)
	sfd, err := unix.Open(name, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		_ = unix.Close(mfd)
		return nil, nil, fmt.Errorf("open %s: %w", name, err)
	}
	if err := unix.SetNonblock(mfd, true); err != nil {
		_ = unix.Close(mfd)
		_ = unix.Close(sfd)
		return nil, nil, fmt.Errorf("set /dev/ptmx non-blocking: %w", err)
	}
	return os.NewFile(uintptr(mfd), "/dev/ptmx"), os.NewFile(uintptr(sfd), name), nil
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
		tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err == nil && tio.Cc[unix.VEOF] != 0 {
			c = tio.Cc[unix.VEOF]
		}
		return err
	})
	return c
}

// keyByKey reports whether the program on the pseudo-terminal behind f
// reads it key by key: canonical mode (ICANON) is off, as a TUI sets it
// once it reads its input.
func keyByKey(f *os.File) bool {
	raw := false
	_ = control(f, func(fd int) error {
		tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err == nil {
			raw = tio.Lflag&unix.ICANON == 0
		}
		return err
	})
	return raw
}
