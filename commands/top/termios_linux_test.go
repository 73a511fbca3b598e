package top

import "golang.org/x/sys/unix"

// ioctlGetTermios reads a terminal's termios on Linux.
const ioctlGetTermios = unix.TCGETS
