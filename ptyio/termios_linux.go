package ptyio

import "golang.org/x/sys/unix"

// ioctlGetTermios is the ioctl that reads a terminal's termios on Linux.
const ioctlGetTermios = unix.TCGETS
