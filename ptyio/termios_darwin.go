package ptyio

import "golang.org/x/sys/unix"

// ioctlGetTermios is the ioctl that reads a terminal's termios on macOS.
const ioctlGetTermios = unix.TIOCGETA
