package top

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's termios on macOS.
const ioctlGetTermios = unix.TIOCGETA
