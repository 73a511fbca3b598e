package ptyio

import "golang.org/x/sys/unix"

// The fake TUI's ioctls: set the termios now, and after discarding
// pending input (tcsetattr's TCSANOW and TCSAFLUSH).
const (
	ioctlSetTermios      = unix.TIOCSETA
	ioctlSetTermiosFlush = unix.TIOCSETAF
)
