package main

import "syscall"

// sigaction is the kernel's struct sigaction on linux/amd64 and arm64.
type sigaction struct {
	handler  uintptr
	flags    uint64
	restorer uintptr
	mask     uint64
}

// sysSigaction takes the kernel's sigaction and the size of its mask.
const (
	sysSigaction = syscall.SYS_RT_SIGACTION
	sigsetSize   = 8
)
