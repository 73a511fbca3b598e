package main

import "syscall"

// sigaction is the kernel's struct __sigaction on macOS (handler,
// trampoline, mask, flags); the trampoline is unused for SIG_DFL.
type sigaction struct {
	handler uintptr
	tramp   uintptr
	mask    uint32
	flags   int32
}

// sysSigaction is sigaction(2); its fourth argument is ignored.
const (
	sysSigaction = syscall.SYS_SIGACTION
	sigsetSize   = 0
)
